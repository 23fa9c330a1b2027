"""Hypothesis strategies for ConnectX positions that are reachable in play."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agents.board import Board

Size = tuple[int, int, int]


@st.composite
def sizes(draw: st.DrawFn, min_side: int = 4, max_side: int = 10) -> Size:
    """A board size from 4x4x3 up to 10x10x5."""
    rows = draw(st.integers(min_side, max_side))
    columns = draw(st.integers(min_side, max_side))
    inarow = draw(st.integers(3, min(5, rows, columns)))
    return rows, columns, inarow


@st.composite
def positions(draw: st.DrawFn, size: Size | None = None, min_moves: int = 0,
              max_moves: int | None = None, finished: bool = False) -> Board:
    """A position reached by legal moves from the empty board.

    Unless ``finished``, the game is not over, so the side to move has a legal move.
    ``max_moves`` near ``rows * columns`` gives near-full boards.
    """
    rows, columns, inarow = size if size is not None else draw(sizes())
    cap = rows * columns if max_moves is None else min(max_moves, rows * columns)
    target = draw(st.integers(min(min_moves, cap), cap))
    board = Board(rows, columns, inarow)
    while board.moves < target and not board.is_over():
        legal = board.legal_moves()
        nxt = board.play(draw(st.sampled_from(legal)))
        if not finished and nxt.is_over():
            # keep the game open: try another column that does not end it
            open_moves = [c for c in legal if not board.play(c).is_over()]
            if not open_moves:
                break
            nxt = board.play(draw(st.sampled_from(open_moves)))
        board = nxt
    return board


def standard_positions(**kwargs: Any) -> st.SearchStrategy[Board]:
    """Positions on the 6x7x4 leaderboard board."""
    return positions(size=(6, 7, 4), **kwargs)


def near_full_positions(size: Size | None = None) -> st.SearchStrategy[Board]:
    """Positions with few empty cells left."""
    if size is None:
        return sizes().flatmap(lambda s: positions(size=s, min_moves=s[0] * s[1] - 6))
    return positions(size=size, min_moves=size[0] * size[1] - 6)


def obs_config(board: Board) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``obs`` and ``config`` Kaggle would pass to the side to move."""
    obs = {"board": board.to_grid(), "mark": board.mark, "step": board.moves, "remainingOverageTime": 60}
    config = {"rows": board.rows, "columns": board.columns, "inarow": board.inarow,
              "actTimeout": 2, "timeout": 2, "episodeSteps": 1000}
    return obs, config
