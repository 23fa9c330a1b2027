"""Games for the review tests: a real kaggle-environments replay of a game lost by a blunder, and its truth.

``blunder_replay`` plays the ``perfect`` agent against itself through
kaggle-environments, except that the first player, at ``BLUNDER_PLY``, plays
the first column (centre first) that the exact solver says loses; the second
player then wins.  ``exact_truth`` labels every position of a move list with
the exact solver (``Solver.analyze`` with the opening book, the agents' own
solver, or from ``C_FROM`` stones its compiled twin), independently of the review's code.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from agents.board import Board
from agents.solver.agent import perfect_agent
from agents.solver.book import Book
from agents.solver.search import Solver
from connectx_forge import kaggle_env

BLUNDER_PLY = 9
C_FROM = 8  # stones from which the reference uses the compiled twin, where there is one
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)


@functools.lru_cache(maxsize=1)
def _solver() -> Solver:
    return Solver(book=Book.load())


def _blunderer(obs: Any, config: Any) -> int:
    board = Board.from_obs(obs, config)
    if board.moves + 1 != BLUNDER_PLY:
        return perfect_agent(obs, config)
    scores = _solver().analyze(board, weak=True)
    return next(c for c in CENTRE_FIRST if scores[c] is not None and scores[c] < 0)


@functools.lru_cache(maxsize=1)
def _replay() -> dict[str, Any]:
    kaggle_env.load()
    from kaggle_environments import make

    env = make("connectx")
    env.run([_blunderer, perfect_agent])
    return env.toJSON()


def blunder_replay() -> dict[str, Any]:
    """The replay (``env.toJSON()``), a fresh copy each call."""
    return copy.deepcopy(_replay())


def exact_truth(moves: list[int]) -> list[tuple[int, int, list[int]]]:
    """For each move: the mover's exact score before it, after it, and the columns reaching the score before."""
    return list(_truth(tuple(moves)))


@functools.lru_cache(maxsize=1)
def _c_solver() -> Any:
    """The compiled solver where it loads (fast once the book's early plies are past), else None."""
    from connectx_forge import tool_engines

    return tool_engines.CSolver() if tool_engines.available() else None


@functools.lru_cache(maxsize=8)
def _truth(moves: tuple[int, ...]) -> tuple[tuple[int, int, list[int]], ...]:
    out = []
    board = Board()
    for col in moves:
        fast = _c_solver() if board.moves >= C_FROM else None
        scores = (fast or _solver()).analyze(board)
        best = max(s for s in scores if s is not None)
        after = scores[col]
        assert after is not None
        out.append((best, after, [c for c, s in enumerate(scores) if s == best]))
        board = board.play(col)
    return tuple(out)
