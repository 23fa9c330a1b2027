"""``dqn``: the DQN notebook's agent, rebuilt: a Q-network trained from random weights
with DQN in torch (``cxforge train --method dqn``), evaluated with numpy, full columns masked.

The notebook's network read the raw 42 cells; this one reads the shared features
(agents/net/features.py) and never plays an illegal column, because full columns
are masked both when it acts and in its training targets.  docs/networks.md has the
training command.  ``dqn-warm`` (agents/dqn_warm.py) is the same method started
from the supervised network.
"""

from __future__ import annotations

from functools import lru_cache

from agents.board import standard_board
from agents.net.features import VERSION
from agents.net.mlp import MLP, checked, load_mlp
from agents.net.qvalue import q_move
from connectx_forge.runtime import read_data


@lru_cache(maxsize=1)
def dqn_net() -> MLP:
    """The DQN's action-value network (loaded once)."""
    return checked(load_mlp(read_data("agents/data/dqn_weights.npz")), "dqn_weights.npz", VERSION)


def agent(obs: object, config: object) -> int:
    """Kaggle entry point (6x7x4 only)."""
    return q_move(dqn_net(), standard_board(obs, config, "dqn"))
