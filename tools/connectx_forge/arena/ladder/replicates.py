"""Replicate ladders: the process run again many times on the outcomes the real games showed, for the spread
of the leaderboard score and the day each submission settles.

The games are played once (``simulate``).  Each replicate reruns Kaggle's
process (``process``) with its own matchmaking draws, and draws each episode's
result from the games played between those two players in those seats (their
empirical win/draw/loss frequencies; the other seating's, mirrored, when that
seating never met; the rating model's prediction from the main run's final
ratings when the two never met at all).  A deterministic pair thus keeps its
one result, a random agent's spread is kept, and no game is played again.

* predicted score: the replicates' median mu on the last day, with the 2.5% and
  97.5% quantiles as its 95% interval.  It estimates the score the process
  gives the player (its median over independent ladders of the same agents);
  tests/integration/test_ladder.py checks on ladders of known strengths that the interval
  holds that truth, and the main run's own score, about 95% of the time.  The
  main run is one such ladder: every rating shares the level the first days
  left (TrueSkill keeps no fixed sum), so all of one run's players tend to sit
  on the same side of their medians: one draw, not a bias;
* settles: the first day from which the replicates' median mu stays within
  ``settle`` points of its last-day value for every later day (a submission
  that only meets that on the last day has not settled within the days run).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from connectx_forge.arena.ladder.process import Process, matchmaking_rng


@dataclass(frozen=True)
class Spread:
    """Per submission and day: the replicates' 2.5%, 50% and 97.5% quantiles of mu (``[day][i]``)."""

    lo: list[list[float]]
    median: list[list[float]]
    hi: list[list[float]]

    def settled_day(self, i: int, band: float) -> int | None:
        """The first day (1-based) from which submission i's median stays within ``band`` of its last value;
        None when only the last day does."""
        last = self.median[-1][i]
        first = len(self.median)
        for d in range(len(self.median) - 1, -1, -1):
            if abs(self.median[d][i] - last) > band:
                break
            first = d
        return first + 1 if first < len(self.median) - 1 else None


class Outcomes:
    """The first seat's results by ordered pair, from the main run's games."""

    def __init__(self, days: list[list[tuple[int, int]]], scores: list[list[float]], final: Process) -> None:
        self.seen: dict[tuple[int, int], list[float]] = defaultdict(list)
        for pairs, day in zip(days, scores, strict=True):
            for pair, score in zip(pairs, day, strict=True):
                self.seen[pair].append(score)
        self.final = final

    def draw(self, i: int, j: int, rng: np.random.Generator) -> float:
        """One first-seat score for i (first) against j (second)."""
        same = self.seen.get((i, j))
        if same:
            return float(same[int(rng.integers(len(same)))])
        mirror = self.seen.get((j, i))
        if mirror:
            return 1.0 - float(mirror[int(rng.integers(len(mirror)))])
        win, draw = self.final.model.expected(self.final.skills[i], self.final.skills[j])
        u = rng.random()
        return 1.0 if u < win else 0.5 if u < win + draw else 0.0


def spread(main: Process, days: list[list[tuple[int, int]]], scores: list[list[float]], seed: int,
           replicates: int) -> Spread:
    """Run ``replicates`` replicate ladders as long as the main run; the quantiles of mu by day."""
    outcomes = Outcomes(days, scores, main)
    n_days = len(days)
    mus = np.zeros((replicates, n_days, len(main.plan.labels)))
    for r in range(replicates):
        rng = np.random.default_rng([seed, 2, r])
        proc = Process(main.plan, main.model, main.errored)
        for day in range(n_days):
            pairs = proc.day_pairings(day, matchmaking_rng(seed, day, r))
            proc.rate_day(pairs, [outcomes.draw(i, j, rng) for i, j in pairs])
            mus[r, day] = [s.mu for s in proc.skills]
    q = np.quantile(mus, [0.025, 0.5, 0.975], axis=0)
    return Spread(q[0].tolist(), q[1].tolist(), q[2].tolist())
