"""The checker's floor test: is the win rate at or above a floor?  Games are added until the answer is known.

A floor ``f`` against one opponent is decided from the wins ``k`` in ``n``
games by a group-sequential test with a fixed plan of looks: the games come
in batches that double (``n0``, ``2 n0``, ``4 n0``, ... up to the cap; ``n0``
is ``-n/--games``), and after each batch

* PASS when the exact one-sided lower bound of the win rate is at or above
  ``f``: P(X >= k | p = f) <= a, i.e. so many wins are unlikely for an agent
  whose win rate is ``f`` or below;
* FAIL when the exact one-sided upper bound is below ``f``:
  P(X <= k | p = f) <= a, i.e. so few wins are unlikely at ``f`` or above;
* otherwise the next batch is played, and at the cap the floor is UNDECIDED.

X is Binomial(n, f), and both bounds are Clopper-Pearson's (``tools/connectx_forge/stats.py``).

Why this method.  Exact binomial tails, not a normal approximation (Wald or
Wilson): floors sit near 0.8-1.0, where those approximations are worst and
where a few dozen games must decide.  Looking after every batch and stopping
as soon as a bound clears the floor is optional stopping, which inflates a
fixed-sample test's error; the plan has a fixed number ``K`` of looks, and
each look tests at ``a = alpha / K`` (Bonferroni), so by the union bound the
chance of a wrong verdict over all looks is at most ``alpha`` (5%): an agent
whose true win rate is below ``f`` passes with probability at most 5%, and
one at or above ``f`` fails with probability at most 5%, whenever it stops.
Doubling the batches keeps ``K`` small (6 looks from 8 to 256 games), so the
correction costs little; an anytime confidence sequence (a mixture
martingale) would allow a look after every game, but needs more games to
decide a floor than this plan does at its looks.  No dependency beyond the
standard library: the tails are summed term by term in logs.

Games alternate seats, so the wins are a sum of two binomials (one win rate
per seat) with the same mean; its tails are no heavier than the binomial's
past the mean (Hoeffding, 1956), so the test stays valid, a little
conservative, for the rate over both seats.

The cost of being sure: with no loss at all, a floor ``f`` passes at the
first look with ``n >= log(a) / log(f)`` games: 32 games for ``f`` up to
0.86, 64 for 0.9, 512 for 0.99 (with 8 to 256 games, ``a`` = 0.83%).
A floor of 1 never passes; a floor of 0 always does.
"""

from __future__ import annotations

from dataclasses import dataclass

from connectx_forge.stats import binomial_at_least, binomial_at_most, clopper_pearson

CONFIDENCE = 0.95
PASS, FAIL, UNDECIDED, MORE = "pass", "fail", "undecided", "more games"


@dataclass(frozen=True)
class Decision:
    """A floor's state after a look: ``verdict`` (pass, fail, undecided at the cap, or more games), and the
    Clopper-Pearson bounds of the win rate (``wins`` in ``games``) at the look's ``level``."""

    verdict: str
    wins: int
    games: int
    level: float

    @property
    def bounds(self) -> tuple[float, float]:
        return clopper_pearson(self.wins, self.games, self.level)

    @property
    def lower(self) -> float:
        return self.bounds[0]

    @property
    def upper(self) -> float:
        return self.bounds[1]


@dataclass(frozen=True)
class FloorLooks:
    """The looks of the floor test: ``first`` games, doubling up to ``cap``, each at ``alpha / K``."""

    first: int
    cap: int
    confidence: float = CONFIDENCE

    def __post_init__(self) -> None:
        if self.first < 1 or self.cap < self.first:
            raise ValueError(f"a floor test needs 1 <= first <= cap, not first={self.first}, cap={self.cap}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be between 0 and 1, not {self.confidence}")

    @property
    def looks(self) -> tuple[int, ...]:
        """The game counts at which the floor is judged: ``first``, twice that, ... and ``cap`` last."""
        out = [self.first]
        while out[-1] < self.cap:
            out.append(min(2 * out[-1], self.cap))
        return tuple(out)

    @property
    def level(self) -> float:
        """The error spent at each look, ``(1 - confidence) / K``, so that all looks together spend at most
        ``1 - confidence``."""
        return (1 - self.confidence) / len(self.looks)

    def next_look(self, games: int) -> int | None:
        """How many games the next look needs (None: the cap is reached)."""
        return next((n for n in self.looks if n > games), None)

    def decide(self, floor: float, wins: int, games: int) -> Decision:
        """The verdict on ``floor`` after ``wins`` in ``games`` (a look of the plan)."""
        if floor <= 0 or (games > 0 and binomial_at_least(wins, games, floor) <= self.level):
            verdict = PASS  # the lower bound is at or above the floor
        elif games > 0 and binomial_at_most(wins, games, floor) <= self.level:
            verdict = FAIL  # the upper bound is below it
        else:
            verdict = UNDECIDED if games >= self.cap else MORE
        return Decision(verdict, wins, games, self.level)
