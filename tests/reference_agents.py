"""Plain transcriptions of the classic agents' definitions, for tests and benchmarks.

Deliberately slow and obvious: a numpy grid, explicit loops over windows, the
course's ``count_windows`` / ``is_terminal_node`` / ``minimax`` / ``score_move``
(Kaggle Learn, Intro to Game AI, lessons 2 and 3), with "three" and "four"
generalized to ``inarow - 1`` and ``inarow``.  Weights are ints so that equal
scores compare exactly.  Nothing here uses agents.board or agents.heuristics.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Grid = np.ndarray  # rows x columns, row 0 at the top, 0 empty, marks 1 and 2
Heuristic = Callable[[Grid, int, int], float]  # grid, mark, inarow -> score


def to_grid(board: list[int], rows: int, columns: int) -> Grid:
    return np.asarray(board).reshape(rows, columns)


def drop_piece(grid: Grid, col: int, mark: int) -> Grid:
    next_grid = grid.copy()
    for row in range(grid.shape[0] - 1, -1, -1):
        if next_grid[row][col] == 0:
            break
    next_grid[row][col] = mark
    return next_grid


def valid_moves(grid: Grid) -> list[int]:
    return [c for c in range(grid.shape[1]) if grid[0][c] == 0]


def all_windows(grid: Grid, inarow: int) -> list[list[int]]:
    """Every horizontal, vertical and diagonal line of ``inarow`` cells."""
    rows, columns = grid.shape
    windows = []
    for row in range(rows):  # horizontal
        for col in range(columns - (inarow - 1)):
            windows.append(list(grid[row, col:col + inarow]))
    for row in range(rows - (inarow - 1)):  # vertical
        for col in range(columns):
            windows.append(list(grid[row:row + inarow, col]))
    for row in range(rows - (inarow - 1)):  # positive diagonal
        for col in range(columns - (inarow - 1)):
            windows.append(list(grid[range(row, row + inarow), range(col, col + inarow)]))
    for row in range(inarow - 1, rows):  # negative diagonal
        for col in range(columns - (inarow - 1)):
            windows.append(list(grid[range(row, row - inarow, -1), range(col, col + inarow)]))
    return windows


def count_windows(grid: Grid, num_discs: int, piece: int, inarow: int) -> int:
    """Windows with ``num_discs`` of ``piece`` and every other cell empty."""
    return sum(1 for w in all_windows(grid, inarow)
               if w.count(piece) == num_discs and w.count(0) == inarow - num_discs)


# -- heuristics -----------------------------------------------------------------
def course_lookahead_heuristic(grid: Grid, mark: int, inarow: int) -> int:
    num_threes = count_windows(grid, inarow - 1, mark, inarow)
    num_fours = count_windows(grid, inarow, mark, inarow)
    num_threes_opp = count_windows(grid, inarow - 1, mark % 2 + 1, inarow)
    return num_threes - 100 * num_threes_opp + 10**6 * num_fours


def course_minimax_heuristic(grid: Grid, mark: int, inarow: int) -> int:
    num_fours_opp = count_windows(grid, inarow, mark % 2 + 1, inarow)
    return course_lookahead_heuristic(grid, mark, inarow) - 10**4 * num_fours_opp


def berkeley_heuristic(grid: Grid, mark: int, inarow: int) -> int:
    opp = mark % 2 + 1
    return (500 * count_windows(grid, inarow - 2, mark, inarow)
            + 6000 * count_windows(grid, inarow - 1, mark, inarow)
            + 10000 * count_windows(grid, inarow, mark, inarow)
            - 300 * count_windows(grid, inarow - 2, opp, inarow)
            - 10000 * count_windows(grid, inarow - 1, opp, inarow)
            - 15000 * count_windows(grid, inarow, opp, inarow))


def improved_heuristic(grid: Grid, mark: int, inarow: int) -> float:
    """The DQN notebook's: +-inf on a line of ``inarow``, else 4**i per own window of
    i+1 stones and no opponent stone, minus 2**(2i+1) per such opponent window."""
    opp = mark % 2 + 1
    score = 0
    for w in all_windows(grid, inarow):
        own, theirs = w.count(mark), w.count(opp)
        if own == inarow:
            return math.inf
        if theirs == inarow:
            return -math.inf
        if own > 0 and theirs == 0:
            score += 4 ** (own - 1)
        elif theirs > 0 and own == 0:
            score -= 2 ** (2 * (theirs - 1) + 1)
    return score


# -- search -----------------------------------------------------------------------
def is_terminal_node(grid: Grid, inarow: int) -> bool:
    if list(grid[0, :]).count(0) == 0:
        return True
    return any(w.count(1) == inarow or w.count(2) == inarow for w in all_windows(grid, inarow))


def minimax(node: Grid, depth: int, maximizing: bool, mark: int, inarow: int,
            heuristic: Heuristic) -> float:
    if depth == 0 or is_terminal_node(node, inarow):
        return heuristic(node, mark, inarow)
    if maximizing:
        value = -math.inf
        for col in valid_moves(node):
            value = max(value, minimax(drop_piece(node, col, mark), depth - 1, False, mark, inarow, heuristic))
        return value
    value = math.inf
    for col in valid_moves(node):
        value = min(value, minimax(drop_piece(node, col, mark % 2 + 1), depth - 1, True, mark, inarow, heuristic))
    return value


def score_move(grid: Grid, col: int, mark: int, inarow: int, nsteps: int, heuristic: Heuristic) -> float:
    return minimax(drop_piece(grid, col, mark), nsteps - 1, False, mark, inarow, heuristic)


def move_scores(board: list[int], mark: int, rows: int, columns: int, inarow: int,
                nsteps: int, heuristic: Heuristic) -> dict[int, float]:
    """``score_move`` for every valid column of a Kaggle flat board."""
    grid = to_grid(board, rows, columns)
    return {c: score_move(grid, c, mark, inarow, nsteps, heuristic) for c in valid_moves(grid)}


def best_moves(scores: dict[int, float]) -> list[int]:
    top = max(scores.values())
    return [c for c, s in scores.items() if s == top]


# name -> (nsteps, heuristic): the definition of each registered windowed agent
DEFINITIONS: dict[str, tuple[int, Heuristic]] = {
    "lookahead": (1, course_lookahead_heuristic),
    "lookahead-berkeley": (1, berkeley_heuristic),
    "minimax": (3, course_minimax_heuristic),
    "minimax-2": (2, course_minimax_heuristic),
    "alphabeta": (3, berkeley_heuristic),
    "alphabeta-4": (4, berkeley_heuristic),
    "improved": (2, improved_heuristic),
}


def reference_scores(name: str, board: list[int], mark: int, rows: int, columns: int,
                     inarow: int) -> dict[int, float]:
    nsteps, heuristic = DEFINITIONS[name]
    return move_scores(board, mark, rows, columns, inarow, nsteps, heuristic)
