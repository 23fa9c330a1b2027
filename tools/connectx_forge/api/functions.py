"""``connectx_forge.match``, ``check``, ``tournament``, ``sprt`` and ``review``: the commands, from Python.

Each is a thin layer over what its ``cxforge`` command calls (the runs' ``tools/connectx_forge/arena/run.execute``,
``tools/connectx_forge/submit/check.check_file``, ``tools/connectx_forge/leaderboard/review``), with the command's
defaults, and returns a result object (``results.py``).  A run takes the settings object its command builds from its
flags (``Match``, ``Tournament``, ``Sprt``, ``Ladder``, each holding a ``GameSettings``) as ``settings=``, or
its fields as keywords (``configured``): the object checks them, once.  Bad input is the command's own one-line
``UserError`` (``connectx_forge.UserError``).

A player is what the command takes: a registered agent (``"negamax"`` is refused as on the command line:
``"kaggle:negamax"``), ``"kaggle:random"``, ``"negamax-fast"``, a project folder or a ``.py`` or ``.tar.gz`` file
(a ``str`` or a ``Path``); ``match`` also takes a Python function ``agent(obs, config)``.  Tournaments and SPRTs
take names and paths only: their games cross to worker processes, and the run is named, by the players' specs;
a check judges a file as Kaggle loads it.

Nothing is written into the working folder unless asked: a tournament or an SPRT plays into a temporary store
unless ``store=`` names one (then running it again resumes it, as ``--store``), ``save=`` writes the games as
JSON lines (``--save``), ``out=`` the report files (``-o``), ``html=`` the review's pages (``--html``).  A
project given as a player is built on the fly into the user cache, as every command does.  Progress bars are
off unless ``progress=True``.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import MISSING, fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agents.registry import did_you_mean
from connectx_forge import outputs
from connectx_forge import progress as bars
from connectx_forge.api.html import Row
from connectx_forge.api.league_results import LadderResult
from connectx_forge.api.results import CheckResult, MatchResult, ReviewResult, SprtResult, TournamentResult
from connectx_forge.arena import plots
from connectx_forge.arena.dask_cluster import dask_target
from connectx_forge.arena.flags import projects_game
from connectx_forge.arena.match import MatchInterrupted
from connectx_forge.arena.match_report import format_match
from connectx_forge.arena.match_run import Match
from connectx_forge.arena.run import MEMORY, MIX, NEW_RUN, Execution, Run, RunResult, execute
from connectx_forge.arena.sprt_run import FILES as SPRT_FILES
from connectx_forge.arena.sprt_run import Sprt, SprtReport, format_sprt
from connectx_forge.arena.tournament import Tournament, TournamentReport
from connectx_forge.arena.tournament_report import FILES as TOURNAMENT_FILES
from connectx_forge.arena.tournament_report import (
    format_tournament,
    make_report_folder,
    write_json,
    write_tournament_outputs,
)
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.agent_file import Ghosts
from connectx_forge.leaderboard.review import label_cache
from connectx_forge.leaderboard.review.annotate import format_review, review_game
from connectx_forge.leaderboard.review.games import Game, load_games, only_ours, read_record, read_replay
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.pages import PAGES as REVIEW_PAGES
from connectx_forge.leaderboard.review.pages import write_html
from connectx_forge.leaderboard.review.summary import format_summary, summarise
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import GameWriter
from connectx_forge.play.resolve import as_player, label_of, reference
from connectx_forge.play.settings import GameSettings
from connectx_forge.players.player import PLAYERS, SUBMISSIONS, GhostFiles, PlayerLike, distinct
from connectx_forge.submit import check as checker
from connectx_forge.submit.check import default_agent
from connectx_forge.submit.check_report import format_report
from connectx_forge.submit.kaggle_game import GameResult

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # a run's (or a game's, a check's) settings: a dataclass
Report = TypeVar("Report")

PathLike = str | os.PathLike[str]
Spec = str | os.PathLike[str]


def _spec(p: object, what: str, allow: frozenset[str] | None = None, ghosts: GhostFiles | None = None) -> str:
    """A player given by name or path, as the commands take it (``reference``, allowing what the command takes:
    a bad one is the command's line; a ghost its agent file's path, from ``ghosts``)."""
    if callable(p) and not isinstance(p, (str, os.PathLike)):
        raise UserError(f"{what} takes players by name or path (a registered agent, kaggle:random, kaggle:negamax, "
                        "negamax-fast, a project folder or a .py or .tar.gz file), not a function: its games "
                        "cross to worker processes, and its run is named, by the players' specs; write the "
                        "function into a .py file, or play it with connectx_forge.match")
    return reference(p, allow=PLAYERS if allow is None else allow, ghosts=ghosts).spec


def _picklable(*players: object) -> bool:
    for p in players:
        try:
            pickle.dumps(p)
        except Exception:
            return False
    return True


FORCING = "force=True"  # how the notebook says --force, in the one line that refuses an output


def _writer(save: PathLike | None, force: bool = False) -> GameWriter | None:
    """``--save``'s writer, opened before any game (an unwritable path fails first; a file that exists is
    replaced only with ``force``, as ``--save --force``)."""
    if save is None:
        return None
    return GameWriter(save, replace=force)


def _force(given: dict[str, object]) -> bool:
    """The ``force`` keyword (``--force``: replace the outputs that exist), taken out of ``given``."""
    force = given.pop("force", False)
    if not isinstance(force, bool):
        raise UserError(f"force is True or False, not {force!r}")
    return force


def _folder_kept(folder: PathLike | None, files: Sequence[str], force: bool) -> None:
    """The rule of every output (``tools/connectx_forge/outputs.py``), before any work: a folder holding an earlier
    run's
    ``files`` is refused in one line unless ``force``."""
    outputs.check_folder(None if folder is None else Path(folder), outputs.named(*files), force, None, FORCING)


@contextmanager
def _closed_on_error(writer: GameWriter | None) -> Iterator[None]:
    """Close ``--save``'s writer when the run stops on an error or Ctrl-C: the games that ended stay in the file."""
    try:
        yield
    except BaseException:
        if writer is not None:
            writer.close()
        raise


def _fallback_spec(fallback: Spec | None) -> str | None:
    """A ghost's fallback agent as the commands take it (a name or a path), or None; a function is refused."""
    if fallback is not None and not isinstance(fallback, (str, os.PathLike)):
        raise UserError("a ghost's fallback is an agent by name or path (a registered agent, a project folder or "
                        "a .py file), not a function: write it into a .py file")
    return None if fallback is None else os.fspath(fallback)


def _ghosts(replays: Sequence[PathLike] | PathLike | None, fallback: Spec | None) -> GhostFiles:
    """``replays=`` and ``fallback=``, as ``--replays`` and ``--fallback``: where ``ghost:TEAM`` players come from
    (``flags.ghosts_of``'s, handed to the players' resolver)."""
    if isinstance(replays, (str, os.PathLike)):
        replays = [replays]
    return Ghosts(tuple(str(Path(r).resolve()) for r in replays or ()), _fallback_spec(fallback))


@contextmanager
def _store(store: PathLike | None) -> Iterator[tuple[Path, bool]]:
    """The run's results store: the one given (kept), else one in a temporary folder, removed afterwards."""
    if store is not None:
        yield Path(store), True
        return
    with tempfile.TemporaryDirectory(prefix="cxforge-api-") as folder:
        yield Path(folder) / "run.sqlite", False


GAME_KEYWORDS = ("size", "act_timeout", "overage", "memory", "slowdown", "isolate")  # GameSettings.of's
EXECUTION_KEYWORDS = ("dask", "tls", "insecure", "dashboard", "progress", "resume", "new_run",
                      "mix_versions")  # how a run is carried out


def _game_of(game: GameSettings, given: dict[str, Any]) -> GameSettings:
    """``GameSettings.of`` with ``game``'s values, but those of its keywords in ``given`` (taken out of it, as the
    caller gave them: ``GameSettings`` checks them)."""
    return GameSettings.of(size=given.pop("size", game.size), act_timeout=given.pop("act_timeout", game.act_timeout),
                           overage=given.pop("overage", game.overage), memory=given.pop("memory", game.memory),
                           slowdown=given.pop("slowdown", game.slowdown), isolate=given.pop("isolate", game.isolate),
                           game=game.game)


def configured(cls: type[T], settings: T | None, given: dict[str, object], what: str) -> T:
    """``settings`` (default: ``cls``'s defaults) with the keywords ``given``: ``cls``'s fields, its games'
    settings by ``GameSettings.of``'s arguments (``act_timeout``, ``memory``...), and a nested settings' fields
    (a ladder's ``rating``: ``sigma0``, ``tau``...).  The settings check their values (one ``UserError``); a
    keyword that is none of these is one too.  With neither ``settings`` nor ``game=``, the game is the one the
    players' projects or built files name (``flags.projects_game``), as in the commands."""
    names = [f.name for f in fields(cls) if f.init]
    values = {} if settings is None else {name: getattr(settings, name) for name in names}
    nested: list[str] = []
    for f in fields(cls):
        current = values.get(f.name, f.default_factory() if f.default_factory is not MISSING else f.default)
        if isinstance(current, GameSettings):
            if isinstance(given.get(f.name), str):  # game="rps": the game's name, the rest as they are
                values[f.name] = current = replace(current, game=str(given.pop(f.name)))
            elif settings is None and f.name not in given:
                named = projects_game(_specs_in(given))
                if named is not None:
                    values[f.name] = current = replace(current, game=named)
            nested += GAME_KEYWORDS
            if any(name in given for name in GAME_KEYWORDS):
                values[f.name] = _game_of(current, given)
        elif is_dataclass(current) and not isinstance(current, type):
            inner = [g.name for g in fields(current)]
            nested += inner
            changes = {name: given.pop(name) for name in inner if name in given}
            if changes:
                values[f.name] = replace(current, **changes)
    missing = [f.name for f in fields(cls) if f.init and f.name not in values and f.name not in given
               and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise UserError(f"{what}() needs {' and '.join(missing)}")
    for name in given:
        if name not in names:
            known = sorted({*names, *nested} - {"game"})
            raise UserError(f"{what}() takes no keyword {name!r}{did_you_mean(name, known)}; its settings: "
                            f"{', '.join(known)}")
    return cls(**{**values, **given})


def _execution(given: dict[str, Any], workers: int | None, store: Path,
               on_game: Callable[[GameRecord], None] | None) -> Execution:
    """How the run is carried out: ``workers``, the store, and from ``given`` ``dask`` (with ``tls``,
    ``insecure`` and ``dashboard``, as the flags), ``progress`` (default off), ``resume``, ``new_run`` and
    ``mix_versions`` (``--new-run``, ``--mix-versions``)."""
    dask = dask_target(*(given.pop(name, None) for name in ("dask", "tls", "insecure", "dashboard")))
    progress = bool(given.pop("progress", False))
    resume, new_run, mix_versions = (bool(given.pop(name, False)) for name in ("resume", "new_run", "mix_versions"))
    if new_run and mix_versions:
        raise UserError("new_run and mix_versions are two answers to one question: give one")
    on_change = NEW_RUN if new_run else MIX if mix_versions else None
    return Execution(workers, dask, None, store, resume, on_change, progress, on_game)


def match(a: PlayerLike | os.PathLike[str], b: PlayerLike | os.PathLike[str], games: int | None = None, *,
          workers: int | None = None, settings: Match | None = None, save: PathLike | None = None,
          replays: Sequence[PathLike] | PathLike | None = None, fallback: Spec | None = None,
          **given: object) -> MatchResult:
    """``cxforge match A B``: ``games`` seeded games (default the ``Match``'s, 100) between ``a`` and ``b``, seats
    alternating (A first in the even ones) unless ``seats`` is ``"first"`` or ``"second"``.

    ``settings``: a ``Match`` (``connectx_forge.Match``); the keywords ``given`` are its fields and its
    games' (``seed``, ``seats``, ``openings``: the 4-ply suite's first M, each once from each seat; ``size``,
    ``act_timeout``, ``overage``, ``isolate``: every player in an agent host, ``memory``, ``slowdown``), and
    ``progress`` and ``force`` (replace the outputs that exist).  ``workers``: processes (default: all cores; a
    function that cannot be pickled, a lambda,
    plays in this process); ``save``: write the games as JSON lines (``--save``; a file that exists is
    replaced only with ``force``); ``replays`` and ``fallback``:
    where ``ghost:TEAM`` players come from (``--replays``, ``--fallback``; default as the command's).
    """
    progress, force = bool(given.pop("progress", False)), _force(given)
    ghosts = _ghosts(replays, fallback)
    pa, pb = distinct([as_player(a, ghosts), as_player(b, ghosts)])
    if games is not None:
        given["games"] = games
    m = configured(Match, settings, {**given, "a": pa.spec, "b": pb.spec}, "match")
    if workers is None and not _picklable(pa, pb):
        workers = 1
    writer = _writer(save, force)
    how = Execution(workers, progress=progress, store=MEMORY, on_game=writer.add if writer is not None else None,
                    players={pa.spec: pa, pb.spec: pb})
    try:
        result = execute(m, how).result
    except MatchInterrupted:
        if writer is not None:
            writer.close()
        raise
    if writer is not None:
        writer.close(result.records)
    return MatchResult.of(result, format_match(result), None if save is None else os.fspath(save))


def check(agent: Spec | None = None, games: int = 8, *, opponents: Sequence[str] | None = None, seed: int = 0,
          workers: int | None = None, validation: bool = True,
          max_games: int | None = None, game: GameSettings | str | None = None, progress: bool = False,
          **given: object) -> CheckResult:
    """``cxforge check AGENT``: the validation episode (the file against itself), then ``games`` games against
    each opponent (Kaggle's built-ins, as ``--opponents`` names them; default as the command's: those the floors
    name, ConnectX's random and negamax), half in each seat, the file loaded as Kaggle loads it, in agent hosts.

    ``agent``: a built ``.py`` or ``.tar.gz``, a project folder or source ``.py``, a registered agent (built on the
    fly, into the user cache); default as the command's: the project in the working folder, else
    ``submissions/submission.py``.  The floors are the manifest's (a project's ``cxforge.toml``); against an
    opponent whose floor is not decided after ``games``, more are played, up to ``max_games`` (the command's
    default when None).  ``game``: the game's name, or the games' settings (a ``GameSettings``), or its
    keywords ``given`` (``size``, ``act_timeout``, ``overage``).  The result's ``verdict`` is the command's: PASS,
    FAIL or UNDECIDED.
    """
    spec = default_agent(None if agent is None else _check_spec(agent))
    file = checker.submission_of(spec)
    played: list[GameResult] = []
    settings = _game_of(GameSettings(game=game) if isinstance(game, str) else game or GameSettings(), given)
    if given:
        configured(GameSettings, None, given, "check")  # the one line naming the keyword
    gate = checker.Gate(games, max_games, tuple(opponents or ()), seed, workers)
    report = checker.check_file(file.file, gate, settings=settings, progress=progress, validation=validation,
                                on_game=played.append)
    played.sort(key=lambda g: g.index)
    return CheckResult.of(report.agent or file.label, file.file, [g.to_json() for g in played], report,
                          format_report(report))


def _check_spec(agent: object) -> str:
    if callable(agent) and not isinstance(agent, (str, os.PathLike)):
        raise UserError("check judges a file as Kaggle loads it: give a project folder, a .py or .tar.gz file or "
                        "a registered agent, not a function (write it into a .py file; connectx_forge.match plays "
                        "a function)")

    return _spec(agent, "check", SUBMISSIONS)


def _players(players: tuple[Spec | Sequence[Spec], ...], ghosts: GhostFiles) -> tuple[str, ...]:
    """``tournament("a", "b")`` or ``tournament(["a", "b"])``."""
    if len(players) == 1 and isinstance(players[0], (list, tuple)):
        players = tuple(players[0])
    return tuple(_spec(p, "tournament", ghosts=ghosts) for p in players)


def tournament(*players: Spec | Sequence[Spec], settings: Tournament | None = None, workers: int | None = None,
               store: PathLike | None = None, save: PathLike | None = None, out: PathLike | None = None,
               replays: Sequence[PathLike] | PathLike | None = None, fallback: Spec | None = None,
               **given: object) -> TournamentResult:
    """``cxforge tournament PLAYER...``: a round robin (or a ``gauntlet`` of that player against each other one)
    on the suite's first ``openings`` openings, each played twice per pairing, colours swapped.

    ``settings``: a ``Tournament`` (``connectx_forge.Tournament``); the keywords ``given`` are its fields and its
    games' (``gauntlet``, ``openings``, ``plies``, ``band``, ``seed``, ``games``; ``act_timeout``, ``overage``,
    ``memory`` in bytes, ``slowdown``), and ``dask`` (``"local"`` or a scheduler's address) and ``progress``.
    ``store``: a results database to keep (running the same tournament again resumes it); default a temporary
    one.  ``save``: the games as JSON lines; ``out``: a folder for report.json, the CSVs and ratings.png (``-o``).
    ``force``: replace the outputs that exist (``--force``: without it, a ``save`` file or an ``out`` folder
    holding an earlier run's files is refused before any game).  ``replays`` and ``fallback``: where ``ghost:TEAM``
    players come from, as ``match``'s.  The result's
    ``players`` are the report's labels (a project's name, a file's name, a registered name).
    """
    ghosts = _ghosts(replays, fallback)
    if players or settings is None:
        given["players"] = _players(players, ghosts)
    if given.get("gauntlet") is not None:
        given["gauntlet"] = _spec(given["gauntlet"], "tournament", ghosts=ghosts)
    force = _force(given)
    t = _run_settings(Tournament, settings, given, "tournament")
    _folder_kept(out, TOURNAMENT_FILES, force)
    result, records, path, kept = _stored_run(t, given, workers, store, save, force)
    if out is not None:
        write_tournament_outputs(result.report, Path(out))
    report = _without_store(result.report, kept)
    return TournamentResult.of(report, [dict(r.to_json()) for r in records], format_tournament(report),
                               str(path) if kept else None, None if save is None else os.fspath(save))


def _specs_in(given: dict[str, object]) -> list[str]:
    """The player specs among a run's keywords: ``a`` and ``b``, ``new`` and ``base``, ``players``."""
    specs = [v for k, v in given.items() if k in ("a", "b", "new", "base") and isinstance(v, str)]
    players = given.get("players")
    if isinstance(players, (list, tuple)):
        specs += [p for p in players if isinstance(p, str)]
    return specs


def _run_settings(cls: type[T], settings: T | None, given: dict[str, object], what: str) -> T:
    """``configured``, less the execution's keywords: those alone are left in ``given``, for ``_execution``."""
    run = configured(cls, settings, {k: v for k, v in given.items() if k not in EXECUTION_KEYWORDS}, what)
    for name in [name for name in given if name not in EXECUTION_KEYWORDS]:
        del given[name]
    return run


def _stored_run(run: Run[RunResult[Report]], given: dict[str, object], workers: int | None, store: PathLike | None,
                save: PathLike | None, force: bool) -> tuple[RunResult[Report], list[GameRecord], Path, bool]:
    """A tournament's or SPRT's run in ``store`` (a temporary one unless given), each game written to ``save``
    as it ends and the file completed in order at the end: the result, its records, the store's path and
    whether it is kept."""
    writer = _writer(save, force)
    with _store(store) as (path, kept), _closed_on_error(writer):
        result = execute(run, _execution(given, workers, path, None if writer is None else writer.add))
    records = result.records()
    if writer is not None:
        writer.close(records)
    return result, records, path, kept


TEMPORARY = "(temporary, removed)"  # a report's store when the run played into a temporary one


StoredReport = TypeVar("StoredReport", TournamentReport, SprtReport)


def _without_store(report: StoredReport, kept: bool) -> StoredReport:
    """The report, its temporary store's path (gone by now) said as such."""
    return report if kept else replace(report, info=replace(report.info, store=TEMPORARY))


def sprt(new: Spec | None = None, base: Spec | None = None, *, settings: Sprt | None = None,
         workers: int | None = None, store: PathLike | None = None, save: PathLike | None = None,
         out: PathLike | None = None, replays: Sequence[PathLike] | PathLike | None = None,
         fallback: Spec | None = None, **given: object) -> SprtResult:
    """``cxforge sprt NEW BASE``: is NEW stronger than BASE?  Pairs of games (colours swapped) on the suite's
    openings until the sequential test decides between H0 (NEW ``elo0`` stronger) and H1 (``elo1`` stronger),
    ``max_games`` run out, or two deterministic agents exhaust the suite (only distinct games count: the
    command's one code path, ``sprt_run``).

    ``settings``: an ``Sprt`` (``connectx_forge.Sprt``); the keywords ``given`` are its fields and its games'
    (``elo0``, ``elo1``, ``alpha``, ``beta``, ``model``: ``"normalized"``, fastchess's, or ``"logistic"`` Elo,
    ``max_games``, ``plies``, ``band``, ``openings`` (the suite's first M; default: every opening of the band),
    ``seed``; ``act_timeout``, ``overage``, ``memory``, ``slowdown``), and ``dask`` and ``progress``.
    ``store``, ``save``, ``out`` (report.json and llr.png), ``workers``, ``replays``, ``fallback``, ``force``:
    as ``tournament``'s.
    """
    ghosts = _ghosts(replays, fallback)
    for name, p in (("new", new), ("base", base)):
        if p is not None:
            given[name] = _spec(p, "sprt", ghosts=ghosts)
    force = _force(given)
    s = _run_settings(Sprt, settings, given, "sprt")
    _folder_kept(out, SPRT_FILES, force)
    result, records, path, kept = _stored_run(s, given, workers, store, save, force)
    if out is not None:
        make_report_folder(Path(out))
        write_json(result.report.to_json(), Path(out) / "report.json")
        plots.draw(plots.llr_png, result.report.to_json(), Path(out) / "llr.png")
    report = _without_store(result.report, kept)
    return SprtResult.of(report, [dict(r.to_json()) for r in records], format_sprt(report),
                         str(path) if kept else None, None if save is None else os.fspath(save))


PLAYED = (MatchResult, TournamentResult, SprtResult, LadderResult)  # the results whose ``games`` were played


def named_games(result: MatchResult | TournamentResult | SprtResult | LadderResult) -> list[tuple[str, Row]]:
    """``(where, game)`` for each game of a played result, ``where`` naming it in errors ("match game 3")."""
    kind = type(result).__name__.removesuffix("Result").lower()
    return [(f"{kind} game {i}", g) for i, g in enumerate(result.games)]


def _games_of(source: object, episodes: Path | None, problems: list[str], name: str = "game") -> list[Game]:
    """The review's games in ``source``: a result (its ``games``), a game record or replay (a dict, called
    ``name``), a file, an episode id, or a list of any of them."""
    if isinstance(source, PLAYED):
        return [read_record(g, where) for where, g in named_games(source)]
    if isinstance(source, dict):
        if "steps" in source:
            return [read_replay(source, name)]
        if "moves" in source:
            return [read_record(source, name)]
        raise UserError(f"{name}: a game to review is a Kaggle replay (with \"steps\") or a saved game (with "
                        "\"moves\")")
    if isinstance(source, int) and not isinstance(source, bool):
        source = str(source)
    if isinstance(source, (str, os.PathLike)):
        return load_games(os.fspath(source), episodes, problems)
    if isinstance(source, (list, tuple)):
        return [g for i, item in enumerate(source) for g in _games_of(item, episodes, problems, f"game {i}")]
    raise UserError(f"review takes a file of games or a replay, an episode id, a game (dict), a match, tournament, "
                    f"SPRT or ladder result, or a list of them; got {type(source).__name__}")


def review(games: object, *, us: Sequence[str] | str | None = None, time_limit: float = 2.0, engine: str = "auto",
           episodes: PathLike | None = None, html: PathLike | None = None, progress: bool = False,
           on_problem: Callable[[str], None] | None = None, force: bool = False) -> ReviewResult:
    """``cxforge review GAME...``: every move judged by the exact solver (``time_limit`` seconds a position;
    a value not found in time is left unknown), and where ``us`` loses.

    ``games``: a games file (``save=``, ``--save``), a Kaggle replay file or an episode id (downloaded into
    ``episodes``, default the user cache), a game as a dict, a match, tournament, SPRT or ladder result, or a
    list of them; with ``us``, only the games ``us`` played.  ``html``: also write a page per game and an index
    into that folder (``--html``; one holding an earlier review's pages only with ``force``).  A line of a games
    file that cannot be read is skipped and passed to
    ``on_problem`` (default: a warning).  Positions labelled before come from the review's cache (the user
    cache, as the command's), and those labelled now are kept there.
    """
    _folder_kept(html, REVIEW_PAGES, force)
    problems: list[str] = []
    found = _games_of(games, None if episodes is None else Path(episodes), problems)
    for problem in problems:
        if on_problem is not None:
            on_problem(problem)
        else:
            import warnings

            warnings.warn(problem, stacklevel=2)
    if not found:
        raise UserError("no games to review")
    names = [label_of(u) for u in ([us] if isinstance(us, str) else list(us or ()))]
    found = only_ours(found, names) if names else found
    cache = label_cache.LabelCache(label_cache.default_path())
    labeller = Labeller(engine, time_limit, cache=cache)
    reviews = []
    with bars.bar(sum(len(g.moves) for g in found), "review", unit="move", enabled=progress) as bar:
        for g in found:
            reviews.append(review_game(g, labeller, bar.update))
            cache.save()
    summary = summarise(reviews, names)
    summary_text = format_summary(summary)
    if html is not None:
        write_html(reviews, Path(html), summary_text)
    as_json = [r.to_json() for r in reviews]
    text = "\n\n".join(format_review(r) for r in reviews) + ("\n\n" + summary_text if len(reviews) > 1 else "")
    return ReviewResult(as_json, summary.to_json(), summary_text, {"summary": summary.to_json(), "games": as_json},
                        text, tuple(reviews))
