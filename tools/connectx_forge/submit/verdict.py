"""The checker's verdict: count a submission's games and decide whether it passes.

Three verdicts, each with its exit status (``EXIT_CODES``): PASS (0) when the
file broke no rule and every win-rate floor of its manifest is shown to be met
(a floor not played, or neither met nor missed, is UNDECIDED, never PASS);
FAIL (1) when it makes any invalid move, raises, times out, fails its
validation episode, or is shown to be below a floor; UNDECIDED (3) when it broke
no rule and no floor failed, but some floor could be shown neither met nor
missed within the games allowed (``--max-games``).  A floor is judged over both
seats by the sequential test of ``sequential.py``: exact Clopper-Pearson bounds
at 95% confidence over all its looks.

``summarize`` reads the results of ``kaggle_game.play`` (a ``GameResult`` per
game, and the validation episode's) and returns a ``CheckReport``; games are
counted by the game loop's ``Tally``.  A failed validation episode fails the check, as
it marks a Kaggle submission Error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from connectx_bundler.manifest import Manifest
from connectx_forge.errors import EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.rules import HOST_BREAKS, KAGGLE_STATUS
from connectx_forge.play.tally import Tally
from connectx_forge.sandbox import jail
from connectx_forge.stats import wilson
from connectx_forge.submit import sequential
from connectx_forge.submit.kaggle_game import FAILED_STATUSES, GameResult

SEAT_NAMES = ("first", "second")
LOG_TAIL_LINES = 15  # of a failing agent's log, in the report
STATUS_FAILURES = {status: outcome for outcome, status in KAGGLE_STATUS.items()  # Kaggle status -> Tally
                   if outcome not in HOST_BREAKS}
PASS, FAIL, UNDECIDED = "PASS", "FAIL", "UNDECIDED"  # the one vocabulary: the CLI, the JSON, the notebook
EXIT_CODES = {PASS: EXIT_OK, FAIL: EXIT_FAIL, UNDECIDED: EXIT_UNDECIDED}  # tools/connectx_forge/errors.py's table


@dataclass
class SeatResult(Tally):
    """The games against one opponent in one seat, counted as the game loop counts them."""

    opponent: str = ""
    seat: str = ""

    @property
    def win_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the win rate."""
        return wilson(self.wins, self.games)


@dataclass(frozen=True)
class FloorResult:
    """One win-rate floor from the manifest, judged over both seats by the sequential test (``sequential.py``).

    ``lower`` and ``upper`` are the one-sided Clopper-Pearson bounds of the win rate at ``level`` (the
    error each look of the test may spend): PASS when ``lower`` is at or above the floor, FAIL when
    ``upper`` is below it, UNDECIDED when neither holds at the last look, or no game was played against it.
    """

    opponent: str
    floor: float
    games: int
    wins: int
    rate: float
    upper: float
    verdict: str  # PASS, FAIL, UNDECIDED
    lower: float = 0.0
    level: float = 0.05


@dataclass(frozen=True)
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
    validation: GameResult | None = None  # the validation episode's result (None: not played)
    breaks: dict[str, int] = field(default_factory=dict)  # games lost by each way of breaking (rules.RULE_BREAKS)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors_seen: list[str] = field(default_factory=list)
    log_tail: list[str] = field(default_factory=list)  # the last lines of the first failing game's agent log
    log_game: str | None = None  # which game that was
    slowed: dict[str, int] = field(default_factory=dict)  # how --slowdown held the hosts -> games (throttle.method)
    max_games: int = 0  # the cap of games per opponent for a floor (0: games_per_opponent)
    undecided: list[str] = field(default_factory=list)  # the floors neither met nor missed within max_games
    game: str = CONNECTX  # the game played (games.catalog)
    repeats: dict[str, int] = field(default_factory=dict)  # games held back as repeats, by opponent (another game)

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
    def verdict(self) -> str:
        """FAIL on any problem, else UNDECIDED while a floor is, else PASS."""
        return FAIL if self.problems else UNDECIDED if self.undecided else PASS

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def exit_code(self) -> int:
        """``cxforge check``'s exit status: 0 PASS, 1 FAIL, 3 UNDECIDED."""
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, object]:
        """What ``cxforge check --json`` prints."""
        out = asdict(replace(self, validation=None))
        out["validation"] = None if self.validation is None else self.validation.to_json()
        if self.game == CONNECTX:  # a ConnectX check's JSON stays as it was
            del out["game"], out["repeats"]
        for seat, raw in zip(self.seats, out["seats"], strict=True):
            raw["win_interval"] = list(seat.win_interval)
        out.update(passed=self.passed, verdict=self.verdict, exit_code=self.exit_code, invalid=self.invalid,
                   errors=self.errors, timeouts=self.timeouts)
        return out


def _tally_seats(opponents: tuple[str, ...], results: list[GameResult]) -> list[SeatResult]:
    seats = {(o, s): SeatResult(opponent=o, seat=SEAT_NAMES[s]) for o in opponents for s in (0, 1)}
    for r in results:
        result = r.outcome if r.outcome in ("win", "draw") else "loss"
        seats[(r.opponent, r.seat)].count(result, STATUS_FAILURES.get(r.status))
    return [s for s in seats.values() if s.games]


def _errors_seen(results: list[GameResult]) -> list[str]:
    """The distinct errors of the games the agent lost by a rule break, first seen first."""
    seen: list[str] = []
    for r in results:
        if r.status in FAILED_STATUSES and r.error and r.error not in seen:
            seen.append(r.error)
    return seen


def _move_times(results: list[GameResult]) -> tuple[list[float], list[float]]:
    """The agent's first moves (which include the load) and its later moves, in seconds."""
    first: list[float] = []
    later: list[float] = []
    for r in results:
        if r.durations:
            first.append(r.durations[0])
            later.extend(r.durations[1:])
    return first, later


def _log_of(played: list[GameResult]) -> tuple[list[str], str | None]:
    """The last lines of the first failing game's agent log, and which game that was (none: ``([], None)``)."""
    failing = next((r for r in played if r.log), None)
    if failing is None or failing.log is None:
        return [], None
    game = ("the validation episode" if failing.index < 0 else
            f"game {failing.index + 1} (vs {failing.opponent}, {SEAT_NAMES[failing.seat]})")
    return failing.log.rstrip("\n").splitlines()[-LOG_TAIL_LINES:], game


@dataclass(frozen=True)
class Checked:
    """What was checked: the file as the user named it, the games asked of each opponent, Kaggle's clock, the
    opponents and the game."""

    path: str
    games: int
    act_timeout: float
    overage: float
    opponents: tuple[str, ...]
    game: str = CONNECTX


def summarize(checked: Checked, results: list[GameResult], manifest_path: Path | None, manifest: Manifest,
              validation: GameResult | None = None, plan: sequential.FloorLooks | None = None, *,
              floor_results: list[GameResult] | None = None, repeats: dict[str, int] | None = None) -> CheckReport:
    """Tally the games and decide: the validation episode, invalid moves, errors, timeouts and floors.

    ``plan`` is the floor test's plan of looks (default: one look, at the games played).  ``floor_results``:
    the games the floors are judged on (default: all of them; another game's check gives those that are
    evidence, ``game_check.counted``), ``repeats`` the games held back by opponent."""
    path, games, act_timeout, overage = checked.path, checked.games, checked.act_timeout, checked.overage
    opponents, game = checked.opponents, checked.game
    played = ([validation] if validation else []) + results
    errors_seen = _errors_seen(played)
    first_moves, later_moves = _move_times(played)
    all_moves = first_moves + later_moves
    over = sum(d > act_timeout for d in all_moves)
    seats = _tally_seats(opponents, results)
    problems = _validation_problems(validation) + _rule_break_problems(seats)
    notes = [f"the agent's native library {line}" for line in sorted({ln for r in played for ln in r.native})]
    notes += _rule_break_notes(over, act_timeout, errors_seen)
    floors: list[FloorResult] = []
    undecided: list[str] = []
    if manifest_path is None:
        notes.append("no manifest beside the file: validity only, no win-rate floors checked")
    else:
        if manifest.get("valid") is False:
            notes.append("the manifest says this agent plays invalid moves on purpose")
        floors, undecided = _judge_floors(problems, manifest.get("floors", {}),
                                          results if floor_results is None else floor_results, plan, repeats or {})
    log_tail, log_game = _log_of(played)
    return CheckReport(
        path=path, games_per_opponent=games, act_timeout=act_timeout, overage=overage, seats=seats, floors=floors,
        manifest=str(manifest_path) if manifest_path else None, agent=manifest.get("agent"),
        slowest_move_s=max(later_moves, default=0.0), slowest_first_move_s=max(first_moves, default=0.0),
        moves=len(all_moves), moves_over_act_timeout=over, validation=validation, breaks=_breaks(results),
        problems=problems, notes=notes, errors_seen=errors_seen[:5], log_tail=log_tail, log_game=log_game,
        slowed=jail.slowed_games(r.slowed for r in played), max_games=plan.cap if plan else games,
        undecided=undecided, game=game, repeats=dict(repeats or {}))


def _breaks(results: list[GameResult]) -> dict[str, int]:
    """How many games the agent lost by each way of breaking."""
    counts: dict[str, int] = {}
    for r in results:
        if r.status in FAILED_STATUSES:
            counts[r.kind] = counts.get(r.kind, 0) + 1
    return counts


def _validation_problems(v: GameResult | None) -> list[str]:
    """The failed validation episode's problem (none when it passed or was not played)."""
    if v is None or v.status not in FAILED_STATUSES:
        return []
    return [f"the validation episode (the file against itself) ended in {v.status} for the "
            f"{SEAT_NAMES[v.culprit]} seat: {v.error}; Kaggle would mark the submission Error, so no other game "
            "was played"]


def _rule_break_problems(seats: list[SeatResult]) -> list[str]:
    """A problem for each kind of rule broken in the games (invalid moves, errors, timeouts)."""
    problems = []
    invalid, errors, timeouts = (sum(s.invalid for s in seats), sum(s.errors for s in seats),
                                 sum(s.timeouts for s in seats))
    if invalid:
        problems.append(f"{invalid} game(s) lost by an INVALID move")
    if errors:
        problems.append(f"{errors} game(s) lost by an ERROR (the agent raised or did not load)")
    if timeouts:
        problems.append(f"{timeouts} game(s) lost by a TIMEOUT")
    return problems


def _rule_break_notes(over: int, act_timeout: float, errors_seen: list[str]) -> list[str]:
    """Notes on moves that spent overage time and on a module missing when the file is loaded alone."""
    notes = []
    if over:
        notes.append(f"{over} move(s) took longer than actTimeout {act_timeout:g} s and spent overage time")
    if any("ImportError" in e or "ModuleNotFoundError" in e for e in errors_seen):
        notes.append("the file imports a module that is not there when it is loaded alone, as on "
                     "Kaggle (a sibling file or this project's packages?): bundle it into the file")
    return notes


def judge_floor(opponent: str, floor: float, results: list[GameResult],
                plan: sequential.FloorLooks | None = None) -> tuple[FloorResult, sequential.Decision]:
    """The floor against ``opponent`` over the games played against it, by ``plan`` (default: one look)."""
    games = [r for r in results if r.opponent == opponent]
    n = len(games)
    wins = sum(r.outcome == "win" for r in games)
    test = plan or sequential.FloorLooks(max(n, 1), max(n, 1))
    decision = test.decide(floor, wins, n)
    verdict = {sequential.PASS: PASS, sequential.FAIL: FAIL}.get(decision.verdict, UNDECIDED) if n else UNDECIDED
    return (FloorResult(opponent, float(floor), n, wins, wins / n if n else 0.0, decision.upper, verdict,
                        decision.lower, test.level), decision)


def _judge_floors(problems: list[str], floors: dict[str, float], results: list[GameResult],
                  plan: sequential.FloorLooks | None, repeats: dict[str, int] | None = None,
                  ) -> tuple[list[FloorResult], list[str]]:
    """Each floor judged, and the floors undecided; a floor missed is added to ``problems`` (after one, or a
    rule broken, no floor is undecided: the check has failed).  ``repeats``: the games against an opponent
    held back as repeats of earlier ones, which an undecided floor's line names."""
    judged, undecided = [], []
    for opponent, floor in sorted(floors.items()):
        result, _ = judge_floor(opponent, floor, results, plan)
        bounds = f"{result.wins}/{result.games} = {result.rate:.0%}, bounds [{result.lower:.1%}, {result.upper:.1%}]"
        if result.verdict == FAIL:
            problems.append(f"win rate vs {opponent} is below its floor {floor:.0%} at 95% confidence ({bounds})")
        elif problems or result.verdict == PASS:
            pass  # a rule broken fails the check whatever its floors; a floor met is what PASS needs
        elif (repeats or {}).get(opponent):
            undecided.append(f"floor vs {opponent} {floor:.0%} not decided: only {result.games} distinct game(s) "
                             f"({bounds}); {(repeats or {})[opponent]} more repeated one of them move for move in "
                             "the same seat, which is no new evidence: an agent that draws at random (Python's "
                             "random, seeded per game) plays new games")
        elif not result.games:
            undecided.append(f"floor vs {opponent} {floor:.0%} not decided: no games against it were played")
        else:
            undecided.append(f"floor vs {opponent} {floor:.0%} neither met nor missed in {result.games} "
                             f"games ({bounds}): raise --max-games to play more, or lower the floor")
        judged.append(result)
    return judged, undecided
