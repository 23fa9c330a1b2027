"""``connectx_forge.match``, ``check``, ``tournament``, ``sprt`` and ``review``: the commands, from Python.

Each is a thin layer over the function its ``cxforge`` command calls (``tools/play/match.run_match``,
``tools/submit/check.check_file``, ``tools/arena/tournament.run_tournament``, ``tools/arena/sprt_run.run_sprt``,
``tools/review``), with the command's defaults, and returns a result object (``results.py``).  Bad input is the
command's own one-line ``UserError`` (``connectx_forge.UserError``).

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
from pathlib import Path
from typing import Any

from agents.board import STANDARD, Size
from connectx_forge.league_results import LadderResult
from connectx_forge.results import CheckResult, MatchResult, ReviewResult, SprtResult, TournamentResult
from connectx_forge.tools.errors import UserError

PathLike = str | os.PathLike[str]
Spec = str | os.PathLike[str]


def _spec(p: Any, what: str, allow: Any = None) -> str:
    """A player given by name or path, as the commands take it (``reference``, allowing what the command takes:
    a bad one is the command's line)."""
    from connectx_forge.tools.play.reference import PLAYERS, reference

    if callable(p) and not isinstance(p, (str, os.PathLike)):
        raise UserError(f"{what} takes players by name or path (a registered agent, kaggle:random, kaggle:negamax, "
                        "negamax-fast, a project folder or a .py or .tar.gz file), not a function: its games "
                        "cross to worker processes, and its run is named, by the players' specs; write the "
                        "function into a .py file, or play it with connectx_forge.match")
    return reference(p, allow=PLAYERS if allow is None else allow).spec


def _player(p: Any) -> Any:
    """A match's player: a spec resolved as ``cxforge match`` resolves it, or a function ``agent(obs, config)``
    (``reference``, allowing a function too)."""
    from connectx_forge.tools.play.players import Player, from_callable, resolve
    from connectx_forge.tools.play.reference import ANY, CALLABLE, reference

    if isinstance(p, Player):
        return p
    if isinstance(p, (str, os.PathLike)):  # by name or path: as the command takes it, and its message
        return resolve(reference(p).spec)
    ref = reference(p, allow=ANY)
    if ref.kind == CALLABLE and ref.agent is not None:
        return from_callable(ref.agent)
    return resolve(ref.spec)


def _picklable(*players: Any) -> bool:
    for p in players:
        try:
            pickle.dumps(p)
        except Exception:
            return False
    return True


def _writer(save: PathLike | None) -> Any:
    """``--save``'s writer, opened before any game (an unwritable path fails first)."""
    if save is None:
        return None
    from connectx_forge.tools.play.records import GameWriter

    return GameWriter(save)


@contextmanager
def _closed_on_error(writer: Any) -> Iterator[None]:
    """Close ``--save``'s writer when the run stops on an error or Ctrl-C: the games that ended stay in the file."""
    try:
        yield
    except BaseException:
        if writer is not None:
            writer.close()
        raise


def _on_game(writer: Any) -> Callable[[Any, Any], None] | None:
    """A run's ``on_game`` that writes each game as it ends."""
    return None if writer is None else (lambda job, record: writer.add(record))


def _fallback_spec(fallback: Spec | None) -> str | None:
    """A ghost's fallback agent as the commands take it (a name or a path), or None; a function is refused."""
    if fallback is not None and not isinstance(fallback, (str, os.PathLike)):
        raise UserError("a ghost's fallback is an agent by name or path (a registered agent, a project folder or "
                        "a .py file), not a function: write it into a .py file")
    return None if fallback is None else os.fspath(fallback)


@contextmanager
def _ghost_sources(replays: Sequence[PathLike] | PathLike | None, fallback: Spec | None) -> Iterator[None]:
    """``replays=`` and ``fallback=``, as ``--replays`` and ``--fallback``: where ``ghost:TEAM`` players come from,
    for this call and the workers it starts (the variables ``options.apply_ghosts`` sets, put back afterwards)."""
    from argparse import Namespace

    from connectx_forge.tools import options
    from connectx_forge.tools.ghosts.agent_file import FALLBACK_ENV
    from connectx_forge.tools.ghosts.observed_moves import ENV

    if isinstance(replays, (str, os.PathLike)):
        replays = [replays]
    saved = {name: os.environ.get(name) for name in (ENV, FALLBACK_ENV)}
    options.apply_ghosts(Namespace(replays=replays, fallback=_fallback_spec(fallback)))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _store(store: PathLike | None) -> Iterator[tuple[Path, bool]]:
    """The run's results store: the one given (kept), else one in a temporary folder, removed afterwards."""
    if store is not None:
        yield Path(store), True
        return
    with tempfile.TemporaryDirectory(prefix="cxforge-api-") as folder:
        yield Path(folder) / "run.sqlite", False


def match(a: Any, b: Any, games: int = 100, *, seed: int = 0, workers: int | None = None,
          seats: str = "both", openings: int | None = None, size: Size = STANDARD, act_timeout: float = 2,
          overage: float = 60, isolate: bool = False, save: PathLike | None = None,
          replays: Sequence[PathLike] | PathLike | None = None, fallback: Spec | None = None,
          progress: bool = False) -> MatchResult:
    """``cxforge match A B``: ``games`` seeded games between ``a`` and ``b``, seats alternating (A first in the
    even ones) unless ``seats`` is ``"first"`` or ``"second"``.

    ``openings``: start from the 4-ply suite's first M openings, each once from each seat; ``workers``: processes
    (default: all cores; a function that cannot be pickled, a lambda, plays in this process); ``isolate``: every
    player in an agent host; ``save``: write the games as JSON lines (``--save``); ``replays`` and ``fallback``:
    where ``ghost:TEAM`` players come from (``--replays``, ``--fallback``; default as the command's).
    """
    from connectx_forge.tools.play.match import MatchInterrupted, run_match
    from connectx_forge.tools.play.match_cmd import _openings
    from connectx_forge.tools.play.players import distinct
    from connectx_forge.tools.play.report import format_match
    from connectx_forge.tools.play.rules import kaggle_number
    from connectx_forge.tools.play.settings import GameSettings

    if overage < 0:
        raise UserError(f"--overage must not be negative, got {overage:g}")
    if not act_timeout > 0:
        raise UserError(f"--act-timeout must be positive, got {act_timeout:g}")
    with _ghost_sources(replays, fallback):
        pa, pb = distinct([_player(a), _player(b)])
        if workers is None and not _picklable(pa, pb):
            workers = 1
        board: Size = (size[0], size[1], size[2])
        suite = _openings(openings, board, progress)
        writer = _writer(save)
        try:
            game = GameSettings(board, kaggle_number(act_timeout), kaggle_number(overage), isolate=isolate)
            result = run_match(pa, pb, games, workers, seed, settings=game, progress=progress, seats=seats,
                               openings=suite, on_game=writer.add if writer is not None else None)
        except MatchInterrupted:
            if writer is not None:
                writer.close()
            raise
        if writer is not None:
            writer.close(result.records)
    return MatchResult(result.a, result.b, [rec.to_json() for rec in result.records], result.to_json(),
                       format_match(result), None if save is None else os.fspath(save))


def check(agent: Spec | None = None, games: int = 8, *, opponents: Sequence[str] = ("kaggle:random",
          "kaggle:negamax"), seed: int = 0, workers: int | None = None, validation: bool = True,
          act_timeout: float = 2.0, overage: float = 60.0, size: Size = STANDARD, max_games: int | None = None,
          progress: bool = False) -> CheckResult:
    """``cxforge check AGENT``: the validation episode (the file against itself), then ``games`` games against
    each opponent (Kaggle's built-ins), half in each seat, the file loaded as Kaggle loads it, in agent hosts.

    ``agent``: a built ``.py`` or ``.tar.gz``, a project folder or source ``.py``, a registered agent (built on the
    fly, into the user cache); default as the command's: the project in the working folder, else
    ``submissions/submission.py``.  The floors are the manifest's (a project's ``cxforge.toml``); against an
    opponent whose floor is not decided after ``games``, more are played, up to ``max_games`` (the command's
    default when None).  The result's ``verdict`` is the command's: PASS, FAIL or UNDECIDED.
    """
    from connectx_forge.tools.play.settings import GameSettings
    from connectx_forge.tools.submit import check as checker
    from connectx_forge.tools.submit.check_cmd import default_agent
    from connectx_forge.tools.submit.check_report import format_report
    from connectx_forge.tools.submit.kaggle_game import GameResult

    spec = default_agent(None if agent is None else _check_spec(agent))
    chosen = [checker.builtin_opponent(o) for o in opponents]
    file = checker.submission_of(spec)
    played: list[GameResult] = []
    game = GameSettings((size[0], size[1], size[2]), act_timeout, overage)
    report = checker.check_file(file.path, games, workers, opponents=chosen, settings=game, seed=seed,
                                progress=progress, validation=validation, max_games=max_games, on_game=played.append)
    played.sort(key=lambda g: g.index)
    return CheckResult.of(report.agent or file.label, str(file.path), [g.to_json() for g in played], report,
                          format_report(report))


def _check_spec(agent: Any) -> str:
    if callable(agent) and not isinstance(agent, (str, os.PathLike)):
        raise UserError("check judges a file as Kaggle loads it: give a project folder, a .py or .tar.gz file or "
                        "a registered agent, not a function (write it into a .py file; connectx_forge.match plays "
                        "a function)")
    from connectx_forge.tools.play.reference import SUBMISSIONS

    return _spec(agent, "check", SUBMISSIONS)


def _players(players: tuple[Any, ...]) -> tuple[str, ...]:
    """``tournament("a", "b")`` or ``tournament(["a", "b"])``."""
    if len(players) == 1 and isinstance(players[0], (list, tuple)):
        players = tuple(players[0])
    return tuple(_spec(p, "tournament") for p in players)


def tournament(*players: Any, gauntlet: Spec | None = None, openings: int | None = None, plies: int = 4,
               band: tuple[int, int] = (-1, 1), seed: int = 0, workers: int | None = None,
               act_timeout: float = 2, overage: float = 60, memory: int | None = None, slowdown: float = 1.0,
               store: PathLike | None = None, save: PathLike | None = None, out: PathLike | None = None,
               dask: str | None = None, replays: Sequence[PathLike] | PathLike | None = None,
               fallback: Spec | None = None, progress: bool = False) -> TournamentResult:
    """``cxforge tournament PLAYER...``: a round robin (or a ``gauntlet`` of that player against each other one)
    on the suite's first ``openings`` openings, each played twice per pairing, colours swapped.

    ``store``: a results database to keep (running the same tournament again resumes it); default a temporary
    one.  ``save``: the games as JSON lines; ``out``: a folder for report.json, the CSVs and ratings.png (``-o``).
    ``memory`` (bytes) and ``slowdown``: the agent hosts' limits; ``dask``: ``"local"`` or a scheduler's address.
    ``replays`` and ``fallback``: where ``ghost:TEAM`` players come from, as ``match``'s.  The result's
    ``players`` are the report's labels (a project's name, a file's name, a registered name).
    """
    from connectx_forge.tools.arena.report import format_tournament, write_outputs
    from connectx_forge.tools.arena.tournament import Tournament, run_tournament
    from connectx_forge.tools.play.rules import kaggle_number

    with _ghost_sources(replays, fallback):
        t = Tournament(_players(players), None if gauntlet is None else _spec(gauntlet, "tournament"), plies,
                       openings, seed, (band[0], band[1]), kaggle_number(act_timeout), kaggle_number(overage), memory,
                       slowdown)
        result, records, path, kept = _stored_run(
            lambda path, on_game: run_tournament(t, workers, path, dask, progress, on_game=on_game), store, save)
    if out is not None:
        write_outputs(result.report, Path(out))
    report = _without_store(result.report, kept)
    return TournamentResult(tuple(report["players"]), [r.to_json() for r in records], report, format_tournament(report),
                            str(path) if kept else None, None if save is None else os.fspath(save))


def _stored_run(run: Callable[[Path, Any], Any], store: PathLike | None,
                save: PathLike | None) -> tuple[Any, list[Any], Path, bool]:
    """A tournament's or SPRT's ``run(path, on_game)`` in ``store`` (a temporary one unless given), each game
    written to ``save`` as it ends and the file completed in order at the end: the result, its records, the
    store's path and whether it is kept."""
    writer = _writer(save)
    with _store(store) as (path, kept), _closed_on_error(writer):
        result = run(path, _on_game(writer))
    records = result.records()
    if writer is not None:
        writer.close(records)
    return result, records, path, kept


def _without_store(report: dict[str, Any], kept: bool) -> dict[str, Any]:
    """The report, its temporary store's path (gone by now) said as such."""
    if kept:
        return report
    return {**report, "info": {**report["info"], "store": "(temporary, removed)"}}


def sprt(new: Spec, base: Spec, *, elo0: float = 0.0, elo1: float = 10.0, alpha: float = 0.05, beta: float = 0.05,
         model: str = "normalized", max_games: int = 20000, plies: int = 4, band: tuple[int, int] = (-1, 1),
         seed: int = 0, workers: int | None = None, act_timeout: float = 2, overage: float = 60,
         memory: int | None = None, slowdown: float = 1.0, store: PathLike | None = None,
         save: PathLike | None = None, out: PathLike | None = None, dask: str | None = None,
         replays: Sequence[PathLike] | PathLike | None = None, fallback: Spec | None = None,
         progress: bool = False) -> SprtResult:
    """``cxforge sprt NEW BASE``: is NEW stronger than BASE?  Pairs of games (colours swapped) on the suite's
    openings until the sequential test decides between H0 (NEW ``elo0`` stronger) and H1 (``elo1`` stronger), or
    ``max_games`` run out.  ``model``: ``"normalized"`` (fastchess's) or ``"logistic"`` Elo.  ``store``,
    ``save``, ``out`` (report.json and llr.png), ``workers``, ``dask``, ``replays``, ``fallback``: as
    ``tournament``'s.
    """
    from connectx_forge.tools.arena.report import make_folder, write_json
    from connectx_forge.tools.arena.sprt_run import SprtSettings, format_sprt, run_sprt
    from connectx_forge.tools.play.rules import kaggle_number

    with _ghost_sources(replays, fallback):
        s = SprtSettings(_spec(new, "sprt"), _spec(base, "sprt"), elo0, elo1, alpha, beta, model, plies,
                         (band[0], band[1]), seed, max_games, kaggle_number(act_timeout), kaggle_number(overage),
                         memory, slowdown)
        result, records, path, kept = _stored_run(
            lambda path, on_game: run_sprt(s, workers, path, dask, progress, on_game=on_game), store, save)
    if out is not None:
        from connectx_forge.tools.arena import plots

        make_folder(Path(out))
        write_json(result.report, Path(out) / "report.json")
        plots.draw(plots.llr_png, result.report, Path(out) / "llr.png")
    report = _without_store(result.report, kept)
    return SprtResult(report["new"], report["base"], [r.to_json() for r in records], report, format_sprt(report),
                      str(path) if kept else None, None if save is None else os.fspath(save))


def _games_of(source: Any, episodes: Path | None, problems: list[str], name: str = "game") -> list[Any]:
    """The review's games in ``source``: a result (its ``games``), a game record or replay (a dict, called
    ``name``), a file, an episode id, or a list of any of them."""
    from connectx_forge.tools.review.games import load_games, read_record, read_replay

    if isinstance(source, (MatchResult, TournamentResult, SprtResult, LadderResult)):
        kind = type(source).__name__.removesuffix("Result").lower()
        return [read_record(g, f"{kind} game {i}") for i, g in enumerate(source.games)]
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


def review(games: Any, *, us: Sequence[str] | str | None = None, time_limit: float = 2.0, engine: str = "auto",
           episodes: PathLike | None = None, html: PathLike | None = None, progress: bool = False,
           on_problem: Callable[[str], None] | None = None) -> ReviewResult:
    """``cxforge review GAME...``: every move judged by the exact solver (``time_limit`` seconds a position;
    a value not found in time is left unknown), and where ``us`` loses.

    ``games``: a games file (``save=``, ``--save``), a Kaggle replay file or an episode id (downloaded into
    ``episodes``, default the user cache), a game as a dict, a match, tournament, SPRT or ladder result, or a
    list of them.  ``html``: also write a page per game and an index into that folder (``--html``).  A line of a games
    file that cannot be read is skipped and passed to ``on_problem`` (default: a warning).
    """
    from connectx_forge.tools import progress as bars
    from connectx_forge.tools.play.players import label_of
    from connectx_forge.tools.review.annotate import review_game
    from connectx_forge.tools.review.labels import Labeller
    from connectx_forge.tools.review.review_cmd import format_review, write_html
    from connectx_forge.tools.review.summary import format_summary, summarise

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
    labeller = Labeller(engine, time_limit)
    with bars.bar(sum(len(g.moves) for g in found), "review", unit="move", enabled=progress) as bar:
        reviews = [review_game(g, labeller, bar.update) for g in found]
    names = [us] if isinstance(us, str) else list(us or ())
    summary = summarise(reviews, [label_of(u) for u in names])
    summary_text = format_summary(summary)
    if html is not None:
        write_html(reviews, Path(html), summary_text)
    as_json = [r.to_json() for r in reviews]
    text = "\n\n".join(format_review(r) for r in reviews) + ("\n\n" + summary_text if len(reviews) > 1 else "")
    return ReviewResult(as_json, summary.to_json(), summary_text, {"summary": summary.to_json(), "games": as_json},
                        text, tuple(reviews))
