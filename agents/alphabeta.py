"""The Berkeley report's agent: 3-step lookahead with alpha-beta pruning and tuned weights.

Weights per window: +500 own two, +6000 own three, +10000 own four, -300
opponent two, -10000 opponent three, -15000 opponent four.  Same depth
convention as the course's minimax (our move, the reply, our next move); the
pruning keeps the set of equal-best moves of plain minimax with these weights.
Bundle-safe: standard library and numpy only.
"""

from __future__ import annotations

from agents.board import Board
from agents.heuristics import BERKELEY
from agents.minimax import best_of, choose, move_scores

DEPTH = 3


def best_moves(board: Board, depth: int = DEPTH) -> list[int]:
    """The equal-best columns of the alpha-beta search, left to right."""
    return best_of(move_scores(board, depth, BERKELEY, pruning=True))


def agent(obs: object, config: object) -> int:
    """The Berkeley alpha-beta agent (depth 3), random tie-break."""
    return choose(best_moves(Board.from_obs(obs, config)))


def alphabeta4_agent(obs: object, config: object) -> int:
    """The Berkeley alpha-beta agent searching 4 steps."""
    return choose(best_moves(Board.from_obs(obs, config), depth=4))
