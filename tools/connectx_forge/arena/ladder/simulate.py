"""The simulated ladder: Kaggle's rating process over your candidates and a reference pool, its games played by
the arena's scheduler (``schedule.run_jobs``: ``-w``, ``--dask``) and committed to its store as they end.

Each day is one batch: its pairings are drawn on the ratings at the start of the
day (``process``), its games are the jobs the store lacks, and the day is rated
once they are all in.  Episodes are played from the empty board, as on Kaggle,
first seat to A (``GameJob.colour`` 1), each seeded from the run's seed and its
place (day, episode).  So the same ``--seed`` gives the same ladder, and a
resumed (or extended: more ``--days``) run replays the stored days from the
store and plays on where it stopped.  A run is named by its settings less the
days.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from connectx_forge import progress as bars
from connectx_forge.arena.ladder.process import LadderPlan, Process, matchmaking_rng
from connectx_forge.arena.ladder.rating import RatingSettings, TrueSkillModel
from connectx_forge.arena.run import Execution, Opened, canonical_specs, job_key, play_run
from connectx_forge.arena.schedule import GameJob, Workers, executor, seed_of
from connectx_forge.arena.store import Key, a_score
from connectx_forge.errors import UserError
from connectx_forge.play.evidence import distinct_games
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import resolve
from connectx_forge.play.settings import GameKey, GameSettings
from connectx_forge.players.player import GhostFiles

# the default reference pool: shipped agents of spread strength, weakest first
DEFAULT_POOL = ("random", "lookahead", "alphabeta", "net", "solver")
YOU = "you"  # the team of the candidates; each pool agent is a team of its own


class LadderKey(TypedDict):
    """What a ladder's run name hashes (``Ladder.run_key``): the settings that decide its games."""

    players: list[str]
    pool: list[str]
    per_day: int
    new_per_day: int
    window: float
    active: int | None
    stagger: int
    rating: dict[str, float]
    seed: int
    game: GameKey


@dataclass(frozen=True)
class Ladder:
    """A ladder's settings: the candidates (your team's submissions, in the order submitted, ``stagger`` days
    apart), the reference pool, the days, Kaggle's process (``per_day``, ``new_per_day``, ``window``,
    ``active``) and rating model (``rating``), the seed, the replicates and settling band (``replicates``),
    and what every game is played under (``game``: Kaggle's clock, the agent hosts' limits)."""

    kind: ClassVar[str] = "ladder"
    players: tuple[str, ...]
    pool: tuple[str, ...] = DEFAULT_POOL
    days: int = 10
    per_day: int = 8
    new_per_day: int = 12
    window: float = 150.0
    active: int | None = None
    stagger: int = 0
    rating: RatingSettings = field(default_factory=RatingSettings)
    seed: int = 0
    replicates: int = 200
    settle: float = 25.0
    game: GameSettings = field(default_factory=GameSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "pool", tuple(self.pool))
        for name in ("days", "per_day", "new_per_day", "replicates"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.active is not None and self.active < 1:
            raise UserError(f"--active must be at least 1, got {self.active}")
        if self.stagger < 0:
            raise UserError(f"--stagger must be at least 0, got {self.stagger}")
        if not self.window > 0 or not self.settle > 0:
            raise UserError("--window and --settle must be positive")

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["players"], out["pool"], out["game"] = list(self.players), list(self.pool), self.game.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ladder:
        """The settings ``to_json`` wrote (a stored run's: ``RunConfig.settings``; a report's ``settings``)."""
        data = dict(data)
        data["players"], data["pool"] = tuple(data["players"]), tuple(data["pool"])
        data["rating"] = RatingSettings(**data["rating"])
        data["game"] = GameSettings.from_json(data["game"])
        return cls(**data)

    def run_key(self) -> LadderKey:
        """What the run's name hashes: the settings that decide its games (not the days, the replicates or the
        settling band, which only extend or read the run)."""
        return LadderKey(players=list(self.players), pool=list(self.pool), per_day=self.per_day,
                         new_per_day=self.new_per_day, window=self.window, active=self.active, stagger=self.stagger,
                         rating=self.rating.to_json(), seed=self.seed, game=self.game.run_key())

    def settled(self, ghosts: GhostFiles | None = None) -> Ladder:
        """The ladder as played: paths absolute, the default pool less the candidates (``candidates_first``);
        ``UserError`` for settings that cannot make a ladder (``validate``)."""
        t = replace(self, players=canonical_specs(self.players, ghosts), pool=canonical_specs(self.pool, ghosts))
        t = candidates_first(t)
        validate(t)
        return t

    def play(self, opened: Opened, how: Execution) -> Played:
        """Play (or finish, or extend) the ladder's days into the store; the process after the last day and the
        games' results."""
        return _play_days(self, opened, how)

    def specs(self) -> tuple[str, ...]:
        return (*self.players, *self.pool)

    def plan(self, labels: dict[str, str]) -> LadderPlan:
        teams = tuple([YOU] * len(self.players) + [f"pool:{labels[p]}" for p in self.pool])
        submitted = tuple([i * self.stagger for i in range(len(self.players))] + [0] * len(self.pool))
        return LadderPlan(tuple(labels[s] for s in self.specs()), teams, submitted, self.per_day, self.new_per_day,
                    self.window, self.active)


def candidates_first(t: Ladder) -> Ladder:
    """The ladder with the default pool less the agents that are also candidates: a shipped agent given as a
    candidate is taken once, as a candidate (a pool of one's own choosing is kept as given: ``validate``)."""
    if t.pool != canonical_specs(DEFAULT_POOL):
        return t
    return replace(t, pool=tuple(p for p in t.pool if p not in t.players))


def validate(t: Ladder) -> None:
    """``UserError`` for settings that cannot make a ladder; resolves every player (a bad spec is one line)."""
    if not t.players:
        raise UserError("give at least one candidate PLAYER (your submission)")
    specs = t.specs()
    if len(set(specs)) != len(specs):
        dup = sorted({p for p in specs if specs.count(p) > 1})
        raise UserError(f"each player may appear once (candidates and pool together); repeated: {', '.join(dup)}")
    if not t.pool and len(t.players) < 2:
        raise UserError("a ladder needs opponents: give a --pool, or it has only your team")
    for p in specs:
        resolve(p)


@dataclass
class Played:
    """The main run's games: the ladder as played (``candidates_first``), the process (ratings by day), each
    day's pairings and first-seat scores, the validation episodes played (one per submission), how many rated
    episodes were distinct (``evidence.distinct_games``: the same two agents in the same seats from the empty
    board played a game no earlier episode played), and the run's bookkeeping (``played_now``: games of either
    kind played by this call, the rest came from the store)."""

    ladder: Ladder
    process: Process
    days: list[list[tuple[int, int]]]
    scores: list[list[float]]
    validations: int
    run: str
    store: Path
    played_now: int
    executor: str
    labels: dict[str, str]
    distinct_games: int
    note: str | None = None


def _episode_job(t: Ladder, spec_a: str, spec_b: str, name: str, slot: int, labels: dict[str, str]) -> GameJob:
    return GameJob(spec_a, spec_b, 1, seed_of(t.seed, name, "", 1), slot, (), t.game,
                   f"{labels[spec_a]} vs {labels[spec_b]}")


def _play_days(t: Ladder, opened: Opened, how: Execution) -> Played:
    """Each day: its new submissions' validation episodes, then its pairings, drawn on the ratings at the start
    of the day; the games the store lacks played, the day rated once they are all in."""
    specs = t.specs()
    db, run, labels, path = opened.db, opened.run, opened.labels, opened.path
    plan = t.plan(labels)
    kind = "none (all games were in the store)"
    played = 0
    with ExitStack() as stack:
        results: dict[Key, GameRecord | None] = {g.key: g.record for g in db.games(run)}
        open_workers: list[Workers] = [] if how.ex is None else [how.ex]
        bar = stack.enter_context(bars.bar(expected_games(t), "ladder", "game", how.progress,
                                           plan_line(t, labels, how), how.n_workers))

        def batch(jobs: list[GameJob]) -> list[GameRecord]:
            nonlocal played, kind
            todo = [j for j in jobs if job_key(j) not in results]
            if todo:
                if not open_workers:
                    open_workers.append(stack.enter_context(executor(how.n_workers, how.dask)))
                kind = open_workers[0].kind

                def keep(job: GameJob, record: GameRecord) -> None:
                    results[job_key(job)] = record
                    how.seen(job, record)

                played += play_run(db, run, todo, open_workers[0], None, on_game=keep, labels=labels)
            bar.already(len(jobs) - len(todo))
            bar.update(len(todo))
            out = [results[job_key(j)] for j in jobs]
            if any(r is None for r in out):
                raise UserError(f"the store {path} lost a game of run {run}; rerun with a new --store")
            return [r for r in out if r is not None]

        process = Process(plan, TrueSkillModel(t.rating))
        errored: set[int] = set()
        days: list[list[tuple[int, int]]] = []
        scores: list[list[float]] = []
        validations = 0
        rated: list[tuple[tuple[int, int], GameRecord]] = []  # each rated episode, by its seats (first, second)
        for day in range(t.days):
            new = [i for i, d in enumerate(plan.submitted) if d == day]
            if new:  # the validation episodes: each new submission against itself
                checks = batch([_episode_job(t, specs[i], specs[i], f"validation {i}", day * 100000 + k, labels)
                                for k, i in enumerate(new)])
                errored |= {i for i, r in zip(new, checks, strict=True) if r.culprit is not None}
                process.errored = frozenset(errored)
                validations += len(new)
            pairs = process.day_pairings(day, matchmaking_rng(t.seed, day))
            records = batch([_episode_job(t, specs[i], specs[j], f"day {day} episode {k}",
                                          day * 100000 + 1000 + k, labels) for k, (i, j) in enumerate(pairs)])
            rated += [(pair, r) for pair, r in zip(pairs, records, strict=True)]
            day_scores = [a_score(r, 1) for r in records]
            process.rate_day(pairs, day_scores)
            days.append(pairs)
            scores.append(day_scores)
            if how.progress and not bars.wanted(how.progress):
                bar.write(day_line(day, t.days, len(pairs), played))
    return Played(t, process, days, scores, validations, run, path, played, kind, labels, distinct_games(rated),
                  opened.chosen.note)


def expected_games(t: Ladder) -> int:
    """About how many games ladder ``t`` plays: a validation episode a submission, then each day half the
    quota of every active submission (``matchmaking.pairings``), none broken."""
    plan = t.plan({s: s for s in t.specs()})
    process = Process(plan, TrueSkillModel(t.rating))
    games = len(t.specs())
    for day in range(t.days):
        active = process.active(day)
        if len({plan.teams[i] for i in active}) > 1:
            games += sum(((t.new_per_day if plan.submitted[i] == day else t.per_day) + 1) // 2 for i in active)
    return games


def plan_line(t: Ladder, labels: dict[str, str], how: Execution) -> str:
    """The ladder's first line (``progress.Bar``): its submissions, pool, days and games, and the workers."""
    yours = ", ".join(labels[p] for p in t.players)
    pool = ", ".join(labels[p] for p in t.pool) or "none"
    return (f"cxforge ladder: about {bars.count(expected_games(t), 'game')} over {bars.count(t.days, 'day')}: "
            f"{yours} against the pool {pool}, {bars.workers_text(how.n_workers, how.dask)}")


def day_line(day: int, days: int, episodes: int, played: int) -> str:
    """The line on stderr as a day is rated, where no bar is drawn (stderr is not a terminal: a pipe, a log):
    a long ladder is not silent for minutes."""
    return f"cxforge ladder: day {day + 1}/{days} rated ({episodes} episodes; {played} games played now)"

