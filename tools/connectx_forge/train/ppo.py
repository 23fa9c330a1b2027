"""The Kaggle Learn course's PPO run, reproduced on tools/connectx_forge/train/rl_env.py (optional extra ``sb3``).

The course trained stable-baselines3 PPO for 60,000 steps against ``random``
with its rewards (+1 win, -1 loss, -10 invalid, 1/42 a move) and reported its
win rate against ``random``.  Differences: the course used a small CNN on the 6x7
grid; this uses sb3's default MLP on the same grid (``obs="grid"``), and illegal
moves are not masked, as in the course (they end the game with -10).

The command line is ``cxforge ppo`` (tools/connectx_forge/train/ppo_cmd.py), e.g.
``cxforge ppo --steps 60000 -n 400 --seed 0``.
"""

from __future__ import annotations

import sys
import time

from connectx_forge.progress import count
from connectx_forge.stats import format_rate


def train_and_test(steps: int = 60_000, games: int = 400, seed: int = 0, opponent: str = "random") -> str:
    """Train PPO for ``steps`` against ``opponent``, play ``games`` test games; the one-line report."""
    import torch  # torch, stable-baselines3 and rl_env (gymnasium) load when training runs, not with the module
    from stable_baselines3 import PPO

    from connectx_forge.train.rl_env import ConnectXEnv

    torch.set_num_threads(1)
    env = ConnectXEnv(opponent=opponent, seat="random", obs="grid")
    start = time.time()
    model = PPO("MlpPolicy", env, seed=seed, verbose=0, device="cpu")
    print(f"cxforge ppo: {steps:,} steps of PPO against {opponent}, then {count(games, 'test game')}"
          + ("" if sys.stderr.isatty() else " (a bar with its ETA on a terminal)"), file=sys.stderr)
    model.learn(total_timesteps=steps, progress_bar=sys.stderr.isatty())  # stable-baselines3's own bar and ETA
    train_s = time.time() - start
    outcomes: dict[str, int] = {}
    test = ConnectXEnv(opponent=opponent, seat="random", obs="grid")
    for g in range(games):
        obs, info = test.reset(seed=10_000 + g)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, done, _, info = test.step(int(action))
        key = "invalid" if info.get("invalid") else info["outcome"]
        outcomes[key] = outcomes.get(key, 0) + 1
    wins = outcomes.get("win", 0)
    return (f"PPO {steps} steps (train {train_s:.0f} s) vs {opponent}, {games} games, seats random: "
            f"wins {format_rate(wins, games)}; outcomes {dict(sorted(outcomes.items()))}")
