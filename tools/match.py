"""The game loop: play ConnectX games between two players, in parallel, with Kaggle's rules.

``play_game`` plays one game through the one game core (``agents.board``) and
judges it exactly as kaggle_environments' ConnectX does:

* agents get ``obs`` and ``config`` as Kaggle ``Struct``s (attribute and item
  access) with Kaggle's fields, and may take one or two arguments;
* a returned ``None`` is Kaggle's schema default, column 0;
* an action is valid iff it is an ``int`` (not a ``bool``, not a numpy integer,
  not a float) naming a column whose top cell is empty; anything else ends the
  game with that player ``invalid`` (Kaggle's ``INVALID``);
* an exception ends it with ``error``; a move that takes longer than
  ``actTimeout`` plus the player's remaining overage ends it with ``timeout``
  (overage starts at 60 s and shrinks by each move's excess over ``actTimeout``);
* otherwise a line of ``inarow`` wins, and a full board is a draw.

The player who breaks a rule loses the game (Kaggle gives it reward ``None`` and
the other 0; ``GameRecord.kaggle_result`` gives those exact values).

``run_match`` plays ``games`` games between A and B, swapping seats (A moves
first in even-numbered games), seeding ``random`` and ``numpy.random`` per game
from ``(seed, index)`` so that a run is reproducible, and spreading chunks of
games over a ``concurrent.futures`` executor (a process pool by default).

The ``cxforge match`` subcommand is the command-line face of ``run_match``::

    from tools.match import run_match
    result = run_match("lookahead", "kaggle:negamax", games=200, seed=0)
    print(result.format())          # the table cxforge match prints
    result.tally().win_rate         # A's wins / games, both seats
    result.tally(a_seat=1)          # only the games where A moved first
    result.records[0].moves         # every game, replayable
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass, field
from time import perf_counter
from typing import Any, Callable, Iterable, Sequence

from agents.board import STANDARD, Board, geometry
from tools.errors import UserError
from tools.players import Player, from_callable, resolve
from tools.stats import format_rate, wilson

HELP = "Play games between two agents with Kaggle's rules and report win rates."

Size = tuple[int, int, int]
OUTCOMES = ("win", "draw", "invalid", "error", "timeout")
RULE_BREAKS = ("invalid", "error", "timeout")
KAGGLE_STATUS = {"invalid": "INVALID", "error": "ERROR", "timeout": "TIMEOUT"}
ACT_TIMEOUT = 2  # Kaggle's config.actTimeout, seconds
OVERAGE = 60  # Kaggle's initial obs.remainingOverageTime, seconds
EPISODE_STEPS = 1000  # Kaggle's config.episodeSteps


# -- one game -----------------------------------------------------------------
@dataclass
class GameRecord:
    """One finished game, in seat terms: seat 1 (mark 1) moves first.

    ``moves`` are the columns played; ``times`` the seconds each move took, one
    per call (so it has one more entry than ``moves`` when the last call broke a
    rule).  ``winner`` is the mark that won (by a line, or because the other
    broke a rule), ``None`` for a draw; ``culprit`` is the mark that broke a rule.
    """

    players: tuple[str, str]
    size: Size
    seed: int
    moves: list[int]
    times: list[float]
    outcome: str
    winner: int | None = None
    culprit: int | None = None
    bad_action: str | None = None  # repr of an invalid action
    error: str | None = None  # "Type: message" of an exception
    index: int = 0
    a_seat: int = 1  # the seat agent A played in a match

    def result(self, mark: int) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for the player with ``mark``."""
        if self.winner is None:
            return "draw"
        return "win" if self.winner == mark else "loss"

    def kaggle_result(self) -> tuple[list[str], list[int | None]]:
        """The final statuses and rewards kaggle_environments gives this game, by seat."""
        if self.outcome == "draw":
            return ["DONE", "DONE"], [0, 0]
        if self.outcome == "win":
            rewards = [1, -1] if self.winner == 1 else [-1, 1]
            return ["DONE", "DONE"], rewards  # type: ignore[return-value]
        statuses: list[str] = ["DONE", "DONE"]
        rewards: list[int | None] = [0, 0]
        assert self.culprit is not None
        statuses[self.culprit - 1] = KAGGLE_STATUS[self.outcome]
        rewards[self.culprit - 1] = None
        return statuses, rewards

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one line of ``--save``)."""
        out = asdict(self)
        out["players"] = list(self.players)
        out["size"] = list(self.size)
        out["times"] = [round(t, 6) for t in self.times]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GameRecord":
        data = dict(data)
        data["players"] = tuple(data["players"])
        data["size"] = tuple(data["size"])
        return cls(**data)


class _Sink(io.TextIOBase):
    """Swallows an agent's prints (Kaggle captures them into logs we do not keep)."""

    def write(self, s: str) -> int:
        return len(s)


_SINK = _Sink()


def _struct_factory() -> Callable[..., Any]:
    from kaggle_environments.utils import Struct

    return Struct


def _arg_count(agent: Callable[..., Any]) -> int:
    """How many of ``(obs, config)`` to pass, as Kaggle decides it."""
    code = getattr(agent, "__code__", None)
    argc = getattr(code, "co_argcount", None)
    return 2 if argc is None else argc


def kaggle_config(size: Size, act_timeout: float = ACT_TIMEOUT) -> dict[str, Any]:
    """The ``config`` Kaggle passes to ConnectX agents for a board ``size``."""
    rows, columns, inarow = size
    return {"rows": rows, "columns": columns, "inarow": inarow, "episodeSteps": EPISODE_STEPS,
            "actTimeout": act_timeout, "runTimeout": 1200, "agentTimeout": 60, "timeout": act_timeout}


def game_seed(base: int, index: int) -> int:
    """The seed of game ``index`` in a run seeded with ``base`` (independent of workers)."""
    import numpy as np

    return int(np.random.SeedSequence([base, index]).generate_state(1)[0])


def _as_player(p: Player | str | Callable[..., Any]) -> Player:
    if isinstance(p, Player):
        return p
    if isinstance(p, str):
        return resolve(p)
    if callable(p):
        return from_callable(p)
    raise TypeError(f"a player is a spec string, a Player or an agent function, got {p!r}")


def play_game(first: Player | str | Callable[..., Any], second: Player | str | Callable[..., Any],
              size: Size = STANDARD, seed: int = 0, *, act_timeout: float = ACT_TIMEOUT,
              overage: float = OVERAGE, index: int = 0, a_seat: int = 1) -> GameRecord:
    """Play one game, ``first`` with mark 1, and judge it as Kaggle does.

    Seeds ``random`` and ``numpy.random`` with ``seed`` first, so that the same
    seed gives the same game.  ``index`` and ``a_seat`` only label the record.
    """
    import numpy as np

    players = (_as_player(first), _as_player(second))
    rows, columns, inarow = size
    geometry(rows, columns, inarow)  # validates the size
    Struct = _struct_factory()
    config_items = kaggle_config(size, act_timeout)
    random.seed(seed)
    np.random.seed(seed)
    agents = [p.new_agent() for p in players]
    argcs = [_arg_count(a) for a in agents]

    board = Board(rows, columns, inarow)
    grid = [0] * (rows * columns)
    heights = [0] * columns
    left = [overage, overage]
    moves: list[int] = []
    times: list[float] = []
    record = GameRecord((players[0].name, players[1].name), (rows, columns, inarow), seed, moves, times,
                        "draw", index=index, a_seat=a_seat)

    def broke(outcome: str, mark: int, **details: Any) -> GameRecord:
        record.outcome, record.culprit, record.winner = outcome, mark, 3 - mark
        for k, v in details.items():
            setattr(record, k, v)
        return record

    while True:
        ply = board.moves
        mark = 1 + (ply & 1)
        i = mark - 1
        obs = Struct(remainingOverageTime=left[i], step=ply, board=grid[:], mark=mark)
        args = (obs, Struct(**config_items))[:argcs[i]]
        error = None
        with redirect_stdout(_SINK), redirect_stderr(_SINK):
            start = perf_counter()
            try:
                action = agents[i](*args)
            except Exception as exc:  # Kaggle catches Exception, not BaseException
                action, error = None, f"{type(exc).__name__}: {exc}"
            duration = perf_counter() - start
        times.append(duration)
        timed_out = duration - act_timeout > left[i]
        left[i] -= max(0.0, round(duration, 6) - act_timeout)
        if timed_out:
            return broke("timeout", mark)
        if error is not None:
            return broke("error", mark, error=error)
        if action is None:
            action = 0  # the action schema's default, as kaggle_environments applies it
        if not (isinstance(action, int) and not isinstance(action, bool)
                and 0 <= action < columns and board.can_play(int(action))):
            return broke("invalid", mark, bad_action=repr(action))
        col = int(action)
        wins = board.is_winning_move(col)
        grid[(rows - 1 - heights[col]) * columns + col] = mark
        heights[col] += 1
        board = board.play(col)
        moves.append(col)
        if wins:
            record.outcome, record.winner = "win", mark
            return record
        if board.is_full() or ply + 1 >= EPISODE_STEPS - 1:
            return record  # a draw


# -- a match ------------------------------------------------------------------
@dataclass(frozen=True)
class _Chunk:
    a: Player
    b: Player
    indices: tuple[int, ...]
    seed: int
    size: Size
    act_timeout: float
    overage: float
    seats: str = "both"


SEATS = ("both", "first", "second")


def a_moves_first(i: int, seats: str) -> bool:
    """Whether A moves first in game ``i``: alternating (``both``), or always ``first`` or ``second``."""
    return seats == "first" or (seats == "both" and i % 2 == 0)


def _play_chunk(job: _Chunk) -> list[GameRecord]:
    """Play games ``job.indices`` (runs in a worker process)."""
    out = []
    for i in job.indices:
        a_first = a_moves_first(i, job.seats)
        first, second = (job.a, job.b) if a_first else (job.b, job.a)
        out.append(play_game(first, second, job.size, game_seed(job.seed, i), act_timeout=job.act_timeout,
                             overage=job.overage, index=i, a_seat=1 if a_first else 2))
    return out


FAILURE_FIELDS = {"invalid": "invalid", "error": "errors", "timeout": "timeouts"}


@dataclass
class Tally:
    """Results from A's side over some games; ``invalid``... count A's own rule breaks."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    invalid: int = 0
    errors: int = 0
    timeouts: int = 0
    opponent_invalid: int = 0
    opponent_errors: int = 0
    opponent_timeouts: int = 0

    def add(self, rec: GameRecord, mark: int) -> None:
        """Count game ``rec`` from the side of the player with ``mark``."""
        failure = rec.outcome if rec.culprit is not None else None
        self.count(rec.result(mark), failure, own=rec.culprit == mark)

    def count(self, result: str, failure: str | None = None, own: bool = True) -> None:
        """Count one game: ``result`` is win, draw or loss; ``failure`` (invalid, error or
        timeout) is the rule break that ended it, ``own`` when it was ours."""
        self.games += 1
        self.wins += result == "win"
        self.draws += result == "draw"
        self.losses += result == "loss"
        if failure is not None:
            name = ("" if own else "opponent_") + FAILURE_FIELDS[failure]
            setattr(self, name, getattr(self, name) + 1)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self)
        for name, k in (("win", self.wins), ("draw", self.draws), ("loss", self.losses)):
            out[f"{name}_rate"] = k / self.games if self.games else None
            out[f"{name}_rate_ci95"] = list(wilson(k, self.games))
        return out


@dataclass
class MatchResult:
    """The games of ``run_match``, sorted by index, with tallies from A's side."""

    a: str
    b: str
    size: Size
    seed: int
    workers: int
    seconds: float
    records: list[GameRecord] = field(default_factory=list)
    act_timeout: float = ACT_TIMEOUT

    def tally(self, a_seat: int | None = None) -> Tally:
        """A's results over all games, or only those where A played seat ``a_seat`` (1 = first)."""
        t = Tally()
        for rec in self.records:
            if a_seat is None or rec.a_seat == a_seat:
                t.add(rec, rec.a_seat)
        return t

    def _times_per_game(self, side: str) -> list[list[float]]:
        """Seconds per move of ``side`` (``"A"`` or ``"B"``), game by game."""
        out = []
        for rec in self.records:
            mark = rec.a_seat if side == "A" else 3 - rec.a_seat
            out.append(rec.times[mark - 1::2])
        return out

    def move_times(self, side: str) -> list[float]:
        """Seconds per move of ``side`` over every game."""
        return [t for game in self._times_per_game(side) for t in game]

    def overage_used(self, side: str) -> list[float]:
        """Overage seconds ``side`` spent in each game: its moves' time beyond ``act_timeout``."""
        return [sum(max(0.0, t - self.act_timeout) for t in game) for game in self._times_per_game(side)]

    def time_stats(self, side: str) -> dict[str, float | None]:
        ts = self.move_times(side)
        return {"moves": len(ts), "median_s": statistics.median(ts) if ts else None,
                "max_s": max(ts) if ts else None, "max_overage_s": max(self.overage_used(side), default=None)}

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "games": len(self.records), "size": list(self.size),
            "seed": self.seed, "workers": self.workers, "seconds": round(self.seconds, 3),
            "a_first": self.tally(1).to_json(), "a_second": self.tally(2).to_json(),
            "overall": self.tally().to_json(),
            "move_time": {"a": self.time_stats("A"), "b": self.time_stats("B")},
        }

    def format(self) -> str:
        """A plain-text report (what ``cxforge match`` prints)."""
        rows, columns, inarow = self.size
        lines = [f"A = {self.a}  vs  B = {self.b}: {len(self.records)} games on {rows}x{columns}x{inarow}, "
                 f"seed {self.seed}, {self.workers} worker(s), {self.seconds:.2f} s",
                 f"{'A plays':<10}{'games':>6}{'wins':>6}{'draws':>6}{'losses':>7}{'invalid':>8}{'errors':>7}"
                 f"{'timeouts':>9}   A win rate [95% CI]    B invalid/errors/timeouts"]
        for label, t in (("first", self.tally(1)), ("second", self.tally(2)), ("overall", self.tally())):
            lines.append(f"{label:<10}{t.games:>6}{t.wins:>6}{t.draws:>6}{t.losses:>7}{t.invalid:>8}{t.errors:>7}"
                         f"{t.timeouts:>9}   {format_rate(t.wins, t.games):<22} "
                         f"{t.opponent_invalid}/{t.opponent_errors}/{t.opponent_timeouts}")
        for side, name in (("A", self.a), ("B", self.b)):
            s = self.time_stats(side)
            if s["moves"]:
                lines.append(f"move time {side} ({name}): median {_duration(s['median_s'])}, "
                             f"max {_duration(s['max_s'])} over {s['moves']} moves; "
                             f"most overage in one game {s['max_overage_s']:.2f} s")
        return "\n".join(lines)


def _duration(seconds: float | None) -> str:
    """``"35 us"``, ``"2.50 ms"`` or ``"1.20 s"``."""
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _chunks(games: int, workers: int, chunk: int | None) -> list[tuple[int, ...]]:
    size = chunk or max(1, min(50, math.ceil(games / (workers * 4))))
    return [tuple(range(s, min(games, s + size))) for s in range(0, games, size)]


def _check_picklable(*players: Player) -> None:
    """Players cross to worker processes by pickle: say so plainly when one cannot."""
    import pickle

    for p in players:
        try:
            pickle.dumps(p)
        except Exception:
            raise UserError(f"player {p.name!r} cannot be sent to worker processes (define it at module "
                            "level, or use workers=1)") from None


def _fork_pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def run_match(a: Player | str | Callable[..., Any], b: Player | str | Callable[..., Any], games: int = 100,
              workers: int | None = None, seed: int = 0, size: Size = STANDARD, *,
              act_timeout: float = ACT_TIMEOUT, overage: float = OVERAGE, progress: bool = True,
              chunk: int | None = None, executor: Executor | None = None, seats: str = "both") -> MatchResult:
    """Play ``games`` games between ``a`` and ``b``; A moves first in even-numbered games.

    ``seats`` "first" or "second" puts A in that seat in every game instead.

    ``workers`` processes (all cores by default; 1 plays in this process) each
    play chunks of games; pass ``executor`` to use your own instead (players
    then must pickle: specs, registered agents and module-level functions do).
    Game ``i`` is seeded with ``game_seed(seed, i)``, so results do not depend on
    ``workers``.  A tqdm bar on stderr shows progress unless ``progress`` is False.
    """
    from tqdm import tqdm

    if not isinstance(games, int) or games < 1:
        raise UserError(f"the number of games must be a positive integer, got {games!r}")
    if not isinstance(seed, int) or seed < 0:
        raise UserError(f"the seed must be a non-negative integer, got {seed!r}")
    if seats not in SEATS:
        raise UserError(f"seats must be one of {', '.join(SEATS)}, got {seats!r}")
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise UserError(f"workers must be at least 1, got {workers}")
    geometry(*size)
    pa, pb = _as_player(a), _as_player(b)
    n_workers = 1 if executor is None and workers == 1 else workers
    if n_workers > 1 or executor is not None:
        _check_picklable(pa, pb)
    jobs = [_Chunk(pa, pb, idx, seed, tuple(size), act_timeout, overage, seats)  # type: ignore[arg-type]
            for idx in _chunks(games, n_workers, chunk)]
    records: list[GameRecord] = []
    start = time.perf_counter()

    def progress_bar() -> Any:
        return tqdm(total=games, unit="game", desc=f"{pa.name} vs {pb.name}", file=sys.stderr,
                    disable=not progress, leave=False)

    if executor is None and n_workers == 1:
        with progress_bar() as bar:
            for job in jobs:
                records.extend(_play_chunk(job))
                bar.update(len(job.indices))
    else:
        pool = executor or _fork_pool(n_workers)
        try:
            # submit (and so fork the workers) before tqdm starts its monitor thread
            futures = [pool.submit(_play_chunk, job) for job in jobs]
            with progress_bar() as bar:
                for fut in as_completed(futures):
                    done = fut.result()
                    records.extend(done)
                    bar.update(len(done))
        finally:
            if executor is None:
                pool.shutdown(cancel_futures=True)
    records.sort(key=lambda r: r.index)
    return MatchResult(pa.name, pb.name, tuple(size), seed, n_workers,  # type: ignore[arg-type]
                       time.perf_counter() - start, records, act_timeout)


def save_records(records: Iterable[GameRecord], path: str) -> None:
    """Write one JSON line per game."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec.to_json()) + "\n")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def load_records(path: str) -> list[GameRecord]:
    """Read a ``--save`` file back."""
    with open(path, encoding="utf-8") as fh:
        return [GameRecord.from_json(json.loads(line)) for line in fh if line.strip()]


# -- command line ---------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="player A: a registered agent, kaggle:random, kaggle:negamax, "
                                               "or a path to a .py submission")
    parser.add_argument("b", metavar="B", help="player B (same forms)")
    parser.add_argument("-n", "--games", type=int, default=100, help="games to play (default 100; seats alternate)")
    parser.add_argument("-w", "--workers", type=int, default=None,
                        help="worker processes (default: all cores; 1 plays in this process)")
    parser.add_argument("--seed", type=int, default=0, help="base seed; the same seed replays the same games")
    parser.add_argument("--rows", type=int, default=STANDARD[0])
    parser.add_argument("--columns", type=int, default=STANDARD[1])
    parser.add_argument("--inarow", type=int, default=STANDARD[2])
    parser.add_argument("--act-timeout", type=float, default=ACT_TIMEOUT,
                        help="seconds per move before overage is used (Kaggle: 2)")
    parser.add_argument("--overage", type=float, default=OVERAGE,
                        help="overage seconds per player per game (Kaggle: 60)")
    parser.add_argument("--seats", choices=SEATS, default="both",
                        help="A's seat: alternate (both, default), or always first or always second")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--save", metavar="FILE", help="write one JSON line per game to FILE")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _whole(x: float) -> float:
    """``2.0`` as ``2``: Kaggle passes these times as ints."""
    return int(x) if float(x).is_integer() else x


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise UserError(f"-n/--games must be at least 1, got {args.games}")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    if min(args.rows, args.columns, args.inarow) < 1:
        raise UserError(f"--rows, --columns and --inarow must be positive, got {args.rows}x{args.columns}x{args.inarow}")
    if args.act_timeout <= 0 or args.overage < 0:
        raise UserError("--act-timeout must be positive and --overage non-negative")
    if args.seed < 0:
        raise UserError(f"--seed must be non-negative, got {args.seed}")
    a, b = resolve(args.a), resolve(args.b)
    result = run_match(a, b, args.games, args.workers, args.seed, (args.rows, args.columns, args.inarow),
                       act_timeout=_whole(args.act_timeout), overage=_whole(args.overage),
                       progress=not args.no_progress, seats=args.seats)
    if args.save:
        save_records(result.records, args.save)
    print(json.dumps(result.to_json(), indent=2) if args.json else result.format())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tools.match A B ...`` (same as ``cxforge match``)."""
    from tools.cli import main as cli_main

    return cli_main(["match", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
