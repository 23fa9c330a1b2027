"""One game of ConnectX between two players, judged exactly as kaggle_environments judges it.

``play_game`` plays through the one game core (``agents.board``) and applies
Kaggle's rules from ``rules.py``: agents get Kaggle ``Struct``s, a ``None`` is
column 0, a non-``int`` or full column is ``invalid``, an exception is ``error``,
too long a move is ``timeout``; otherwise a line of ``inarow`` wins and a full
board is a draw.  The result is a ``GameRecord``, replayable move by move.

Untrusted players never run here: a submission file (always) and, with
``isolate=True``, every player given by a spec is played by an agent host, a
child process per game (``tools/connectx_forge/sandbox``), which can also break by ``crash``,
``memory``, ``protocol`` or ``load``; its move is waited for at most actTimeout
+ its remaining overage + ``seat.MARGIN``.

Each seat draws from its own ``random`` and ``numpy.random``, seeded from the
game's seed and the seat (``seat_random.py``), as each agent on Kaggle has a
container of its own: a host seeds its own; an agent played here gets its
seat's state swapped in around each of its calls.  No seat can read or steer
the other's draws, hosted or not, and a seat draws the same numbers either way.

Scheduling many games, counting them and storing them live elsewhere
(``match.py``, ``tally.py``, ``records.py``).
"""

from __future__ import annotations

import io
import random
import traceback
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from time import perf_counter
from typing import NoReturn

from agents.board import Board, BoardError, Size, geometry
from connectx_forge import kaggle_env
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play import rules
from connectx_forge.play.episode import play_episode
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.seat_random import SeatRandoms, seat_seed
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.players.player import CALLABLE, Agent, Player, PlayerLike, player_of
from connectx_forge.sandbox.host import error_place
from connectx_forge.sandbox.limits import LOG_CHARS, SeatBudget
from connectx_forge.sandbox.seat import HostedAgent, close_all, slowed_by

MARGIN = 0.5  # seconds the referee waits for a hosted agent beyond actTimeout + overage (sandbox/seat.py)


class AgentLog(io.TextIOBase):
    """An in-process agent's ``sys.stdout`` and ``sys.stderr`` for one game, cut at ``cap`` characters as
    Kaggle cuts an agent's log; a traceback is added past the cap (``add``), so it is never lost."""

    def __init__(self, cap: int = LOG_CHARS) -> None:
        self.parts: list[str] = []
        self.left = cap

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        if self.left > 0 and s:
            self.parts.append(s[:self.left])
            self.left -= len(self.parts[-1])
        return len(s)

    def add(self, text: str) -> None:
        self.parts.append(text[-LOG_CHARS:])

    def text(self) -> str:
        return "".join(self.parts)


def _struct_factory() -> Callable[..., object]:
    """kaggle_environments' ``Struct`` (attribute and item access), imported quietly."""
    kaggle_env.load()
    from kaggle_environments.utils import Struct

    struct: Callable[..., object] = Struct  # kaggle_environments is untyped
    return struct


def _broke(record: GameRecord, outcome: str, mark: int, **details: str | None) -> GameRecord:
    """End ``record`` with player ``mark`` breaking a rule: it loses."""
    record.outcome, record.culprit, record.winner = outcome, mark, 3 - mark
    for k, v in details.items():
        setattr(record, k, v)
    return record


def play_game(first: PlayerLike, second: PlayerLike, seed: int = 0, *, settings: GameSettings | None = None,
              index: int = 0, a_seat: int = 1, opening: Sequence[int] = ()) -> GameRecord:
    """Play one game, ``first`` with mark 1, and judge it as Kaggle does.

    ``settings`` (``settings.GameSettings``: the board size, Kaggle's clock, the
    agent hosts' limits and ``isolate``; default 6x7x4, 2 s a move, a 60 s bank).

    Seeds ``random`` and ``numpy.random`` with ``seed`` first, and each seat's
    own generators with ``seat_seed(seed, seat)`` (``seat_random.py``), so that
    the same seed gives the same game.  ``index`` and ``a_seat`` only label the record.
    Submission files are played in agent hosts, and so is every spec player when
    ``isolate`` is set (``is_hosted``), under ``limits`` (``tools/connectx_forge/sandbox/limits``).

    ``opening``: 0-based columns played before the agents' first call (a
    tournament's opening suite, ``tools/connectx_forge/arena``); the agents then see the board
    with those stones, and the side to move follows from their number (after an
    odd number, ``second`` moves first).  ``BoardError`` if a column is not
    playable or the opening ends the game.
    """
    import numpy as np

    game = settings if settings is not None else GameSettings()
    size, act_timeout, overage, limits = game.size, game.act_timeout, game.overage, game.limits
    players = (player_of(first), player_of(second))
    rows, columns, inarow = size
    geometry(rows, columns, inarow)  # validates the size
    opened = [int(c) for c in opening]
    after = _opening_board(opened, (rows, columns, inarow))
    Struct = _struct_factory()
    config_items = rules.kaggle_config(size, act_timeout)
    random.seed(seed)
    np.random.seed(seed)
    hosted = [is_hosted(p, game.isolate) for p in players]
    hosts: list[HostedAgent | None] = [None, None]
    logs = [AgentLog(), AgentLog()]
    try:
        for i, p in enumerate(players):
            if hosted[i]:
                twin = i == 1 and all(hosted) and p.fresh and p.file == players[0].file
                budget = SeatBudget.of_board((rows, columns, inarow), act_timeout, overage)
                hosts[i] = HostedAgent(p, seat_seed(seed, i), budget, limits, template=True, twin=twin)
        agents = [_no_agent if hosted[i] else p.new_agent() for i, p in enumerate(players)]
        with SeatRandoms([None if hosted[i] else seat_seed(seed, i) for i in range(2)]) as randoms:
            record = _play(_Seats(players, agents, hosts, logs, randoms), game, seed, index, a_seat, Struct,
                           config_items, after, opened)
        texts = [h.log_text() if h is not None else log.text() for h, log in zip(hosts, logs, strict=True)]
        record.logs = {str(mark): text for mark, text in enumerate(texts, 1) if text} or None
        if any(hosted):
            record.slowed = slowed_by(hosts)
        return record
    finally:
        if any(h is not None for h in hosts):
            close_all(hosts)


def play_job(job: GameJob) -> GameRecord:
    """Play one job's game (``settings.GameJob``: in a worker, or in this process); ``slot`` is its index.
    A game other than ConnectX is its own interpreter's (``episode.play_episode``)."""
    first, second = job.seats()
    if job.settings.game != CONNECTX:
        return play_episode(job, (player_of(first), player_of(second)))
    return play_game(first, second, seed=job.seed, index=job.slot, a_seat=job.colour, opening=job.opening,
                     settings=job.settings)


def _opening_board(opening: list[int], size: Size) -> Board | None:
    """The board after ``opening`` (None when there is none); ``BoardError`` if it is illegal or ends the game."""
    if not opening:
        return None
    board = Board.from_moves(opening, *size)
    if board.is_over():
        raise BoardError(f"the opening {opening} ends the game; an opening must leave it to the agents")
    return board


def _no_agent(*args: object) -> NoReturn:
    raise AssertionError("a hosted player is never called in the referee")


def is_hosted(player: Player, isolate: bool) -> bool:
    """Whether ``player`` runs in an agent host: a file always; with ``isolate``, any player given by a spec."""
    return player.fresh or (isolate and player.kind != CALLABLE)


@dataclass(frozen=True)
class _Seats:
    """The two seats of a game: the players, the agents called in this process, the agent hosts (None where a
    seat plays here), the logs of the seats played here, and their own generators (``randoms``)."""

    players: tuple[Player, Player]
    agents: list[Agent]
    hosts: list[HostedAgent | None]
    logs: list[AgentLog]
    randoms: SeatRandoms


def _play(seats: _Seats, game: GameSettings, seed: int, index: int, a_seat: int, Struct: Callable[..., object],
          config_items: dict[str, object], after: Board | None = None, opening: list[int] | None = None) -> GameRecord:
    """The game itself."""
    players, agents, hosts, logs, randoms = seats.players, seats.agents, seats.hosts, seats.logs, seats.randoms
    rows, columns, inarow = game.size
    act_timeout, overage = game.act_timeout, game.overage
    argcs = [rules.arg_count(a) for a in agents]

    board = Board(rows, columns, inarow) if after is None else after
    grid = [0] * (rows * columns) if after is None else after.to_grid()
    heights = [0] * columns if after is None else [after.height(c) for c in range(columns)]
    left = [overage, overage]
    moves: list[int] = list(opening or ())
    times: list[float] = []
    record = GameRecord((players[0].label, players[1].label), (rows, columns, inarow), seed, moves, times,
                        "draw", index=index, a_seat=a_seat, opening=len(moves))
    is_timeout, overage_after, is_valid_action = rules.is_timeout, rules.overage_after, rules.is_valid_action
    last_ply = rules.EPISODE_STEPS - 2  # the last move Kaggle's episodeSteps allows

    while True:
        ply = board.moves
        mark = 1 + (ply & 1)
        i = mark - 1
        action: object  # what the agent returned, judged below
        host = hosts[i]
        if host is not None:
            reply = host.move({"remainingOverageTime": left[i], "step": ply, "board": grid, "mark": mark},
                              config_items, act_timeout + left[i] + MARGIN)
            times.append(reply.duration)
            timed_out = reply.kind == "timeout" or is_timeout(reply.duration, act_timeout, left[i])
            left[i] = overage_after(reply.duration, act_timeout, left[i])
            if timed_out:
                return _broke(record, "timeout", mark, detail=reply.detail)
            if reply.kind != "ok":
                error = reply.detail if reply.kind == "error" else None
                return _broke(record, reply.kind, mark, error=error, detail=reply.detail)
            if reply.bad_action is not None:
                return _broke(record, "invalid", mark, bad_action=reply.bad_action)
            action = reply.action
        else:
            obs = Struct(remainingOverageTime=left[i], step=ply, board=grid[:], mark=mark)
            args = (obs, Struct(**config_items))[:argcs[i]]
            error = None
            sink = logs[i]
            randoms.turn(i)
            with redirect_stdout(sink), redirect_stderr(sink):
                start = perf_counter()
                try:
                    action = agents[i](*args)
                except Exception as exc:  # Kaggle catches Exception, not BaseException
                    action, error = None, f"{type(exc).__name__}: {exc}{error_place(exc)}"
                    sink.add("".join(traceback.format_exception(exc)))
                duration = perf_counter() - start
            times.append(duration)
            timed_out = is_timeout(duration, act_timeout, left[i])
            left[i] = overage_after(duration, act_timeout, left[i])
            if timed_out:
                return _broke(record, "timeout", mark)
            if error is not None:
                return _broke(record, "error", mark, error=error)
        if action is None:
            action = rules.NONE_ACTION
        if not is_valid_action(action, columns, board.can_play):
            return _broke(record, "invalid", mark, bad_action=repr(action))
        col = int(action)
        wins = board.is_winning_move(col)
        grid[(rows - 1 - heights[col]) * columns + col] = mark
        heights[col] += 1
        board = board.play(col)
        moves.append(col)
        if wins:
            record.outcome, record.winner = "win", mark
            return record
        if board.is_full() or ply >= last_ply:
            return record  # a draw
