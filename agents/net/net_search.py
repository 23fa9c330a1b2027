"""``net-search``: the policy+value network guiding an alpha-beta search under a time budget.

Each move runs the network-guided alpha-beta search of ``agents/net/tree.py``
(the policy orders moves, the value head scores the horizon, exact tactics prune
the tree) until its budget (default 0.3 s, capped at 1.5 s) runs out.

From ``ENDGAME_STONES`` stones on, the exact solver (agents/solver) first gets
half the budget to analyze the position; when it finishes, its best-scoring
move is played (perfect endgame play), else the network search takes over.
"""

from __future__ import annotations

import time
from typing import Protocol

from agents.board import Board, standard_board
from agents.net.agent import policy_value_net
from agents.net.mlp import MLP
from agents.net.tree import NetSearch

DEFAULT_BUDGET_S = 0.3
MAX_BUDGET_S = 1.5  # Kaggle allows 2 s a move; keep a margin for load and overhead
ENDGAME_STONES = 20


def search_net() -> MLP:
    """The policy+value network behind ``net-search``: ``net``'s (loaded once, at import).

    Retraining ``net`` changes this agent too; its tables in BENCHMARKS.md must
    then be measured again.
    """
    return policy_value_net()


class _Analyzer(Protocol):
    """What ``exact_move`` asks of the solver (``agents.solver.search.Solver``, imported on first use)."""

    def analyze(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> list[int | None]: ...


_SOLVER: list[_Analyzer] = []


def exact_move(board: Board, deadline: float) -> int | None:
    """The solver's best move if its analysis finishes before ``deadline``, else None."""
    from agents.solver.search import Solver, Timeout
    from agents.solver.transposition import TranspositionTable

    if not _SOLVER:
        _SOLVER.append(Solver(TranspositionTable(1 << 18)))
    try:
        scores = _SOLVER[0].analyze(board, deadline=deadline)
    except Timeout:
        return None
    return max((c for c, v in enumerate(scores) if v is not None),
               key=lambda c: (scores[c], -abs(2 * c - board.columns + 1)))


def search_move(board: Board, budget_s: float = DEFAULT_BUDGET_S, endgame: bool = True,
                nodes: int | None = None) -> int:
    """The move ``net-search`` plays on ``board`` within ``budget_s`` seconds; with ``nodes``, its network search
    stops at that many nodes instead, and ``budget_s`` is only a safety limit (the same move on any machine)."""
    start = time.perf_counter()
    budget = min(max(budget_s, 0.0), MAX_BUDGET_S)
    if endgame and board.moves >= ENDGAME_STONES and not board.winning_moves():
        move = exact_move(board, start + (budget if nodes else budget / 2))
        if move is not None:
            return int(move)
    move, _, _ = NetSearch(search_net(), start + budget, nodes).choose(board)
    return int(move)


def agent(obs: object, config: object) -> int:
    """Kaggle entry point (6x7x4 only)."""
    board = standard_board(obs, config, "net-search")
    return search_move(board)
