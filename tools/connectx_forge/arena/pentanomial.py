"""Pentanomial pair counts: the two games of one opening, colours swapped, counted as one outcome.

Two games on the same opening share whatever the opening gives one colour, so
their results are not independent; counting the pair as one of five outcomes
(the pair's points for A: 0, 0.5, 1, 1.5 or 2) keeps that dependence out of the
error bars, as fastchess and fishtest do.  ``WL`` (a win and a loss) and ``DD``
(two draws) both score 1 and are kept apart only for the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's points per game: LL, LD, WL or DD, WD, WW
NAMES = ("LL", "LD", "WL", "DD", "WD", "WW")


@dataclass(frozen=True)
class Pentanomial:
    """Counts of pairs by their two results, from player A's side."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[float, float]]) -> Pentanomial:
        """The counts of pairs given as A's two game scores (1 a win, 0.5 a draw, 0 a loss)."""
        counts = dict.fromkeys(NAMES, 0)
        for x, y in pairs:
            counts[bucket(x, y)] += 1
        return cls(*(counts[n] for n in NAMES))

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.wl + self.dd + self.wd + self.ww

    def counts(self) -> tuple[int, int, int, int, int]:
        """The five outcome counts in score order: LL, LD, WL+DD, WD, WW."""
        return (self.ll, self.ld, self.wl + self.dd, self.wd, self.ww)

    def score(self) -> float:
        """A's mean points per game (0.5 when there are no pairs)."""
        n = self.pairs
        if n == 0:
            return 0.5
        return sum(s * c for s, c in zip(SCORES, self.counts(), strict=True)) / n

    def variance(self) -> float:
        """The variance of one pair's points per game (the pentanomial distribution's)."""
        n = self.pairs
        if n == 0:
            return 0.0
        mu = self.score()
        return sum(c * (s - mu) ** 2 for s, c in zip(SCORES, self.counts(), strict=True)) / n

    def flipped(self) -> Pentanomial:
        """The same pairs from B's side."""
        return Pentanomial(self.ww, self.wd, self.wl, self.dd, self.ld, self.ll)

    def to_json(self) -> dict[str, int]:
        return {"LL": self.ll, "LD": self.ld, "WL": self.wl, "DD": self.dd, "WD": self.wd, "WW": self.ww}

    @classmethod
    def from_json(cls, data: dict[str, int]) -> Pentanomial:
        return cls(*(int(data[n]) for n in NAMES))


def bucket(x: float, y: float) -> str:
    """The outcome name of a pair where A scored ``x`` and ``y`` (each 0, 0.5 or 1)."""
    for v in (x, y):
        if v not in (0, 0.5, 1):
            raise ValueError(f"a game scores 0, 0.5 or 1, got {v!r}")
    total = x + y
    if total == 1:
        return "DD" if x == 0.5 else "WL"
    return {0.0: "LL", 0.5: "LD", 1.5: "WD", 2.0: "WW"}[total]
