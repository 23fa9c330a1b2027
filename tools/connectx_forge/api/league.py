"""``connectx_forge.ladder``, ``ladder_fit``, ``ghosts``, ``regress_add`` and ``regress_list``: the commands
that look at Kaggle's leaderboard side (``cxforge ladder``, ``ladder --fit``, ``ghosts``, ``regress add`` and
``regress list``), from Python.

Each calls what its command calls (``tools/connectx_forge/arena/ladder/ladder_run``: ``stored_ladder``,
``simulate``;
``ladder_report``: ``write_ladder_outputs``; ``tools/connectx_forge/leaderboard/ghosts/teams``: ``check_write``,
``write_ghost``,
``teams_of``; ``tools/connectx_forge/leaderboard/regress/cases``: ``project_root``, ``add_cases``), with the command's
defaults and
one-line ``UserError`` lines, and returns a result object (``league_results.py``).  As in ``functions.py``, nothing is
written into the working folder unless asked: a ladder plays into a temporary store unless ``store=`` names
one; ``save=``, ``out=`` and ``write=`` write where they say; ``regress_add`` writes the project's
``tests/regressions.json`` (and its test, once), which is what it is for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from connectx_forge.api.functions import (
    FORCING,
    TEMPORARY,
    PathLike,
    Spec,
    _closed_on_error,
    _execution,
    _fallback_spec,
    _folder_kept,
    _force,
    _games_of,
    _ghosts,
    _run_settings,
    _spec,
    _store,
    _writer,
)
from connectx_forge.api.league_results import GhostsJson, GhostsResult, LadderFitResult, LadderResult, RegressResult
from connectx_forge.arena.ladder.fit import fit_files, format_fit
from connectx_forge.arena.ladder.ladder_report import FILES as LADDER_FILES
from connectx_forge.arena.ladder.ladder_report import format_ladder, write_ladder_outputs
from connectx_forge.arena.ladder.ladder_run import simulate, stored_ladder
from connectx_forge.arena.ladder.rating import RatingSettings
from connectx_forge.arena.ladder.simulate import Ladder
from connectx_forge.arena.store import Store
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.observed_moves import load_books
from connectx_forge.leaderboard.ghosts.teams import check_write, table_text, teams_of, write_ghost, written_line
from connectx_forge.leaderboard.regress import data
from connectx_forge.leaderboard.regress.cases import add_cases, added_text, expand, list_text, project_root
from connectx_forge.leaderboard.review.labeller import Labeller


def ladder(*players: Spec, settings: Ladder | None = None, workers: int | None = None,
           store: PathLike | None = None, save: PathLike | None = None, out: PathLike | None = None,
           replays: Sequence[PathLike] | PathLike | None = None, fallback: Spec | None = None,
           **given: Any) -> LadderResult:
    """``cxforge ladder PLAYER...``: Kaggle's rating process (TrueSkill, mu0 600) simulated for ``days`` days
    over your candidates (``players``, in the order submitted, ``stagger`` days apart) and the reference
    ``pool``, each a team of its own (the default pool less any agent given as a candidate): each submission's
    predicted score, its interval and the day it settles.

    ``settings``: a ``Ladder`` (``connectx_forge.Ladder``); the keywords ``given`` are its fields, its rating's
    and its games' (``pool``, ``days``, ``per_day``, ``new_per_day``, ``window``, ``active``, ``stagger``,
    ``seed``, ``replicates``, ``settle``; ``sigma0``, ``beta``, ``tau``, ``draw_probability``; ``act_timeout``,
    ``overage``, ``memory``, ``slowdown``), and ``dask``, ``progress``, ``resume``, ``new_run`` and
    ``mix_versions``.  ``days``: default the command's (10), or with ``resume=True`` and no players the stored
    ladder's.  ``store``: a results database to keep (the same call again plays only what it lacks; more
    ``days`` play on; ``resume=True`` with no players continues the store's last ladder); default a temporary
    one.  ``new_run`` and ``mix_versions``: as ``--new-run`` and ``--mix-versions`` when a player's sources
    changed since the store's games.  ``save``: the games played now as JSON lines; ``out``: a folder for
    report.json and ladder.png (``-o``).  ``replays`` and ``fallback``: where ``ghost:TEAM`` players (in
    ``pool`` too) come from, as ``--replays`` and ``--fallback``.  The flags of ``cxforge ladder --help`` say
    what the others mean.
    """
    if given.get("days", 0) is None:  # the default: the command's, or the stored ladder's
        del given["days"]
    resume = bool(given.get("resume", False))
    if resume and store is None:
        raise UserError("resume=True needs store= (the results store of the ladder to resume)")
    if not players and not resume and settings is None:
        raise UserError("give at least one PLAYER (your candidate), or resume=True with store=")
    if isinstance(given.get("pool"), (str, os.PathLike)):
        given["pool"] = (given["pool"],)
    ghosts = _ghosts(replays, fallback)
    if players:
        given["players"] = tuple(_spec(p, "ladder", ghosts=ghosts) for p in players)
    if "pool" in given:
        given["pool"] = tuple(_spec(p, "ladder", ghosts=ghosts) for p in given["pool"])
    if settings is None and not players:
        settings = stored_ladder(Path(str(store)), given.pop("days", None))
    force = _force(given)
    t = _run_settings(Ladder, settings, given, "ladder")
    _folder_kept(out, LADDER_FILES, force)
    writer = _writer(save, force)
    with _store(store) as (path, kept), _closed_on_error(writer):
        report = simulate(t, _execution(given, workers, path, None if writer is None else writer.add))
        with Store(path) as db:
            records = [dict(g.record.to_json()) for g in db.games(report.run) if g.record is not None]
    if writer is not None:
        writer.close()
    if not kept:
        report = replace(report, store=TEMPORARY)
    if out is not None:
        write_ladder_outputs(report, Path(out))
    return LadderResult.of(records, report, format_ladder(report), str(path) if kept else None,
                           None if save is None else os.fspath(save))


def ladder_fit(*episodes: PathLike) -> LadderFitResult:
    """``cxforge ladder --fit EPISODES.json...``: TrueSkill's sigma0, beta, tau and draw probability fitted to
    Kaggle episode lists (ListEpisodes JSON with initialScore and updatedScore; docs/ladder.md)."""
    if not episodes:
        raise UserError("give at least one episode list (EPISODES.json)")
    result = fit_files([Path(e) for e in episodes], mu0=RatingSettings().mu0)
    return LadderFitResult.of(result, format_fit(result))


def ghosts(*replays: PathLike, team: str | None = None, fallback: Spec | None = None,
           write: PathLike | None = None, force: bool = False) -> GhostsResult:
    """``cxforge ghosts [REPLAYS...]``: the teams Kaggle replays show, each playable as ``ghost:TEAM`` (its
    recorded moves, else the fallback agent).

    ``replays``: replay files or folders of them (default ``$CXFORGE_REPLAYS``, else ``./replays``).  ``team``
    and ``write`` together: write that team's ghost to the file ``write`` (replaced only with ``force``) as a Kaggle
    agent,
    playing ``fallback`` (a registered agent, a project folder or a ``.py``) off its record.
    """
    name = _fallback_spec(fallback)
    target = None if write is None else Path(write)
    check_write(team, target, force, FORCING)
    books = load_books([os.fspath(r) for r in replays] or None)
    text, written = table_text(books), None
    if target is not None and team is not None:
        text += "\n" + written_line(write_ghost(books, team, name, target, force), target, name)
        written = str(target)
    return GhostsResult(GhostsJson(files=books.files, teams=teams_of(books)), text, tuple(books.skipped), written)


def _project_of(project: PathLike) -> Path:
    if callable(project) and not isinstance(project, (str, os.PathLike)):
        raise UserError("regress works on an agent project: give its folder (made by cxforge new), not a function")
    return project_root(Path(project))


def regress_add(*games: object, project: PathLike = ".", us: Sequence[str] | str | None = None,
                time_limit: float = 2.0, engine: str = "auto", episodes: PathLike | None = None,
                on_problem: Callable[[str], None] | None = None) -> RegressResult:
    """``cxforge regress add REPLAYS...``: keep the first losing move of each game ``us`` lost (default: the
    project's name) in the project's ``tests/regressions.json`` (no duplicates), and write its test
    ``tests/test_regressions.py`` once: it fails while the agent still plays a losing move in any of them.

    ``games``: Kaggle replay files or folders of them, episode ids (downloaded into ``episodes``), games saved
    with ``save=``, a game as a dict, a match, tournament, SPRT or ladder result, or a list of them.
    ``project``: the project's folder, or a folder inside it.  A line that cannot be read, and a lost game
    without a losing move of ours, is passed to ``on_problem`` (default: a warning).
    """
    def problem(line: str) -> None:
        if on_problem is not None:
            on_problem(line)
        else:
            import warnings

            warnings.warn(line, stacklevel=3)

    root = _project_of(project)
    labeller = Labeller(engine, time_limit)  # a bad time limit or engine: one line, before any game is read
    sources = [expand([os.fspath(g)]) if isinstance(g, (str, os.PathLike)) else [g] for g in games]
    problems: list[str] = []
    found = _games_of([s for group in sources for s in group], None if episodes is None else Path(episodes),
                      problems)
    for line in problems:
        problem(line)
    if not found:
        raise UserError("no games to review")
    names = [us] if isinstance(us, str) else list(us) if us else None
    report, wrote_test = add_cases(root, found, names, labeller, problem)
    cases = [dict(c) for c in data.read(root / data.DATA_FILE)]
    return RegressResult(str(root), cases, report.to_json(), added_text(root, report, wrote_test))


def regress_list(project: PathLike = ".") -> RegressResult:
    """``cxforge regress list``: the project's regression cases (``project``: its folder, or one inside it)."""
    root = _project_of(project)
    cases = data.read(root / data.DATA_FILE)
    rows = [dict(c) for c in cases]
    return RegressResult(str(root), rows, {"cases": rows}, list_text(root, cases))
