"""``connectx_forge.compare``, ``models`` and ``mistakes``: ``cxforge compare``, ``models`` and ``mistakes``, from
Python.

``compare`` and ``models`` read saved games, as their commands do, and play none: a games file (``save=``,
``--save``), a match, tournament, SPRT or ladder result (its ``.games``), a game as a dict (a line of such a
file), or a list of any of them.  Every game goes through the reader the commands share
(``records.record_of``), so a malformed one is the command's own one-line ``UserError``.  ``mistakes`` asks
agents for their moves on labelled positions, with the command's defaults (``COMMAND_RUN``: the solver labels
on ``auto``).  The results (``analysis_results.py``) hold what the commands print: ``.report`` is
``--json``'s, ``.text`` the table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from connectx_forge.api.analysis_results import CompareResult, MistakesResult, ModelsResult
from connectx_forge.api.functions import PLAYED, PathLike, Spec, configured, named_games
from connectx_forge.errors import UserError
from connectx_forge.play.comparison import Comparison
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import read_games, record_of
from connectx_forge.solver.mistakes import DEFAULT_SETS, MistakeRun, WeakCache, mistakes_table, run_sets
from connectx_forge.solver.model_report import fitted, text

COMMAND_RUN = MistakeRun(engine="auto")  # ``cxforge mistakes``'s defaults (its --engine is auto)


def records_of(source: object, name: str) -> list[GameRecord]:
    """The saved games in ``source`` (a file, a result, a game dict, or a list of them), called ``name`` in
    errors; ``UserError`` for anything else."""
    if isinstance(source, PLAYED):
        return [record_of(g, f"{name}: {where}") for where, g in named_games(source)]
    if isinstance(source, dict):
        return [record_of(source, name)]
    if isinstance(source, (str, os.PathLike)):
        return read_games(source)
    if isinstance(source, (list, tuple)):
        return [g for i, item in enumerate(source) for g in records_of(item, f"{name}[{i}]")]
    raise UserError(f"{name}: saved games are a file written with --save (save=), a match, tournament, SPRT or "
                    f"ladder result, a game (dict), or a list of them; got {type(source).__name__}")


def compare(new: object, base: object) -> CompareResult:
    """``cxforge compare --new ... --base ...``: NEW's games against BASE's, paired game by game (the same
    opponent, seat, seed and opening), per opponent and in all, with 95% intervals.

    ``new`` and ``base``: one agent's games each (player A of each match), played with the same opponents,
    ``seats``, ``openings`` and ``seed``: files, results, game dicts, or lists of them.
    """
    found = Comparison.of(records_of(new, "new"), records_of(base, "base"))
    return CompareResult(found.new, found.base, [dict(r.to_json()) for r in found.rows], found.to_json(),
                         found.text())


def models(games: object, *, seconds: float = 2.0, engine: str = "auto", progress: bool = False) -> ModelsResult:
    """``cxforge models FILE...``: which opponent model of the practical search fits the moves A's opponents
    chose in ``games`` (files, results, game dicts, or lists of them), each position solved within ``seconds``
    on ``engine`` (``auto``, ``c`` or ``python``; a position that takes longer is left out and counted).
    """
    report = fitted(records_of(games, "games"), seconds, engine, progress)
    as_json = report.to_json()
    return ModelsResult(as_json["best"], as_json["fits"], as_json["mistake_rates"], report.unsolved, as_json,
                        text(report, seconds))


def mistakes(*agents: Spec, sets: Sequence[str] | str = DEFAULT_SETS, settings: MistakeRun | None = None,
             cache: PathLike | None = None, progress: bool = False, **given: object) -> MistakesResult:
    """``cxforge mistakes --agents ...``: each agent's mistakes (moves of a worse win/draw/loss class than the
    best) on positions drawn from labelled sets, judged by the exact solver.

    ``agents``: registered agents, project folders or files (``solver@heuristic``: the solver with its old
    fallback); ``sets``: ``heldout`` (the default, shipped), ``pons`` (Pons' six, read from ``pons=``) or set
    names.  ``settings``: a ``MistakeRun``; the keywords ``given`` are its fields (``sample``, ``hard_sample``,
    ``seed``, ``budget``, ``overage``, ``solve_budget``, ``engine``, ``pons``, ``heldout_dir``), with the
    command's defaults.  ``cache``: a file of weak scores to read and extend (``--cache``); none by default, so
    nothing is written.
    """
    if not agents:
        raise UserError("mistakes() needs at least one agent (a registered agent, a project folder or a file)")
    names = []
    for a in agents:
        if not isinstance(a, (str, os.PathLike)):
            raise UserError("mistakes takes agents by name or path, not a function: write it into a .py file")
        names.append(os.fspath(a))
    run = configured(MistakeRun, settings if settings is not None else COMMAND_RUN, given, "mistakes")
    weak = None
    if cache is not None:
        if Path(cache).is_dir():
            raise UserError(f"cache must be a file, {os.fspath(cache)} is a folder")
        weak = WeakCache(Path(cache))
    results = run_sets(names, [sets] if isinstance(sets, str) else list(sets), run, cache=weak, progress=progress)
    rows = [res.to_json() for res in results]
    return MistakesResult([{k: v for k, v in r.items() if k != "mistake_positions"} for r in rows], rows,
                          mistakes_table(results, color=False))
