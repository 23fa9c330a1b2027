"""Elo ratings: one pair of players from pentanomial counts, and a whole pool by maximum likelihood.

The model is the logistic Elo curve: A is expected to score
``1 / (1 + 10 ** (-(R_A - R_B) / 400))`` against B.  Draws count as half a win
and half a loss (the "draw = half a win" model: a game's likelihood is
``p ** s * (1 - p) ** (1 - s)`` for A's score ``s``), so a rating says how many
points an agent scores, not how often it draws.

* ``pentanomial_elo``: two players, from their pair counts, with fastchess's
  formulas (the Elo of the mean score, normalized Elo, the likelihood of
  superiority) over the counts plus a prior of ONE virtual pair spread evenly
  over the five pair outcomes, so that no finite sample gives an infinite Elo.
  Its 95% interval is the toolkit's one score interval (``stats.score_interval``:
  continuity-corrected Wilson at the effective sample size) over the pairs alone,
  mapped to Elo: it holds the truth about 95% of the time or more from 3 pairs
  on (tests/unit/test_intervals.py), has no zero width (pairs that all split are 0
  with an interval that narrows as pairs come), and is infinite on one side only
  when every pair was won (or every one lost), since no number of perfect pairs
  bounds how much stronger A is.  On hundreds of pairs the figures are
  fastchess's to within a percent.
* ``fit``: a pool of players by maximum likelihood (Newton's method).  Each
  pairing that met also gets one virtual draw, a prior in the manner of BayesElo,
  so that an agent that won every game still has a finite rating.  The 95%
  intervals come from the pair-clustered sandwich covariance: the two games of a
  colour-swapped pair are one sample, as in the pentanomial model, so the
  intervals of two players reduce to ``pentanomial_elo``'s when the prior is
  negligible; the same one virtual pair per pairing enters that covariance,
  so that pairs that all split, or a pairing of one pair, never give an
  interval of zero width.  Ratings average 0, or are measured from an anchor.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from connectx_forge.arena.pentanomial import Pentanomial
from connectx_forge.stats import score_interval

Z95 = 1.959963984540054
METHOD = ("maximum likelihood, logistic Elo curve, a draw counts as half a win; one virtual draw per "
          "pairing as a prior; 95% intervals from the pair-clustered sandwich covariance, with one virtual "
          "pair per pairing; mean rating 0 (or 0 for the gauntlet's player)")  # ``fit``, in the reports' words
PAIR_METHOD = ("pentanomial, fastchess's formulas with a prior of one virtual pair spread evenly over the five "
               "pair outcomes; 95% interval: continuity-corrected Wilson at the pairs' effective "
               "sample size")  # ``pentanomial_elo``
PRIOR_PAIRS = 1.0  # virtual pairs, spread evenly over the five outcomes (0, 1/4, 1/2, 3/4, 1 a game)
PRIOR_VARIANCE = 0.125  # the variance of one such pair's points per game
NATURAL = 400 / math.log(10)  # Elo points per unit of the logistic curve's argument
NELO = 800 / math.log(10)  # normalized Elo's scale


def score_to_elo(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def elo_to_score(elo: float) -> float:
    """The expected score of a player ``elo`` points above its opponent."""
    return 1 / (1 + 10 ** (-elo / 400))


def phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


@dataclass(frozen=True)
class PairElo:
    """A's Elo over B from pair counts: the estimate, its 95% interval, normalized Elo, and LOS."""

    pairs: int
    score: float
    elo: float
    lo: float
    hi: float
    nelo: float
    nelo_error: float
    los: float

    @property
    def error(self) -> float:
        """Half the interval's width (fastchess's ``+/-``)."""
        return (self.hi - self.lo) / 2

    def to_json(self) -> dict[str, float | int | str]:
        """A JSON-ready dict; an infinite figure (a perfect score) is the string ``"+inf"`` or ``"-inf"``."""
        return {"pairs": self.pairs, "score": json_number(self.score), "elo": json_number(self.elo),
                "elo_lo": json_number(self.lo), "elo_hi": json_number(self.hi), "nelo": json_number(self.nelo),
                "nelo_error": json_number(self.nelo_error), "los": json_number(self.los)}

    @classmethod
    def from_json(cls, data: Mapping[str, float | str]) -> PairElo:
        """The figures ``to_json`` wrote (an infinite one as ``"+inf"`` or ``"-inf"``)."""
        return cls(int(data["pairs"]), *(float(data[k]) for k in ("score", "elo", "elo_lo", "elo_hi", "nelo",
                                                                    "nelo_error", "los")))


def json_number(x: float, digits: int = 4) -> float | str:
    """``x`` rounded for JSON, which has no infinity: ``"+inf"`` or ``"-inf"`` then."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return round(x, digits) + 0.0  # no negative zero


def pentanomial_elo(penta: Pentanomial, prior: float = PRIOR_PAIRS) -> PairElo:
    """A's Elo over B from pair counts (see the module's docstring); ``prior`` virtual pairs in the estimate, 0
    for fastchess's estimate exactly (then a perfect score is an infinite Elo)."""
    n = penta.pairs
    weight = n + prior
    if weight == 0:
        return PairElo(0, 0.5, 0.0, -math.inf, math.inf, 0.0, math.inf, 0.5)
    lo_score, hi_score = score_interval(penta.score(), penta.variance(), n)  # the pairs alone, no prior
    score = (penta.score() * n + 0.5 * prior) / weight
    var = (n * (penta.variance() + (penta.score() - score) ** 2)
           + prior * (PRIOR_VARIANCE + (0.5 - score) ** 2)) / weight
    sd = math.sqrt(var / weight)
    lo, hi = score_to_elo(lo_score), score_to_elo(hi_score)
    if var > 0:
        nelo = (score - 0.5) / math.sqrt(2 * var) * NELO
        nelo_error = Z95 * sd / math.sqrt(2 * var) * NELO
        los = phi((score - 0.5) / sd)
    else:  # every pair scored the same, and no prior
        nelo = 0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5)
        nelo_error = 0.0
        los = 0.5 if score == 0.5 else float(score > 0.5)
    return PairElo(n, score, score_to_elo(score) + 0.0, lo, hi, nelo, nelo_error, los)  # no negative zero


@dataclass(frozen=True)
class ScoredGame:
    """One game for ``fit``: players ``i`` and ``j`` (indices), ``i``'s score, and its pair (None: alone)."""

    i: int
    j: int
    score: float
    pair: Hashable = None


@dataclass(frozen=True)
class Ratings:
    """Maximum-likelihood ratings of ``players`` with their covariance (Elo squared)."""

    players: tuple[str, ...]
    elo: tuple[float, ...]
    cov: tuple[tuple[float, ...], ...]
    anchor: str | None = None

    def sd(self, i: int) -> float:
        return math.sqrt(max(0.0, self.cov[i][i]))

    def interval(self, i: int) -> tuple[float, float]:
        """The 95% interval of player ``i``'s rating."""
        half = Z95 * self.sd(i)
        return self.elo[i] - half, self.elo[i] + half

    def los(self, i: int, j: int) -> float:
        """The likelihood that player ``i`` is stronger than player ``j`` (normal approximation)."""
        diff = self.elo[i] - self.elo[j]
        var = self.cov[i][i] + self.cov[j][j] - 2 * self.cov[i][j]
        if var <= 1e-12:
            return 0.5 if diff == 0 else float(diff > 0)
        return phi(diff / math.sqrt(var))

    def order(self) -> list[int]:
        """Player indices from the highest rating down (ties by name)."""
        return sorted(range(len(self.players)), key=lambda i: (-self.elo[i], self.players[i]))


def fit(players: Sequence[str], games: Sequence[ScoredGame], anchor: str | None = None,
        prior_draws: float = 1.0) -> Ratings:
    """Ratings of ``players`` by maximum likelihood from ``games`` (see the module's docstring).

    ``anchor``: the player rated 0 (default: ratings average 0).  Players must be
    connected by games; ``ValueError`` otherwise.
    """
    n = len(players)
    if n < 2:
        raise ValueError("ratings need at least two players")
    points = np.zeros((n, n))
    played = np.zeros((n, n))
    for g in games:
        points[g.i, g.j] += g.score
        points[g.j, g.i] += 1 - g.score
        played[g.i, g.j] += 1
        played[g.j, g.i] += 1
    met = (played > 0).astype(float)
    points += 0.5 * prior_draws * met
    played += prior_draws * met
    ref = players.index(anchor) if anchor is not None else 0
    keep = [k for k in range(n) if k != ref]
    theta = np.zeros(n)

    def probs(t: np.ndarray) -> np.ndarray:
        out: np.ndarray = 1 / (1 + np.exp(-(t[:, None] - t[None, :])))  # numpy leaves this arithmetic untyped
        return out

    def loglik(t: np.ndarray) -> float:
        return float(np.sum(points * np.log(np.clip(probs(t), 1e-300, 1))))

    def information(p: np.ndarray) -> np.ndarray:
        w = played * p * (1 - p)
        out: np.ndarray = np.diag(w.sum(axis=1)) - w  # numpy leaves this arithmetic untyped
        return out

    for _ in range(100):
        p = probs(theta)
        grad = (points - played * p).sum(axis=1)[keep]
        info = information(p)[np.ix_(keep, keep)]
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            raise ValueError("the players are not all connected by games; ratings are undefined") from None
        base, scale = loglik(theta), 1.0
        while True:
            trial = theta.copy()
            trial[keep] += scale * step
            if loglik(trial) >= base - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta = trial
        if np.max(np.abs(scale * step)) < 1e-10:
            break

    p = probs(theta)
    info_inv = np.linalg.inv(information(p)[np.ix_(keep, keep)])
    meat = _clustered_meat(games, theta, n, keep) + _prior_meat(met, p, keep, prior_draws)
    cov = np.zeros((n, n))
    cov[np.ix_(keep, keep)] = info_inv @ meat @ info_inv
    if anchor is None:  # measured from the pool's mean instead of player ``ref``
        shift = np.eye(n) - np.full((n, n), 1 / n)
        theta = shift @ theta
        cov = shift @ cov @ shift.T
    elo = theta * NATURAL
    cov = cov * NATURAL ** 2
    return Ratings(tuple(players), tuple(float(x) for x in elo),
                   tuple(tuple(float(x) for x in row) for row in cov), anchor)


def _prior_meat(met: np.ndarray, p: np.ndarray, keep: list[int], pairs: float) -> np.ndarray:
    """The sandwich's share of ``pairs`` virtual pairs per pairing, spread evenly over the five outcomes.

    One such pair's score gradient along ``e_i - e_j`` has the expected square
    ``4 * (PRIOR_VARIANCE + (1/2 - p_ij) ** 2)`` (two games, points per game x).
    """
    n = len(p)
    meat = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            if met[i, j]:
                w = pairs * 4 * (PRIOR_VARIANCE + (0.5 - p[i, j]) ** 2)
                meat[i, i] += w
                meat[j, j] += w
                meat[i, j] -= w
                meat[j, i] -= w
    return meat[np.ix_(keep, keep)]


def _clustered_meat(games: Sequence[ScoredGame], t: np.ndarray, n: int, keep: list[int]) -> np.ndarray:
    """The sum over pairs (clusters) of the outer product of each pair's score gradient."""
    grads: dict[Hashable, np.ndarray] = {}
    for k, g in enumerate(games):
        p = 1 / (1 + math.exp(-(t[g.i] - t[g.j])))
        v = grads.setdefault(("game", k) if g.pair is None else ("pair", g.pair), np.zeros(n))
        v[g.i] += g.score - p
        v[g.j] -= g.score - p
    meat = np.zeros((len(keep), len(keep)))
    for v in grads.values():
        r = v[keep]
        meat += np.outer(r, r)
    return meat
