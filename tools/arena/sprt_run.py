"""An SPRT run: NEW against BASE on paired openings until the test decides, crash-safe and resumable.

Pair k plays opening ``k mod n`` of the suite (the suite cycles, each cycle with
new seeds) twice, NEW with each mark.  Pairs are played in parallel but counted
in order: the LLR is computed after pair 0, then pair 1, and so on, and the test
stops at the first pair whose LLR leaves the bounds (``sprt.SPRT``), or at
``max_games``.  So the result depends only on the games, never on which finished
first: a resumed run, or one on more workers, stops at the same pair with the
same LLR (for agents whose moves do not depend on the clock).  Games still in
flight when the test decides are never counted.

The run is named by a hash of the players, suite, seed and games' settings
(``--memory`` and ``--slowdown`` where not the defaults), not of the
test's bounds: they only decide when to stop, so a store's games serve any
bounds, and a longer ``max_games`` continues a run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
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
    RunResult,
    canonical_specs,
    key_of,
    play_run,
    version_lines,
)
from connectx_forge.arena.schedule import GameJob, Workers, executor, pair_jobs
from connectx_forge.arena.sprt import SPRT
from connectx_forge.arena.store import StoredGame, a_score
from connectx_forge.arena.tournament_report import elo_text, slowdown_lines
from connectx_forge.build.reference import resolve
from connectx_forge.errors import UserError
from connectx_forge.play.game import GameRecord
from connectx_forge.play.players import GhostFiles
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox import jail

DEFAULT_MAX_GAMES = 20000


class SprtKey(TypedDict):
    """What an SPRT run's name hashes (``Sprt.run_key``)."""

    new: str
    base: str
    plies: int
    band: list[int]
    seed: int
    game: Mapping[str, object]  # ``GameSettings.run_key``


@dataclass(frozen=True)
class Sprt:
    """An SPRT run's settings: the players, the test, the suite, the seed, the most games (``max_games``) and
    what every game is played under (``game``: Kaggle's clock, the agent hosts' limits)."""

    kind: ClassVar[str] = "sprt"
    new: str
    base: str
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    plies: int = suites.DEFAULT_PLIES
    band: tuple[int, int] = suites.DEFAULT_BAND
    seed: int = 0
    max_games: int = DEFAULT_MAX_GAMES
    game: GameSettings = field(default_factory=GameSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "band", (self.band[0], self.band[1]))
        self.test()
        if self.max_games < 2:
            raise UserError(f"-n/--games must be at least 2 (one pair), got {self.max_games}")

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

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["band"], out["game"] = list(self.band), self.game.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sprt:
        """The settings ``to_json`` wrote (a stored run's: ``RunConfig.settings``)."""
        data = dict(data)
        data["band"], data["game"] = tuple(data["band"]), GameSettings.from_json(data["game"])
        return cls(**data)

    def run_key(self) -> SprtKey:
        """The settings that decide which games are played (the run's name hashes these): not the test's
        bounds, which only decide when to stop, so a store's games serve any bounds."""
        return SprtKey(new=self.new, base=self.base, plies=self.plies, band=list(self.band), seed=self.seed,
                       game=self.game.run_key())

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
        suite = suites.load_suite(self.plies, self.band, progress=how.progress)
        seq = Sequential(test, self.max_games // 2)
        start = time.perf_counter()
        db, run = opened.db, opened.run
        played, kind = 0, "none (the store's games decided it)"
        for g in db.games(run):
            seq.add(g.slot, g.key.colour, g.a_score)
        if seq.result is None:
            with bars.bar(None, f"sprt {pairing}", "game", how.progress) as bar:
                bar.update(2 * seq.pairs)
                live = Live(bar, lambda: f"LLR {seq.history[-1] if seq.history else 0:.2f} "
                                         f"({test.lower:.2f}, {test.upper:.2f})")

                def count(job: GameJob, record: GameRecord) -> None:
                    seq.add(job.slot, job.colour, a_score(record, job.colour))
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


@dataclass
class Sequential:
    """Pairs counted in order as their games arrive, the LLR after each, until the test decides."""

    test: SPRT
    max_pairs: int
    pending: dict[int, dict[int, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NAMES, 0))
    history: list[float] = field(default_factory=list)
    result: str | None = None  # "H0", "H1", or "none" when max_games ran out

    @property
    def pairs(self) -> int:
        return len(self.history)

    def penta(self) -> Pentanomial:
        return Pentanomial(**{k.lower(): v for k, v in self.counts.items()})

    def add(self, slot: int, colour: int, score: float) -> None:
        """NEW's score in one game (``colour``: NEW's mark) of pair ``slot``."""
        if self.result is not None or slot < self.pairs:
            return
        self.pending.setdefault(slot, {})[colour] = score
        while self.result is None and len(self.pending.get(self.pairs, {})) == 2:
            pair = self.pending.pop(self.pairs)
            self.counts[bucket(pair[1], pair[2])] += 1
            llr = self.test.llr(self.penta())
            self.history.append(llr)
            decision = self.test.decide(llr)
            if decision != "continue":
                self.result = decision
            elif self.pairs >= self.max_pairs:
                self.result = "none"


def _jobs(s: Sprt, suite: Sequence[suites.Opening], have: set[Any], pairing: str) -> Iterator[GameJob]:
    """Pair k's two games, k = 0, 1, ..., those the store lacks (lazily: the test may stop early)."""
    n = len(suite)
    for k in range(s.max_games // 2):
        for job in pair_jobs(pairing, s.new, s.base, suite[k % n].moves, k, s.seed, repeat=k // n, settings=s.game):
            if key_of(job) not in have:
                yield job


@dataclass(frozen=True)
class SprtReport:
    """An SPRT run's report, from the games it counted alone (``info`` aside): NEW and BASE by their labels,
    the decision (``H1``, ``H0`` or ``none``), the LLR after each pair and its bounds, the counts, and
    NEW's Elo from the pairs.  ``to_json`` is ``cxforge sprt --json``."""

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
    mixed_versions: tuple[str, ...] = ()
    run_note: str | None = None

    @property
    def llr(self) -> float:
        return self.llr_history[-1] if self.llr_history else 0.0

    @property
    def pairs(self) -> int:
        return len(self.llr_history)

    def to_json(self) -> dict[str, Any]:
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
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SprtReport:
        """The report ``to_json`` wrote."""
        return cls(data["run"], Sprt.from_json(data["settings"]), data["new"], data["base"], data["result"],
                   tuple(data["llr_history"]), data["lower"], data["upper"],
                   (data["wins"], data["draws"], data["losses"]), Pentanomial.from_json(data["pentanomial"]),
                   PairElo.from_json(data["elo"]), data["failures"], data["slowed"], RunInfo(**data["info"]),
                   tuple(data["mixed_versions"]), data["run_note"])


def sprt_report(s: Sprt, run: str, seq: Sequential, games: Sequence[StoredGame], info: RunInfo,
                labels: dict[str, str]) -> SprtReport:
    """The report of an SPRT run from the games it counted, NEW and BASE named by their ``labels`` (as the
    store names them)."""
    new, base = labels[s.new], labels[s.base]
    test = seq.test
    penta = seq.penta()
    wdl = standings.tally(g.a_score for g in games)
    return SprtReport(run, s, new, base, seq.result or "none", tuple(round(x, 4) for x in seq.history),
                      round(test.lower, 4), round(test.upper, 4), (wdl.wins, wdl.draws, wdl.losses), penta,
                      pentanomial_elo(penta), standings.failures(games, [new] if new == base else [new, base]),
                      jail.slowed_games(g.record.slowed for g in games), info)


def format_sprt(report: SprtReport) -> str:
    """The plain-text report ``cxforge sprt`` prints."""
    r, s, e, info = report, report.settings, report.elo, report.info
    verdict = {"H1": f"H1 accepted: {r.new} is stronger by at least about {s.elo1:g}",
               "H0": f"H0 accepted: {r.new} is not stronger by {s.elo1:g} (at most about {s.elo0:g})",
               "none": "no decision: the game limit came first"}[r.result]
    penta = " ".join(f"{k} {v}" for k, v in r.pentanomial.to_json().items())
    wins, draws, losses = r.wdl
    return "\n".join([
        f"SPRT {r.new} vs {r.base}: H0 {s.elo0:g}, H1 {s.elo1:g} ({s.model} Elo), alpha {s.alpha:g}, "
        f"beta {s.beta:g}",
        f"{verdict}",
        f"LLR {r.llr:.2f}, bounds [{r.lower:.2f}, {r.upper:.2f}], after {2 * r.pairs} games ({r.pairs} pairs)",
        f"{r.new}: {wins} wins, {draws} draws, {losses} losses; pairs: {penta}",
        f"Elo {elo_text(e.elo, 1)} [{elo_text(e.lo, 1)}, {elo_text(e.hi, 1)}] (95%, pentanomial), "
        f"normalized Elo {elo_text(e.nelo, 1)} +/- {elo_text(e.nelo_error, 1).lstrip('+')}, "
        f"LOS {100 * e.los:.1f}% ({PAIR_METHOD})",
        f"store: {info.store} ({info.played_now} games played now, {info.seconds:.1f} s, {info.executor})",
        *slowdown_lines(s.game.slowdown, r.slowed),
        *version_lines(r.mixed_versions, r.run_note),
    ])
