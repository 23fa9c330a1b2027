"""One game of a kaggle-environments game other than ConnectX, refereed by the game's own interpreter.

The referee is kaggle-environments' ``env.run`` in this (trusted) process.  Each seat is a callable: a
Kaggle built-in (``kaggle:NAME``: kaggle-environments' own code) plays here, and a file or project plays in
an agent host of its own (``sandbox.seat.HostedAgent``), jailed as ConnectX's are.  A hosted seat's
callable sends the observation (bounded: ``MAX_OBSERVATION`` bytes) and turns the host's reply into what
``Agent.act`` expects of an agent, so that Kaggle's own code gives the statuses and rewards:

* an action that crossed as JSON (``protocol.json_action``, at most the game's ``max_action`` bytes) is the
  action; one that is not JSON (a set, a numpy scalar) is ``Unsendable``, which the game's schema refuses
  as it refuses any such value (INVALID, or the schema's default where the game says so);
* a timeout is ``DeadlineExceeded`` (TIMEOUT); a raise, crash, memory, load or protocol failure, or an action
  over the bound, is ``AgentBroke``, which ``Agent.act`` catches (ERROR).

The game's result is Kaggle's final rewards and statuses (``episode_result``): a seat that broke loses, else
the higher reward wins, and equal rewards draw.  The map is seeded from the game's seed where the game has a
seed key (``GameInfo.seed_key``); each seat's own generators from ``seat_seed`` as in ConnectX.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

from connectx_forge import kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.games.catalog import GameInfo
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.seat_random import seat_seed
from connectx_forge.play.settings import GameJob
from connectx_forge.players.player import KAGGLE, Player
from connectx_forge.sandbox.limits import SeatBudget
from connectx_forge.sandbox.seat import MARGIN, HostedAgent, close_all, slowed_by

MAX_OBSERVATION = 4 << 20  # the most bytes of one observation sent to a host (over it, the game stops: ours)
OVERAGE = 60.0  # kaggle-environments' remainingOverageTime, every game's
BROKE = {"ERROR": "error", "TIMEOUT": "timeout", "INVALID": "invalid"}


class Unsendable:
    """An action that could not cross the jail as JSON: the game's schema judges it as any non-JSON value."""

    def __init__(self, what: str | None) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<an action that is not JSON: {self.what}>"


class AgentBroke(Exception):
    """A hosted agent broke (raised, crashed, ran out of memory, broke the protocol, sent too much): ERROR."""


class RefereeFault(BaseException):
    """The referee's own limit (an observation over ``MAX_OBSERVATION``): not the agent's fault, so not an
    ``Exception`` that ``Agent.act`` would charge to it; the game stops."""


def episode_result(statuses: Sequence[str], rewards: Sequence[float | None]) -> tuple[str, int | None, int | None]:
    """``(outcome, winner, culprit)`` of a game's final statuses and rewards by seat (marks 1 and 2): a seat
    that broke (ERROR, TIMEOUT, INVALID) loses to one that did not; both broke, or equal rewards: a draw."""
    broke = [i for i, s in enumerate(statuses) if s in BROKE]
    if len(broke) == 1:
        culprit = broke[0] + 1
        return BROKE[statuses[broke[0]]], 3 - culprit, culprit
    if broke or rewards[0] is None or rewards[1] is None or rewards[0] == rewards[1]:
        return "draw", None, None
    return "win", (1 if rewards[0] > rewards[1] else 2), None


def trace_of(actions: Sequence[Sequence[object]]) -> str:
    """The sha256 of every step's actions: two games that went alike have one trace."""
    return hashlib.sha256(json.dumps(actions, sort_keys=True, default=repr).encode()).hexdigest()


def configuration(info: GameInfo, seed: int) -> dict[str, object]:
    """The game's configuration for one seeded game: its map's seed where it has one."""
    return {info.seed_key: seed % (1 << 31)} if info.seed_key else {}


def cpu_seconds(steps: int, act_timeout: float) -> int:
    """A hosted seat's CPU budget for one game: every step at actTimeout, the whole overage, twice, and 10 s."""
    return int(2 * (steps * act_timeout + OVERAGE)) + 10


def builtin_name(player: Player, info: GameInfo) -> str:
    """The built-in agent a ``kaggle:NAME`` player names in ``info``'s game; one line when it has none."""
    name = str(player.name)
    if name not in info.builtins:
        raise UserError(f"kaggle:{name} is no built-in agent of {info.name}; its agents are "
                        + ", ".join("kaggle:" + b for b in info.builtins))
    return name


class _Seat:
    """A hosted seat: its host and the callable ``env.run`` plays in its place, with how it last broke."""

    def __init__(self, host: HostedAgent, act_timeout: float) -> None:
        self.host, self.act_timeout = host, act_timeout
        self.broke: str | None = None

    def __call__(self, obs: Any, configuration: Any) -> object:
        size = len(json.dumps(obs, separators=(",", ":")))
        if size > MAX_OBSERVATION:
            raise RefereeFault(f"an observation of {size} bytes, over the referee's bound of {MAX_OBSERVATION}")
        left = float(obs.get("remainingOverageTime", OVERAGE))
        reply = self.host.move(dict(obs), dict(configuration), self.act_timeout + left + MARGIN)
        if reply.kind == "timeout":
            from kaggle_environments.errors import DeadlineExceeded  # loaded with kaggle_env, by the caller

            self.broke = reply.detail or "timeout"
            return DeadlineExceeded(self.broke)
        if reply.kind != "ok":
            self.broke = f"{reply.kind}: {reply.detail}"
            raise AgentBroke(self.broke)
        if reply.unsent is None:
            return reply.value
        if reply.unsent == "not JSON":
            self.broke = f"an action that is not JSON: {reply.bad_action}"
            return Unsendable(reply.bad_action)
        self.broke = reply.unsent
        raise AgentBroke(reply.unsent)


def play_episode(job: GameJob, players: tuple[Player, Player]) -> GameRecord:
    """Play one game of ``job``'s game between ``players`` (in seat order) and judge it as Kaggle does; the
    finished ``GameRecord``."""

    info = catalog.get(job.settings.game)
    kaggle_env.load()
    from kaggle_environments import make  # loaded quietly by kaggle_env.load above

    env = make(info.name, configuration=configuration(info, job.seed))
    act_timeout = float(env.configuration.actTimeout)
    steps = int(env.configuration.episodeSteps)
    hosts: list[HostedAgent | None] = [None, None]
    seats: list[object] = []
    try:
        for i, p in enumerate(players):
            if p.kind == KAGGLE:
                seats.append(builtin_name(p, info))
            elif p.fresh:
                budget = SeatBudget(act_timeout, OVERAGE, cpu_seconds(steps, act_timeout), info.max_action)
                host = HostedAgent(p, seat_seed(job.seed, i), budget, job.limits)
                hosts[i] = host
                seats.append(_Seat(host, act_timeout))
            else:
                raise UserError(f"{p.label} is a ConnectX agent; {info.name} plays files, projects and "
                                "kaggle:NAME built-ins")
        record = _run(env, seats, job, players, info)
        texts = [h.log_text() if h is not None else "" for h in hosts]
        record.logs = {str(mark): text for mark, text in enumerate(texts, 1) if text} or None
        if any(hosts):
            record.slowed = slowed_by(hosts)
        return record
    finally:
        close_all(hosts)


def _run(env: Any, seats: list[object], job: GameJob, players: tuple[Player, Player], info: GameInfo) -> GameRecord:
    """``env.run`` of ``seats``, its result as a record."""
    random.seed(job.seed)
    held = io.StringIO()  # the built-ins' prints: kaggle-environments' own agents
    try:
        with redirect_stdout(held), redirect_stderr(held):
            steps = env.run(seats)
    except Exception as exc:  # noqa: BLE001 - the referee's own failure (its agents' are statuses): one line
        raise UserError(f"{info.name}'s referee (kaggle-environments) failed in game seed {job.seed}: "
                        f"{type(exc).__name__}: {str(exc)[:200]}") from None
    last = steps[-1]
    statuses = [str(s.status) for s in last]
    rewards: list[float | None] = [None if s.reward is None else float(s.reward) for s in last]
    outcome, winner, culprit = episode_result(statuses, rewards)
    record = GameRecord((players[0].label, players[1].label), (1, 1, 1), job.seed, [], [], outcome, winner,
                        culprit, index=job.slot, a_seat=job.colour, game=info.name, rewards=rewards,
                        statuses=statuses, trace=trace_of([[s.action for s in step] for step in steps[1:]]))
    replay = json.loads(json.dumps(env.toJSON()))  # plain data: a Struct would import kaggle_environments loudly
    replay["info"] = {**(replay.get("info") or {}), "TeamNames": list(record.players)}
    record.replay = replay
    if culprit is not None:
        seat = seats[culprit - 1]
        record.detail = seat.broke if isinstance(seat, _Seat) else None
    return record
