"""The fit's input: Kaggle episode lists, read into rated two-player episodes.

Accepted, in one file or several (an episode in two files counts once, by id):

* Kaggle's ListEpisodes answer: ``{"episodes": [{"id", "type", "agents": [{"submissionId", "index",
  "reward", "initialScore", "updatedScore", ...}], ...}]}``, or that list alone;
* ``cxforge episodes ID --json``: a list of rows whose ``agents`` hold ``submission_id``, ``index``,
  ``reward``, ``initialScore`` and ``updatedScore`` (Kaggle's names; ``initial_score``/``updated_score`` read too).

Validation episodes (type ``EPISODE_TYPE_VALIDATION``, or one submission in
both seats) are not rated and are left out, as are episodes without both
agents' scores.  The result is read from the rewards: the higher wins, equal
is a draw; an agent without a reward (it broke) lost to one with a reward.
Episodes are rated in the order of their ids (Kaggle's ids grow with time).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectx_forge import boundedread
from connectx_forge.errors import UserError


@dataclass(frozen=True)
class Side:
    """One agent of a rated episode: its submission, and its score before and after."""

    submission: int
    before: float
    after: float


@dataclass(frozen=True)
class Episode:
    """A rated two-player episode: A, B and A's result (1 win, 0.5 draw, 0 loss)."""

    id: int
    a: Side
    b: Side
    score: float


def _get(agent: dict[str, Any], *names: str) -> Any:
    for name in names:
        if agent.get(name) is not None:
            return agent[name]
    return None


def _episode(raw: dict[str, Any]) -> Episode | None:
    agents = raw.get("agents") or []
    if str(raw.get("type", "")).endswith("VALIDATION") or raw.get("validation") is True or len(agents) != 2:
        return None
    sides, rewards = [], []
    for agent in sorted(agents, key=lambda a: int(a.get("index") or 0)):
        sub = _get(agent, "submissionId", "submission_id")
        before = _get(agent, "initialScore", "initial_score")
        after = _get(agent, "updatedScore", "updated_score")
        if sub is None or before is None or after is None:
            return None
        sides.append(Side(int(sub), float(before), float(after)))
        reward = agent.get("reward")
        rewards.append(None if reward is None else float(reward))
    if sides[0].submission == sides[1].submission:
        return None
    ra, rb = rewards
    if ra is None and rb is None:
        return None
    if ra is None or rb is None:
        score = 0.0 if ra is None else 1.0
    else:
        score = 1.0 if ra > rb else 0.0 if ra < rb else 0.5
    return Episode(int(raw.get("id") or 0), sides[0], sides[1], score)


def episodes_of(data: Any, where: str) -> list[Episode]:
    """The rated episodes of one file's JSON; ``UserError`` when it is not an episode list."""
    items = data.get("episodes") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
        raise UserError(f"{where}: not an episode list (expected Kaggle's ListEpisodes JSON, "
                        '{"episodes": [...]}, or the list of cxforge episodes --json)')
    return [e for e in (_episode(raw) for raw in items) if e is not None]


def complete_of(data: Any) -> set[int]:
    """The submissions whose whole history a file holds: the one in every episode of it (the file is that
    submission's list, validation episode included), or, in a file no submission is in every episode of (a
    whole dump, as ``synthetic`` writes), every submission in it."""
    items = data.get("episodes") if isinstance(data, dict) else data
    sets = [{_get(a, "submissionId", "submission_id") for a in (e.get("agents") or [])} for e in items or []]
    every = set.intersection(*sets) if sets else set()
    return {int(s) for s in (every or set().union(*sets)) if s is not None}


def read_episodes(paths: Iterable[Path]) -> tuple[list[Episode], set[int]]:
    """Every rated episode of the files, each once, in id order; and the submissions whose whole history they
    hold (``complete_of``)."""
    seen: dict[int, Episode] = {}
    complete: set[int] = set()
    for path in paths:
        data = boundedread.read_json(path)
        for e in episodes_of(data, str(path)):
            seen.setdefault(e.id, e)
        complete |= complete_of(data)
    return [seen[k] for k in sorted(seen)], complete
