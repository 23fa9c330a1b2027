"""The Kaggle Learn course's PPO run, reproduced on tools/rl_env.py (optional extra ``sb3``).

The course trained stable-baselines3 PPO for 60,000 steps against ``random``
with its rewards (+1 win, -1 loss, -10 invalid, 1/42 a move) and reported 68%
wins vs ``random``.  Differences: the course used a small CNN on the 6x7 grid;
this uses sb3's default MLP on the same grid (``obs="grid"``), and illegal moves
are not masked, as in the course (they end the game with -10).

    .venv/bin/python -m tools.ppo --steps 60000 --games 400 --seed 0
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opponent", default="random")
    args = parser.parse_args(argv)

    import torch
    from stable_baselines3 import PPO

    from tools.rl_env import ConnectXEnv
    from tools.stats import format_rate

    torch.set_num_threads(1)
    env = ConnectXEnv(opponent=args.opponent, seat="random", obs="grid")
    start = time.time()
    model = PPO("MlpPolicy", env, seed=args.seed, verbose=0, device="cpu")
    model.learn(total_timesteps=args.steps)
    train_s = time.time() - start
    outcomes: dict[str, int] = {}
    test = ConnectXEnv(opponent=args.opponent, seat="random", obs="grid")
    for g in range(args.games):
        obs, info = test.reset(seed=10_000 + g)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, done, _, info = test.step(int(action))
        key = "invalid" if info.get("invalid") else info["outcome"]
        outcomes[key] = outcomes.get(key, 0) + 1
    wins = outcomes.get("win", 0)
    print(f"PPO {args.steps} steps (train {train_s:.0f} s) vs {args.opponent}, {args.games} games, seats random: "
          f"wins {format_rate(wins, args.games)}; outcomes {dict(sorted(outcomes.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
