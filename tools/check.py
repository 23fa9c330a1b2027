"""``cxforge check``: play a submission file the way Kaggle will, before it is uploaded.

The file is copied ALONE into an empty temporary folder and loaded there by the
real ``kaggle_environments`` (by path: exec'd inside the first call, last
callable), in separate processes that cannot import the project
(``tools/kaggle_load.py``).  It plays Kaggle's built-in ``random`` and ``negamax``
in both seats through ``make("connectx") ... run``, so Kaggle's own validity and
time rules decide INVALID, ERROR and TIMEOUT.

A file fails the check when it makes any invalid move, raises, times out, or is
significantly below a win-rate floor from its manifest (``submission.json``
beside ``submission.py``).  Floor rule: over both seats, the file fails when the
UPPER end of the 95% Wilson interval of its win rate is below the floor, i.e.
when a handful of games already shows it is worse than the floor.  A win rate
below the floor that is not significantly below passes, with a note.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable

from tools import kaggle_load
from tools.errors import UserError
from tools.match import Tally
from tools.stats import format_rate, wilson

HELP = "play a submission file against Kaggle's random and negamax, loaded as Kaggle loads it"

OPPONENTS = ("random", "negamax")
DEFAULT_GAMES = 8  # a ~1 s/move agent: about 100 s on 2 cores (see the report)
KAGGLE_ACT_TIMEOUT = 2.0
KAGGLE_OVERAGE = 60.0
SEAT_NAMES = ("first", "second")
STATUS_FAILURES = {"INVALID": "invalid", "ERROR": "error", "TIMEOUT": "timeout"}  # Kaggle status -> Tally
PROJECT_ROOT = Path(__file__).resolve().parent.parent
HANG_SLACK_S = 30.0  # beyond the agent's whole time budget, a game is declared hung


@dataclass
class SeatResult(Tally):
    """The games against one opponent in one seat, counted as the game loop counts them."""

    opponent: str = ""
    seat: str = ""

    @property
    def win_interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)


@dataclass
class FloorResult:
    """One win-rate floor from the manifest, judged over both seats."""

    opponent: str
    floor: float
    games: int
    wins: int
    rate: float
    upper: float
    verdict: str  # "pass", "fail", "not significant" (below, but passes), "not played"


@dataclass
class CheckReport:
    """Everything ``cxforge check`` found; ``passed`` decides the exit code."""

    path: str
    games_per_opponent: int
    act_timeout: float
    overage: float
    seats: list[SeatResult]
    floors: list[FloorResult]
    manifest: str | None
    agent: str | None
    slowest_move_s: float
    slowest_first_move_s: float
    moves: int
    moves_over_act_timeout: int
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors_seen: list[str] = field(default_factory=list)

    @property
    def invalid(self) -> int:
        return sum(s.invalid for s in self.seats)

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.seats)

    @property
    def timeouts(self) -> int:
        return sum(s.timeouts for s in self.seats)

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for seat, raw in zip(self.seats, out["seats"]):
            raw["win_interval"] = list(seat.win_interval)
        out.update(passed=self.passed, invalid=self.invalid, errors=self.errors, timeouts=self.timeouts)
        return out


# ---------------------------------------------------------------- the Python API

def check_file(path: str | os.PathLike[str], games: int = DEFAULT_GAMES, workers: int | None = None,
               *, opponents: Iterable[str] = OPPONENTS, act_timeout: float = KAGGLE_ACT_TIMEOUT,
               overage: float = KAGGLE_OVERAGE, seed: int | None = None,
               progress: bool = False, hang_slack_s: float = HANG_SLACK_S) -> CheckReport:
    """Check the submission at ``path``: play ``games`` games per opponent, split across seats."""
    source = Path(path)
    _validate(source, games, act_timeout, overage)
    opponents = tuple(opponents)
    manifest_path, manifest = read_manifest(source)
    jobs = _jobs(opponents, games, act_timeout, overage, seed)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    with tempfile.TemporaryDirectory(prefix="cxforge-check-") as folder:
        alone = stage(source, Path(folder))
        for job in jobs:
            job["path"] = str(alone)
        deadline = _game_deadline(act_timeout, overage, hang_slack_s)
        results = _play_all(jobs, workers, Path(folder), deadline, progress)
    return summarize(str(source), games, act_timeout, overage, opponents, results, manifest_path, manifest)


def stage(source: Path, folder: Path) -> Path:
    """Put the submission alone in the empty ``folder`` as Kaggle would; the path to load.

    A ``.py`` file is copied alone.  A ``.tar.gz`` is unpacked there (files beside
    ``main.py`` are importable on Kaggle too) and ``main.py`` is loaded.
    """
    if source.name.endswith(".tar.gz"):
        try:
            with tarfile.open(source, "r:gz") as archive:
                archive.extractall(folder, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise UserError(f"{source}: not a readable .tar.gz ({exc})") from None
        main = folder / "main.py"
        if not main.is_file():
            raise UserError(f"{source}: no main.py at the top of the archive (Kaggle runs main.py)")
        label = f"{source} (main.py)"
    else:
        main = folder / source.name
        shutil.copyfile(source, main)
        label = str(source)
    try:
        compile(main.read_bytes(), label, "exec")
    except SyntaxError as exc:
        raise UserError(f"{label}, line {exc.lineno}: syntax error: {exc.msg}; Kaggle cannot load it") from None
    except ValueError as exc:  # null bytes
        raise UserError(f"{label}: not Python source ({exc})") from None
    return main


def manifest_for(path: Path) -> Path:
    """The build manifest's path: same stem, ``.json`` (submission.tar.gz -> submission.json)."""
    stem = path.name[: -len(".tar.gz")] if path.name.endswith(".tar.gz") else path.stem
    return path.with_name(stem + ".json")


def read_manifest(path: Path) -> tuple[Path | None, dict[str, Any]]:
    """The build manifest beside ``path``, or ``(None, {})``."""
    manifest = manifest_for(path)
    if not manifest.is_file():
        return None, {}
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{manifest}: not a readable JSON manifest ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("floors", {}), dict):
        raise UserError(f"{manifest}: a manifest must be a JSON object with a 'floors' object")
    return manifest, data


def _validate(source: Path, games: int, act_timeout: float, overage: float) -> None:
    if not source.exists():
        raise UserError(f"{source}: no such file")
    if not source.is_file():
        raise UserError(f"{source}: not a file")
    if games < 1:
        raise UserError(f"--games must be at least 1, not {games}")
    if act_timeout <= 0 or overage < 0:
        raise UserError("--act-timeout must be positive and --overage not negative")
    if not os.access(source, os.R_OK):
        raise UserError(f"{source}: cannot read it")


def _jobs(opponents: tuple[str, ...], games: int, act_timeout: float, overage: float,
          seed: int | None) -> list[dict[str, Any]]:
    """``games`` per opponent, half in each seat (the first seat takes an odd one), interleaved."""
    jobs = []
    for g in range(games):
        for opponent in opponents:
            if opponent not in OPPONENTS:
                raise UserError(f"unknown opponent {opponent!r}; Kaggle's built-ins are {', '.join(OPPONENTS)}")
            jobs.append({"index": len(jobs), "opponent": opponent, "seat": g % 2,
                         "act_timeout": act_timeout, "overage": overage,
                         "seed": None if seed is None else seed + len(jobs)})
    return jobs


def _game_deadline(act_timeout: float, overage: float, slack: float) -> float:
    """Wall time after which a game is hung: the agent's whole 6x7 budget, plus slack for the opponent."""
    return 21 * act_timeout + overage + slack


# ---------------------------------------------------------------- running the workers

def _play_all(jobs: list[dict[str, Any]], workers: int, folder: Path, deadline: float,
              progress: bool) -> list[dict[str, Any]]:
    """Run every job in ``workers`` isolated processes; one result per job, in job order."""
    from tqdm import tqdm

    todo: queue.Queue[dict[str, Any]] = queue.Queue()
    for job in jobs:
        todo.put(job)
    results: dict[int, dict[str, Any]] = {}
    lock = threading.Lock()
    with tqdm(total=len(jobs), desc="check", unit="game", file=sys.stderr, disable=not progress,
              leave=False) as bar:
        def record(result: dict[str, Any]) -> None:
            with lock:
                results[result["index"]] = result
                bar.update(1)

        threads = [threading.Thread(target=_worker, args=(todo, folder, deadline, record), daemon=True)
                   for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return [results[job["index"]] for job in jobs]


def _start_process(folder: Path, log: IO[bytes]) -> subprocess.Popen[str]:
    """An isolated Python (-I: no PYTHONPATH, no user site, no script folder) in the empty folder."""
    return subprocess.Popen(
        [sys.executable, "-I", kaggle_load.__file__, str(PROJECT_ROOT)],
        cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)


def _worker(todo: queue.Queue[dict[str, Any]], folder: Path, deadline: float,
            record: Callable[[dict[str, Any]], None]) -> None:
    """Feed jobs one at a time to a process; a hung or dead process is replaced."""
    proc: subprocess.Popen[str] | None = None
    with tempfile.TemporaryFile() as log:  # the process's stderr, outside the agent's folder
        try:
            while True:
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    return
                if proc is None or proc.poll() is not None:
                    log.seek(0)
                    log.truncate()
                    proc = _start_process(folder, log)
                record(_run_job(proc, job, deadline, log))
        finally:
            if proc is not None:
                _stop(proc)


def _last_line(log: IO[bytes]) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - 4000))
    lines = log.read().decode(errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else ""


def _run_job(proc: subprocess.Popen[str], job: dict[str, Any], deadline: float,
             log: IO[bytes]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    hung = threading.Event()

    def kill() -> None:
        hung.set()
        proc.kill()

    timer = threading.Timer(deadline, kill)
    timer.start()
    try:
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
    except (BrokenPipeError, OSError):
        line = ""
    finally:
        timer.cancel()
    if line:
        return json.loads(line)
    base = {"index": job["index"], "opponent": job["opponent"], "seat": job["seat"], "outcome": "loss",
            "reward": None, "durations": [], "moves": 0}
    proc.kill()
    proc.wait()
    if hung.is_set():
        return {**base, "status": "TIMEOUT",
                "error": f"the game did not finish within {deadline:.0f} s (a move hung); process killed"}
    said = _last_line(log)
    return {**base, "status": "ERROR",
            "error": f"the process running the agent exited (code {proc.returncode}) in the middle of a game"
                     + (f"; its last words: {said}" if said else "")}


def _stop(proc: subprocess.Popen[str]) -> None:
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------- the verdict

def summarize(path: str, games: int, act_timeout: float, overage: float, opponents: tuple[str, ...],
              results: list[dict[str, Any]], manifest_path: Path | None,
              manifest: dict[str, Any]) -> CheckReport:
    """Tally the games and decide: invalid moves, errors, timeouts and floors."""
    seats = {(o, s): SeatResult(opponent=o, seat=SEAT_NAMES[s]) for o in opponents for s in (0, 1)}
    errors_seen: list[str] = []
    first_moves, later_moves = [], []
    for r in results:
        status = r["status"]
        result = r["outcome"] if r["outcome"] in ("win", "draw") else "loss"
        seats[(r["opponent"], r["seat"])].count(result, STATUS_FAILURES.get(status))
        if status in kaggle_load.FAILED_STATUSES and r.get("error") and r["error"] not in errors_seen:
            errors_seen.append(r["error"])
        if r["durations"]:
            first_moves.append(r["durations"][0])
            later_moves.extend(r["durations"][1:])
    all_moves = first_moves + later_moves
    report = CheckReport(
        path=path, games_per_opponent=games, act_timeout=act_timeout, overage=overage,
        seats=[s for s in seats.values() if s.games], floors=[],
        manifest=str(manifest_path) if manifest_path else None, agent=manifest.get("agent"),
        slowest_move_s=max(later_moves, default=0.0), slowest_first_move_s=max(first_moves, default=0.0),
        moves=len(all_moves), moves_over_act_timeout=sum(d > act_timeout for d in all_moves),
        errors_seen=errors_seen[:5])
    if report.invalid:
        report.problems.append(f"{report.invalid} game(s) lost by an INVALID move")
    if report.errors:
        report.problems.append(f"{report.errors} game(s) lost by an ERROR (the agent raised or did not load)")
    if report.timeouts:
        report.problems.append(f"{report.timeouts} game(s) lost by a TIMEOUT")
    if report.moves_over_act_timeout:
        report.notes.append(f"{report.moves_over_act_timeout} move(s) took longer than actTimeout "
                            f"{act_timeout:g} s and spent overage time")
    if any("ImportError" in e or "ModuleNotFoundError" in e for e in errors_seen):
        report.notes.append("the file imports a module that is not there when it is loaded alone, as on "
                            "Kaggle (a sibling file or this project's packages?): bundle it into the file")
    if manifest_path is None:
        report.notes.append("no manifest beside the file: validity only, no win-rate floors checked")
    else:
        if manifest.get("valid") is False:
            report.notes.append("the manifest says this agent plays invalid moves on purpose")
        _judge_floors(report, manifest.get("floors", {}), results)
    return report


def _judge_floors(report: CheckReport, floors: dict[str, float], results: list[dict[str, Any]]) -> None:
    for opponent, floor in sorted(floors.items()):
        games = [r for r in results if r["opponent"] == opponent]
        wins = sum(r["outcome"] == "win" for r in games)
        n = len(games)
        rate = wins / n if n else 0.0
        upper = wilson(wins, n)[1]
        if not n:
            verdict = "not played"
            report.notes.append(f"floor vs {opponent} not checked: no games against it were played")
        elif upper < floor:
            verdict = "fail"
            report.problems.append(f"win rate vs {opponent} {format_rate(wins, n)} is significantly "
                                   f"below its floor {floor:.0%}")
        elif rate < floor:
            verdict = "not significant"
            report.notes.append(f"win rate vs {opponent} {rate:.0%} is under its floor {floor:.0%}, "
                                f"but not significantly over {n} games (try more --games)")
        else:
            verdict = "pass"
        report.floors.append(FloorResult(opponent, float(floor), n, wins, rate, upper, verdict))


# ---------------------------------------------------------------- output

def format_report(report: CheckReport) -> str:
    """The readable table ``cxforge check`` prints."""
    who = f" (agent {report.agent})" if report.agent else ""
    lines = [f"check {report.path}{who}: {report.games_per_opponent} game(s) per opponent, loaded as Kaggle "
             f"does from an empty folder; actTimeout {report.act_timeout:g} s, overage {report.overage:g} s",
             "",
             f"{'opponent':<9} {'seat':<7} {'games':>5} {'W':>4} {'D':>4} {'L':>4}  {'win rate [95% Wilson]':<22}"
             f" {'invalid':>7} {'error':>5} {'timeout':>7}"]
    for s in report.seats:
        lines.append(f"{s.opponent:<9} {s.seat:<7} {s.games:>5} {s.wins:>4} {s.draws:>4} {s.losses:>4}  "
                     f"{format_rate(s.wins, s.games):<22} {s.invalid:>7} {s.errors:>5} {s.timeouts:>7}")
    lines.append("")
    for f in report.floors:
        lines.append(f"floor vs {f.opponent}: {f.floor:.0%}; won {f.wins}/{f.games} = {f.rate:.0%} "
                     f"(upper 95% bound {f.upper:.0%}): {f.verdict}")
    lines.append(f"first move, including the load: {_seconds(report.slowest_first_move_s)} at most; "
                 f"slowest later move: {_seconds(report.slowest_move_s)} ({report.moves} moves timed)")
    for e in report.errors_seen:
        lines.append(f"agent error: {e}")
    for n in report.notes:
        lines.append(f"note: {n}")
    if report.passed:
        lines.append("PASS")
    else:
        lines.extend(f"FAIL: {p}" for p in report.problems)
    return "\n".join(lines)


def _seconds(s: float) -> str:
    return f"{s:.2f} s" if s >= 1 else f"{1000 * s:.1f} ms"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = HELP + "\n\n" + (
        "The file is copied alone into an empty temporary folder and loaded by kaggle_environments by\n"
        "path, in separate processes that cannot see this project.  It plays Kaggle's built-in random\n"
        "and negamax in both seats.  Exit status 1 when it makes any invalid move, raises or times\n"
        "out, or is significantly below a win-rate floor of the manifest beside it (submission.json\n"
        "beside submission.py): over both seats, it fails when the upper end of the 95% Wilson\n"
        "interval of its win rate is below the floor.  Without a manifest only validity is checked.")
    parser.add_argument("path", help="the submission: a .py file, or a .tar.gz with main.py at its top")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help=f"games per opponent, split evenly across seats (default {DEFAULT_GAMES})")
    parser.add_argument("--workers", type=int, default=None,
                        help="parallel processes (default: all cores)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--opponents", default=",".join(OPPONENTS),
                        help="comma-separated built-in opponents (default random,negamax)")
    parser.add_argument("--act-timeout", type=float, default=KAGGLE_ACT_TIMEOUT,
                        help="seconds per move before overage is used (Kaggle: 2; change only to test)")
    parser.add_argument("--overage", type=float, default=KAGGLE_OVERAGE,
                        help="overage bank in seconds per game (Kaggle: 60; change only to test)")
    parser.add_argument("--seed", type=int, default=None, help="seed Python's random in each game")


def run(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, not {args.workers}")
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    report = check_file(args.path, args.games, args.workers, opponents=opponents,
                        act_timeout=args.act_timeout, overage=args.overage, seed=args.seed,
                        progress=sys.stderr.isatty())
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    return 0 if report.passed else 1
