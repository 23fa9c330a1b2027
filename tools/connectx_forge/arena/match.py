"""A match: many seeded games between players A and B, spread over the worker pool.

``run_match`` plays ``games`` games between A and B.  Seats alternate (A moves
first in even-numbered games) unless ``seats`` fixes A's seat; game ``i`` is
seeded with ``game_seed(seed, i)``, so a run is reproducible whatever the number
of workers.  Each game is a ``GameJob`` (``settings.py``, the job a tournament
plays too) on the arena's scheduler (``tools/connectx_forge/arena/schedule.run_jobs``, its
process pool or an executor of your own); games come back as ``GameRecord``s in
a ``PlayedMatch``, which tallies them from A's side::

    from connectx_forge.arena.match import run_match
    from connectx_forge.arena.match_report import format_match
    result = run_match("lookahead", "kaggle:negamax", games=200, seed=0)
    print(format_match(result))     # the table cxforge match prints
    result.tally().win_rate         # A's wins / games, both seats
    result.tally(a_seat=1)          # only the games where A moved first
    result.records[0].moves         # every game, replayable

One game is ``game.play_game``; the rules are in ``rules.py``; storing games is
``records.py``; the command line is ``match_cmd.py``.
"""

from __future__ import annotations

import functools
import json
import math
import os
import pickle
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TypedDict

from agents.board import STANDARD, Size, geometry
from agents.registry import REGISTRY
from connectx_forge import boundedread, safe_write
from connectx_forge import progress as progress_bars
from connectx_forge.arena import schedule
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.game import is_hosted, play_job
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import as_player
from connectx_forge.play.rules import ACT_TIMEOUT
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.play.tally import Tally, TallyJson
from connectx_forge.players.player import REGISTERED, Player, PlayerLike

SEATS = ("both", "first", "second")
MAX_BATCH = 50  # games per task at most


def game_seed(base: int, index: int) -> int:
    """The seed of game ``index`` in a run seeded with ``base`` (independent of workers)."""
    import numpy as np

    return int(np.random.SeedSequence([base, index]).generate_state(1)[0])


def a_moves_first(i: int, seats: str) -> bool:
    """Whether A moves first in game ``i``: alternating (``both``), or always ``first`` or ``second``."""
    return seats == "first" or (seats == "both" and i % 2 == 0)


def match_jobs(a: PlayerLike, b: PlayerLike, games: int, seed: int, settings: GameSettings, seats: str = "both",
               openings: tuple[tuple[int, ...], ...] = ()) -> list[GameJob]:
    """The match's games as jobs: game ``i`` seeded with ``game_seed(seed, i)``, A's seat by ``a_moves_first``,
    its opening ``opening_of(i, ...)``.  A game other than ConnectX has no openings: with seats alternating,
    games 2k and 2k+1 share a seed (its map), seats swapped."""
    paired = settings.game != CONNECTX and seats == "both"
    return [GameJob(a, b, 1 if a_moves_first(i, seats) else 2, game_seed(seed, i // 2 if paired else i), i,
                    opening_of(i, openings, seats), settings) for i in range(games)]


def opening_of(i: int, openings: tuple[tuple[int, ...], ...], seats: str) -> tuple[int, ...]:
    """The opening game ``i`` starts from: with seats alternating, games 2k and 2k+1 share opening k (mod M)."""
    if not openings:
        return ()
    return openings[(i // 2 if seats == "both" else i) % len(openings)]


def batch_size(games: int, workers: int, chunk: int | None = None) -> int:
    """Games per task: ``chunk``, else about four tasks a worker, at most ``MAX_BATCH``."""
    return chunk or max(1, min(MAX_BATCH, math.ceil(games / (workers * 4))))


def play_spooled(spool: str, job: GameJob) -> GameRecord:
    """Play one game (in a worker) and append it to the worker's file in ``spool`` as it ends (Ctrl-C keeps it)."""
    record = play_job(job)
    with safe_write.open_append(os.path.join(spool, f"{os.getpid()}.jsonl")) as fh:
        fh.write(json.dumps(record.to_json()) + "\n")
    return record


@contextmanager
def _workers(workers: int, executor: Executor | None, spool: str | None) -> Iterator[schedule.Workers]:
    """The arena's workers for a match: its process pool (1: this process), or ``executor``, two tasks in flight
    per worker; with ``spool``, each game is also spooled as it ends."""
    if executor is not None:
        yield schedule.Workers(executor, 2 * workers, "executor")
        return
    with schedule.executor(workers) as ex:
        yield replace(ex, play=functools.partial(play_spooled, spool)) if spool is not None else ex


def spooled(folder: str) -> list[GameRecord]:
    """The games workers appended to ``folder`` (a line cut short by the interrupt is left out), each read within
    ``boundedread``'s bounds as any games file is."""
    records = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        for number, line in boundedread.read_lines(path, name=path):
            try:
                records.append(GameRecord.from_json(boundedread.parse_json(line, f"{path}: line {number}")))
            except (UserError, TypeError, KeyError):
                continue
    return records


class MoveTimes(TypedDict):
    """One side's move times (``PlayedMatch.time_stats``): its moves, their median and max seconds (None without
    a move), its most overage in one game, and its moves longer than ``act_timeout``."""

    moves: int
    median_s: float | None
    max_s: float | None
    max_overage_s: float | None
    over_act_timeout: int


class MatchJson(TypedDict):
    """The summary ``cxforge match --json`` prints (``PlayedMatch.to_json``): A's tallies by seat and overall,
    and each side's move times (``"a"``, ``"b"``)."""

    a: str
    b: str
    games: int
    size: list[int]
    seed: int
    workers: int
    seconds: float
    isolated: dict[str, bool]
    a_first: TallyJson
    a_second: TallyJson
    overall: TallyJson
    move_time: dict[str, MoveTimes]


@dataclass(frozen=True)
class PlayedMatch:
    """The games of ``run_match``, sorted by index, with tallies and move times from A's side."""

    a: str
    b: str
    size: Size
    seed: int
    workers: int
    seconds: float
    records: list[GameRecord] = field(default_factory=list)
    act_timeout: float = ACT_TIMEOUT
    isolated: tuple[bool, bool] = (False, False)  # whether A, B played in agent hosts (tools/connectx_forge/sandbox)
    interrupted: int = 0  # games asked for but not finished: Ctrl-C stopped the match

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

    def time_stats(self, side: str) -> MoveTimes:
        """Moves, median and max seconds per move of ``side``, its most overage in one game, and its moves
        longer than ``act_timeout`` (those that took overage)."""
        ts = self.move_times(side)
        return {"moves": len(ts), "median_s": statistics.median(ts) if ts else None,
                "max_s": max(ts) if ts else None, "max_overage_s": max(self.overage_used(side), default=None),
                "over_act_timeout": sum(t > self.act_timeout for t in ts)}

    def to_json(self) -> MatchJson:
        """The summary ``cxforge match --json`` prints."""
        return {
            "a": self.a, "b": self.b, "games": len(self.records), "size": list(self.size),
            "seed": self.seed, "workers": self.workers, "seconds": round(self.seconds, 3),
            "isolated": {"a": self.isolated[0], "b": self.isolated[1]},
            "a_first": self.tally(1).to_json(), "a_second": self.tally(2).to_json(),
            "overall": self.tally().to_json(),
            "move_time": {"a": self.time_stats("A"), "b": self.time_stats("B")},
        }


def check_size(player: Player, size: Size) -> None:
    """``UserError`` up front for a registered agent that plays only the 6x7 four-in-a-row board."""
    if player.kind != REGISTERED or tuple(size) == tuple(STANDARD):
        return

    spec = REGISTRY.get(player.spec)
    if spec is not None and spec.sizes == "standard":
        raise UserError(f"agent {player.spec!r} plays only the {STANDARD[0]}x{STANDARD[1]} four-in-a-row board "
                        f"(its network or book are made for it), not {size[0]}x{size[1]}x{size[2]}; "
                        "cxforge agents lists the board sizes of each")


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a match; ``result`` holds the games that finished."""

    def __init__(self, result: PlayedMatch) -> None:
        super().__init__(f"interrupted after {len(result.records)} game(s)")
        self.result = result


def _check_picklable(*players: Player) -> None:
    """Players cross to worker processes by pickle: say so plainly when one cannot."""
    for p in players:
        try:
            pickle.dumps(p)
        except Exception:
            raise UserError(f"player {p.label!r} cannot be sent to worker processes (define it at module "
                            "level, or use workers=1)") from None


def _validate(games: int, seed: int, seats: str) -> None:
    if not isinstance(games, int) or games < 1:
        raise UserError(f"the number of games must be a positive integer, got {games!r}")
    if not isinstance(seed, int) or seed < 0:
        raise UserError(f"the seed must be a non-negative integer, got {seed!r}")
    if seats not in SEATS:
        raise UserError(f"seats must be one of {', '.join(SEATS)}, got {seats!r}")


@dataclass(frozen=True)
class MatchPlan:
    """The games of a match: players A and B (resolved), how many, the base seed, what every game is played
    under, A's seats and the openings (0-based columns each); ``UserError`` for values that make no match."""

    a: Player
    b: Player
    games: int = 100
    seed: int = 0
    settings: GameSettings = field(default_factory=GameSettings)
    seats: str = "both"
    openings: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        _validate(self.games, self.seed, self.seats)
        geometry(*self.settings.size)
        for p in (self.a, self.b):
            check_size(p, self.settings.size)

    def jobs(self) -> list[GameJob]:
        return match_jobs(self.a, self.b, self.games, self.seed, self.settings, self.seats, tuple(self.openings))


def plan_line(plan: MatchPlan, games: int, workers: int) -> str:
    """The match's first line (``progress.Bar``): the games it will play now, the players, the openings and
    the workers."""
    openings = f" from {progress_bars.count(len(plan.openings), 'opening')}" if plan.openings else ""
    seats = "" if plan.seats == "both" else f", {plan.a.label} always {plan.seats}"
    players = f"{plan.a.label} vs {plan.b.label}"
    return f"cxforge match: {progress_bars.count(games, 'game')} of {players}{openings}{seats}, -w {workers}"


def run_match(a: PlayerLike, b: PlayerLike, games: int = 100, workers: int | None = None, seed: int = 0, *,
              settings: GameSettings | None = None, seats: str = "both",
              openings: tuple[tuple[int, ...], ...] = (), progress: bool = True,
              on_game: Callable[[GameRecord], None] | None = None) -> PlayedMatch:
    """Play ``games`` games between ``a`` and ``b``; A moves first in even-numbered games.

    ``settings`` (``settings.GameSettings``): the board size (default 6x7x4),
    Kaggle's clock, the agent hosts' limits and ``isolate``.  Submission files
    always play in agent hosts (child processes, ``tools/connectx_forge/sandbox``); ``isolate``
    puts every player given by a spec there too.

    ``seats`` "first" or "second" puts A in that seat in every game instead.
    ``openings`` (0-based columns each): game ``i`` starts after ``opening_of(i, ...)``,
    so with seats alternating each opening is played once from each seat.

    ``workers`` processes (all cores by default; 1 plays in this process) play
    the games on the arena's scheduler (``schedule.run_jobs``).  Game ``i`` is
    seeded with ``game_seed(seed, i)``, so results do not depend on ``workers``.
    A bar on stderr shows progress unless ``progress`` is False.  ``play_match``
    takes an executor of your own, and games played before.

    ``on_game`` sees each game as it comes back.  Ctrl-C does not lose the
    finished games: it raises ``MatchInterrupted`` (a KeyboardInterrupt) whose
    ``result`` holds them, with ``interrupted`` the number not played.
    """
    plan = MatchPlan(as_player(a), as_player(b), games, seed, settings or GameSettings(), seats, tuple(openings))
    return play_match(plan, workers, progress, on_game=on_game)


def play_match(plan: MatchPlan, workers: int | None = None, progress: bool = True, *,
               executor: Executor | None = None, on_game: Callable[[GameRecord], None] | None = None,
               stored: Sequence[GameRecord] = (), chunk: int | None = None) -> PlayedMatch:
    """Play the games of ``plan`` (``run_match``'s arguments).

    ``workers`` processes (all cores by default; 1 plays in this process), ``chunk`` games a task (default
    ``batch_size``); ``executor``: an executor of your own instead (players then must pickle: specs,
    registered agents and module-level functions do).  ``stored``: games of this match played before
    (``match_run``: a results store, ``--resume``); the games of their indices are not played again, and the
    result counts them with the new ones (``on_game`` sees only the new).
    """
    pa, pb, game, games = plan.a, plan.b, plan.settings, plan.games
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise UserError(f"workers must be at least 1, got {workers}")
    n_workers = 1 if executor is None and workers == 1 else workers
    if n_workers > 1 or executor is not None:
        _check_picklable(pa, pb)
    # local workers also spool each game as it ends, so that Ctrl-C keeps a game that ended in a worker but
    # had not come back yet
    spool = tempfile.mkdtemp(prefix="cxforge-spool-") if n_workers > 1 and executor is None else None
    have = {rec.index for rec in stored}
    jobs = [job for job in plan.jobs() if job.slot not in have]
    # in this process a game a task costs nothing (and Ctrl-C then loses no finished game); a worker gets a few
    # at a time (one pickled task a game would cost more than a quick game)
    batch = 1 if n_workers == 1 and executor is None else batch_size(max(1, len(jobs)), n_workers, chunk)
    start = time.perf_counter()
    finished: list[GameRecord] = [rec for rec in stored if rec.index < games]

    def keep(rec: GameRecord) -> None:
        finished.append(rec)
        if on_game is not None:
            on_game(rec)

    def result() -> PlayedMatch:
        records = sorted(finished, key=lambda r: r.index)
        return PlayedMatch(pa.label, pb.label, game.size, plan.seed, n_workers, time.perf_counter() - start, records,
                           game.act_timeout, (is_hosted(pa, game.isolate), is_hosted(pb, game.isolate)),
                           games - len(records))

    try:
        with _workers(min(n_workers, max(1, len(jobs))), executor, spool) as ex, \
                progress_bars.bar(games, f"{pa.label} vs {pb.label}", "game", progress,
                                  plan_line(plan, len(jobs), n_workers), n_workers * batch) as bar:
            bar.already(len(finished))

            def done(_: GameJob, rec: GameRecord) -> bool:
                keep(rec)
                bar.update(1)
                return False

            if jobs:
                schedule.run_jobs(jobs, ex, done, batch=batch)
    except KeyboardInterrupt:
        if spool is not None:  # the workers are stopped: what they spooled is every game that ended
            have = {rec.index for rec in finished}
            for rec in sorted((r for r in spooled(spool) if r.index not in have), key=lambda r: r.index):
                keep(rec)
        raise MatchInterrupted(result()) from None
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
    return result()
