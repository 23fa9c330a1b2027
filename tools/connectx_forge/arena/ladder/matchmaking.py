"""Who plays whom on a simulated day: Kaggle "tries to pick submissions with similar ratings".

Kaggle does not publish its rule; the one assumed here (docs/ladder.md):

* each active submission asks for half its day's quota of episodes (``per_day``,
  or ``new_per_day`` on the day it was submitted: Kaggle plays new submissions
  a little more), and is the opponent in about as many asked by others, so it
  plays about its quota a day;
* the opponent of each ask is drawn among the other teams' active submissions
  with weight exp(-(d / window)^2 / 2), d the difference of their mu at the
  start of the day (a Gaussian window: near ratings are likely, far ones rare,
  none impossible);
* seats are drawn at random, one episode each way equally likely.

A day's pairings depend on the ratings at the start of the day only, so that a
day's games are one batch for the scheduler.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActiveSubmission:
    """An active submission on the day: its index, team, mu at the start of the day, and its quota."""

    index: int
    team: str
    mu: float
    quota: int


def pairings(entries: Sequence[ActiveSubmission], window: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    """The day's episodes as ``(first seat, second seat)`` submission indices, in the order they are rated."""
    out: list[tuple[int, int]] = []
    for e in entries:
        others = [o for o in entries if o.team != e.team]
        if not others:
            continue
        weights = np.array([math.exp(-0.5 * ((e.mu - o.mu) / window) ** 2) for o in others])
        weights = weights / weights.sum()
        for _ in range((e.quota + 1) // 2):
            o = others[int(rng.choice(len(others), p=weights))]
            out.append((e.index, o.index) if rng.random() < 0.5 else (o.index, e.index))
    order = rng.permutation(len(out))
    return [out[i] for i in order]
