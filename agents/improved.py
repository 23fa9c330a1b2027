"""The DQN notebook's improved minimax.

Heuristic: +inf once we have ``inarow`` in a line, -inf once the opponent has;
otherwise ``4**i`` per own window of ``i + 1`` stones and no opponent stone,
minus ``2**(2i + 1)`` per opponent window of ``i + 1`` stones and none of ours,
all windows counted in one pass.  The search stops at a won or lost position;
by default it looks 2 plies ahead (our move and the reply).  Random tie-break.
Bundle-safe: standard library and numpy only.
"""

from __future__ import annotations

from agents.board import Board
from agents.heuristics import IMPROVED, Score
from agents.minimax import best_of, choose
from agents.minimax import move_scores as search_scores

DEPTH = 2


def move_scores(board: Board, depth: int = DEPTH) -> dict[int, Score]:
    """Each legal column's minimax value under the improved heuristic."""
    return search_scores(board, depth, IMPROVED)


def best_moves(board: Board, depth: int = DEPTH) -> list[int]:
    """The equal-best columns, left to right."""
    return best_of(move_scores(board, depth))


def agent(obs: object, config: object) -> int:
    """The improved minimax agent (2 plies), random tie-break."""
    return choose(best_moves(Board.from_obs(obs, config)))
