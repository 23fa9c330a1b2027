"""``net``: the policy network alone, one forward pass per move, illegal columns masked."""

from __future__ import annotations

import math
from functools import lru_cache

from agents.board import Board, standard_board
from agents.net.features import VERSION, encode
from agents.net.mlp import MLP, checked, load_mlp, masked_argmax
from connectx_forge.runtime import read_data


@lru_cache(maxsize=1)
def policy_value_net() -> MLP:
    """The supervised policy+value network behind ``net`` (loaded once)."""
    return checked(load_mlp(read_data("agents/data/net_weights.npz")), "net_weights.npz", VERSION)


def net_move(board: Board) -> int:
    """The legal column the policy ranks highest."""
    logits, _ = policy_value_net().policy_value(encode(board))
    return masked_argmax(logits[0], board.legal_moves())


def policy_prior(board: Board) -> list[float]:
    """The policy's chance of each column (softmax of its logits over the legal columns; 0 elsewhere): the
    practical tie-break's model of a strong but fallible opponent (agents/solver/practical.py)."""
    logits, _ = policy_value_net().policy_value(encode(board))
    legal = board.legal_moves()
    top = max(float(logits[0][c]) for c in legal)
    weights = [math.exp(float(logits[0][c]) - top) if c in legal else 0.0 for c in range(board.columns)]
    total = sum(weights)
    return [w / total for w in weights]


def agent(obs: object, config: object) -> int:
    """Kaggle entry point (6x7x4 only: the network was trained on that board)."""
    board = standard_board(obs, config, "net")
    return net_move(board)


policy_value_net()  # load the weights at import (about 10 ms), so that no move pays for it
