"""A Kaggle of known parameters: episode lists as ListEpisodes returns them, rated by the ``trueskill`` library.

What the fit (``fit.py``) is checked on, and what docs/ladder.md's recovery
figures come from.  Submissions join on random days with hidden strengths;
each day each plays about ``per_day`` episodes against opponents of similar mu
(``matchmaking``); an episode's result follows TrueSkill's own generative model
(each side performs N(strength, beta^2); a gap under the draw margin is a
draw); both agents are then rated by the library's ``trueskill.rate_1vs1`` (its
factor graph, not the fit's closed form).  Each new submission's validation
episode (against itself, unrated) comes first, as on Kaggle.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from connectx_forge.arena.ladder.matchmaking import ActiveSubmission, pairings
from connectx_forge.arena.ladder.rating import Rating, RatingSettings


def kaggle_episodes(settings: RatingSettings, submissions: int = 30, days: int = 20, per_day: int = 8,
                    spread: float = 250.0, seed: int = 0) -> dict[str, object]:
    """``{"episodes": [...]}`` of a simulated Kaggle under ``settings`` (ids in order of play)."""
    import trueskill

    rng = np.random.default_rng(seed)
    env = settings.env()
    margin = trueskill.calc_draw_margin(settings.draw_probability, 2, env)
    strength = rng.normal(settings.mu0, spread, submissions)
    joins = np.sort(rng.integers(0, days, submissions))
    joins[: max(2, submissions // 4)] = 0  # a field from day one
    ratings: list[Rating] = [env.create_rating() for _ in range(submissions)]
    episodes: list[dict[str, object]] = []

    def agent(sub: int, index: int, reward: float, before: float, after: float) -> dict[str, object]:
        return {"submissionId": 1000 + sub, "index": index, "reward": reward, "initialScore": before,
                "updatedScore": after, "state": "EPISODE_AGENT_STATE_DONE", "teamName": f"team {sub}"}

    for day in range(days):
        for sub in np.flatnonzero(joins == day):
            mu = ratings[sub].mu
            episodes.append({"id": len(episodes) + 1, "type": "EPISODE_TYPE_VALIDATION",
                             "agents": [agent(int(sub), 0, 0, mu, mu), agent(int(sub), 1, 0, mu, mu)]})
        entries = [ActiveSubmission(int(i), str(i), ratings[i].mu, per_day) for i in np.flatnonzero(joins <= day)]
        for i, j in pairings(entries, 150.0, rng):
            gap = rng.normal(strength[i], settings.beta) - rng.normal(strength[j], settings.beta)
            before_i, before_j = ratings[i].mu, ratings[j].mu
            if abs(gap) <= margin:
                ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=True, env=env)
                ri = rj = 0.0
            elif gap > 0:
                ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
                ri, rj = 1.0, -1.0
            else:
                ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
                ri, rj = -1.0, 1.0
            episodes.append({"id": len(episodes) + 1, "type": "EPISODE_TYPE_PUBLIC",
                             "agents": [agent(i, 0, ri, before_i, ratings[i].mu),
                                        agent(j, 1, rj, before_j, ratings[j].mu)]})
    return {"episodes": episodes}


def of_submission(data: Mapping[str, object], submission_id: int) -> dict[str, object]:
    """The episodes of one submission (what a user downloads for each of theirs) in ``data``, what
    ``kaggle_episodes`` made."""
    episodes = data["episodes"]
    if not isinstance(episodes, list):
        raise TypeError("not an episode list of kaggle_episodes")
    return {"episodes": [e for e in episodes if any(a["submissionId"] == submission_id for a in e["agents"])]}
