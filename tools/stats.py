"""Win-rate statistics shared by the checker, the game loop and the reports."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Z95 = 1.959964  # the standard normal quantile of a two-sided 95% interval


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval for a proportion ``successes / n``; ``(0, 1)`` when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def format_rate(successes: float, n: int) -> str:
    """``"93.5% [90.1, 95.8]"``: a rate with its 95% Wilson interval."""
    if n <= 0:
        return "n/a"
    lo, hi = wilson(successes, n)
    return f"{100 * successes / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (at least one) and its normal 95% interval (none for one)."""
    n = len(values)
    mean = sum(values) / n
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = z * spread / math.sqrt(n)
    return mean, mean - half, mean + half


# --- exact binomial tails and Clopper-Pearson bounds (the checker's floor test, tools/submit/sequential.py) ---

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
