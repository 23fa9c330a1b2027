"""``cxforge ppo``: the Kaggle Learn course's PPO run, reproduced on tools/connectx_forge/train/rl_env.py (extra
``sb3``).

The course trained stable-baselines3 PPO for 60,000 steps against ``random``
with its rewards (+1 win, -1 loss, -10 invalid, 1/42 a move) and reported its
win rate against ``random``.  Differences: the course used a small CNN on the 6x7
grid; this uses sb3's default MLP on the same grid (``obs="grid"``), and illegal
moves are not masked, as in the course (they end the game with -10).  The run
lives in tools/connectx_forge/train/ppo.py.
"""

from __future__ import annotations

import argparse

from connectx_forge import options
from connectx_forge.train.ppo import train_and_test

HELP = "reproduce the Kaggle Learn course's PPO run on the gymnasium environment (extra sb3)"
EXAMPLE = """\
cxforge ppo --steps 60000 -n 400 --seed 0"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge ppo``."""
    parser.add_argument("--steps", type=options.positive_int, default=60_000, help="training steps (default 60000)")
    options.add_games(parser, 400, "test games after training")
    options.add_seed(parser, "seed of the training")
    parser.add_argument("--opponent", default="random", metavar="SPEC",
                        help="the opponent, a player spec (default random)")


def run(args: argparse.Namespace) -> int:
    """Train, then play the test games and print the outcomes."""
    print(train_and_test(args.steps, args.games, args.seed, args.opponent))
    return 0
