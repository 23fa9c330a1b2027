"""Win-rate statistics shared by the checker, the game loop and the reports."""

from __future__ import annotations

import math


def wilson(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
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
