"""A tournament: a round robin (or a gauntlet) over an opening suite, crash-safe and resumable.

Every pairing plays each of the suite's first M openings twice, A with each
mark, each game seeded on its own (``schedule``).  Games are played opening by
opening, so the ratings are balanced at every moment of the run, and each game
is committed to the store as it ends (``store``).  A run is named by a hash of
its settings, leaving out M: asking for more openings later extends the same
run.  Running it again with the same store plays only the
games the store lacks, and the report is always computed from the store's games
alone, so an interrupted run that is resumed reports exactly what an
uninterrupted one would (for agents whose moves do not depend on the clock).

API::

    from connectx_forge.arena.run import Execution, execute
    from connectx_forge.arena.tournament import Tournament
    result = execute(Tournament(("lookahead", "random", "leftmost"), openings=10), Execution(workers=2))
    result.report.ratings[0]           # the best player, its Elo and 95% interval (a TournamentReport)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypedDict

from connectx_forge import progress as bars
from connectx_forge.arena import elo, standings
from connectx_forge.arena import openings as suites
from connectx_forge.arena.run import (
    Execution,
    Live,
    Opened,
    RunInfo,
    RunInfoJson,
    RunResult,
    canonical_specs,
    job_key,
    labels_of,
    play_run,
    stored_label,
)
from connectx_forge.arena.schedule import GameJob, executor, pair_jobs
from connectx_forge.arena.standings import PairingJson, PairingTable, RatingJson, RatingRow, Seats, WDLJson
from connectx_forge.arena.store import StoredGame
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play import evidence
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import resolve
from connectx_forge.play.settings import GameSettings, GameSettingsJson
from connectx_forge.players.player import GhostFiles
from connectx_forge.sandbox import jail

SEEDS = 10  # a game without openings: the seeds each pairing plays from each seat (--openings M sets M)


class TournamentKey(TypedDict):
    """What a tournament run's name hashes (``Tournament.run_key``): its settings, M and N left out (None)."""

    players: list[str]
    gauntlet: str | None
    plies: int
    openings: None
    seed: int
    band: list[int]
    games: None
    game: Mapping[str, object]  # ``GameSettings.run_key``


class TournamentJson(TypedDict):
    """A ``Tournament`` as a store and its report keep it (``Tournament.to_json``): its fields."""

    players: list[str]
    gauntlet: str | None
    plies: int
    openings: int | None
    seed: int
    band: list[int]
    games: int | None
    game: GameSettingsJson


@dataclass(frozen=True)
class Tournament:
    """A tournament's settings: its players (specs), the gauntlet's player, the suite, the base seed, ``games``
    (``-n``: the most games the run holds, the schedule's first N; None: all) and what every game is played
    under (``game``: Kaggle's clock, the agent hosts' limits)."""

    kind: ClassVar[str] = "tournament"
    players: tuple[str, ...]
    gauntlet: str | None = None
    plies: int = suites.DEFAULT_PLIES
    openings: int | None = None  # the first M openings of the suite (None: all)
    seed: int = 0
    band: tuple[int, int] = suites.DEFAULT_BAND
    games: int | None = None
    game: GameSettings = field(default_factory=GameSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "band", (self.band[0], self.band[1]))
        if len(self.players) < 2:
            raise UserError("a tournament needs at least two players")
        if len(set(self.players)) != len(self.players):
            dup = sorted({p for p in self.players if self.players.count(p) > 1})
            raise UserError(f"each player may appear once; repeated: {', '.join(dup)}")
        if self.openings is not None and self.openings < 1:
            raise UserError(f"--openings must be at least 1, got {self.openings}")
        if self.games is not None and self.games < 1:
            raise UserError(f"-n/--games must be at least 1, got {self.games}")

    def pairings(self) -> list[tuple[str, str]]:
        """Every pairing ``(A, B)``: all pairs of players in order, or the gauntlet's player against each other."""
        if self.gauntlet is not None:
            return [(self.gauntlet, p) for p in self.players if p != self.gauntlet]
        return [(a, b) for i, a in enumerate(self.players) for b in self.players[i + 1:]]

    def specs(self) -> tuple[str, ...]:
        return self.players

    def to_json(self) -> TournamentJson:
        return TournamentJson(players=list(self.players), gauntlet=self.gauntlet, plies=self.plies,
                              openings=self.openings, seed=self.seed, band=list(self.band), games=self.games,
                              game=self.game.to_json())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tournament:
        """The settings ``to_json`` wrote (a stored run's: ``RunConfig.settings``)."""
        fields = dict(data)
        fields["players"], fields["band"] = tuple(data["players"]), tuple(data["band"])
        fields["game"] = GameSettings.from_json(data["game"])
        return cls(**fields)

    def run_key(self) -> TournamentKey:
        """The settings the run's name hashes: all but M and N (more openings or games extend the run)."""
        return TournamentKey(players=list(self.players), gauntlet=self.gauntlet, plies=self.plies, openings=None,
                             seed=self.seed, band=list(self.band), games=None, game=self.game.run_key())

    def settled(self, ghosts: GhostFiles | None = None) -> Tournament:
        """The tournament as a run stores it: paths made absolute (inside a project, its own name means it), the
        gauntlet's player named by spec or label; ``UserError`` for a player that names none."""
        players = canonical_specs(self.players, ghosts)
        t = replace(self, players=players)
        for p in players:
            resolve(p)
        if t.gauntlet is not None:
            labels = labels_of(players)
            (gauntlet,) = canonical_specs([t.gauntlet], ghosts)
            by_label = [p for p in players if labels[p] == t.gauntlet]
            gauntlet = gauntlet if gauntlet in players else by_label[0] if len(by_label) == 1 else t.gauntlet
            if gauntlet not in players:
                raise UserError(f"the gauntlet's player {t.gauntlet!r} is not among the players "
                                f"({', '.join(self.players)})")
            t = replace(t, gauntlet=gauntlet)
        return t

    def play(self, opened: Opened, how: Execution) -> RunResult[TournamentReport]:
        """Play the games of the schedule's first N the store lacks, opening by opening; the report
        (``tournament_report``) and games."""
        suite = tournament_suite(self, how.progress)
        scheduled = jobs_of(self, suite, opened.labels)
        jobs = scheduled[:self.games]
        wanted = {job_key(j) for j in jobs}
        start = time.perf_counter()
        db, run, labels = opened.db, opened.run, opened.labels
        played, kind = 0, "none (all games were in the store)"
        so_far = {g.key: g for g in db.games(run) if g.key in wanted}  # checked before a game is played
        todo = [j for j in jobs if job_key(j) not in so_far]

        def seen(job: GameJob, record: GameRecord) -> None:  # the bar's games: those read, and each as it ends
            so_far[job_key(job)] = StoredGame(job_key(job), job.slot, stored_label(job.a, labels),
                                             stored_label(job.b, labels), record)
            how.seen(job, record)

        with bars.bar(len(jobs), "tournament", "game", how.progress, plan_line(self, len(todo), suite, labels, how),
                      how.n_workers) as bar:
            bar.already(len(jobs) - len(todo))
            live = Live(bar, lambda: _leader(list(so_far.values()), self, labels))
            if todo and how.ex is not None:
                played, kind = play_run(db, run, todo, how.ex, live, on_game=seen, labels=labels), how.ex.kind
            elif todo:
                with executor(how.n_workers, how.dask) as made:
                    played, kind = play_run(db, run, todo, made, live, on_game=seen, labels=labels), made.kind
        games = [g for g in db.games(run) if g.key in wanted]
        info = opened.info(played, kind, time.perf_counter() - start, how)
        report = tournament_report(self, run, len(suite), len(scheduled), games, info, labels)
        return RunResult(replace(report, mixed_versions=opened.chosen.mixed, run_note=opened.chosen.note), games)


class TournamentReportJson(TypedDict):
    """``cxforge tournament --json`` and ``report.json`` (``TournamentReport.to_json``)."""

    kind: str
    run: str
    settings: TournamentJson
    players: list[str]
    gauntlet: str | None
    openings: int
    plies: int
    band: list[int]
    games: int
    rating_method: str
    pair_method: str
    ratings: list[RatingJson]
    pairs: list[PairingJson]
    seats: dict[str, dict[str, WDLJson]]  # player -> ``Seats.to_json``
    failures: dict[str, dict[str, int]]
    slowed: dict[str, int]
    info: RunInfoJson
    scheduled: int
    max_games: int | None
    mixed_versions: list[str]
    run_note: str | None
    distinct_games: int


@dataclass(frozen=True)
class TournamentReport:
    """A tournament's report, from its stored games alone (``info`` aside): its players by their labels (the
    gauntlet's among them), the openings, the games played and scheduled, the ratings (best first; none until
    every player has played), each pairing's table, each player's seats and rule breaks, the ways slowed hosts
    were held, how many games were distinct (``evidence``: the tables count those alone; a tournament plays
    each opening once per pairing and seat, so every game is) and which players' versions are mixed in the
    run.  ``to_json`` is ``cxforge tournament --json`` and ``report.json``."""

    run: str
    settings: Tournament
    players: tuple[str, ...]
    gauntlet: str | None
    openings: int
    games: int
    scheduled: int
    rating_method: str  # ``elo.METHOD``: how the ratings were fitted, in the report's words
    pair_method: str  # ``elo.PAIR_METHOD``: how each pairing's Elo was computed
    ratings: tuple[RatingRow, ...]
    pairs: tuple[PairingTable, ...]
    seats: dict[str, Seats]
    failures: dict[str, dict[str, int]]
    slowed: dict[str, int]
    info: RunInfo
    distinct_games: int
    mixed_versions: tuple[str, ...] = ()
    run_note: str | None = None

    @property
    def max_games(self) -> int | None:
        """``-n``: the most games the run holds (None: all)."""
        return self.settings.games

    def to_json(self) -> TournamentReportJson:
        t = self.settings
        return {
            "kind": "tournament", "run": self.run, "settings": t.to_json(), "players": list(self.players),
            "gauntlet": self.gauntlet, "openings": self.openings, "plies": t.plies, "band": list(t.band),
            "games": self.games, "rating_method": self.rating_method, "pair_method": self.pair_method,
            "ratings": [r.to_json() for r in self.ratings], "pairs": [p.to_json() for p in self.pairs],
            "seats": {p: by.to_json() for p, by in self.seats.items()}, "failures": self.failures,
            "slowed": self.slowed, "info": self.info.to_json(), "scheduled": self.scheduled,
            "max_games": self.max_games, "mixed_versions": list(self.mixed_versions), "run_note": self.run_note,
            "distinct_games": self.distinct_games,
        }

    @classmethod
    def from_json(cls, data: TournamentReportJson) -> TournamentReport:
        """The report ``to_json`` wrote."""
        return cls(data["run"], Tournament.from_json(data["settings"]), tuple(data["players"]), data["gauntlet"],
                   data["openings"], data["games"], data["scheduled"], data["rating_method"], data["pair_method"],
                   tuple(RatingRow.from_json(r) for r in data["ratings"]),
                   tuple(PairingTable.from_json(p) for p in data["pairs"]),
                   {p: Seats.from_json(by) for p, by in data["seats"].items()}, data["failures"], data["slowed"],
                   RunInfo(**data["info"]), int(data["distinct_games"]), tuple(data["mixed_versions"]),
                   data["run_note"])


def tournament_report(t: Tournament, run: str, openings: int, scheduled: int, games: Sequence[StoredGame],
                      info: RunInfo, labels: dict[str, str] | None = None) -> TournamentReport:
    """The report of tournament ``t`` on ``openings`` openings of its suite, ``scheduled`` games in all, from
    its stored ``games``, its players named by their ``labels`` (as the store names them; default: their
    specs).  The tables count the distinct games alone (``evidence.counted``, each pairing a scope, a game's
    seat and opening its key)."""
    names = labels or {}
    players = [names.get(p, p) for p in t.players]
    gauntlet = None if t.gauntlet is None else names.get(t.gauntlet, t.gauntlet)
    counted, read = evidence.counted((g.key.pairing, (g.key.colour, g.key.opening), evidence.play_of(g.record), g)
                                     for g in games)
    seen = {g.a for g in counted} | {g.b for g in counted}
    ratings = (standings.rating_table(standings.ratings(counted, players, gauntlet), counted)
               if seen == set(players) else [])
    return TournamentReport(run, t, tuple(players), gauntlet, openings, len(games), scheduled, elo.METHOD,
                            elo.PAIR_METHOD, tuple(ratings),
                            tuple(standings.pairing_tables(counted)), standings.seats(counted, players),
                            standings.failures(counted, players),
                            jail.slowed_games(g.record.slowed for g in games), info, read.distinct)


def plan_line(t: Tournament, games: int, suite: Sequence[suites.Opening], labels: Mapping[str, str],
              how: Execution) -> str:
    """The tournament's first line (``progress.Bar``): the games it plays now, its players, round robin or
    gauntlet, the openings and the workers."""
    kind = "round robin" if t.gauntlet is None else f"gauntlet of {labels.get(t.gauntlet, t.gauntlet)}"
    players = ", ".join(labels.get(p, p) for p in t.players)
    openings = bars.count(min(t.openings or len(suite), len(suite)), "opening" if t.game.game == CONNECTX else "seed")
    return (f"cxforge tournament: {bars.count(games, 'game')} of {players} ({kind}) on {openings}, "
            f"{bars.workers_text(how.n_workers, how.dask)}")


def tournament_suite(t: Tournament, progress: bool = True) -> list[suites.Opening]:
    """The openings the tournament plays: the suite's first M (a suite of M is built if the default is smaller);
    a game without openings plays M seeds (default ``SEEDS``)."""
    if t.game.game != CONNECTX:
        return suites.seed_slots(t.openings or SEEDS)
    size = max(suites.DEFAULT_SIZE, t.openings or 0)
    suite = suites.load_suite(t.plies, t.band, size, progress=progress)
    if t.openings is not None and t.openings > len(suite):
        raise UserError(f"the {t.plies}-ply suite in {t.band[0]}:{t.band[1]} has only {len(suite)} openings; "
                        f"--openings {t.openings} asks for more")
    return suite[:t.openings] if t.openings is not None else suite


def jobs_of(t: Tournament, suite: Sequence[suites.Opening], labels: dict[str, str] | None = None) -> list[GameJob]:
    """Every game, opening by opening: slot ``o * pairings + p`` is pairing p's pair on opening o; a pairing is
    named by its players' labels (default: ``run.labels_of``), its games played by their specs."""
    pairings = t.pairings()
    names = labels if labels is not None else labels_of(t.players)
    seeded = t.game.game != CONNECTX  # no openings: start o is the o-th seed
    return [job for o, opening in enumerate(suite) for p, (a, b) in enumerate(pairings)
            for job in pair_jobs(f"{names[a]} vs {names[b]}", a, b, opening.moves, o * len(pairings) + p, t.seed,
                                 repeat=o if seeded else 0, settings=t.game)]


def _leader(games: Sequence[StoredGame], t: Tournament, labels: dict[str, str]) -> str:
    """The bar's live line: the leader and its rating so far, over ``games`` (those stored and those played
    since, kept in memory: reading the store again each second would check every record again)."""
    if not games:
        return ""
    players = [labels[p] for p in t.players]
    seen = {g.a for g in games} | {g.b for g in games}
    if seen != set(players):
        return f"{len(games)} games"
    try:
        r = standings.ratings(games, players, None if t.gauntlet is None else labels[t.gauntlet])
    except ValueError:
        return ""
    best = r.order()[0]
    lo, hi = r.interval(best)
    return f"leader {r.players[best]} {r.elo[best]:+.0f} [{lo:+.0f}, {hi:+.0f}]"
