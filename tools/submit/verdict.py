"""The checker's verdict: count a submission's games and decide whether it passes.

A file fails the check when it makes any invalid move, raises, times out, or is
significantly below a win-rate floor from its manifest.  Floor rule: over both
seats, the file fails when the UPPER end of the 95% Wilson interval of its win
rate is below the floor, i.e. when a handful of games already shows it is worse
than the floor.  A win rate below the floor that is not significantly below
passes, with a note.

``summarize`` reads the results of ``kaggle_game.play`` (one dict per game,
and the validation episode's) and returns a ``CheckReport``; games are counted
by the game loop's ``Tally``.  A failed validation episode fails the check, as
it marks a Kaggle submission Error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from connectx_forge.tools import options
from connectx_forge.tools.play.rules import HOST_BREAKS, KAGGLE_STATUS
from connectx_forge.tools.play.tally import Tally
from connectx_forge.tools.stats import format_rate, wilson
from connectx_forge.tools.submit.kaggle_game import FAILED_STATUSES

SEAT_NAMES = ("first", "second")
LOG_TAIL_LINES = 15  # of a failing agent's log, in the report
STATUS_FAILURES = {status: outcome for outcome, status in KAGGLE_STATUS.items()  # Kaggle status -> Tally
                   if outcome not in HOST_BREAKS}


@dataclass
class SeatResult(Tally):
    """The games against one opponent in one seat, counted as the game loop counts them."""

    opponent: str = ""
    seat: str = ""

    @property
    def win_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the win rate."""
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
    validation: dict[str, Any] | None = None  # the validation episode's result (None: not played)
    breaks: dict[str, int] = field(default_factory=dict)  # games lost by each way of breaking (rules.RULE_BREAKS)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors_seen: list[str] = field(default_factory=list)
    log_tail: list[str] = field(default_factory=list)  # the last lines of the first failing game's agent log
    log_game: str | None = None  # which game that was
    slowed: dict[str, int] = field(default_factory=dict)  # how --slowdown held the hosts -> games (throttle.method)

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
        """What ``cxforge check --json`` prints."""
        out = asdict(self)
        for seat, raw in zip(self.seats, out["seats"], strict=True):
            raw["win_interval"] = list(seat.win_interval)
        out.update(passed=self.passed, invalid=self.invalid, errors=self.errors, timeouts=self.timeouts)
        return out


def _tally_seats(opponents: tuple[str, ...], results: list[dict[str, Any]]) -> list[SeatResult]:
    seats = {(o, s): SeatResult(opponent=o, seat=SEAT_NAMES[s]) for o in opponents for s in (0, 1)}
    for r in results:
        result = r["outcome"] if r["outcome"] in ("win", "draw") else "loss"
        seats[(r["opponent"], r["seat"])].count(result, STATUS_FAILURES.get(r["status"]))
    return [s for s in seats.values() if s.games]


def _errors_seen(results: list[dict[str, Any]]) -> list[str]:
    """The distinct errors of the games the agent lost by a rule break, first seen first."""
    seen: list[str] = []
    for r in results:
        if r["status"] in FAILED_STATUSES and r.get("error") and r["error"] not in seen:
            seen.append(r["error"])
    return seen


def _move_times(results: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """The agent's first moves (which include the load) and its later moves, in seconds."""
    first, later = [], []
    for r in results:
        if r["durations"]:
            first.append(r["durations"][0])
            later.extend(r["durations"][1:])
    return first, later


def summarize(path: str, games: int, act_timeout: float, overage: float, opponents: tuple[str, ...],
              results: list[dict[str, Any]], manifest_path: Path | None,
              manifest: dict[str, Any], validation: dict[str, Any] | None = None) -> CheckReport:
    """Tally the games and decide: the validation episode, invalid moves, errors, timeouts and floors."""
    played = ([validation] if validation else []) + results
    errors_seen = _errors_seen(played)
    first_moves, later_moves = _move_times(played)
    all_moves = first_moves + later_moves
    report = CheckReport(
        path=path, games_per_opponent=games, act_timeout=act_timeout, overage=overage,
        seats=_tally_seats(opponents, results), floors=[],
        manifest=str(manifest_path) if manifest_path else None, agent=manifest.get("agent"),
        slowest_move_s=max(later_moves, default=0.0), slowest_first_move_s=max(first_moves, default=0.0),
        moves=len(all_moves), moves_over_act_timeout=sum(d > act_timeout for d in all_moves),
        errors_seen=errors_seen[:5], validation=validation, breaks=_breaks(results),
        slowed=options.slowed_games(r.get("slowed") for r in played))
    engines = sorted({line for r in played for line in r.get("native") or ()})
    report.notes.extend(f"the agent's native library {line}" for line in engines)
    failing = next((r for r in played if r.get("log")), None)
    if failing is not None:
        report.log_tail = failing["log"].rstrip("\n").splitlines()[-LOG_TAIL_LINES:]
        report.log_game = ("the validation episode" if failing.get("index", 0) < 0 else
                           f"game {failing['index']} (vs {failing['opponent']}, {SEAT_NAMES[failing['seat']]})")
    _judge_validation(report)
    _judge_rule_breaks(report, errors_seen)
    if manifest_path is None:
        report.notes.append("no manifest beside the file: validity only, no win-rate floors checked")
    else:
        if manifest.get("valid") is False:
            report.notes.append("the manifest says this agent plays invalid moves on purpose")
        _judge_floors(report, manifest.get("floors", {}), results)
    return report


def _breaks(results: list[dict[str, Any]]) -> dict[str, int]:
    """How many games the agent lost by each way of breaking."""
    counts: dict[str, int] = {}
    for r in results:
        if r["status"] in FAILED_STATUSES:
            counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    return counts


def _judge_validation(report: CheckReport) -> None:
    v = report.validation
    if v is not None and v["status"] in FAILED_STATUSES:
        report.problems.append(f"the validation episode (the file against itself) ended in {v['status']} for "
                               f"the {SEAT_NAMES[v['culprit']]} seat: {v.get('error')}; Kaggle would mark the "
                               f"submission Error, so no other game was played")


def _judge_rule_breaks(report: CheckReport, errors_seen: list[str]) -> None:
    if report.invalid:
        report.problems.append(f"{report.invalid} game(s) lost by an INVALID move")
    if report.errors:
        report.problems.append(f"{report.errors} game(s) lost by an ERROR (the agent raised or did not load)")
    if report.timeouts:
        report.problems.append(f"{report.timeouts} game(s) lost by a TIMEOUT")
    if report.moves_over_act_timeout:
        report.notes.append(f"{report.moves_over_act_timeout} move(s) took longer than actTimeout "
                            f"{report.act_timeout:g} s and spent overage time")
    if any("ImportError" in e or "ModuleNotFoundError" in e for e in errors_seen):
        report.notes.append("the file imports a module that is not there when it is loaded alone, as on "
                            "Kaggle (a sibling file or this project's packages?): bundle it into the file")


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
