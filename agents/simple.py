"""The course's baseline agents: random, leftmost and middle."""

from __future__ import annotations

import random

from agents.board import Board, config_size


def random_agent(obs: object, config: object) -> int:
    """A uniformly random legal column."""
    return random.choice(Board.from_obs(obs, config).legal_moves())


def leftmost_agent(obs: object, config: object) -> int:
    """The leftmost legal column."""
    return Board.from_obs(obs, config).legal_moves()[0]


def middle_agent(obs: object, config: object) -> int:
    """Always the middle column, even when it is full: a known-invalid baseline."""
    return config_size(config)[1] // 2
