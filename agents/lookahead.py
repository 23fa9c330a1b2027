"""One-step lookahead (Kaggle Learn, Intro to Game AI, lesson 2).

Score each legal column by the heuristic of the board right after our stone
(+1e6 per own four, +1 per own three with one empty cell, -100 per opponent
three with one empty cell) and play one of the best at random.  The Berkeley
variant scores the same step with the Berkeley report's weights.
Bundle-safe: standard library and numpy only.
"""

from __future__ import annotations

from agents.board import Board
from agents.heuristics import BERKELEY, COURSE_LOOKAHEAD, Score
from agents.minimax import Heuristic, best_of, choose
from agents.minimax import move_scores as search_scores


def move_scores(board: Board, heuristic: Heuristic = COURSE_LOOKAHEAD) -> dict[int, Score]:
    """The course's ``score_move`` (nsteps = 1) for each legal column."""
    return search_scores(board, 1, heuristic)


def best_moves(board: Board, heuristic: Heuristic = COURSE_LOOKAHEAD) -> list[int]:
    """The equal-best columns, left to right."""
    return best_of(move_scores(board, heuristic))


def agent(obs: object, config: object) -> int:
    """The course's one-step lookahead agent."""
    return choose(best_moves(Board.from_obs(obs, config)))


def berkeley_agent(obs: object, config: object) -> int:
    """One-step lookahead with the Berkeley report's weights."""
    return choose(best_moves(Board.from_obs(obs, config), BERKELEY))
