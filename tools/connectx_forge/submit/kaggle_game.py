"""One checker game: kaggle_environments' own interpreter referees, the submission plays in agent hosts.

The referee is ``make("connectx") ... env.run``, unchanged, in this process: it
keeps Kaggle's overage bookkeeping, applies Kaggle's validity rule and decides
INVALID, ERROR and TIMEOUT.  It never runs the submission: the submission's
seat is a ``HostSeat``, the callable that kaggle_environments times and calls,
which forwards each move to an agent host (``tools/connectx_forge/sandbox``), as Kaggle's
``UrlAgent`` forwards it to an agent server.  The host loads the file with
kaggle_environments' loader, afresh for each game, in a clean, limited process
group; the move is waited for at most actTimeout + the remaining overage +
``seat.MARGIN``, then the host is killed and the move is a timeout.

What the host reports comes back as Kaggle would have seen it in-process: an
``int`` or ``None`` as itself, a ``float`` as its value (so the interpreter
breaks on it as it does on Kaggle), anything else as a value the action schema
refuses (INVALID), an exception, a crash, a memory error, a load failure or a
protocol violation as an exception (ERROR), and a move past the budget as
``DeadlineExceeded`` (TIMEOUT).  The result also names the way of breaking
(``tools/connectx_forge/play/rules.RULE_BREAKS``) with one scrubbed line of detail.

Opponents are Kaggle's built-in agents (trusted code, run by the referee);
``opponent="self"`` is Kaggle's validation episode: the file in both seats,
each in its own host.  Each seat has its own ``random`` and ``numpy.random``,
seeded with ``seat_seed(seed, seat)`` (``tools/connectx_forge/play/seat_random.py``), as each
agent on Kaggle has a container of its own: a host seeds its own, and a
built-in opponent draws from its seat's state, swapped in around each call.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agents.board import STANDARD, Size
from connectx_forge import kaggle_env
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.seat_random import SeatAgent, seat_seed
from connectx_forge.players.player import FILE, Player
from connectx_forge.sandbox.limits import Limits, SeatBudget
from connectx_forge.sandbox.seat import MARGIN, HostedAgent, Reply, slowed_by

FAILED_STATUSES = ("INVALID", "ERROR", "TIMEOUT")
SELF = "self"  # the opponent of the validation episode


@dataclass(frozen=True)
class Staged:
    """The file a check plays, as staged: ``path`` (what is loaded), ``beside`` (whether files beside it are
    importable: a .tar.gz's), the hosts' ``limits`` (None: the defaults), the board ``size``, and
    ``shown_folder`` (where the logs say the file is, not its stage)."""

    path: str
    beside: bool = False
    limits: Limits | None = None
    size: Size = STANDARD
    shown_folder: str | None = None


@dataclass(frozen=True)
class CheckJob:
    """One check game: its ``index`` (-1: the validation episode), the ``opponent`` (a Kaggle built-in's name,
    or ``SELF``), the file's ``seat`` (0: first), the clock, the ``seed`` (None: drawn), and the ``file``
    (None until staged)."""

    index: int
    opponent: str
    seat: int
    act_timeout: float
    overage: float
    seed: int | None
    file: Staged | None = None


@dataclass(frozen=True)
class GameResult:
    """One check game as kaggle_environments judged it, from the file's seat ``seat`` (0: it moved first).

    ``status`` and ``reward`` are the final ones of ``culprit``'s seat (the seat that broke a rule, else the
    file's); ``outcome`` is the file's (win, draw, loss); ``kind`` the way of breaking (``rules.RULE_BREAKS``,
    "ok" when none), ``error`` its line of detail; ``durations`` the file's move times as the environment
    measured them (the first includes the load).  ``log`` is the breaking host's log, ``native`` what its native
    library said, ``slowed`` how ``--slowdown`` held the hosts; ``columns`` the moves, ``times`` every call's
    seconds, both seats in turn.  ``to_json`` is a game of ``check``'s results (``error``, ``log`` and ``slowed``
    only where there are).  ``record``: a game other than ConnectX's own record (``game_check.py``), not in
    ``to_json``.
    """

    status: str
    reward: float | None
    culprit: int
    outcome: str
    kind: str
    error: str | None = None
    durations: tuple[float, ...] = ()
    log: str | None = None
    native: tuple[str, ...] = ()
    slowed: str | None = None
    index: int = 0
    opponent: str = ""
    seat: int = 0
    plies: int = 0
    seed: int = 0
    columns: tuple[int, ...] = ()
    times: tuple[float, ...] = ()
    record: GameRecord | None = field(default=None, compare=False, repr=False)  # another game's (game_check.py)

    @property
    def moves(self) -> int:
        """The file's moves timed (in ``culprit``'s seat, as ``durations``)."""
        return len(self.durations)

    @property
    def broke(self) -> bool:
        """Whether a seat broke a rule (INVALID, ERROR or TIMEOUT)."""
        return self.kind != "ok"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"status": self.status, "reward": self.reward, "culprit": self.culprit,
                                  "outcome": self.outcome, "kind": self.kind}
        if self.error is not None:
            out["error"] = self.error
        out.update(durations=list(self.durations), moves=self.moves)
        if self.log is not None:
            out["log"] = self.log
        out["native"] = list(self.native)
        if self.slowed:
            out["slowed"] = self.slowed
        out.update(index=self.index, opponent=self.opponent, seat=self.seat, plies=self.plies, seed=self.seed,
                   columns=list(self.columns), times=list(self.times))
        return out


class HostBroke(Exception):
    """How a hosted agent broke (not a Kaggle exception type: kaggle_environments records it as ERROR)."""


class Unplayable:
    """An action that is neither an int nor a float (a str, a bool, a numpy int...), as its repr.

    kaggle_environments' action schema refuses it, as it refuses the original
    value in-process: the move is INVALID.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __deepcopy__(self, memo: dict[int, object]) -> Unplayable:
        return self


class _Struct(Protocol):
    """kaggle_environments' ``Struct``: a dict whose keys are also attributes."""

    def keys(self) -> Iterable[str]: ...

    def __getitem__(self, key: str, /) -> object: ...


class _Observation(_Struct, Protocol):
    """What kaggle_environments hands an agent as ``obs`` (the seat's overage bank read here)."""

    remainingOverageTime: float


class _Configuration(_Struct, Protocol):
    """What kaggle_environments hands an agent as ``config`` (its move time read here)."""

    actTimeout: float


class _Board(Protocol):
    """A seat's observation in a step: its ``board``, the flat grid."""

    def __getitem__(self, key: Literal["board"], /) -> Sequence[int]: ...


class _SeatState(Protocol):
    """One seat's state in a step (a ``Struct``): its status, its reward, its observation."""

    status: str
    reward: float | None

    def __getitem__(self, key: Literal["observation"], /) -> _Board: ...


class _Columns(Protocol):
    columns: int


class _Env(Protocol):
    """kaggle_environments' ``Environment``, as a check game runs and reads it: each step's seat states, each
    step's log entries (a seat's: a dict with its call's ``duration``), the built-in agents by name."""

    steps: list[list[_SeatState]]
    logs: list[list[object]]
    configuration: _Columns
    agents: dict[str, Callable[..., object]]

    def run(self, agents: list[Callable[..., object]], /) -> object: ...


class HostSeat:
    """A kaggle_environments agent that plays its moves in an agent host; ``last`` is the last reply."""

    def __init__(self, host: HostedAgent) -> None:
        self.host = host
        self.last: Reply | None = None

    def __call__(self, obs: _Observation, config: _Configuration) -> object:
        from kaggle_environments.errors import DeadlineExceeded

        budget = float(config.actTimeout) + float(obs.remainingOverageTime) + MARGIN
        reply = self.last = self.host.move(dict(obs), dict(config), budget)
        if reply.kind == "timeout":
            return DeadlineExceeded(reply.detail)
        if reply.kind != "ok":
            raise HostBroke(f"{reply.kind}: {reply.detail}")
        if reply.bad_action is not None:
            return reply.bad_float if reply.bad_float is not None else Unplayable(reply.bad_action)
        return reply.action


def make_env(act_timeout: float, overage: float, size: Size = STANDARD) -> _Env:
    """The real ConnectX environment; only ``actTimeout``, the overage bank and the board size may differ.

    With Kaggle's values (2 s, 60 s) this is plain ``make("connectx")``.  The
    overage bank is an observation default, not a configuration field, so a
    different bank means building the environment from a copy of the registered
    ConnectX specification, as ``make`` itself does.
    """
    kaggle_env.load()
    from kaggle_environments import environments, make
    from kaggle_environments.core import Environment

    configuration: dict[str, object] = {"actTimeout": act_timeout} if act_timeout != 2 else {}
    if tuple(size) != STANDARD:
        configuration.update(rows=size[0], columns=size[1], inarow=size[2])
    env: _Env  # an untyped library's object: _Env says what of it is used
    if overage == 60:
        env = make("connectx", configuration=configuration)
        return env
    make("connectx")  # resolves the lazily registered environment
    spec = copy.deepcopy(environments["connectx"]["specification"])
    spec["observation"]["remainingOverageTime"]["default"] = overage
    env = Environment(**{**environments["connectx"], "specification": spec}, configuration=configuration)
    return env


NATIVE_LINE = "cxforge: native library "  # what connectx_forge.runtime.load_native says once per process


def play(job: CheckJob) -> GameResult:
    """Play one check game ``job`` of a staged file; its result, judged by kaggle_environments."""
    import numpy as np

    file = job.file
    if file is None:
        raise ValueError(f"check game {job.index} has no staged file to play")
    seed = job.seed if job.seed is not None else random.randrange(1 << 31)
    random.seed(seed)
    np.random.seed(seed)
    env = make_env(job.act_timeout, job.overage, file.size)
    seat = job.seat
    hosted = (0, 1) if job.opponent == SELF else (seat,)
    player = Player(FILE, file.path, file.path, submission=file.path)
    seats: dict[int, HostSeat] = {}
    try:
        for i in hosted:
            budget = SeatBudget.of_board(file.size, job.act_timeout, job.overage)
            seats[i] = HostSeat(HostedAgent(player, seat_seed(seed, i), budget, file.limits, beside=file.beside,
                                            shown_folder=file.shown_folder))
        players: list[Callable[..., object]] = [
            seats[i] if i in seats else SeatAgent(env.agents[job.opponent], seat_seed(seed, i)) for i in range(2)]
        result = _run(env, players, seat, seats)
        culprit = result.culprit
        log = (seats[culprit].host.log_text()  # why it broke, in its own words
               if result.outcome == "loss" and result.broke and culprit in seats else None)
        said = seats[min(seats)].host.log_text() if seats else ""
        native = tuple(ln[len(NATIVE_LINE):] for ln in said.splitlines() if ln.startswith(NATIVE_LINE))[:5]
        slowed = slowed_by(s.host for s in seats.values())
    finally:
        for s in seats.values():
            s.host.close()
    return dataclasses.replace(result, log=log, native=native, slowed=slowed, index=job.index,
                               opponent=job.opponent, seat=seat, plies=len(env.steps) - 1, seed=seed,
                               columns=tuple(_columns(env)), times=tuple(_call_times(env)))


def _columns(env: _Env) -> list[int]:
    """The columns played, read from the boards (a rule-breaking last action changed none)."""
    columns, before = [], None
    for step in env.steps:
        board = list(step[0]["observation"]["board"])
        if before is not None:
            changed = [i for i, (a, b) in enumerate(zip(before, board, strict=True)) if a != b]
            if changed:
                columns.append(changed[0] % int(env.configuration.columns))
        before = board
    return columns


def _call_times(env: _Env) -> list[float]:
    """Each agent call's seconds, both seats in the order they moved, as the environment timed them."""
    return [entry["duration"] for step in env.logs for entry in step
            if isinstance(entry, dict) and "duration" in entry]


def _run(env: _Env, players: list[Callable[..., object]], seat: int, seats: dict[int, HostSeat]) -> GameResult:
    """Run the game; its result as the referee judged it (the rest of ``GameResult`` is ``play``'s)."""
    try:
        env.run(players)
    except Exception as exc:  # the interpreter itself broke on the action (a float)
        floats = [i for i, s in sorted(seats.items()) if s.last is not None and s.last.bad_float is not None]
        culprit = floats[0] if floats else seat if seat in seats else min(seats)
        reply = seats[culprit].last
        what = f"{reply.bad_action}" if reply is not None and reply.bad_action is not None else "the action"
        return GameResult("ERROR", None, culprit, "loss", "invalid",
                          f"invalid: kaggle_environments' interpreter crashed on {what} "
                          f"({type(exc).__name__}; return a plain int)", _durations(env, seat))
    final = env.steps[-1]
    broken = [i for i in sorted(seats) if final[i].status in FAILED_STATUSES]
    culprit = broken[0] if broken else seat
    mine, theirs = final[culprit], final[1 - culprit]
    durations = _durations(env, culprit)
    if broken:
        kind, error = _failure(mine.status, seats[culprit].last)
        return GameResult(mine.status, mine.reward, culprit, "loss", kind, error, durations)
    if theirs.status in FAILED_STATUSES:
        return GameResult(mine.status, mine.reward, culprit, "win", "ok",
                          f"the opponent's status was {theirs.status}", durations)
    outcomes: dict[float | None, str] = {1: "win", 0: "draw", -1: "loss"}
    outcome = outcomes.get(mine.reward, "draw")
    return GameResult(mine.status, mine.reward, culprit, outcome, "ok", None, durations)


def _failure(status: str, reply: Reply | None) -> tuple[str, str]:
    """The way of breaking and its line of detail, from the status and the host's last reply."""
    if status == "TIMEOUT":
        took = f"a move took {reply.duration:.2f} s" if reply is not None else "a move took too long"
        return "timeout", (f"timeout: {took} with the overage bank spent"
                           + ("; its process group was killed" if reply and reply.kind == "timeout" else ""))
    if reply is None:
        return "error", status
    if status == "INVALID":
        if reply.bad_action is not None:
            return "invalid", f"invalid move: {reply.bad_action} (not a plain int)"
        column = "None (column 0)" if reply.action is None else reply.action
        return "invalid", f"invalid move: column {column} (not on the board, or full)"
    if reply.kind == "ok":
        return "error", status
    return reply.kind, f"{reply.kind}: {reply.detail}"


def _durations(env: _Env, seat: int) -> tuple[float, ...]:
    """The agent's move durations, as the environment measured them (the first one includes the load)."""
    return tuple(entry["duration"] for step in env.logs if len(step) > seat
                 for entry in (step[seat],) if isinstance(entry, dict) and "duration" in entry)
