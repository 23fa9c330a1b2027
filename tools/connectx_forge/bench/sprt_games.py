"""How many games an SPRT takes: Wald's expected number of pairs, and the test itself run on simulated pairs.

The pairs are drawn from a pentanomial shape (a measured run's counts, LL LD
WL+DD WD WW) tilted to a true normalized Elo (``tilted``), and each simulated
test is ``sprt.SPRT`` itself, pair by pair, as ``cxforge sprt`` counts them.
Under the normalized model the expected number of pairs hardly depends on the
shape: Wald's approximation (``wald_pairs``) is that of a Gaussian whose mean
per pair is the true ``(mean - 0.5) / sd``.  BENCHMARKS.md gives the figures::

    python -m connectx_forge.bench.sprt_games 23 18 85 20 54 --runs 100

``--within`` (default: the distinct games of the SPRT's default suite, 2 x 4,788) adds the share of tests
that decide within that many games: those two deterministic agents can finish before the suite runs out.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence

import numpy as np

from connectx_forge.arena.elo import NELO
from connectx_forge.arena.pentanomial import SCORES, Pentanomial
from connectx_forge.arena.sprt import SPRT
from connectx_forge.arena.sprt_run import DEFAULT_MAX_GAMES

SUITE_GAMES = 2 * 4788  # the distinct games of the SPRT's default suite for a pair of agents


def _t(nelo: float) -> float:
    """A pair's ``(mean - 0.5) / sd`` at normalized Elo ``nelo`` (``elo.pentanomial_elo``'s scale)."""
    return math.sqrt(2) * nelo / NELO


def wald_pairs(test: SPRT, nelo: float) -> float:
    """Wald's approximation of the pairs the test takes on average when the truth is ``nelo``: the LLR's expected
    end over its drift per pair (at the midpoint of the hypotheses, the product of the bounds over its variance)."""
    t0, t1, t = _t(test.elo0), _t(test.elo1), _t(nelo)
    drift = (t1 - t0) * (t - (t0 + t1) / 2)
    if abs(drift) < 1e-12:
        return -test.lower * test.upper / (t1 - t0) ** 2
    a, b = test.lower, test.upper
    accept = (1 - math.exp(-2 * drift / (t1 - t0) ** 2 * a)) / (
        math.exp(-2 * drift / (t1 - t0) ** 2 * b) - math.exp(-2 * drift / (t1 - t0) ** 2 * a))
    return (accept * b + (1 - accept) * a) / drift


def tilted(counts: Sequence[float], nelo: float) -> list[float]:
    """The five outcome probabilities nearest ``counts``' shape (exponentially tilted) whose normalized Elo is
    ``nelo``."""
    q = np.asarray(counts, dtype=float) + 1e-9
    s = np.asarray(SCORES)

    def t_of(lam: float) -> float:
        p = q * np.exp(lam * s)
        p /= p.sum()
        mu = float(p @ s)
        return (mu - 0.5) / math.sqrt(float(p @ (s - mu) ** 2))

    lo, hi = -60.0, 60.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_of(mid) < _t(nelo) else (lo, mid)
    p = q * np.exp(lo * s)
    return list(p / p.sum())


def simulate(test: SPRT, probs: Sequence[float], runs: int, seed: int = 0, max_pairs: int = 10000) -> list[int]:
    """The pairs each of ``runs`` tests took on pairs drawn from ``probs`` (LL LD WL+DD WD WW), ``max_pairs`` at
    most."""
    rng = np.random.default_rng(seed)
    return [_one(test, rng.choice(5, size=max_pairs, p=probs)) for _ in range(runs)]


def _one(test: SPRT, outcomes: np.ndarray) -> int:
    """The pairs one test takes on these outcomes (indices into LL LD WL+DD WD WW), all of them if undecided."""
    counts = [0] * 5
    for n, i in enumerate(outcomes, 1):
        counts[int(i)] += 1
        if test.decide(test.llr(Pentanomial(counts[0], counts[1], counts[2], 0, counts[3], counts[4]))) != "continue":
            return n
    return len(outcomes)


def main(argv: Sequence[str] | None = None) -> None:
    """Print, for a true normalized Elo of elo0, their midpoint and elo1: Wald's games and the simulated tests'
    mean, median and 90th percentile games, and the share decided within ``--within`` games."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", type=float, nargs=5, metavar="N", help="a measured run's LL LD WL+DD WD WW")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--within", type=int, default=SUITE_GAMES)
    args = parser.parse_args(argv)
    test = SPRT(args.elo0, args.elo1)
    for nelo in (args.elo0, (args.elo0 + args.elo1) / 2, args.elo1):
        pairs = simulate(test, tilted(args.counts, nelo), args.runs, max_pairs=DEFAULT_MAX_GAMES // 2)
        decided = sum(2 * n <= args.within and n < DEFAULT_MAX_GAMES // 2 for n in pairs) / len(pairs)
        print(f"true normalized Elo {nelo:g}: Wald {2 * wald_pairs(test, nelo):,.0f} games; {args.runs} simulated "
              f"tests: mean {2 * statistics.mean(pairs):,.0f} games, median {2 * statistics.median(pairs):,.0f}, "
              f"90th percentile {2 * float(np.quantile(pairs, 0.9)):,.0f}, {100 * decided:.0f}% decided within "
              f"{args.within:,}")


if __name__ == "__main__":
    main()
