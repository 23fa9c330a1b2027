"""An SPRT run: NEW against BASE on paired openings until the test decides, crash-safe and resumable.

Pair k plays opening ``k mod n`` of the suite (the suite cycles, each cycle with
new seeds) twice, NEW with each mark.  Pairs are played in parallel but read
in order, and a pair counts as evidence only when it is new (``evidence``: it
differs from every earlier pair on its opening, or the two agents were shown
stochastic); the LLR is computed after each pair counted, and the test stops at
the first pair whose LLR leaves the bounds (``sprt.SPRT``), at ``max_games``, or
when the suite is exhausted: every opening was played again and every pair
repeated its first one move for move (two deterministic agents), so more games
would add none.  So the result depends only on the games, never on which finished
first: a resumed run, or one on more workers, stops at the same pair with the
same LLR (for agents whose moves do not depend on the clock).  Games still in
flight when the test decides are never counted.

The default suite is every 6-ply opening whose exact score lies in -3:3
(``PLIES``, ``BAND``: 4,788 openings, 9,576 distinct games a pair of agents,
scored by the opening book in under a second on first use and then cached):
more than the games an SPRT at 10 normalized Elo takes on average (BENCHMARKS.md).

The run is named by a hash of the players, suite, seed and games' settings
(``--memory`` and ``--slowdown`` where not the defaults), not of the
test's bounds: they only decide when to stop, so a store's games serve any
bounds, and a longer ``max_games`` continues a run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypedDict

from connectx_forge import progress as bars
from connectx_forge.arena import openings as suites
from connectx_forge.arena import standings
from connectx_forge.arena.elo import PAIR_METHOD, PairElo, pentanomial_elo
from connectx_forge.arena.pentanomial import NAMES, Pentanomial, bucket
from connectx_forge.arena.run import (
    Execution,
    Live,
    Opened,
    RunInfo,
    RunInfoJson,
    RunResult,
    canonical_specs,
    job_key,
    play_run,
    version_lines,
)
from connectx_forge.arena.schedule import GameJob, Workers, executor, pair_jobs
from connectx_forge.arena.sprt import SPRT
from connectx_forge.arena.store import Key, StoredGame, a_score
from connectx_forge.arena.tournament_report import elo_text, slowdown_lines
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.evidence import Evidence, Play, distinct_games, play_of
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import resolve
from connectx_forge.play.settings import GameSettings, GameSettingsJson
from connectx_forge.players.player import GhostFiles
from connectx_forge.sandbox import jail

DEFAULT_MAX_GAMES = 20000
PLIES = 6  # the SPRT's suite: every 6-ply opening whose score lies in BAND
BAND = (-3, 3)
FILES = ("report.json", "llr.png")  # what -o DIR holds after an SPRT
SCOPE = "NEW vs BASE"  # the one pair of agents an SPRT's evidence is counted for


class SprtKey(TypedDict):
    """What an SPRT run's name hashes (``Sprt.run_key``)."""

    new: str
    base: str
    plies: int
    band: list[int]
    openings: int | None
    seed: int
    game: Mapping[str, object]  # ``GameSettings.run_key``


class SprtJson(TypedDict):
    """An ``Sprt`` as a store and its report keep it (``Sprt.to_json``): its fields."""

    new: str
    base: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str
    plies: int
    band: list[int]
    openings: int | None
    seed: int
    max_games: int
    game: GameSettingsJson


@dataclass(frozen=True)
class Sprt:
    """An SPRT run's settings: the players, the test, the suite (``plies``, ``band`` and ``openings``, its
    first M: None for every opening in the band), the seed, the most games (``max_games``) and what every game
    is played under (``game``: Kaggle's clock, the agent hosts' limits)."""

    kind: ClassVar[str] = "sprt"
    new: str
    base: str
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    plies: int = PLIES
    band: tuple[int, int] = BAND
    openings: int | None = None
    seed: int = 0
    max_games: int = DEFAULT_MAX_GAMES
    game: GameSettings = field(default_factory=GameSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "band", (self.band[0], self.band[1]))
        self.test()
        if self.max_games < 2:
            raise UserError(f"-n/--games must be at least 2 (one pair), got {self.max_games}")
        if self.openings is not None and self.openings < 1:
            raise UserError(f"--openings must be at least 1, got {self.openings}")

    @property
    def pairing(self) -> str:
        return f"{self.new} vs {self.base}"

    def test(self) -> SPRT:
        """The test (``UserError`` for bad bounds)."""
        try:
            return SPRT(self.elo0, self.elo1, self.alpha, self.beta, self.model)
        except ValueError as exc:
            raise UserError(str(exc)) from None

    def specs(self) -> tuple[str, ...]:
        return (self.new, self.base)

    def to_json(self) -> SprtJson:
        return SprtJson(new=self.new, base=self.base, elo0=self.elo0, elo1=self.elo1, alpha=self.alpha,
                        beta=self.beta, model=self.model, plies=self.plies, band=list(self.band),
                        openings=self.openings, seed=self.seed, max_games=self.max_games, game=self.game.to_json())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sprt:
        """The settings ``to_json`` wrote (a stored run's: ``RunConfig.settings``)."""
        fields = dict(data)
        fields["band"], fields["game"] = tuple(data["band"]), GameSettings.from_json(data["game"])
        return cls(**fields)

    def run_key(self) -> SprtKey:
        """The settings that decide which games are played (the run's name hashes these): not the test's
        bounds, which only decide when to stop, so a store's games serve any bounds."""
        return SprtKey(new=self.new, base=self.base, plies=self.plies, band=list(self.band), openings=self.openings,
                       seed=self.seed, game=self.game.run_key())

    def settled(self, ghosts: GhostFiles | None = None) -> Sprt:
        """NEW and BASE as a run stores them (absolute paths); ``UserError`` for a player that names none."""
        new, base = canonical_specs([self.new, self.base], ghosts)
        resolve(new), resolve(base)
        return replace(self, new=new, base=base)

    def play(self, opened: Opened, how: Execution) -> RunResult[SprtReport]:
        """Count the store's pairs in order, then play pairs until the test decides; the report (``sprt_report``)
        and the games it counted."""
        test = self.test()
        labels = opened.labels
        pairing = f"{labels[self.new]} vs {labels[self.base]}"
        suite = sprt_suite(self, how.progress)
        seq = Sequential(test, self.max_games // 2, len(suite))
        start = time.perf_counter()
        db, run = opened.db, opened.run
        played, kind = 0, "none (the store's games decided it)"
        for g in db.games(run):
            seq.add(g.slot, g.key.colour, g.a_score, play_of(g.record))
        if seq.result is None:
            line = (f"cxforge sprt: up to {bars.count(self.max_games - 2 * seq.pairs, 'game')} of {pairing} on "
                    f"{bars.count(len(suite), 'opening')}, {bars.workers_text(how.n_workers, how.dask)}")
            with bars.bar(self.max_games, f"sprt {pairing}", "game", how.progress, line, how.n_workers) as bar:
                bar.already(2 * seq.pairs)
                live = Live(bar, lambda: f"LLR {seq.history[-1] if seq.history else 0:.2f} "
                                         f"({test.lower:.2f}, {test.upper:.2f})")

                def count(job: GameJob, record: GameRecord) -> None:
                    seq.add(job.slot, job.colour, a_score(record, job.colour), play_of(record))
                    how.seen(job, record)

                todo = _jobs(self, suite, db.keys(run), pairing)

                def stop() -> bool:
                    return seq.result is not None

                def play(w: Workers) -> int:  # no game more than a window of pairs past the last one counted
                    return play_run(db, run, todo, w, live, stop, count, lambda job: job.slot < seq.pairs + w.slots,
                                    labels)

                if how.ex is not None:
                    played, kind = play(how.ex), how.ex.kind
                else:
                    with executor(how.n_workers, how.dask) as made:
                        played, kind = play(made), made.kind
        games = [g for g in db.games(run) if g.slot < seq.pairs]
        report = sprt_report(self, run, seq, games, opened.info(played, kind, time.perf_counter() - start, how),
                             labels)
        return RunResult(replace(report, mixed_versions=opened.chosen.mixed, run_note=opened.chosen.note), games)


def sprt_suite(s: Sprt, progress: bool = True) -> list[suites.Opening]:
    """The openings the SPRT plays: every opening of its band, or the first ``openings`` (labelled once and kept
    in the user cache: ``openings.load_suite``); a game without openings plays a new seed each pair (its one
    start, repeated)."""
    if s.game.game != CONNECTX:
        return suites.seed_slots(1)
    suite = suites.load_suite(s.plies, s.band, s.openings, progress=progress)
    where = f"the {s.plies}-ply suite in {s.band[0]}:{s.band[1]}"
    if not suite:
        raise UserError(f"{where} holds no opening: widen --band")
    if s.openings is not None and s.openings > len(suite):
        raise UserError(f"{where} has only {len(suite)} openings; --openings {s.openings} asks for more")
    return suite


@dataclass
class Sequential:
    """Pairs read in order as their games arrive, each counted as evidence when new (``evidence.Evidence``: a
    pair is a unit, its key its opening, ``openings`` the suite's size), the LLR after each pair counted, until
    the test decides, the pairs run out (``max_pairs``) or the suite is exhausted."""

    test: SPRT
    max_pairs: int
    openings: int
    pending: dict[int, dict[int, tuple[float, Play]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NAMES, 0))
    history: list[float] = field(default_factory=list)  # the LLR after each pair counted
    counted: list[int] = field(default_factory=list)  # the pairs counted, in the order they counted
    evidence: Evidence[tuple[int, str]] = field(default_factory=Evidence)
    read: int = 0
    result: str | None = None  # "H0", "H1", or "none" when max_games ran out or the suite was exhausted
    exhausted: bool = False

    @property
    def pairs(self) -> int:
        """The pairs read so far, counted or held back as repeats."""
        return self.read

    @property
    def stochastic(self) -> bool:
        """Whether a pair played again differed from the first: then every pair counts."""
        return self.evidence.shown_stochastic(SCOPE)

    def penta(self) -> Pentanomial:
        return Pentanomial(**{k.lower(): v for k, v in self.counts.items()})

    def add(self, slot: int, colour: int, score: float, play: Play) -> None:
        """NEW's score in one game (``colour``: NEW's mark) of pair ``slot``, and the game as played."""
        if self.result is not None or slot < self.read:
            return
        self.pending.setdefault(slot, {})[colour] = (score, play)
        while self.result is None and len(self.pending.get(self.read, {})) == 2:
            self._read(self.pending.pop(self.read))

    def _read(self, pair: dict[int, tuple[float, Play]]) -> None:
        """Count the next pair if it is new evidence (with the repeats it shows were real, if any), then stop
        when the test decides, the suite is exhausted or the pairs run out."""
        slot = self.read
        self.read += 1
        (first, play1), (second, play2) = pair[1], pair[2]
        for counted, name in self.evidence.add(SCOPE, slot % self.openings, (play1, play2),
                                               (slot, bucket(first, second))):
            self.counts[name] += 1
            self.counted.append(counted)
            self.history.append(self.test.llr(self.penta()))
        decision = self.test.decide(self.history[-1]) if self.history else "continue"
        if decision != "continue":
            self.result = decision
        elif self.read >= 2 * self.openings and not self.stochastic:
            self.result, self.exhausted = "none", True
        elif self.read >= self.max_pairs:
            self.result = "none"


def _jobs(s: Sprt, suite: Sequence[suites.Opening], have: set[Key], pairing: str) -> Iterator[GameJob]:
    """Pair k's two games, k = 0, 1, ..., those the store lacks (lazily: the test may stop early)."""
    n = len(suite)
    for k in range(s.max_games // 2):
        for job in pair_jobs(pairing, s.new, s.base, suite[k % n].moves, k, s.seed, repeat=k // n, settings=s.game):
            if job_key(job) not in have:
                yield job


class DistinctJson(TypedDict):
    """``Distinct`` as an SPRT's report holds it (``Distinct.to_json``): its fields."""

    openings: int
    games_played: int
    distinct_games: int
    stochastic: bool
    exhausted: bool


@dataclass(frozen=True)
class Distinct:
    """What an SPRT read against what it counted: the suite's ``openings``, the games played (or read from the
    store) in the pairs it read, how many of them were distinct (``evidence.distinct_games``), whether the two
    agents were shown stochastic (every pair counts) and whether the suite was exhausted."""

    openings: int
    games_played: int
    distinct_games: int
    stochastic: bool
    exhausted: bool

    def to_json(self) -> DistinctJson:
        return DistinctJson(openings=self.openings, games_played=self.games_played,
                            distinct_games=self.distinct_games, stochastic=self.stochastic, exhausted=self.exhausted)

    @classmethod
    def from_json(cls, data: DistinctJson) -> Distinct:
        """The fields ``to_json`` wrote, from a report's JSON."""
        return cls(int(data["openings"]), int(data["games_played"]), int(data["distinct_games"]),
                   bool(data["stochastic"]), bool(data["exhausted"]))


class SprtReportJson(DistinctJson):
    """``cxforge sprt --json`` and ``report.json`` (``SprtReport.to_json``): the report, and what it read against
    what it counted (``DistinctJson``'s keys, last)."""

    kind: str
    run: str
    settings: SprtJson
    new: str
    base: str
    result: str
    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str
    pairs: int
    games: int
    wins: int
    draws: int
    losses: int
    pentanomial: dict[str, int]  # ``Pentanomial.to_json``
    elo: dict[str, float | int | str]  # ``PairElo.to_json``
    elo_method: str
    failures: dict[str, dict[str, int]]
    llr_history: list[float]
    slowed: dict[str, int]
    info: RunInfoJson
    mixed_versions: list[str]
    run_note: str | None


@dataclass(frozen=True)
class SprtReport:
    """An SPRT run's report, from the games it counted alone (``info`` aside): NEW and BASE by their labels,
    the decision (``H1``, ``H0`` or ``none``), the LLR after each pair counted and its bounds, the counts,
    NEW's Elo from the pairs, and what was read against what counted (``distinct``).  ``to_json`` is
    ``cxforge sprt --json``."""

    run: str
    settings: Sprt
    new: str
    base: str
    result: str
    llr_history: tuple[float, ...]
    lower: float
    upper: float
    wdl: tuple[int, int, int]  # NEW's wins, draws, losses
    pentanomial: Pentanomial
    elo: PairElo
    failures: dict[str, dict[str, int]]
    slowed: dict[str, int]
    info: RunInfo
    distinct: Distinct
    mixed_versions: tuple[str, ...] = ()
    run_note: str | None = None

    @property
    def llr(self) -> float:
        return self.llr_history[-1] if self.llr_history else 0.0

    @property
    def pairs(self) -> int:
        """The pairs counted as evidence."""
        return len(self.llr_history)

    @property
    def distinct_games(self) -> int:
        return self.distinct.distinct_games

    def to_json(self) -> SprtReportJson:
        s = self.settings
        wins, draws, losses = self.wdl
        return {
            "kind": "sprt", "run": self.run, "settings": s.to_json(), "new": self.new, "base": self.base,
            "result": self.result, "llr": self.llr, "lower": self.lower, "upper": self.upper, "elo0": s.elo0,
            "elo1": s.elo1, "alpha": s.alpha, "beta": s.beta, "model": s.model, "pairs": self.pairs,
            "games": 2 * self.pairs, "wins": wins, "draws": draws, "losses": losses,
            "pentanomial": self.pentanomial.to_json(), "elo": self.elo.to_json(), "elo_method": PAIR_METHOD,
            "failures": self.failures, "llr_history": list(self.llr_history), "slowed": self.slowed,
            "info": self.info.to_json(), "mixed_versions": list(self.mixed_versions), "run_note": self.run_note,
            **self.distinct.to_json(),
        }

    @classmethod
    def from_json(cls, data: SprtReportJson) -> SprtReport:
        """The report ``to_json`` wrote."""
        return cls(data["run"], Sprt.from_json(data["settings"]), data["new"], data["base"], data["result"],
                   tuple(data["llr_history"]), data["lower"], data["upper"],
                   (data["wins"], data["draws"], data["losses"]), Pentanomial.from_json(data["pentanomial"]),
                   PairElo.from_json(data["elo"]), data["failures"], data["slowed"], RunInfo(**data["info"]),
                   Distinct.from_json(data), tuple(data["mixed_versions"]), data["run_note"])


def sprt_report(s: Sprt, run: str, seq: Sequential, games: Sequence[StoredGame], info: RunInfo,
                labels: dict[str, str]) -> SprtReport:
    """The report of an SPRT run from the ``games`` of the pairs it read (its counts from those it counted), NEW
    and BASE named by their ``labels`` (as the store names them)."""
    new, base = labels[s.new], labels[s.base]
    test = seq.test
    penta = seq.penta()
    slots = set(seq.counted)
    counted = [g for g in games if g.slot in slots]
    wdl = standings.tally(g.a_score for g in counted)
    distinct = Distinct(seq.openings, len(games), distinct_games(((g.key.colour, g.slot % seq.openings), g.record)
                                                                 for g in games), seq.stochastic, seq.exhausted)
    return SprtReport(run, s, new, base, seq.result or "none", tuple(round(x, 4) for x in seq.history),
                      round(test.lower, 4), round(test.upper, 4), (wdl.wins, wdl.draws, wdl.losses), penta,
                      pentanomial_elo(penta), standings.failures(counted, [new] if new == base else [new, base]),
                      jail.slowed_games(g.record.slowed for g in games), info, distinct)


def verdict(report: SprtReport) -> str:
    """The decision in words, as ``cxforge sprt`` and the notebook's result say it."""
    r, s = report, report.settings
    if r.result == "H1":
        return f"H1 accepted: {r.new} is stronger by at least about {s.elo1:g}"
    if r.result == "H0":
        return f"H0 accepted: {r.new} is not stronger by {s.elo1:g} (at most about {s.elo0:g})"
    if r.distinct.exhausted and s.game.game != CONNECTX:
        return f"no decision: {s.game.game} has no random map, and the agents repeat their games"
    if r.distinct.exhausted:
        return f"no decision: the suite's {r.distinct.openings} openings are exhausted"
    return "no decision: the game limit came first"


def more_openings(report: SprtReport) -> str | None:
    """For an exhausted suite: why more games would not help, and how to get more openings (else None)."""
    s = report.settings
    if not report.distinct.exhausted:
        return None
    if s.game.game != CONNECTX:
        return (f"more games add no evidence: both agents replayed their first pair step for step, and {s.game.game} "
                "has no seed to vary: make an agent stochastic, or compare them on another game")
    lo, hi = s.band
    more = [] if s.openings is None else ["drop --openings"]
    plies = f"--plies {s.plies + 1}" + (": hours of solving on first use" if s.plies + 1 > suites.BOOK_PLIES else "")
    more += [f"widen --band (--band={lo - 1}:{hi + 1})", f"add plies ({plies})"]
    return (f"more games add no evidence: both agents replayed every opening move for move; for more openings "
            f"{', '.join(more[:-1])} or {more[-1]}; cxforge openings --all --plies K --band=LO:HI lists a suite")


def evidence_line(report: SprtReport) -> str:
    """How many games were played, how many were distinct, and which counted."""
    d = report.distinct
    if d.stochastic:
        why = "every game counts: a pair played again differed, so the agents are stochastic"
    elif d.games_played > d.distinct_games:
        why = "repeats not counted: every pair played again repeated its first move for move"
    else:
        why = "no opening was played twice"
    starts = f"{d.openings} openings" if report.settings.game.game == CONNECTX else "new seeds"
    return f"distinct games: {d.distinct_games} of {d.games_played} played on {starts} ({why})"


def format_sprt(report: SprtReport) -> str:
    """The plain-text report ``cxforge sprt`` prints."""
    r, s, e, info = report, report.settings, report.elo, report.info
    penta = " ".join(f"{k} {v}" for k, v in r.pentanomial.to_json().items())
    wins, draws, losses = r.wdl
    hint = more_openings(r)
    return "\n".join([
        f"SPRT {r.new} vs {r.base}: H0 {s.elo0:g}, H1 {s.elo1:g} ({s.model} Elo), alpha {s.alpha:g}, "
        f"beta {s.beta:g}",
        verdict(r),
        *([hint] if hint else []),
        f"LLR {r.llr:.2f}, bounds [{r.lower:.2f}, {r.upper:.2f}], after {2 * r.pairs} games ({r.pairs} pairs) "
        "counted",
        evidence_line(r),
        f"{r.new}: {wins} wins, {draws} draws, {losses} losses; pairs: {penta}",
        f"Elo {elo_text(e.elo, 1)} [{elo_text(e.lo, 1)}, {elo_text(e.hi, 1)}] (95%, pentanomial), "
        f"normalized Elo {elo_text(e.nelo, 1)} +/- {elo_text(e.nelo_error, 1).lstrip('+')}, "
        f"LOS {100 * e.los:.1f}% ({PAIR_METHOD})",
        f"store: {info.store} ({info.played_now} games played now, {info.seconds:.1f} s, {info.executor})",
        *slowdown_lines(s.game.slowdown, r.slowed),
        *version_lines(r.mixed_versions, r.run_note),
    ])
