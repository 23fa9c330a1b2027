"""``dqn``: the DQN notebook's agent, rebuilt: a Q-network trained from random weights
with DQN in torch (``cxforge train --method dqn``), evaluated with numpy, full columns masked.

The notebook's network read the raw 42 cells; this one reads the shared features
(agents/net/features.py) and never plays an illegal column, because full columns
are masked both when it acts and in its training targets.  README.md has the
training command.  ``dqn-warm`` (agents/dqn_warm.py) is the same method started
from the supervised network.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from agents.board import Board, standard_board
from agents.net.features import VERSION, encode
from agents.net.mlp import MLP, checked, load_mlp, masked_argmax
from agents.resources import read_data


def q_move(q_net: MLP, board: Board) -> int:
    """The legal column with the highest action value."""
    q = q_net.forward(encode(board)[None, :])[0]
    return masked_argmax(q, board.legal_moves())


@lru_cache(maxsize=1)
def dqn_net() -> MLP:
    """The DQN's action-value network (loaded once)."""
    return checked(load_mlp(read_data("dqn_weights.npz")), "dqn_weights.npz", VERSION)


def dqn_move(board: Board) -> int:
    return q_move(dqn_net(), board)


def agent(obs: Any, config: Any) -> int:
    """Kaggle entry point (6x7x4 only)."""
    return dqn_move(standard_board(obs, config, "dqn"))
