"""Kaggle's rating process, day by day, whatever plays the games: the simulated ladder's bookkeeping.

A ``LadderPlan`` lists the submissions (label, team, the day each is submitted) and
the process's settings; a ``Process`` holds every submission's rating and
steps through days: ``day_pairings(d)`` (matchmaking on the ratings at the
start of day d), then ``rate_day(d, scores)`` with each episode's result.  The
games themselves come from the arena (``simulate``) or are drawn from the
outcomes it played (``replicates``): the bookkeeping is the same.

Kaggle's rules kept here: a submission's first episode is the validation
episode against itself (played by ``simulate``; one that breaks marks the
submission as an error, never rated), then it starts at (mu0, sigma0); only a
team's latest ``active`` submissions play (older ones keep their last rating);
a submission plays ``new_per_day`` episodes on the day it is submitted and
``per_day`` afterwards (``matchmaking``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from connectx_forge.arena.ladder.matchmaking import ActiveSubmission, pairings
from connectx_forge.arena.ladder.rating import Skill, TrueSkillModel


@dataclass(frozen=True)
class LadderPlan:
    """The submissions (labels, teams, the day each is submitted) and the process's settings."""

    labels: tuple[str, ...]
    teams: tuple[str, ...]
    submitted: tuple[int, ...]
    per_day: int = 8
    new_per_day: int = 12
    window: float = 150.0
    active: int | None = None  # a team's latest N submissions play; None: all


@dataclass
class Process:
    """The ratings of every submission as the days go by; ``history[d][i]``: submission i after day d."""

    plan: LadderPlan
    model: TrueSkillModel
    errored: frozenset[int] = frozenset()
    skills: list[Skill] = field(default_factory=list)
    history: list[list[Skill]] = field(default_factory=list)
    episodes: list[list[int]] = field(default_factory=list)  # episodes[d][i]: how many i played by day d's end

    def __post_init__(self) -> None:
        s = self.model.settings
        self.skills = [Skill(s.mu0, s.sigma0) for _ in self.plan.labels]
        self._played = [0] * len(self.plan.labels)

    def active(self, day: int) -> list[int]:
        """The submissions that play on ``day``: submitted by then, not broken, among their team's latest N."""
        p = self.plan
        live = [i for i in range(len(p.labels)) if p.submitted[i] <= day and i not in self.errored]
        out = []
        for team in dict.fromkeys(p.teams):
            mine = sorted((i for i in live if p.teams[i] == team), key=lambda i: (p.submitted[i], i))
            out.extend(mine if p.active is None else mine[-p.active:])
        return sorted(out)

    def day_pairings(self, day: int, rng: np.random.Generator) -> list[tuple[int, int]]:
        """Day ``day``'s episodes ``(first seat, second seat)``, drawn on the ratings at its start."""
        p = self.plan
        entries = [ActiveSubmission(i, p.teams[i], self.skills[i].mu,
                                    p.new_per_day if p.submitted[i] == day else p.per_day)
                   for i in self.active(day)]
        return pairings(entries, p.window, rng)

    def rate_day(self, pairs: Sequence[tuple[int, int]], scores: Sequence[float]) -> None:
        """Rate the day's episodes in order (``scores``: the first seat's 1, 0.5 or 0), then record the day."""
        for (i, j), score in zip(pairs, scores, strict=True):
            self.skills[i], self.skills[j] = self.model.update(self.skills[i], self.skills[j], score)
            self._played[i] += 1
            self._played[j] += 1
        self.history.append(list(self.skills))
        self.episodes.append(list(self._played))


def matchmaking_rng(seed: int, day: int, replicate: int | None = None) -> np.random.Generator:
    """The generator of one day's pairings: from the seed, the day and the replicate alone."""
    return np.random.default_rng([seed, day] if replicate is None else [seed, day, replicate + 1])
