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

from collections.abc import Iterable, Mapping
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
    if not isinstance(agents, list) or not all(isinstance(a, dict) for a in agents):
        raise TypeError("its agents are not a list of objects")
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


def episodes_of(data: object, where: str) -> list[Episode]:
    """The rated episodes of one file's JSON; ``UserError`` when it is not an episode list."""
    items = data.get("episodes") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
        raise UserError(f"{where}: not an episode list (expected Kaggle's ListEpisodes JSON, "
                        '{"episodes": [...]}, or the list of cxforge episodes --json)')
    out = []
    for i, raw in enumerate(items):
        try:
            episode = _episode(raw)
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # a field of another type or value
            raise UserError(f"{where}: episode {i} is not one of Kaggle's ({type(exc).__name__}: {exc}); give the "
                            "episode lists Kaggle or cxforge episodes --json wrote") from None
        if episode is not None:
            out.append(episode)
    return out


def _submissions(raw: Mapping[str, object]) -> set[int]:
    """The submissions of an episode's agents (those whose id is a whole number: a validation episode is not read
    further by ``episodes_of``)."""
    agents = raw.get("agents")
    ids = [_get(a, "submissionId", "submission_id") for a in agents if isinstance(a, dict)] \
        if isinstance(agents, list) else []
    return {int(s) for s in ids
            if not isinstance(s, bool) and (isinstance(s, int) or isinstance(s, str) and s.isascii() and s.isdigit())}


def complete_of(data: object) -> set[int]:
    """The submissions whose whole history a file holds: the one in every episode of it (the file is that
    submission's list, validation episode included), or, in a file no submission is in every episode of (a
    whole dump, as ``synthetic`` writes), every submission in it.  ``data``: a file's JSON that
    ``episodes_of`` accepted."""
    items = data.get("episodes") if isinstance(data, dict) else data
    sets = [_submissions(e) for e in items] if isinstance(items, list) else []
    every = set.intersection(*sets) if sets else set()
    return every or set().union(*sets)


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
