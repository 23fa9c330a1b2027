"""One checker game: kaggle_environments' own interpreter referees, the submission plays in agent hosts.

The referee is ``make("connectx") ... env.run``, unchanged, in this process: it
keeps Kaggle's overage bookkeeping, applies Kaggle's validity rule and decides
INVALID, ERROR and TIMEOUT.  It never runs the submission: the submission's
seat is a ``HostSeat``, the callable that kaggle_environments times and calls,
which forwards each move to an agent host (``tools/sandbox``), as Kaggle's
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
(``tools/play/rules.RULE_BREAKS``) with one scrubbed line of detail.

Opponents are Kaggle's built-in agents (trusted code, run by the referee);
``opponent="self"`` is Kaggle's validation episode: the file in both seats,
each in its own host.  Each seat has its own ``random`` and ``numpy.random``,
seeded with ``seat_seed(seed, seat)`` (``tools/play/seat_random.py``), as each
agent on Kaggle has a container of its own: a host seeds its own, and a
built-in opponent draws from its seat's state, swapped in around each call.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from agents.board import STANDARD, Size
from connectx_forge.tools import kaggle_env
from connectx_forge.tools.play.players import Player
from connectx_forge.tools.play.seat_random import SeatAgent, seat_seed
from connectx_forge.tools.sandbox.limits import Limits
from connectx_forge.tools.sandbox.seat import MARGIN, HostedAgent, Reply, slowed_by

FAILED_STATUSES = ("INVALID", "ERROR", "TIMEOUT")
SELF = "self"  # the opponent of the validation episode
Job = dict[str, Any]


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

    def __deepcopy__(self, memo: dict[int, Any]) -> Unplayable:
        return self


class HostSeat:
    """A kaggle_environments agent that plays its moves in an agent host; ``last`` is the last reply."""

    def __init__(self, host: HostedAgent) -> None:
        self.host = host
        self.last: Reply | None = None

    def __call__(self, obs: Any, config: Any) -> Any:
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


def make_env(act_timeout: float, overage: float, size: Size = STANDARD) -> Any:
    """The real ConnectX environment; only ``actTimeout``, the overage bank and the board size may differ.

    With Kaggle's values (2 s, 60 s) this is plain ``make("connectx")``.  The
    overage bank is an observation default, not a configuration field, so a
    different bank means building the environment from a copy of the registered
    ConnectX specification, as ``make`` itself does.
    """
    kaggle_env.load()
    from kaggle_environments import environments, make
    from kaggle_environments.core import Environment

    configuration: dict[str, Any] = {"actTimeout": act_timeout} if act_timeout != 2 else {}
    if tuple(size) != STANDARD:
        configuration.update(rows=size[0], columns=size[1], inarow=size[2])
    if overage == 60:
        return make("connectx", configuration=configuration)
    make("connectx")  # resolves the lazily registered environment
    spec = copy.deepcopy(environments["connectx"]["specification"])
    spec["observation"]["remainingOverageTime"]["default"] = overage
    return Environment(**{**environments["connectx"], "specification": spec}, configuration=configuration)


NATIVE_LINE = "cxforge: native library "  # what connectx_forge.runtime.load_native says once per process


def play(job: Job) -> dict[str, Any]:
    """Play one check game ``job`` (``path``, ``beside``, ``opponent``, ``seat``, ``act_timeout``,
    ``overage``, ``seed``, ``index``, ``limits``); its result, judged by kaggle_environments."""
    import numpy as np

    seed = job["seed"] if job["seed"] is not None else random.randrange(1 << 31)
    random.seed(seed)
    np.random.seed(seed)
    size = tuple(job.get("size") or STANDARD)
    env = make_env(job["act_timeout"], job["overage"], size)
    seat = job["seat"]
    hosted = (0, 1) if job["opponent"] == SELF else (seat,)
    player = Player(job["path"], job["path"], "file")
    limits = Limits(**job["limits"]) if job.get("limits") else None
    seats: dict[int, HostSeat] = {}
    try:
        for i in hosted:
            seats[i] = HostSeat(HostedAgent(player, seat_seed(seed, i), size, job["act_timeout"], job["overage"],
                                            limits, beside=job.get("beside", False),
                                            shown_folder=job.get("shown_folder")))
        players: list[Any] = [seats[i] if i in seats else SeatAgent(env.agents[job["opponent"]], seat_seed(seed, i))
                              for i in range(2)]
        result = _run(env, players, seat, seats)
        culprit = result.get("culprit")
        if result.get("outcome") == "loss" and result.get("kind") not in (None, "ok") and culprit in seats:
            result["log"] = seats[culprit].host.log_text()  # why it broke, in its own words
        said = seats[min(seats)].host.log_text() if seats else ""
        result["native"] = [ln[len(NATIVE_LINE):] for ln in said.splitlines() if ln.startswith(NATIVE_LINE)][:5]
        slowed = slowed_by(s.host for s in seats.values())
        if slowed:
            result["slowed"] = slowed
    finally:
        for s in seats.values():
            s.host.close()
    result.update(index=job["index"], opponent=job["opponent"], seat=seat, plies=len(env.steps) - 1, seed=seed,
                  columns=_columns(env), times=_call_times(env))
    return result


def _columns(env: Any) -> list[int]:
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


def _call_times(env: Any) -> list[float]:
    """Each agent call's seconds, both seats in the order they moved, as the environment timed them."""
    return [entry["duration"] for step in env.logs for entry in step
            if isinstance(entry, dict) and "duration" in entry]


def _run(env: Any, players: list[Any], seat: int, seats: dict[int, HostSeat]) -> dict[str, Any]:
    try:
        env.run(players)
    except Exception as exc:  # the interpreter itself broke on the action (a float)
        floats = [i for i, s in sorted(seats.items()) if s.last is not None and s.last.bad_float is not None]
        culprit = floats[0] if floats else seat if seat in seats else min(seats)
        reply = seats[culprit].last
        what = f"{reply.bad_action}" if reply is not None and reply.bad_action is not None else "the action"
        return {"status": "ERROR", "outcome": "loss", "reward": None, "kind": "invalid", "culprit": culprit,
                "error": f"invalid: kaggle_environments' interpreter crashed on {what} "
                         f"({type(exc).__name__}; return a plain int)", **_timings(env, seat)}
    final = env.steps[-1]
    broken = [i for i in sorted(seats) if final[i].status in FAILED_STATUSES]
    culprit = broken[0] if broken else seat
    mine, theirs = final[culprit], final[1 - culprit]
    result: dict[str, Any] = {"status": mine.status, "reward": mine.reward, "culprit": culprit}
    if broken:
        result.update(outcome="loss", **_failure(mine.status, seats[culprit].last))
    elif theirs.status in FAILED_STATUSES:
        result.update(outcome="win", kind="ok", error=f"the opponent's status was {theirs.status}")
    else:
        result.update(outcome={1: "win", 0: "draw", -1: "loss"}.get(mine.reward, "draw"), kind="ok")
    result.update(_timings(env, culprit))
    return result


def _failure(status: str, reply: Reply | None) -> dict[str, Any]:
    """The way of breaking and its line of detail, from the status and the host's last reply."""
    if status == "TIMEOUT":
        took = f"a move took {reply.duration:.2f} s" if reply is not None else "a move took too long"
        return {"kind": "timeout", "error": f"timeout: {took} with the overage bank spent"
                                             + ("; its process group was killed" if reply and reply.kind == "timeout"
                                                else "")}
    if reply is None:
        return {"kind": "error", "error": status}
    if status == "INVALID":
        if reply.bad_action is not None:
            return {"kind": "invalid", "error": f"invalid move: {reply.bad_action} (not a plain int)"}
        column = "None (column 0)" if reply.action is None else reply.action
        return {"kind": "invalid", "error": f"invalid move: column {column} (not on the board, or full)"}
    if reply.kind == "ok":
        return {"kind": "error", "error": status}
    return {"kind": reply.kind, "error": f"{reply.kind}: {reply.detail}"}


def _timings(env: Any, seat: int) -> dict[str, Any]:
    """The agent's move durations, as the environment measured them (the first one includes the load)."""
    durations = [step[seat]["duration"] for step in env.logs
                 if len(step) > seat and isinstance(step[seat], dict) and "duration" in step[seat]]
    return {"durations": durations, "moves": len(durations)}
