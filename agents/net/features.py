"""The network's input features for a position, computed from the game core's bitboards.

Five planes of ``rows x columns`` cells in ``obs.board`` order (row 0 at the top),
all from the side to move's point of view, then one scalar:

0. the side to move's stones;
1. the opponent's stones;
2. the cells playable now (the lowest empty cell of each column);
3. the empty cells that would complete a line for the side to move;
4. the empty cells that would complete a line for the opponent;
5. one value: 1.0 when the side to move is the first player, else 0.0.

Planes 3 and 4 give the network Connect Four's threats directly, and plane 5 the
parity that decides odd/even threat play.  Planes 2-4 are the game core's
``playable_cells`` and ``winning_cells`` (agents/board.py), for any line length.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.board import Board, Geometry, playable_cells, winning_cells

PLANES = 5
VERSION = 1  # bump when the features change; weight files record it


def feature_size(rows: int, columns: int) -> int:
    """The length of one encoded position."""
    return PLANES * rows * columns + 1


@lru_cache(maxsize=16)
def _cell_bits(geo: Geometry) -> np.ndarray:
    """For each cell in grid order, its bit index in the bitboard."""
    return np.array([c * geo.height + geo.rows - 1 - r
                     for r in range(geo.rows) for c in range(geo.columns)], dtype=np.int64)


def _bits_array(bits: int, nbits: int) -> np.ndarray:
    """The bits of ``bits`` as a 0/1 uint8 array, least significant first."""
    raw = bits.to_bytes((nbits + 7) // 8, "little")
    return np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")


def encode(board: Board) -> np.ndarray:
    """The feature vector (float32) of ``board`` for the side to move."""
    geo = board.geo
    cells = _cell_bits(geo)
    nbits = geo.height * geo.columns
    own, mask = board.current, board.mask
    opp = own ^ mask
    planes = [own, opp, playable_cells(mask, geo), winning_cells(own, mask, geo), winning_cells(opp, mask, geo)]
    out = np.empty(feature_size(geo.rows, geo.columns), dtype=np.float32)
    n = geo.rows * geo.columns
    for i, bits in enumerate(planes):
        out[i * n:(i + 1) * n] = _bits_array(bits, nbits)[cells]
    out[-1] = 1.0 if board.moves % 2 == 0 else 0.0
    return out
