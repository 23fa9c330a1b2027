"""Check a submission file the way Kaggle will run it, before it is uploaded: the ``check_file`` API.

The file is copied ALONE into an empty temporary folder (``stage``; a .tar.gz
is unpacked there).  As on Kaggle, it first plays itself once (the validation
episode): when that fails, Kaggle marks the submission Error, and the check
fails without playing on.  Then it plays Kaggle's built-in ``random`` and
``negamax`` in both seats.  Every game is ``kaggle_game.play``: the real
``kaggle_environments`` interpreter referees in a worker process, and the file
plays in agent hosts (``tools/connectx_forge/sandbox``), loaded afresh for each game by
kaggle_environments' loader, under the ``Limits`` given, so Kaggle's own rules
decide INVALID, ERROR and TIMEOUT and nothing the file does reaches the
checker.  The games run on the game tools' worker pool (forked processes);
``verdict.py`` decides, with the floors of the file's own build manifest
(``manifest_and_floors_text``): one whose sha256 is not the file's is an error, and every
floor must be played (``connectx_floors``), so that PASS means every floor was met.
``check_agent`` takes any player ``cxforge check`` accepts (a project folder, a
source ``.py``, a registered agent: built on the fly first).

A file built for another game (its manifest's ``game``), or checked with ``game=``, is checked as Kaggle's
competition for that game runs it (``game_check.py``): its validation episode, then the game's built-in
agents, the floors judged over the games that are new evidence.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agents.board import STANDARD, Size
from connectx_bundler import manifest as manifests
from connectx_bundler.cache import playable
from connectx_bundler.project import settings_file
from connectx_forge import kaggle_env
from connectx_forge import progress as bars
from connectx_forge.archive import unpack
from connectx_forge.arena.match import game_seed
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import reference
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.play.settings import GameSettings
from connectx_forge.play.worker_pool import Progress, in_processes
from connectx_forge.players import player as players
from connectx_forge.players.player import SUBMISSIONS, Player
from connectx_forge.sandbox.limits import Limits
from connectx_forge.submit import game_check, kaggle_game, sequential
from connectx_forge.submit.kaggle_game import FAILED_STATUSES, CheckJob, GameResult, Staged
from connectx_forge.submit.upload_copy import staged_copy
from connectx_forge.submit.verdict import Checked, CheckReport, FloorResult, judge_floor, summarize

DEFAULT_FILE = Path("submissions/submission.py")  # what a check given nothing checks outside a project
OPPONENTS = ("random", "negamax")
DEFAULT_GAMES = 8  # per opponent: the first batch, and all the games when no floor needs more
DEFAULT_MAX_GAMES = 256  # per opponent with a floor: the sequential test's cap
KAGGLE_ACT_TIMEOUT = float(ACT_TIMEOUT)
KAGGLE_OVERAGE = float(OVERAGE)
VALIDATION_SEED_INDEX = (1 << 32) - 1  # the validation episode is seeded apart from every game
Look = Callable[[FloorResult, str], None]  # told each floor's state after each look


@dataclass(frozen=True)
class Gate:
    """How much ``cxforge check`` plays, the flags ``upload`` takes too with the same meaning: ``games`` per
    opponent first, at most ``max_games`` while a floor is undecided (None: the default), the ``opponents``
    (the check's names; none: the game's default), the base ``seed`` and the ``workers``."""

    games: int = DEFAULT_GAMES
    max_games: int | None = None
    opponents: tuple[str, ...] = ()  # none named: the game's (ConnectX: OPPONENTS; game_check.opponents_of)
    seed: int | None = 0
    workers: int | None = None


def plan_line(named: Path, games: int, cap: int, opponents: Sequence[str], workers: int) -> str:
    """The check's first line (``progress.Bar``): the file, the games against each opponent, the cap while a
    floor is undecided, and the workers."""
    return (f"cxforge check: {named.name}: {bars.count(games, 'game')} against each of {', '.join(opponents)}, "
            f"up to {cap:,} while a floor is undecided, -w {workers}")


def check_file(path: str | os.PathLike[str], gate: Gate | None = None, *, settings: GameSettings | None = None,
               progress: bool = False, validation: bool = True, floors: bool = True, on_look: Look | None = None,
               on_game: Callable[[GameResult], None] | None = None, shown: Path | None = None,
               game: str | None = None) -> CheckReport:
    """``_check`` of a copy of the file at ``path`` (and of its manifest), read once as ``upload`` reads what it
    sends (``upload_copy.staged_copy``: no link to it or on its path, a regular file of at most 100 MB, hashed):
    the check judges those bytes, whatever the path holds meanwhile; ``shown`` (default ``path``) is what the
    report names.  ``game``: the game to play (``--game``; default: ``settings.game`` where it is not ConnectX,
    else the game the file's manifest names, else ConnectX; ``game_check.game_checked``)."""
    named = shown or Path(path)
    with staged_copy(Path(path)) as copy:
        try:
            return _check(copy.file, gate, settings=settings, progress=progress, validation=validation,
                          floors=floors, on_look=on_look, on_game=on_game, shown=named, game=game)
        except UserError as exc:  # its one line names the file given, not the copy
            raise type(exc)(str(exc).replace(str(copy.file), str(named))) from None


def _check(path: str | os.PathLike[str], gate: Gate | None = None, *, settings: GameSettings | None = None,
           progress: bool = False, validation: bool = True, floors: bool = True, on_look: Look | None = None,
           on_game: Callable[[GameResult], None] | None = None, shown: Path | None = None,
           game: str | None = None) -> CheckReport:
    """Check the submission at ``path`` as ``gate`` says (default ``Gate()``): the validation episode, then
    ``games`` games per opponent, and more against an opponent whose floor is not decided yet, up to
    ``max_games`` (``sequential.py``).

    Game ``i`` is seeded with ``game_seed(seed, i)`` (``seed=None``: unseeded),
    and each of its seats (the file's host, the built-in opponent) has its own
    ``random`` and ``numpy.random``, seeded from it (``tools/connectx_forge/play/seat_random.py``).
    ``workers`` games play at once (default: all cores); ``progress`` shows a bar
    on a terminal; ``validation=False`` skips the validation episode; ``settings``
    (``GameSettings``, default Kaggle's: 6x7x4, 2 s a move, a 60 s bank): the board,
    the clock and the agent hosts' limits (default ``Limits()``).  ``max_games`` (default ``DEFAULT_MAX_GAMES``, or
    ``games`` when that is more) caps the games per opponent with a floor;
    ``floors=False`` judges validity alone, as for a file without a manifest.
    ``on_look(floor, action)`` is called after each batch with each floor's state
    and what comes next ("playing on to N games", or the verdict); ``on_game(result)``
    with each game's result as it comes in (the validation episode's first).  ``shown``: where the report
    and the logs say the file (and its manifest) are, when ``path`` is a copy of it (``upload`` checks the
    very copy it sends: ``upload_copy.py``); default ``path``.
    """
    gate = gate or Gate()
    games, workers, opponents, seed, max_games = gate.games, gate.workers, gate.opponents, gate.seed, gate.max_games
    asked = game if game is not None else settings.game if settings is not None and settings.game != CONNECTX \
        else None
    game_settings = settings if settings is not None else GameSettings()
    act_timeout, overage, limits, size = (float(game_settings.act_timeout), float(game_settings.overage),
                                          game_settings.limits, game_settings.size)
    source = Path(path)
    named = source if shown is None else shown
    cap = max(games, DEFAULT_MAX_GAMES) if max_games is None else max_games
    _validate(source, games, act_timeout, overage, cap)
    which = game_check.game_checked(asked, _built_for(source, named, floors), named)
    if which != CONNECTX:
        return _check_other(source, named, gate, replace(game_settings, game=which), cap, progress=progress,
                            validation=validation, floors=floors, on_look=on_look, on_game=on_game)
    opponents = opponents or OPPONENTS
    _validate_size(size)
    chosen = tuple(builtin_opponent(o) for o in opponents)
    manifest_path, manifest, note = _read_manifest_of(source, named, floors)
    shown_manifest = None if manifest_path is None else manifests.manifest_path(named)
    plan = sequential.FloorLooks(games, cap)
    wanted = connectx_floors(manifest, shown_manifest, chosen)
    manifest = {**manifest, "floors": wanted}  # by the check's names of the opponents
    jobs_for(chosen, games, act_timeout, overage, seed)  # refuses an unknown opponent before anything is played
    kaggle_env.load()  # once, before the workers fork
    with tempfile.TemporaryDirectory(prefix="cxforge-check-") as folder:
        alone = stage(source, Path(folder))
        staged = Staged(str(alone), source.name.endswith(".tar.gz"), limits or Limits(), size,
                        str(named.resolve().parent))  # logs name the file where it is, not its stage
        first = None
        if validation:
            first = kaggle_game.play(replace(validation_job(act_timeout, overage, seed), file=staged))
            if on_game is not None:
                on_game(first)
        results: list[GameResult] = []
        if first is None or not first.broke:
            played = {o: 0 for o in chosen}
            target = {o: games for o in chosen}
            line: str | None = plan_line(named, games, cap, chosen, workers or os.cpu_count() or 1)
            while True:
                batch = [replace(job, file=staged) for o in chosen if target.get(o, 0) > played[o]
                         for job in jobs_for(chosen, target[o], act_timeout, overage, seed, start=played[o],
                                             only=o)]
                batch.sort(key=lambda job: job.index)
                results += in_processes(kaggle_game.play, batch, workers or os.cpu_count() or 1,
                                        progress=Progress("check", "game", enabled=progress, plan=line,
                                                          sample=workers or os.cpu_count() or 1),
                                        on_result=None if on_game is None else
                                        lambda _i, result: on_game(result))
                played.update(target)
                line = None  # the first batch's bar says it
                if any(r.status in FAILED_STATUSES for r in results):
                    break  # a rule broken: the check has failed, whatever the floors
                target = _next_targets(wanted, results, plan, played, set(target), on_look)
                if not target:
                    break
    report = summarize(Checked(str(named), games, act_timeout, overage, chosen), results, shown_manifest, manifest,
                       validation=first, plan=plan)
    notes = report.notes
    if note:
        notes = [note] + [n for n in notes if not n.startswith("no manifest beside")]
    if tuple(size) != STANDARD:
        notes = notes + [f"played on a {size[0]}x{size[1]} board, {size[2]} in a row: Kaggle's leaderboard "
                         "plays 6x7, 4 in a row"]
    return replace(report, notes=notes)


def _built_for(source: Path, named: Path, floors: bool) -> str | None:
    """The game the file's manifest names (None: ConnectX's, or no manifest).  With ``floors`` a manifest
    that does not describe the file is the one-line error the check gives for it; without, it names none."""
    try:
        return game_check.manifest_game(source)
    except UserError as exc:
        if not floors:
            return None
        raise type(exc)(str(exc).replace(str(source.parent), str(named.parent))) from None


def _check_other(source: Path, named: Path, gate: Gate, settings: GameSettings, cap: int, *, progress: bool,
                 validation: bool, floors: bool, on_look: Look | None,
                 on_game: Callable[[GameResult], None] | None) -> CheckReport:
    """The check of a file for a game other than ConnectX (``game_check.py``)."""
    info = catalog.get(settings.game)
    game_check.refuse_connectx_flags(info.name, settings)
    manifest_path, manifest, note = _read_manifest_of(source, named, floors)
    shown_manifest = None if manifest_path is None else manifests.manifest_path(named)
    wanted = game_check.game_floors(manifest, info, shown_manifest)
    opponents = game_check.opponents_of(gate.opponents, wanted, info)
    plan = game_check.GameCheckPlan(info, opponents, wanted, gate.games, cap, gate.seed,
                                    gate.workers or os.cpu_count() or 1)
    report = game_check.check_game(source, named, plan, settings, shown_manifest, manifest, progress=progress,
                                   validation=validation, on_look=on_look, on_game=on_game)
    if note:
        return replace(report, notes=[note] + [n for n in report.notes if not n.startswith("no manifest beside")])
    return report


def _next_targets(floors: dict[str, float], results: list[GameResult], plan: sequential.FloorLooks,
                  played: dict[str, int], batch: set[str], on_look: Look | None) -> dict[str, int]:
    """After a batch (games against the opponents in ``batch``): the games each opponent whose floor is not
    decided yet must reach at the next look; none once a floor has failed (the check has)."""
    looked = [judge_floor(o, f, results, plan) for o, f in sorted(floors.items()) if o in batch]
    failed = any(d.verdict == sequential.FAIL for _, d in looked)
    target: dict[str, int] = {}
    for result, decision in looked:
        nxt = plan.next_look(played[result.opponent]) if decision.verdict == sequential.MORE else None
        if nxt is not None and not failed:
            target[result.opponent] = nxt
        if on_look is not None:
            action = (result.verdict if nxt is None else "stopped: another floor failed" if failed
                      else f"playing on to {nxt} games")
            on_look(result, action)
    return target


def default_agent(spec: str | None) -> str:
    """What a command checks when it is given nothing: the project in the working folder, else the default file."""
    if spec is not None:
        return spec
    return "." if settings_file(Path.cwd()) is not None else str(DEFAULT_FILE)


def submission_of(spec: str) -> Player:
    """The file that ``cxforge check`` and ``upload`` judge for ``spec`` (``reference``, allowing what a
    submission can be): a built file as it is; a project folder, a source ``.py`` or a registered agent built
    on the fly (with its manifest beside it; its path in the toolkit's own cache resolved, so that a linked HOME
    or cache folder is no link ``check_file`` refuses)."""
    file = playable(reference(spec, allow=SUBMISSIONS))
    return replace(file, submission=str(Path(file.file).resolve())) if file.built_here else file


def check_agent(spec: str, gate: Gate | None = None, *, settings: GameSettings | None = None,
                progress: bool = False, validation: bool = True, floors: bool = True, on_look: Look | None = None,
                on_game: Callable[[GameResult], None] | None = None, shown: Path | None = None,
                game: str | None = None) -> CheckReport:
    """``check_file`` of whatever ``spec`` names (``submission_of``), with ``check_file``'s options."""
    return check_file(submission_of(spec).file, gate, settings=settings, progress=progress, validation=validation,
                      floors=floors, on_look=on_look, on_game=on_game, shown=shown, game=game)


def validation_job(act_timeout: float, overage: float, seed: int | None) -> CheckJob:
    """Kaggle's validation episode: the file against itself."""
    return CheckJob(-1, kaggle_game.SELF, 0, act_timeout, overage,
                    None if seed is None else game_seed(seed, VALIDATION_SEED_INDEX))


def stage(source: Path, folder: Path) -> Path:
    """Put the submission alone in the empty ``folder`` as Kaggle would; the path to load.

    A ``.py`` file is copied alone.  A ``.tar.gz`` is unpacked there (files
    beside ``main.py`` are importable on Kaggle too) and ``main.py`` is loaded.
    A file that does not compile is staged all the same: it fails to load in
    its games (a ``load`` failure), as it fails on Kaggle.
    """
    if source.name.endswith(".tar.gz"):
        main = unpack(source, folder)
    else:
        main = folder / source.name
        shutil.copyfile(source, main)
    return main


def _read_manifest_of(source: Path, named: Path, floors: bool) -> tuple[Path | None, manifests.Manifest, str | None]:
    """``manifest_and_floors_text`` of ``source``, a copy of ``named``: its one-line errors name ``named``'s folder."""
    try:
        return manifest_and_floors_text(source, floors)
    except UserError as exc:
        if source == named:
            raise
        raise type(exc)(str(exc).replace(str(source.parent), str(named.parent))) from None


def manifest_and_floors_text(path: Path, floors: bool = True) -> tuple[Path | None, manifests.Manifest, str | None]:
    """The build manifest of ``path`` (``manifest.read_manifest``): ``(manifest, data, None)``, or
    ``(None, {}, None)`` when there is none.

    A manifest that is unreadable or does not describe this file is a ``BuildError`` (a ``UserError``), never
    dropped with its floors.  ``floors=False`` (``--no-floors``) reads none: ``(None, {}, note)``, ``note``
    saying that the floors of a manifest there were not checked.
    """
    beside = manifests.manifest_path(path)
    if not floors:
        return None, {}, ("--no-floors: validity only, the manifest's win-rate floors were not checked"
                          if beside.is_file() else None)
    data = manifests.read_manifest(path)
    return (None, {}, None) if data is None else (beside, data, None)


def connectx_floors(manifest: manifests.Manifest, where: Path | None, opponents: tuple[str, ...]) -> dict[str, float]:
    """The manifest's win-rate floors by opponent (``random``, ``negamax``).  A floor against an opponent that
    ``opponents`` leaves out is a ``UserError``: the check could not decide it, and a check that passes has
    decided every floor as met."""
    wanted: dict[str, float] = {}
    for spec, floor in (manifest.get("floors") or {}).items():
        opponent = builtin_opponent(str(spec))
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 <= floor <= 1:
            raise UserError(f"{where}: the floor vs {spec} must be a win rate from 0 to 1, not {floor!r}")
        if opponent not in opponents:
            raise UserError(f"{manifest.get('agent') or 'the file'} has a win-rate floor vs {opponent} ({floor:.0%}, "
                            f"in {where}), but --opponents leaves kaggle:{opponent} out: play it too, or check "
                            "validity alone with --no-floors")
        wanted[opponent] = float(floor)
    return wanted


def _validate(source: Path, games: int, act_timeout: float, overage: float, cap: int) -> None:
    if not source.exists():
        raise UserError(f"{source}: no such file")
    if not source.is_file():
        raise UserError(f"{source}: not a file")
    if games < 1:
        raise UserError(f"--games must be at least 1, not {games}")
    if cap < games:
        raise UserError(f"--max-games {cap} is less than --games {games}: the cap must be at least the first batch")
    if act_timeout <= 0 or overage < 0:
        raise UserError("--act-timeout must be positive and --overage not negative")
    if not os.access(source, os.R_OK):
        raise UserError(f"{source}: cannot read it")


def _validate_size(size: Size) -> None:
    """A board kaggle_environments can play, refused as one line before anything starts (not its schema's
    traceback)."""
    rows, columns, inarow = size
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in size):
        raise UserError(f"the board's rows, columns and inarow must be whole numbers of at least 1, got {size!r}")
    if inarow > max(rows, columns):
        raise UserError(f"inarow {inarow} on a {rows}x{columns} board: no line of {inarow} fits, so no one can win")


CHECK_WORKERS = "games played at once, each refereed in its own worker process (default: all cores)"


def builtin_opponent(spec: str) -> str:
    """The check's name (``random``, ``negamax``) of a Kaggle built-in opponent, written as a floor of
    ``cxforge.toml`` may write it: ``kaggle:random`` or ``random`` (``reference``, allowing ``OPPONENTS``)."""
    return str(reference(spec, allow=players.OPPONENTS, role="opponent").name)


def jobs_for(opponents: tuple[str, ...], games: int, act_timeout: float, overage: float,
             seed: int | None, *, start: int = 0, only: str | None = None) -> list[CheckJob]:
    """``games`` per opponent, half in each seat (the first seat takes an odd one), interleaved.

    ``start`` and ``only``: the games ``start`` to ``games`` against ``only``, as a later batch of the floor
    test plays them: game ``g`` against the ``i``-th opponent is always index ``g * len(opponents) + i``, so
    its seat and seed do not depend on the batches."""
    opponents = tuple(builtin_opponent(o) for o in opponents)  # kaggle:random is random; an unknown one refused
    jobs: list[CheckJob] = []
    for g in range(start, games):
        for i, opponent in enumerate(opponents):
            if only is not None and opponent != only:
                continue
            index = g * len(opponents) + i
            jobs.append(CheckJob(index, opponent, g % 2, act_timeout, overage,
                                 None if seed is None else game_seed(seed, index)))
    return jobs


def game_record(result: GameResult, label: str, size: Size = STANDARD) -> GameRecord:
    """A check game's ``result`` as a game record (its ``to_json`` a line of a games file, what ``cxforge logs``,
    ``review`` and ``replay`` read): the file is ``label``, its opponent ``kaggle:NAME`` (itself in the
    validation episode); another game's its own record, so labelled."""
    if result.record is not None:
        other = label if result.opponent == kaggle_game.SELF else f"kaggle:{result.opponent}"
        pair = (label, other) if result.seat == 0 else (other, label)
        return replace(result.record, players=pair)
    seat = result.seat
    other = label if result.opponent == kaggle_game.SELF else f"kaggle:{result.opponent}"
    players = (label, other) if seat == 0 else (other, label)
    culprit = result.culprit + 1 if result.broke else None
    if result.broke:
        winner: int | None = 3 - (culprit or 1)
    else:
        winner = {"win": seat + 1, "loss": 2 - seat}.get(result.outcome)
    outcome = result.kind if result.broke else "draw" if winner is None else "win"
    log = result.log
    record = GameRecord(players=players, size=size, seed=result.seed, moves=list(result.columns),
                        times=list(result.times), outcome=outcome, winner=winner, culprit=culprit,
                        error=result.error if result.broke else None, index=result.index, a_seat=seat + 1,
                        logs={str(culprit or seat + 1): log} if log else None, slowed=result.slowed)
    return record
