"""The course's baseline agents: random, leftmost and middle."""

from __future__ import annotations

import random
from typing import Any

from agents.board import Board, config_size


def random_agent(obs: Any, config: Any) -> int:
    """A uniformly random legal column."""
    return random.choice(Board.from_obs(obs, config).legal_moves())


def leftmost_agent(obs: Any, config: Any) -> int:
    """The leftmost legal column."""
    return Board.from_obs(obs, config).legal_moves()[0]


def middle_agent(obs: Any, config: Any) -> int:
    """Always the middle column, even when it is full: a known-invalid baseline."""
    return config_size(config)[1] // 2
