"""Depth-limited minimax (optionally alpha-beta) over a batch heuristic, and the course's agent.

``move_scores(board, depth, heuristic)`` is the course's ``score_move`` for every
legal column: drop our stone, then ``minimax(child, depth - 1, maximizing=False)``.
A node is terminal on a line of ``inarow`` for either side or a full board (the
course's ``is_terminal_node``); terminal nodes and depth-0 nodes are scored by the
heuristic from the root player's side.  Ties are broken at random among the
equal-best columns, so the agents' move distribution is the plain definition's.

Speed comes from scoring leaves in batches (``agents.heuristics``): without
pruning the whole tree is expanded and all leaves are scored in one call; with
alpha-beta the children of each depth-1 node are scored together.  Alpha-beta
searches each root move with the window ``(just below the best so far, +inf)``,
so every move that ties for best gets its exact value and the set of best moves
is the plain minimax's.

The lesson-3 agent (``agent``) is depth 3 with ``COURSE_MINIMAX`` weights.
Bundle-safe: standard library and numpy only.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence

from agents.board import Board
from agents.heuristics import COURSE_MINIMAX, INF, Score

Heuristic = Callable[[Sequence[Board], int], list[Score]]
Tree = int | list["Tree"]  # a leaf's index into the batch, or the children of a node

DEPTH = 3  # the course's N_STEPS


def is_terminal(board: Board) -> bool:
    """A line of ``inarow`` for either side, or a full board."""
    return board.mask == board.geo.full or board.winner() is not None


def center_first(board: Board) -> list[int]:
    """The legal columns, nearest the middle first (good alpha-beta order)."""
    mid = (board.columns - 1) / 2
    return sorted(board.legal_moves(), key=lambda c: abs(c - mid))


# -- plain minimax, leaves scored in one batch ---------------------------------
def _expand(board: Board, depth: int, leaves: list[Board]) -> Tree:
    if depth == 0 or is_terminal(board):
        leaves.append(board)
        return len(leaves) - 1
    return [_expand(board.play(c), depth - 1, leaves) for c in board.legal_moves()]


def _backup(tree: Tree, values: list[Score], maximizing: bool) -> Score:
    if isinstance(tree, int):
        return values[tree]
    children = [_backup(t, values, not maximizing) for t in tree]
    return max(children) if maximizing else min(children)


def _minimax_scores(board: Board, depth: int, heuristic: Heuristic) -> dict[int, Score]:
    leaves: list[Board] = []
    trees = {c: _expand(board.play(c), depth - 1, leaves) for c in board.legal_moves()}
    values = heuristic(leaves, board.mark)
    return {c: _backup(t, values, False) for c, t in trees.items()}


# -- alpha-beta (fail-soft), depth-1 children scored in one batch ---------------
def _alphabeta(board: Board, depth: int, maximizing: bool, alpha: Score, beta: Score,
               heuristic: Heuristic, mark: int) -> Score:
    if depth == 0 or is_terminal(board):
        return heuristic([board], mark)[0]
    moves = center_first(board)
    if depth == 1:
        values = heuristic([board.play(c) for c in moves], mark)
        return max(values) if maximizing else min(values)
    if maximizing:
        best: Score = -INF
        for c in moves:
            best = max(best, _alphabeta(board.play(c), depth - 1, False, alpha, beta, heuristic, mark))
            if best >= beta:
                break
            alpha = max(alpha, best)
        return best
    best = INF
    for c in moves:
        best = min(best, _alphabeta(board.play(c), depth - 1, True, alpha, beta, heuristic, mark))
        if best <= alpha:
            break
        beta = min(beta, best)
    return best


def _just_below(score: Score) -> Score:
    """The largest bound under which every score is ``< score`` (scores are ints or +-inf)."""
    if score == INF:
        return sys.float_info.max
    if score == -INF:
        return -INF
    return score - 1


def _alphabeta_scores(board: Board, depth: int, heuristic: Heuristic) -> dict[int, Score]:
    """Exact values for the moves that tie for best; upper bounds below the best for the rest."""
    scores: dict[int, Score] = {}
    best: Score = -INF
    for c in center_first(board):
        scores[c] = _alphabeta(board.play(c), depth - 1, False, _just_below(best), INF, heuristic, board.mark)
        best = max(best, scores[c])
    return dict(sorted(scores.items()))


# -- the interface the agents share --------------------------------------------
def move_scores(board: Board, depth: int, heuristic: Heuristic, pruning: bool = False) -> dict[int, Score]:
    """The course's ``score_move(grid, col, mark, config, nsteps=depth)`` for each legal column.

    With ``pruning`` only the best moves' scores are exact (the others are upper
    bounds below the best), which is all that choosing a move needs.
    """
    if pruning:
        return _alphabeta_scores(board, depth, heuristic)
    return _minimax_scores(board, depth, heuristic)


def best_of(scores: dict[int, Score]) -> list[int]:
    """The columns with the highest score, left to right."""
    top = max(scores.values())
    return [c for c, s in scores.items() if s == top]


def best_moves(board: Board, depth: int = DEPTH, heuristic: Heuristic = COURSE_MINIMAX,
               pruning: bool = False) -> list[int]:
    """The equal-best columns of a ``depth``-step search (default: the course's agent)."""
    return best_of(move_scores(board, depth, heuristic, pruning))


def choose(moves: list[int]) -> int:
    """A uniformly random column among ``moves``, as a plain ``int``."""
    return int(random.choice(moves))


def agent(obs: object, config: object) -> int:
    """Kaggle Learn lesson 3: 3-step minimax with the course heuristic, random tie-break."""
    return choose(best_moves(Board.from_obs(obs, config)))


def minimax2_agent(obs: object, config: object) -> int:
    """The course's minimax with N_STEPS = 2 (our move and the reply)."""
    return choose(best_moves(Board.from_obs(obs, config), depth=2))
