"""The sequential probability ratio test on pentanomial pairs (GSPRT), as fastchess and fishtest run it.

H0: NEW is ``elo0`` stronger than BASE; H1: ``elo1`` stronger.  After each pair
the generalized log-likelihood ratio (LLR) is compared with Wald's bounds
``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``: below the lower one
H0 is accepted, above the upper one H1.

The LLR is generalized: under each hypothesis the outcome distribution is the
one closest to the observed frequencies (maximum likelihood) among those whose
Elo is exactly that hypothesis's, and the LLR is the number of pairs times the
mean log-ratio of the two (Michel Van den Bergh's construction, which fastchess
implements).  Two Elo models:

* ``normalized`` (the default): the hypothesis fixes normalized Elo,
  ``(mean - 0.5) / sd`` of the pair score scaled by ``800 / ln 10 / sqrt 2``, so
  elo0/elo1 mean the same whatever the draw rate;
* ``logistic``: the hypothesis fixes the mean score, ``1 / (1 + 10 ** (-elo / 400))``.

Outcomes never seen count 0.001 pairs, as in fastchess, so that the first pairs
give a finite LLR.  The same code tests trinomial W/D/L counts (three outcomes).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from connectx_forge.arena.elo import NELO, elo_to_score
from connectx_forge.arena.pentanomial import SCORES, Pentanomial

MODELS = ("normalized", "logistic")
TRINOMIAL = (0.0, 0.5, 1.0)
EMPTY = 1e-3  # pairs counted for an outcome never seen


@dataclass(frozen=True)
class SPRT:
    """The test's settings; ``llr`` and ``decide`` apply it to counts."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0:g} and {self.elo1:g}")
        for name, v in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < v < 1:
                raise ValueError(f"{name} must be between 0 and 1, got {v:g}")
        if self.alpha + self.beta >= 1:
            raise ValueError("alpha + beta must be below 1")
        if self.model not in MODELS:
            raise ValueError(f"unknown SPRT model {self.model!r}; use {' or '.join(MODELS)}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, penta: Pentanomial) -> float:
        """The LLR of pentanomial pair counts (0 before any pair)."""
        if penta.pairs == 0:
            return 0.0
        return self._llr(SCORES, penta.counts(), pairs=True)

    def llr_trinomial(self, wins: int, draws: int, losses: int) -> float:
        """The LLR of plain W/D/L game counts (games taken as independent)."""
        if wins + draws + losses == 0:
            return 0.0
        return self._llr(TRINOMIAL, (losses, draws, wins), pairs=False)

    def decide(self, llr: float) -> str:
        """``"H1"``, ``"H0"`` or ``"continue"``."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return "continue"

    def _llr(self, scores: Sequence[float], counts: Sequence[int], pairs: bool) -> float:
        regular = [float(c) if c else EMPTY for c in counts]
        total = sum(regular)
        observed = [c / total for c in regular]
        if self.model == "normalized":
            # a pair's points per game have sd sqrt(2) times smaller than a game's at the same normalized Elo
            k = math.sqrt(2) if pairs else 1.0
            p0 = _mle_normalized(scores, observed, k * self.elo0 / NELO)
            p1 = _mle_normalized(scores, observed, k * self.elo1 / NELO)
        else:
            p0 = _mle_mean(scores, observed, elo_to_score(self.elo0))
            p1 = _mle_mean(scores, observed, elo_to_score(self.elo1))
        return total * sum(q * (math.log(a) - math.log(b)) for q, a, b in zip(observed, p1, p0, strict=True))


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """A root of the decreasing function ``f`` on the open interval (lo, hi), by bisection."""
    width = hi - lo
    a, b = lo + width * 1e-12, hi - width * 1e-12
    for _ in range(200):
        mid = (a + b) / 2
        if f(mid) > 0:
            a = mid
        else:
            b = mid
        if b - a < 1e-15 * max(1.0, abs(mid)):
            break
    return (a + b) / 2


def _constraint(observed: Sequence[float], phis: Sequence[float], x: float) -> float:
    """``sum q_i phi_i / (1 + x phi_i)``: zero at the Lagrange multiplier of the nearest distribution."""
    return sum(q * f / (1 + x * f) for q, f in zip(observed, phis, strict=True))


def _mle_mean(scores: Sequence[float], observed: Sequence[float], s: float) -> list[float]:
    """The distribution nearest ``observed`` (maximum likelihood) whose mean is ``s``.

    It is ``observed[i] / (1 + x (scores[i] - s))`` for the ``x`` that gives mean ``s``.
    """
    d = [a - s for a in scores]
    x = _root(functools.partial(_constraint, observed, d), -1 / max(d), -1 / min(d))
    return [q / (1 + x * di) for q, di in zip(observed, d, strict=True)]


def _mle_normalized(scores: Sequence[float], observed: Sequence[float], t: float) -> list[float]:
    """The distribution nearest ``observed`` whose ``(mean - 0.5) / sd`` is ``t``.

    A fixed point (``_fixed_point``) started from uniform, as fishtest's is.
    Far from uniform's own value (0), a large elo1 or pairs all won or all lost,
    the constraint linearized at uniform has no solution; there ``t`` is reached
    in steps, each started from the last one's distribution (a homotopy).
    Without them, an SPRT with ``elo1`` 300 took pairs all won by NEW as
    evidence for H0.
    """
    n = len(scores)
    uniform = [1 / n] * n
    found = _fixed_point(scores, observed, t, uniform)
    for steps in (4, 16, 64):
        if found is not None:
            return found
        found = uniform
        for k in range(1, steps + 1):
            found = _fixed_point(scores, observed, t * k / steps, found)
            if found is None:
                break
    return uniform if found is None else found


def _fixed_point(scores: Sequence[float], observed: Sequence[float], t: float,
                 start: list[float]) -> list[float] | None:
    """From ``start``, the mean and sd of the current guess linearize the constraint into ``phi``, solved as in
    ``_mle_mean``, until the guess stops changing; None where a linearized constraint has no solution."""
    p = start
    for _ in range(100):
        mu = sum(a * q for a, q in zip(scores, p, strict=True))
        sd = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(scores, p, strict=True)))
        phis = [a - 0.5 - 0.5 * t * sd * (1 + ((a - mu) / sd) ** 2) for a in scores]
        lo, hi = min(phis), max(phis)
        if not lo < 0 < hi:
            return None
        x = _root(functools.partial(_constraint, observed, phis), -1 / hi, -1 / lo)
        new = [q / (1 + x * f) for q, f in zip(observed, phis, strict=True)]
        change = max(abs(a - b) for a, b in zip(new, p, strict=True))
        p = new
        if change < 1e-9:
            break
    return p
