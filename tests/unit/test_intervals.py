"""The toolkit's intervals mean what they say: a nominal 95% interval holds the truth at least ~93% of the time
at small n (3 to 30 games), and no sample gives one of zero width.

Win rates (``stats.wilson``) are checked exactly, by summing the binomial over every outcome; scores with
draws and paired differences (``stats.score_interval``, through ``paired.summarise`` and
``elo.pentanomial_elo``) by a seeded simulation over five-valued distributions, tie-heavy ones (deterministic
agents that mostly play alike) among them.  Each distinct sample is scored once, so the checks take a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectx_forge.arena.elo import elo_to_score, pentanomial_elo
from connectx_forge.arena.pentanomial import Pentanomial
from connectx_forge.play.paired import summarise
from connectx_forge.stats import format_rate, mean_and_interval, wilson

SMALL = range(3, 31)
FLOOR = 0.93  # the least coverage a nominal 95% interval may have at any truth checked
LEVELS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])  # a game's paired difference as a score, or a pair's points
DISTRIBUTIONS = {  # probabilities of the five levels
    "ties, a few wins": [0, 0, 0.8, 0, 0.2],
    "ties, some wins": [0, 0, 0.6, 0, 0.4],
    "ties, rare wins": [0, 0, 0.93, 0, 0.07],
    "ties, half wins": [0, 0, 0.8, 0.2, 0],
    "ties both ways": [0, 0.1, 0.8, 0.1, 0],
    "symmetric": [0.1, 0.1, 0.6, 0.1, 0.1],
    "uniform": [0.2] * 5,
    "skewed": [0.05, 0.1, 0.5, 0.25, 0.1],
    "coin": [0.5, 0, 0, 0, 0.5],
    "strong": [0.1, 0, 0, 0, 0.9],
    "very strong": [0.03, 0, 0, 0, 0.97],
    "half or all": [0, 0, 0, 0.5, 0.5],
}


def binomial_coverage(n: int, p: float) -> float:
    """The exact chance that ``wilson``'s interval over ``n`` games holds the win rate ``p``."""
    held = 0.0
    for k in range(n + 1):
        lo, hi = wilson(k, n)
        if lo <= p <= hi:
            held += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
    return held


def test_the_win_rate_interval_covers_at_every_small_n_and_rate() -> None:
    worst = min((binomial_coverage(n, p), n, p) for n in SMALL for p in np.linspace(0.02, 0.98, 49))
    assert worst[0] >= FLOOR, worst  # plain Wilson: 87.5% at n = 4, p = 0.5


def simulated_coverage(interval: Callable[[np.ndarray], tuple[float, float]], samples: int = 1500,
                       seed: int = 55) -> tuple[float, int, str]:
    """The least coverage, over ``DISTRIBUTIONS`` and small n, of ``interval`` (counts of the five levels ->
    bounds on the mean level), with the n and distribution where it is least."""
    rng = np.random.default_rng(seed)
    worst = (1.0, 0, "")
    for n in (3, 4, 5, 6, 8, 10, 15, 20, 30):
        for name, probs in DISTRIBUTIONS.items():
            truth = float(np.dot(probs, LEVELS))
            counts = rng.multinomial(n, probs, size=samples)
            distinct, which = np.unique(counts, axis=0, return_inverse=True)
            held = np.array([lo - 1e-12 <= truth <= hi + 1e-12 for lo, hi in map(interval, distinct)])
            worst = min(worst, (float(held[which.ravel()].mean()), n, name))
    return worst


def paired_bounds(counts: np.ndarray) -> tuple[float, float]:
    """``compare``'s interval for paired games with these counts of differences -1, -1/2, 0, 1/2, 1, as a
    score (0..1)."""
    pairs = [pair for c, pair in zip(counts, [(0.0, 1.0), (0.0, 0.5), (0.5, 0.5), (1.0, 0.5), (1.0, 0.0)],
                                     strict=True) for _ in range(int(c))]
    row = summarise("x", pairs)
    return (row.low + 1) / 2, (row.high + 1) / 2


def pair_elo_bounds(counts: np.ndarray) -> tuple[float, float]:
    """A pairing's Elo interval from pair counts (LL, LD, WL, WD, WW), as scores."""
    e = pentanomial_elo(Pentanomial(int(counts[0]), int(counts[1]), int(counts[2]), 0, int(counts[3]),
                                    int(counts[4])))
    return elo_to_score(e.lo) if math.isfinite(e.lo) else 0.0, elo_to_score(e.hi) if math.isfinite(e.hi) else 1.0


@pytest.mark.parametrize("interval", [paired_bounds, pair_elo_bounds], ids=["compare", "pair Elo"])
def test_score_intervals_cover_at_small_n(interval: Callable[[np.ndarray], tuple[float, float]]) -> None:
    worst = simulated_coverage(interval)
    assert worst[0] >= FLOOR, worst  # compare's old normal interval: under 10%; the old pair Elo: 73%


@given(st.integers(0, 60), st.integers(1, 60))
def test_no_win_rate_interval_has_zero_width(wins: int, games: int) -> None:
    wins = min(wins, games)
    lo, hi = wilson(wins, games)
    assert 0 <= lo <= wins / games <= hi <= 1 and hi - lo > 0.02
    assert "[" in format_rate(wins, games)


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0, 1), min_size=1, max_size=80))
def test_no_score_interval_has_zero_width(scores: list[float]) -> None:
    mean, lo, hi = mean_and_interval(scores)
    assert 0 <= lo <= mean <= hi <= 1 and hi - lo > 0.02


def test_the_interval_narrows_as_games_come() -> None:
    widths = [hi - lo for _, lo, hi in (mean_and_interval([0.5] * n) for n in (3, 10, 100, 1000))]
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.01
