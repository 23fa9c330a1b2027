"""Writes the example replays beside this file: real kaggle-environments games between shipped agents, saved
as ``env.toJSON()`` with Kaggle's ``info.TeamNames``, named as ``cxforge episodes --download`` names them.

They let ``cxforge review``, ``cxforge ghosts`` and ``cxforge regress add`` be tried at once (docs/review.md).
Run: ``python tools/connectx_forge/datasets/replays/make_replays.py`` (some agents break ties at random: another run
writes other
games).
"""

from __future__ import annotations

import json
from pathlib import Path

from agents.registry import load
from connectx_forge import safe_write

# episode id, (first team, its agent), (second team, its agent)
GAMES = ((9000001, ("Forge", "lookahead"), ("Rival", "solver")),
         (9000002, ("Rival", "solver"), ("Forge", "alphabeta")),
         (9000003, ("Forge", "alphabeta"), ("Rival", "lookahead")))


def main() -> None:
    """Play each game of ``GAMES`` and write ``episode-ID-replay.json``."""
    from kaggle_environments import make  # after the agents: its own environments hold an ``agents`` module

    here = Path(__file__).resolve().parent
    for episode, (team_a, agent_a), (team_b, agent_b) in GAMES:
        env = make("connectx", info={"TeamNames": [team_a, team_b]}, debug=True)
        env.run([load(agent_a), load(agent_b)])
        replay = env.toJSON()
        replay["id"] = str(episode)
        safe_write.write_text(here / f"episode-{episode}-replay.json",
                              json.dumps(replay, separators=(",", ":")) + "\n", replace=True)
        print(episode, team_a, agent_a, "vs", team_b, agent_b, replay["rewards"], len(replay["steps"]), "steps")


if __name__ == "__main__":
    main()
