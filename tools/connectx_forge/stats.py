"""Win-rate statistics shared by the checker, the game loop and the reports.

One interval serves every score of the toolkit (a win rate, a mean score, a paired difference mapped to
[0, 1]): ``score_interval``, Wilson's score interval with its continuity correction, at the sample's
effective size.  Why this one:

* plain Wilson undercovers at small n (87.5% at n = 4 and p = 0.5: both 0/4 and 4/4 miss it); with the
  continuity correction (Newcombe's method 4) its coverage stays at or above 95% at every n from 3 to 30
  (tests/unit/test_intervals.py checks it exactly);
* scores that are not all 0 or 1 (draws, paired differences) have less variance than a proportion with
  the same mean: Wilson's formula is applied at the effective size ``n * m (1 - m) / variance``, the number
  of 0-or-1 games with the same standard error.  A small sample's variance is a poor guess (six tied games
  show none), so it is shrunk toward the largest a score of that mean can have, ``m (1 - m)``, by
  ``PRIOR_GAMES`` virtual games: six tied paired games give about +-0.4, not +-0, and hundreds of games
  keep nearly all the gain of pairing;
* no sample gives an interval of zero width, and every interval holds the sample's own mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Z95 = 1.959964  # the standard normal quantile of a two-sided 95% interval
PRIOR_GAMES = 2.0  # virtual games at the largest variance, shrinking a sample's variance (see above)


def _wilson_bound(p: float, n: float, side: int, z: float) -> float:
    """Wilson's lower (``side`` -1) or upper (+1) bound for a proportion ``p`` observed over ``n`` games."""
    z2 = z * z / n
    centre = (p + z2 / 2) / (1 + z2)
    half = z / (1 + z2) * math.sqrt(p * (1 - p) / n + z2 / (4 * n))
    return centre + side * half


def score_interval(mean: float, variance: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The 95% interval of the mean of ``n`` scores in [0, 1], given their ``mean`` and (population)
    ``variance``: continuity-corrected Wilson at the effective size (see the module's docstring); ``(0, 1)``
    when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    largest = mean * (1 - mean)  # the variance of 0-or-1 scores with this mean: no score can have more
    shrunk = (n * min(variance, largest) + PRIOR_GAMES * largest) / (n + PRIOR_GAMES)
    size = n * largest / shrunk if shrunk > 0 else float(n)  # none only when every score is 0, or every one 1
    step = 1 / (2 * size)  # the continuity correction
    lower = 0.0 if mean - step <= 0 else max(0.0, _wilson_bound(mean - step, size, -1, z))
    upper = 1.0 if mean + step >= 1 else min(1.0, _wilson_bound(mean + step, size, 1, z))
    return (lower, upper)


def mean_and_interval(scores: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``scores`` (each in [0, 1]; at least one) and its 95% interval."""
    n = len(scores)
    mean = math.fsum(scores) / n
    variance = math.fsum((s - mean) ** 2 for s in scores) / n
    return (mean, *score_interval(mean, variance, n))


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval, continuity-corrected, for a proportion ``successes / n``; ``(0, 1)``
    when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    return score_interval(p, p * (1 - p), n, z)


def format_rate(successes: float, n: int) -> str:
    """``"93.5% [88.9, 96.3]"``: a rate with its 95% Wilson interval."""
    if n <= 0:
        return "n/a"
    lo, hi = wilson(successes, n)
    return f"{100 * successes / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


# --- exact binomial tails and Clopper-Pearson bounds (the checker's floor test,
# tools/connectx_forge/submit/sequential.py) ---

def _log_pmf(i: int, n: int, p: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p))


def _sum_pmf(lo: int, hi: int, n: int, p: float) -> float:
    """P(lo <= X <= hi) for X ~ Binomial(n, p), summed exactly term by term (in logs: no underflow)."""
    lo, hi = max(lo, 0), min(hi, n)
    if lo > hi:
        return 0.0
    if p <= 0.0:
        return 1.0 if lo == 0 else 0.0
    if p >= 1.0:
        return 1.0 if hi == n else 0.0
    step = math.log(p) - math.log1p(-p)
    logs = [_log_pmf(lo, n, p)]
    for i in range(lo, hi):  # log pmf(i + 1) from log pmf(i)
        logs.append(logs[-1] + math.log(n - i) - math.log(i + 1) + step)
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))


def binomial_at_most(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    return _sum_pmf(0, k, n, p)


def binomial_at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return _sum_pmf(k, n, n, p)


def _solve_increasing(f: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where the increasing ``f`` crosses ``target`` (bisection to 1e-12)."""
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12:
        mid = (lo + hi) / 2
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(successes: int, n: int, alpha: float) -> tuple[float, float]:
    """The exact one-sided ``1 - alpha`` bounds of a proportion, each side on its own (Clopper-Pearson).

    ``lower``: the p where P(X >= successes) = alpha (0 for no success); ``upper``: the p where
    P(X <= successes) = alpha (1 when every trial succeeded).  Each is a one-sided bound at confidence
    ``1 - alpha``; together they are a two-sided ``1 - 2 alpha`` interval.  ``(0, 1)`` when n is 0.
    """
    if n <= 0:
        return (0.0, 1.0)
    lower = 0.0 if successes <= 0 else _solve_increasing(lambda p: binomial_at_least(successes, n, p), alpha)
    upper = 1.0 if successes >= n else _solve_increasing(lambda p: -binomial_at_most(successes, n, p), -alpha)
    return (lower, upper)
