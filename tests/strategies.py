"""Hypothesis strategies for ConnectX positions that are reachable in play."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from agents.board import Board, has_alignment
from agents.solver.engine import Engine
from agents.solver.search import Timeout

Size = tuple[int, int, int]


@st.composite
def sizes(draw: st.DrawFn, min_side: int = 4, max_side: int = 10, max_cells: int | None = None) -> Size:
    """A board size from 4x4x3 up to 10x10x5; at most ``max_cells`` cells where given (drawn so, not
    filtered: a filter on the size would reject a third of the draws)."""
    rows = draw(st.integers(min_side, max_side if max_cells is None else min(max_side, max_cells // min_side)))
    columns = draw(st.integers(min_side, max_side if max_cells is None else min(max_side, max_cells // rows)))
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


def threats(board: Board) -> list[int]:
    """The columns where the opponent (the side that just moved) would win by playing now."""
    geo = board.geo
    opp = board.current ^ board.mask
    return [c for c in board.legal_moves()
            if has_alignment(opp | ((board.mask + geo.bottom_masks[c]) & geo.column_masks[c]), geo)]


def _open_mark(column: int, height: int, flip: int) -> int:
    """The mark of the cell of the full columns' pattern: pairs of columns alike, alternating up each column and
    every two columns (``column // 2 + height``), so that no three cells in a line share a mark."""
    return 1 + ((column // 2 + height + flip) % 2)


def _balanced(rows: int, columns: int) -> list[tuple[int, int, int]]:
    """Every (open column, flip, its height) whose stones players 1 and 2 can have played in turn: as many
    of each, or one more of 1, who moves first."""
    out = []
    for open_col in range(columns):
        for flip in (0, 1):
            full = sum(1 if _open_mark(c, h, flip) == 1 else -1
                       for c in range(columns) if c != open_col for h in range(rows))
            for height in range(rows):
                part = sum(1 if _open_mark(open_col, h, flip) == 1 else -1 for h in range(height))
                if full + part in (0, 1):
                    out.append((open_col, flip, height))
    return out


@st.composite
def one_open_column_positions(draw: st.DrawFn, size: Size | None = None) -> Board:
    """A position where every column but one is full and nobody has won.

    The stones follow a pattern with no three in a line (``_open_mark``); the open column, the pattern's flip
    and the open column's height are drawn among those whose counts of each mark the players can have
    reached in turn (``_balanced``, never empty), and the stones are played from the column with the most
    left among those whose next stone is the mover's, which always finishes (checked on every size from
    4x4 to 10x10).  So no draw is rejected.
    """
    rows, columns, inarow = size if size is not None else draw(sizes())
    open_col, flip, open_height = draw(st.sampled_from(_balanced(rows, columns)))
    heights = [rows] * columns
    heights[open_col] = open_height
    board, placed = Board(rows, columns, inarow), [0] * columns
    for _ in range(sum(heights)):
        ready = [c for c in range(columns)
                 if placed[c] < heights[c] and _open_mark(c, placed[c], flip) == board.mark]
        c = max(ready, key=lambda c: (heights[c] - placed[c], -c))
        board, placed[c] = board.play(c), placed[c] + 1
    return board


def _play_until(draw: st.DrawFn, size: Size | None, wanted: Any, max_moves: int = 200,
                max_cells: int | None = None) -> Board:
    """Random play that never ends the game, until ``wanted(board)``; rejected if never."""
    board = Board(*(size if size is not None else draw(sizes(max_cells=max_cells))))
    for _ in range(max_moves):
        if board.moves and wanted(board):
            return board
        open_moves = [c for c in board.legal_moves() if not board.play(c).is_over()]
        if not open_moves:
            break
        board = board.play(draw(st.sampled_from(open_moves)))
    assume(False)
    return board  # unreachable


@st.composite
def win_in_one_positions(draw: st.DrawFn, size: Size | None = None, max_cells: int | None = None) -> Board:
    """A position where the side to move can win at once (on a board of at most ``max_cells`` cells)."""
    return _play_until(draw, size, lambda b: b.winning_moves(), max_cells=max_cells)


@st.composite
def forced_block_positions(draw: st.DrawFn, size: Size | None = None, max_cells: int | None = None) -> Board:
    """A position where the opponent threatens to win in exactly one column and we cannot win.

    The block must not itself hand the opponent a win (no second threat right
    above it), so blocking is the one move that does not lose at once.
    """
    def wanted(b: Board) -> bool:
        t = threats(b)
        return (len(t) == 1 and not b.winning_moves()
                and not b.play(t[0]).winning_moves())
    return _play_until(draw, size, wanted, max_cells=max_cells)


def quiet_position(data: st.DataObject, stones: int) -> Board:
    """A standard board of ``stones`` stones drawn from ``data`` where no move along the way won and the side
    to move has no win in one (the positions the solver agent's tie-breaks choose among)."""
    board = Board()
    while board.moves < stones:
        legal = [c for c in board.legal_moves() if not board.is_winning_move(c)]
        assume(legal)
        board = board.play(data.draw(st.sampled_from(legal)))
    assume(not board.winning_moves())
    return board


def scores_within_a_second(solver: Engine, board: Board) -> list[int | None]:
    """``solver.analyze(board)``'s column scores, or the example rejected when the analysis takes more than a
    second of CPU (a bound in CPU time, so that a loaded machine rejects no more examples than an idle one)."""
    cpu = time.process_time()
    try:
        scores = solver.analyze(board, deadline=time.perf_counter() + 1.0)
    except Timeout:
        assume(False)
    assume(time.process_time() - cpu < 1.0)
    return scores
