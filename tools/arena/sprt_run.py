"""An SPRT run: NEW against BASE on paired openings until the test decides, crash-safe and resumable.

Pair k plays opening ``k mod n`` of the suite (the suite cycles, each cycle with
new seeds) twice, NEW with each mark.  Pairs are played in parallel but counted
in order: the LLR is computed after pair 0, then pair 1, and so on, and the test
stops at the first pair whose LLR leaves the bounds (``sprt.SPRT``), or at
``max_games``.  So the result depends only on the games, never on which finished
first: a resumed run, or one on more workers, stops at the same pair with the
same LLR (for agents whose moves do not depend on the clock).  Games still in
flight when the test decides are never counted.

The run is named by a hash of the players, suite, seed, clock and agent-host
limits (``--memory`` and ``--slowdown``, where not the defaults), not of the
test's bounds: they only decide when to stop, so a store's games serve any
bounds, and a longer ``max_games`` continues a run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from connectx_forge.tools import options
from connectx_forge.tools import progress as bars
from connectx_forge.tools.arena import openings as suites
from connectx_forge.tools.arena import results
from connectx_forge.tools.arena.elo import PAIR_METHOD, pentanomial_elo
from connectx_forge.tools.arena.pentanomial import NAMES, Pentanomial, bucket
from connectx_forge.tools.arena.report import elo_text, slowdown_lines
from connectx_forge.tools.arena.run import (
    Live,
    RunResult,
    canonical_specs,
    choose_run,
    file_versions,
    game_settings,
    host_limits,
    interruptible,
    key_of,
    labels_of,
    limits_key,
    play_run,
    run_config,
    run_name,
    settings_only,
    store_path,
    version_lines,
)
from connectx_forge.tools.arena.schedule import GameJob, Workers, executor, pair_jobs
from connectx_forge.tools.arena.sprt import SPRT
from connectx_forge.tools.arena.store import Store, StoredGame, a_score
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.game import GameRecord
from connectx_forge.tools.play.players import resolve
from connectx_forge.tools.play.rules import ACT_TIMEOUT, OVERAGE

DEFAULT_MAX_GAMES = 20000


@dataclass(frozen=True)
class SprtSettings:
    """An SPRT run's settings: the players, the test, the suite, the seed, Kaggle's clock and the agent hosts'
    limits (``memory``, ``slowdown``: as ``tournament.Tournament``'s)."""

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
    act_timeout: float = ACT_TIMEOUT
    overage: float = OVERAGE
    memory: int | None = None
    slowdown: float = 1.0

    @property
    def pairing(self) -> str:
        return f"{self.new} vs {self.base}"

    def test(self) -> SPRT:
        """The test (``UserError`` for bad bounds)."""
        try:
            return SPRT(self.elo0, self.elo1, self.alpha, self.beta, self.model)
        except ValueError as exc:
            raise UserError(str(exc)) from None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["band"] = list(self.band)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SprtSettings:
        data = settings_only(data)  # a stored run's config: its settings, less its labels and versions
        data["band"] = tuple(data["band"])
        return cls(**data)  # a run stored before memory and slowdown existed lacks them: the defaults

    def games_key(self) -> dict[str, Any]:
        """The settings that decide which games are played (the run's name hashes these)."""
        return {"new": self.new, "base": self.base, "plies": self.plies, "band": list(self.band), "seed": self.seed,
                "act_timeout": self.act_timeout, "overage": self.overage, **limits_key(self.memory, self.slowdown)}


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


def _jobs(s: SprtSettings, suite: Sequence[suites.Opening], have: set[Any], pairing: str) -> Iterator[GameJob]:
    """Pair k's two games, k = 0, 1, ..., those the store lacks (lazily: the test may stop early)."""
    n = len(suite)
    game = game_settings(s.act_timeout, s.overage, s.memory, s.slowdown)
    for k in range(s.max_games // 2):
        for job in pair_jobs(pairing, s.new, s.base, suite[k % n].moves, k, s.seed, repeat=k // n, settings=game):
            if key_of(job) not in have:
                yield job


def run_sprt(s: SprtSettings, workers: int | None = None, store: Path | str | None = None, dask: str | None = None,
             progress: bool = True, ex: Workers | None = None,
             on_game: Callable[[GameJob, GameRecord], None] | None = None,
             require_store: bool = False, on_change: str | None = None) -> RunResult:
    """Run (or finish) an SPRT; its report (``sprt_report``) and the games it counted.

    Arguments as ``tournament.run_tournament``'s (players named by their labels, stored by absolute paths,
    ``on_change`` for a player whose sources changed since the stored games).
    """
    test = s.test()
    if s.max_games < 2:
        raise UserError(f"-n/--games must be at least 2 (one pair), got {s.max_games}")
    host_limits(s.memory, s.slowdown)
    new, base_spec = canonical_specs([s.new, s.base])
    s = replace(s, new=new, base=base_spec)
    resolve(s.new), resolve(s.base)
    labels = labels_of([s.new, s.base])
    pairing = f"{labels[s.new]} vs {labels[s.base]}"
    suite = suites.load_suite(s.plies, s.band, progress=progress)
    versions = file_versions([s.new, s.base])
    base = run_name("sprt", s.games_key())
    path = store_path(store, base, require_store)
    seq = Sequential(test, s.max_games // 2)
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    start = time.perf_counter()
    played, kind = 0, "none (the store's games decided it)"
    with interruptible(path), Store(path) as db:
        chosen = choose_run(db, "sprt", base, versions, labels, require_store, on_change)
        run = chosen.run
        db.register(run, "sprt", run_config(s.to_json(), base, versions, labels, chosen))
        for g in db.games(run, records=False):
            seq.add(g.slot, g.key.colour, g.a_score)
        if seq.result is None:
            with bars.bar(None, f"sprt {pairing}", "game", progress) as bar:
                bar.update(2 * seq.pairs)
                live = Live(bar, lambda: f"LLR {seq.history[-1] if seq.history else 0:.2f} "
                                         f"({test.lower:.2f}, {test.upper:.2f})")

                def count(job: GameJob, record: GameRecord) -> None:
                    seq.add(job.slot, job.colour, a_score(record, job.colour))
                    if on_game is not None:
                        on_game(job, record)

                todo = _jobs(s, suite, db.keys(run), pairing)

                def stop() -> bool:
                    return seq.result is not None

                def play(w: Workers) -> int:  # no game more than a window of pairs past the last one counted
                    return play_run(db, run, todo, w, live, stop, count, lambda job: job.slot < seq.pairs + w.slots,
                                    labels)

                if ex is not None:
                    played, kind = play(ex), ex.kind
                else:
                    with executor(n_workers, dask) as made:
                        played, kind = play(made), made.kind
        games = [g for g in db.games(run) if g.slot < seq.pairs]
    info = {"store": str(path), "seconds": round(time.perf_counter() - start, 3), "played_now": played,
            "executor": kind, "workers": n_workers if ex is None else None}
    report = sprt_report(s, run, seq, games, info, labels)
    report["mixed_versions"], report["run_note"] = list(chosen.mixed), chosen.note
    return RunResult(report, games)


def sprt_report(s: SprtSettings, run: str, seq: Sequential, games: Sequence[StoredGame],
                info: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The report of an SPRT run from the games it counted, NEW and BASE named by their ``labels`` (as the
    store names them; default: their specs)."""
    names = labels or {}
    new, base = names.get(s.new, s.new), names.get(s.base, s.base)
    test = seq.test
    penta = seq.penta()
    wdl = results.WDL()
    for g in games:
        wdl.add(g.a_score)
    return {
        "kind": "sprt", "run": run, "settings": s.to_json(), "new": new, "base": base,
        "result": seq.result or "none", "llr": round(seq.history[-1], 4) if seq.history else 0.0,
        "lower": round(test.lower, 4), "upper": round(test.upper, 4), "elo0": s.elo0, "elo1": s.elo1,
        "alpha": s.alpha, "beta": s.beta, "model": s.model,
        "pairs": seq.pairs, "games": 2 * seq.pairs, **wdl.to_json(), "pentanomial": penta.to_json(),
        "elo": pentanomial_elo(penta).to_json(), "elo_method": PAIR_METHOD,
        "failures": results.failures(games, [new] if new == base else [new, base]),
        "llr_history": [round(x, 4) for x in seq.history],
        "slowed": options.slowed_games(g.record.slowed for g in games if g.record is not None),
        "info": info,
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
