"""The move order of the search: most threats created first, centre first on ties.

A move that leaves more cells where one more stone would complete a line
(Pons' "threats") tends to be strong, so it is tried first and cuts the search
sooner.  Among moves with as many threats, central columns come first: they
lie in more lines.

Every child's threats are counted in one pass: child ``i``'s stones are put in
lane ``i`` of one wide int, the lanes far enough apart that no shift of the
game core's ``agents.board.winning_cells`` carries a bit from one lane into
another's board; the core function runs once, on a geometry whose ``full``
mask is copied into every lane.  In CPython one pass over a wide int costs far
less than seven passes.  ``search.negamax`` inlines this same rule in its hot loop.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from agents.board import Geometry, winning_cells
from agents.solver.position import Layout


class Lanes(NamedTuple):
    """Constants to hold one child per column in a wide int."""

    width: int  # bits per lane
    shifts: tuple[int, ...]  # lane offset of each column, in centre-first order
    repl: int  # one bit at the start of each lane: x * repl copies x into every lane
    diag: int  # column i's mask in lane i: (moves * repl) & diag puts move i in lane i
    lane: int  # the mask of one lane


@lru_cache(maxsize=64)
def lanes(lay: Layout) -> Lanes:
    """The lane constants for ``lay``: a lane holds the board and room for the longest shift."""
    geo = lay.geo
    width = geo.columns * geo.height + (geo.inarow - 1) * (geo.height + 1) + 1
    shifts = tuple(rank * width for rank in range(len(lay.column_masks)))
    return Lanes(width, shifts, sum(1 << s for s in shifts),
                 sum(m << s for m, s in zip(lay.column_masks, shifts, strict=True)), (1 << width) - 1)


def child_threats(current: int, mask: int, candidates: int, lay: Layout) -> list[tuple[int, int, int, int]]:
    """``(threats, -rank, move, cells)`` for each move in ``candidates``.

    ``cells`` are the mover's threat cells after the move (``winning_cells`` of
    ``current | move`` on the old ``mask``), ``threats`` their number, ``rank``
    the column's place in the centre-first order.
    """
    ln = lanes(lay)
    wide = current * ln.repl | (candidates * ln.repl) & ln.diag
    cells = winning_cells(wide, mask * ln.repl, _wide_geometry(lay))
    out = []
    for rank, (col_mask, shift) in enumerate(zip(lay.column_masks, ln.shifts, strict=True)):
        move = candidates & col_mask
        if move:
            mine = (cells >> shift) & ln.lane
            out.append((mine.bit_count(), -rank, move, mine))
    return out


@lru_cache(maxsize=64)
def _wide_geometry(lay: Layout) -> Geometry:
    """``lay``'s geometry with its ``full`` mask copied into every lane (for ``winning_cells`` on lanes)."""
    return lay.geo._replace(full=lay.geo.full * lanes(lay).repl)


def ordered_moves(current: int, mask: int, candidates: int, lay: Layout) -> list[int]:
    """The move bits in ``candidates``, best first: threats created, then centre first."""
    if not candidates & (candidates - 1):
        return [candidates] if candidates else []
    scored = child_threats(current, mask, candidates, lay)
    scored.sort(reverse=True)
    return [move for _, _, move, _ in scored]


def ordered_moves_plain(current: int, mask: int, candidates: int, lay: Layout) -> list[int]:
    """``ordered_moves`` one child at a time: the reference the tests compare with."""
    scored = []
    for rank, col_mask in enumerate(lay.column_masks):
        move = candidates & col_mask
        if move:
            scored.append((winning_cells(current | move, mask, lay.geo).bit_count(), -rank, move))
    scored.sort(reverse=True)
    return [move for _, _, move in scored]


def move_column(move: int, lay: Layout) -> int:
    """The column of a one-bit move."""
    return (move.bit_length() - 1) // lay.geo.height
