"""Windowed heuristics: points per line of ``inarow`` cells, by who holds its cells.

The classic ConnectX heuristics (Kaggle Learn's course, the Berkeley report, the
DQN notebook's improved minimax) all look at every *window*: every horizontal,
vertical and diagonal line of ``inarow`` cells.  A window is scored by how many
of its cells are ours and how many are the opponent's (the rest are empty), and
the position's score is the sum over windows.

This module holds that machinery once, for any ``rows x columns x inarow``:

* ``window_bits`` -- the cells of every window, as bit positions of the
  ``agents.board`` bitboard layout (computed once per size);
* ``window_codes`` -- for many boards at once, each window's
  ``own + (inarow + 1) * opponent`` stone count, by numpy gathers;
* pattern weights (``(own, opponent, points)`` triples) and ``WindowHeuristic``,
  which turns them into a lookup table and scores a batch of boards.

Scores are exact Python ints (the weights are ints), so equal scores are truly
equal and the set of equal-best moves matches a plain transcription exactly.
Bundle-safe: standard library and numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from agents.board import Board

Score = int | float  # an int, or +-inf for a won or lost position
Pattern = tuple[int, int, int]  # (own stones, opponent stones, points) for one window
PatternWeights = Callable[[int], Sequence[Pattern]]  # inarow -> the patterns that score

INF = float("inf")


@lru_cache(maxsize=64)
def window_bits(rows: int, columns: int, inarow: int) -> np.ndarray:
    """The ``(W, inarow)`` bit positions of every window on a ``rows x columns`` board.

    Bit ``c * (rows + 1) + h`` is the cell ``h`` stones up column ``c``, as in
    ``agents.board``.  Windows go right, up, up-right and down-right.
    """
    h = rows + 1
    last = inarow - 1
    cells: list[list[int]] = []
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for c in range(columns):
            for r in range(rows):
                if 0 <= c + dc * last < columns and 0 <= r + dr * last < rows:
                    cells.append([(c + dc * i) * h + r + dr * i for i in range(inarow)])
    return np.array(cells, dtype=np.intp).reshape(-1, inarow)


def _nbytes(rows: int, columns: int) -> int:
    return ((rows + 1) * columns + 7) // 8


def window_codes(boards: Sequence[Board], mark: int) -> np.ndarray:
    """``(N, W)`` int array: ``own + (inarow + 1) * opponent`` stones in each window.

    ``own`` counts ``mark``'s stones.  All boards must have the same size.  Plain
    gathers, not a matrix product: BLAS threads cost more than they save here.
    """
    geo = boards[0].geo
    nb = _nbytes(geo.rows, geo.columns)
    parts = []
    for b in boards:
        own = b.current if b.mark == mark else b.current ^ b.mask
        parts.append(own.to_bytes(nb, "little"))
        parts.append((own ^ b.mask).to_bytes(nb, "little"))
    raw = np.frombuffer(b"".join(parts), dtype=np.uint8).reshape(len(boards), 2, nb)
    bits = np.unpackbits(raw, axis=2, bitorder="little")
    dtype: type[np.integer[Any]] = np.uint8 if geo.inarow * (geo.inarow + 1) < 256 else np.int64  # codes fit a byte
    cells = bits[:, 0].astype(dtype) + dtype(geo.inarow + 1) * bits[:, 1]  # per cell: 0, 1 or inarow + 1
    wins = window_bits(geo.rows, geo.columns, geo.inarow)
    codes = cells[:, wins[:, 0]]
    for i in range(1, geo.inarow):
        codes += cells[:, wins[:, i]]
    return codes


@lru_cache(maxsize=256)
def pattern_table(weights: PatternWeights, inarow: int) -> np.ndarray:
    """The points of a window, indexed by its code ``own + (inarow + 1) * opponent``.

    Patterns add up, as separate ``count_windows`` terms do in the sources.
    """
    table = np.zeros((inarow + 1) ** 2, dtype=np.int64)
    for own, opp, points in weights(inarow):
        if 0 <= own and 0 <= opp and own + opp <= inarow:
            table[own + (inarow + 1) * opp] += points
    return table


@dataclass(frozen=True)
class WindowHeuristic:
    """A position score: the sum of each window's points, from ``mark``'s side.

    With ``infinite_wins`` (the DQN notebook's improved heuristic) a line of
    ``inarow`` of ours scores ``+inf`` and one of the opponent's ``-inf``, ahead
    of the window sum.
    """

    weights: PatternWeights
    infinite_wins: bool = False

    def __call__(self, boards: Sequence[Board], mark: int) -> list[Score]:
        """The score of each board for the player with ``mark``."""
        if not boards:
            return []
        k = boards[0].geo.inarow
        codes = window_codes(boards, mark)
        scores: list[Score] = pattern_table(self.weights, k)[codes].sum(axis=1).tolist()
        if self.infinite_wins:
            won = (codes == k).any(axis=1)
            lost = (codes == k * (k + 1)).any(axis=1)
            for i in np.flatnonzero(won | lost).tolist():
                scores[i] = INF if won[i] else -INF
        return scores


# -- the sources' weights ----------------------------------------------------
# "four" is a window of inarow own stones, "three" inarow-1 and one empty cell,
# "two" inarow-2 and two empty cells (own + opponent + empty = inarow).

def course_lookahead_weights(k: int) -> list[Pattern]:
    """Kaggle Learn lesson 2: +1e6 own four, +1 own three, -100 opponent three."""
    return [(k, 0, 10**6), (k - 1, 0, 1), (0, k - 1, -100)]


def course_minimax_weights(k: int) -> list[Pattern]:
    """Kaggle Learn lesson 3: lesson 2's weights and -1e4 per opponent four."""
    return course_lookahead_weights(k) + [(0, k, -10**4)]


def berkeley_weights(k: int) -> list[Pattern]:
    """The Berkeley report's tuned weights (two, three, four; ours then the opponent's)."""
    return [(k - 2, 0, 500), (k - 1, 0, 6000), (k, 0, 10000),
            (0, k - 2, -300), (0, k - 1, -10000), (0, k, -15000)]


def improved_weights(k: int) -> list[Pattern]:
    """The DQN notebook: ``4**i`` per own window of ``i + 1`` stones and no opponent
    stone, ``-2**(2i + 1)`` per such opponent window; full lines are +-inf."""
    return ([(i + 1, 0, 4**i) for i in range(k - 1)]
            + [(0, i + 1, -(2 ** (2 * i + 1))) for i in range(k - 1)])


COURSE_LOOKAHEAD = WindowHeuristic(course_lookahead_weights)
COURSE_MINIMAX = WindowHeuristic(course_minimax_weights)
BERKELEY = WindowHeuristic(berkeley_weights)
IMPROVED = WindowHeuristic(improved_weights, infinite_wins=True)
