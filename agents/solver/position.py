"""Bitboard helpers for the solver: threat cells and moves that do not lose at once.

The solver works on raw ints in ``agents.board``'s layout (``current`` = stones
of the side to move, ``mask`` = all stones, column ``c`` at bits ``c*H ..``
with ``H = rows + 1``), so that its hot loop allocates no objects.  The masks
come from ``agents.board.geometry``; only four-in-a-row is handled here, which
is what lets the threat computation be a fixed set of shifts.
"""

from __future__ import annotations

from typing import NamedTuple

from agents.board import Board, BoardError, Geometry, geometry


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


def winning_cells(stones: int, mask: int, lay: Layout) -> int:
    """The empty cells where one more stone would give ``stones`` a line of ``inarow``.

    For each direction ``d``, a cell completes a line when ``a`` cells on one
    side and ``inarow - 1 - a`` on the other hold stones; shifts test all cells
    at once.  Cells that are not playable yet are included (future threats).
    The sentinel bit above each column keeps lines from wrapping.
    """
    geo = lay.geo
    k = geo.inarow
    if k == 4:  # the common case, unrolled
        s = stones
        r = (s << 1) & (s << 2) & (s << 3)  # vertical: only from below
        d = geo.height  # horizontal, then the two diagonals
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        d -= 1
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        d += 2
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        return r & (geo.full ^ mask)
    full = geo.full
    r = full
    for i in range(1, k):
        r &= stones << i  # vertical: the k - 1 cells below
    for d in geo.directions[1:]:
        back, ahead = [full], [full]  # back[a]: the a cells behind hold stones; ahead[b] likewise
        for i in range(1, k):
            back.append(back[-1] & (stones << i * d))
            ahead.append(ahead[-1] & (stones >> i * d))
        for a in range(k):
            r |= back[a] & ahead[k - 1 - a]
    return r & (full ^ mask)


def playable(mask: int, lay: Layout) -> int:
    """The cell each non-full column would receive next, as one bitboard."""
    return (mask + lay.geo.bottom) & lay.geo.full


def can_win_next(current: int, mask: int, lay: Layout) -> bool:
    """Whether the side to move has a move that wins at once."""
    return bool(winning_cells(current, mask, lay) & playable(mask, lay))


def non_losing_moves(current: int, mask: int, lay: Layout) -> int:
    """The playable cells that do not hand the opponent a win next move.

    When the opponent threatens to win, only the block is kept (and nothing when
    it threatens twice); a move under an opponent's threat cell is dropped.
    Assumes the side to move cannot win at once.
    """
    moves = playable(mask, lay)
    threats = winning_cells(current ^ mask, mask, lay)
    forced = moves & threats
    if forced:
        if forced & (forced - 1):
            return 0
        moves = forced
    return moves & ~(threats >> 1)


def mirror_bits(bits: int, lay: Layout) -> int:
    """``bits`` reflected left to right (column ``c`` to ``columns - 1 - c``)."""
    h, last = lay.geo.height, lay.geo.columns - 1
    col = (1 << h) - 1
    out = 0
    for c in range(lay.geo.columns):
        out |= ((bits >> (c * h)) & col) << ((last - c) * h)
    return out


def canonical_key(current: int, mask: int, lay: Layout) -> int:
    """The smaller of the position's key and its mirror's: one key per symmetric pair."""
    key = current + mask
    return min(key, mirror_bits(key, lay))
