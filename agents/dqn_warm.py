"""``dqn-warm``: the ``dqn`` method started from the supervised ``net``.

Its Q-network took the hidden layers and move logits of agents/data/net_weights.npz
(``cxforge train --method dqn --init``), then DQN trained it against a clone of
Kaggle's negamax.  Stronger than ``dqn``, but not a from-scratch rebuild of
the notebook's agent, so it is registered apart.
"""

from __future__ import annotations

from functools import lru_cache

from agents.board import standard_board
from agents.net.features import VERSION
from agents.net.mlp import MLP, checked, load_mlp
from agents.net.qvalue import q_move
from connectx_forge.runtime import read_data


@lru_cache(maxsize=1)
def warm_net() -> MLP:
    """The warm-started action-value network (loaded once)."""
    return checked(load_mlp(read_data("agents/data/dqn_warm_weights.npz")), "dqn_warm_weights.npz", VERSION)


def agent(obs: object, config: object) -> int:
    """Kaggle entry point (6x7x4 only)."""
    return q_move(warm_net(), standard_board(obs, config, "dqn-warm"))
