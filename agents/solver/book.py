"""The opening book: exact scores and best moves of early 6x7 positions.

Built offline by ``cxforge book build`` with the solver, stored in
``agents/data/opening_book.bin`` and embedded by the bundler.  A position and
its mirror image share one entry, under the smaller of their two keys; the
best move is stored for that orientation and mirrored back on lookup.

File layout (little-endian)::

    b"CXB1"  uint32 count  uint8 max_moves  uint8 sides  2 bytes zero
    count x uint64  keys, sorted (canonical ``current + mask``)
    count x int8    exact scores for the side to move (Pons' convention)
    count x uint8   best column (0-6), 255 when not stored

``sides`` says whose turns the entries are: bit 0 the first player's (an even
number of stones), bit 1 the second player's.

Lookups use ``array`` and ``bisect`` from the standard library: loading takes
no numpy import, which keeps the agent's first move fast.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import pairwise
from typing import NamedTuple

from agents.board import mirror_bits
from agents.solver.position import Layout, layout
from connectx_forge.runtime import MissingData, read_data

MAGIC = b"CXB1"
HEADER = struct.Struct("<4sIBB2x")
NO_MOVE = 255


def key_stones(key: int, lay: Layout | None = None) -> int:
    """The number of stones of the position with this key (``current + mask``)."""
    lay = lay or layout()
    h = lay.geo.height
    col = (1 << h) - 1
    # a column of k stones holds 2**k - 1 (mask) plus the mover's stones (< 2**k): from 2**k - 1 to 2**(k+1) - 2
    return sum((((key >> (c * h)) & col) + 1).bit_length() - 1 for c in range(lay.geo.columns))


class BookError(ValueError):
    """A book file that does not follow the layout above."""


class BookEntry(NamedTuple):
    key: int  # canonical key
    score: int
    move: int  # best column in the canonical orientation, or NO_MOVE


class Book:
    """A sorted table of canonical keys with their scores and best moves."""

    def __init__(self, keys: array[int], scores: array[int], moves: bytes, max_moves: int, lay: Layout | None = None,
                 sides: int = 0) -> None:
        self.keys = keys
        self.scores = scores
        self.moves = moves
        self.max_moves = max_moves
        self.lay = lay or layout()
        self.sides = sides

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def empty(cls) -> Book:
        return cls(array("Q"), array("b"), b"", -1)

    @classmethod
    def from_bytes(cls, data: bytes) -> Book:
        if len(data) < HEADER.size:
            raise BookError(f"book is {len(data)} bytes, shorter than its header")
        magic, count, max_moves, sides = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise BookError(f"not a book file (magic {magic!r}, expected {MAGIC!r})")
        if len(data) != HEADER.size + 10 * count:
            raise BookError(f"book holds {len(data)} bytes, expected {HEADER.size + 10 * count} for {count} entries")
        keys = array("Q")
        keys.frombytes(data[HEADER.size:HEADER.size + 8 * count])
        scores = array("b")
        scores.frombytes(data[HEADER.size + 8 * count:HEADER.size + 9 * count])
        moves = data[HEADER.size + 9 * count:]
        if struct.pack("<I", 1) != array("I", [1]).tobytes():  # a big-endian host
            keys.byteswap()
        return cls(keys, scores, moves, max_moves, sides=sides)

    @classmethod
    def load(cls) -> Book:
        """The book in agents/data (or embedded in a bundle); empty when there is none."""
        try:
            return cls.from_bytes(read_data("agents/data/opening_book.bin"))
        except MissingData:
            return cls.empty()

    def to_bytes(self) -> bytes:
        keys = array("Q", self.keys)
        if struct.pack("<I", 1) != array("I", [1]).tobytes():
            keys.byteswap()
        header = HEADER.pack(MAGIC, len(self.keys), max(self.max_moves, 0), self.sides)
        return header + keys.tobytes() + self.scores.tobytes() + bytes(self.moves)

    @classmethod
    def from_entries(cls, entries: Iterable[BookEntry], max_moves: int) -> Book:
        rows = sorted(entries)
        for a, b in pairwise(rows):
            if a.key == b.key:
                raise BookError(f"key {a.key} appears twice")
        sides = 0
        for e in rows:
            sides |= 1 << (key_stones(e.key) % 2)
        return cls(array("Q", [e.key for e in rows]), array("b", [e.score for e in rows]),
                   bytes(e.move for e in rows), max_moves, sides=sides)

    # -- lookups -------------------------------------------------------------------
    def _find(self, key: int) -> int:
        i = bisect_left(self.keys, key)
        return i if i < len(self.keys) and self.keys[i] == key else -1

    def lookup(self, current: int, mask: int) -> tuple[int, int | None] | None:
        """``(score, best column or None)`` for the position, or ``None`` if it is not in the book."""
        key = current + mask
        mirrored = mirror_bits(key, self.lay.geo)
        flip = mirrored < key
        i = self._find(mirrored if flip else key)
        if i < 0:
            return None
        move = self.moves[i]
        if move == NO_MOVE:
            return self.scores[i], None
        return self.scores[i], (self.lay.geo.columns - 1 - move) if flip else move

    def score(self, current: int, mask: int) -> int | None:
        """The exact score of a position in the book, else ``None`` (the solver's book hook)."""
        found = self.lookup(current, mask)
        return None if found is None else found[0]

    def entries(self) -> list[BookEntry]:
        return [BookEntry(k, s, m) for k, s, m in zip(self.keys, self.scores, self.moves, strict=True)]
