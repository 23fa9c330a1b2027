"""Playing from an action-value network: the legal column with the highest Q.

Shared by ``dqn`` and ``dqn-warm``.  It reads no data itself, so each agent's
bundle embeds only its own weight file.
"""

from __future__ import annotations

from agents.board import Board
from agents.net.features import encode
from agents.net.mlp import MLP, masked_argmax


def q_move(q_net: MLP, board: Board) -> int:
    """The legal column with the highest action value."""
    q = q_net.forward(encode(board)[None, :])[0]
    return masked_argmax(q, board.legal_moves())
