"""The solver's view of one board size: ``Layout`` (the game core's ``Geometry``, centre-first order).

The solver works on raw ints in ``agents.board``'s layout (``current`` = stones
of the side to move, ``mask`` = all stones, column ``c`` at bits ``c*H ..``
with ``H = rows + 1``), so that its hot loop allocates no objects.  The threat
logic on those ints (winning cells, non-losing moves, mirror keys) is the game
core's, in ``agents.board``; this module adds only what is the solver's own
policy: the centre-first column order that breaks ties between moves.
"""

from __future__ import annotations

from typing import NamedTuple

from agents.board import Board, Geometry, geometry


class Layout(NamedTuple):
    """What the solver needs to know about one board size."""

    geo: Geometry
    size: int  # number of cells: rows * columns
    order: tuple[int, ...]  # columns, centre first
    column_masks: tuple[int, ...]  # in ``order``

    @property
    def height(self) -> int:
        return self.geo.height


def layout(rows: int = 6, columns: int = 7, inarow: int = 4) -> Layout:
    """The solver's layout for a ``rows x columns`` board (four in a row unless told)."""
    geo = geometry(rows, columns, inarow)
    order = centre_first(columns)
    return Layout(geo, rows * columns, order, tuple(geo.column_masks[c] for c in order))


def layout_of(board: Board) -> Layout:
    """The layout of ``board``, whatever its size."""
    return layout(board.rows, board.columns, board.inarow)


def centre_first(columns: int) -> tuple[int, ...]:
    """Columns from the centre outwards, left before right: 3, 2, 4, 1, 5, 0, 6 for 7."""
    return tuple(sorted(range(columns), key=lambda c: (abs(2 * c - (columns - 1)), c)))
