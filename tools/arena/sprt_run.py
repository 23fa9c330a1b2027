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
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from connectx_forge.tools import progress as bars
from connectx_forge.tools.arena import openings as suites
from connectx_forge.tools.arena import standings
from connectx_forge.tools.arena.elo import PAIR_METHOD, pentanomial_elo
from connectx_forge.tools.arena.pentanomial import NAMES, Pentanomial, bucket
from connectx_forge.tools.arena.run import (
    Execution,
    Live,
    Opened,
    RunInfo,
    RunResult,
    canonical_specs,
    key_of,
    play_run,
    settings_only,
    version_lines,
)
from connectx_forge.tools.arena.schedule import GameJob, Workers, executor, pair_jobs
from connectx_forge.tools.arena.sprt import SPRT
from connectx_forge.tools.arena.store import StoredGame, a_score
from connectx_forge.tools.arena.tournament_report import elo_text, slowdown_lines
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.game import GameRecord
from connectx_forge.tools.play.players import resolve
from connectx_forge.tools.play.reference import NO_GHOSTS, Ghosts
from connectx_forge.tools.play.settings import GameSettings
from connectx_forge.tools.sandbox import jail

DEFAULT_MAX_GAMES = 20000


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
        data = settings_only(data)  # a stored run's config: its settings, less its labels and versions
        data["band"], data["game"] = tuple(data["band"]), GameSettings.from_json(data["game"])
        return cls(**data)

    def run_key(self) -> dict[str, Any]:
        """The settings that decide which games are played (the run's name hashes these): not the test's
        bounds, which only decide when to stop, so a store's games serve any bounds."""
        return {"new": self.new, "base": self.base, "plies": self.plies, "band": list(self.band), "seed": self.seed,
                "game": self.game.run_key()}

    def settled(self, ghosts: Ghosts = NO_GHOSTS) -> Sprt:
        """NEW and BASE as a run stores them (absolute paths); ``UserError`` for a player that names none."""
        new, base = canonical_specs([self.new, self.base], ghosts)
        resolve(new), resolve(base)
        return replace(self, new=new, base=base)

    def play(self, opened: Opened, how: Execution) -> RunResult:
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
        for g in db.games(run, records=False):
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
        report["mixed_versions"], report["run_note"] = list(opened.chosen.mixed), opened.chosen.note
        return RunResult(report, games)


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


def sprt_report(s: Sprt, run: str, seq: Sequential, games: Sequence[StoredGame],
                info: RunInfo, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The report of an SPRT run from the games it counted, NEW and BASE named by their ``labels`` (as the
    store names them; default: their specs)."""
    names = labels or {}
    new, base = names.get(s.new, s.new), names.get(s.base, s.base)
    test = seq.test
    penta = seq.penta()
    wdl = standings.WDL()
    for g in games:
        wdl.add(g.a_score)
    return {
        "kind": "sprt", "run": run, "settings": s.to_json(), "new": new, "base": base,
        "result": seq.result or "none", "llr": round(seq.history[-1], 4) if seq.history else 0.0,
        "lower": round(test.lower, 4), "upper": round(test.upper, 4), "elo0": s.elo0, "elo1": s.elo1,
        "alpha": s.alpha, "beta": s.beta, "model": s.model,
        "pairs": seq.pairs, "games": 2 * seq.pairs, **wdl.to_json(), "pentanomial": penta.to_json(),
        "elo": pentanomial_elo(penta).to_json(), "elo_method": PAIR_METHOD,
        "failures": standings.failures(games, [new] if new == base else [new, base]),
        "llr_history": [round(x, 4) for x in seq.history],
        "slowed": jail.slowed_games(g.record.slowed for g in games if g.record is not None),
        "info": info.to_json(),
    }


def format_sprt(report: dict[str, Any]) -> str:
    """The plain-text report ``cxforge sprt`` prints."""
    e = report["elo"]
    verdict = {"H1": f"H1 accepted: {report['new']} is stronger by at least about {report['elo1']:g}",
               "H0": f"H0 accepted: {report['new']} is not stronger by {report['elo1']:g} (at most about "
                     f"{report['elo0']:g})",
               "none": "no decision: the game limit came first"}[report["result"]]


    penta = " ".join(f"{k} {v}" for k, v in report["pentanomial"].items())
    info = report["info"]
    return "\n".join([
        f"SPRT {report['new']} vs {report['base']}: H0 {report['elo0']:g}, H1 {report['elo1']:g} "
        f"({report['model']} Elo), alpha {report['alpha']:g}, beta {report['beta']:g}",
        f"{verdict}",
        f"LLR {report['llr']:.2f}, bounds [{report['lower']:.2f}, {report['upper']:.2f}], after {report['games']} "
        f"games ({report['pairs']} pairs)",
        f"{report['new']}: {report['wins']} wins, {report['draws']} draws, {report['losses']} losses; pairs: {penta}",
        f"Elo {elo_text(e['elo'], 1)} [{elo_text(e['elo_lo'], 1)}, {elo_text(e['elo_hi'], 1)}] (95%, pentanomial), "
        f"normalized Elo {elo_text(e['nelo'], 1)} +/- {elo_text(e['nelo_error'], 1).lstrip('+')}, "
        f"LOS {100 * e['los']:.1f}% ({report.get('elo_method', 'pentanomial')})",
        f"store: {info['store']} ({info['played_now']} games played now, {info['seconds']:.1f} s, {info['executor']})",
        *slowdown_lines(report),
        *version_lines(report),
    ])
