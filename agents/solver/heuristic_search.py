"""Depth-limited search for positions the exact solver cannot finish in time.

Iterative deepening negamax with alpha-beta, for any board size and line
length.  It shares the solver's tactics (a move that hands the opponent a win
is never played; two opponent threats lose), its move order (threats created,
centre first) and its score scale for decided games (``WIN + Pons' score``),
so a forced win or loss inside the horizon is played as the solver would.
Undecided leaves get a threat heuristic: the cells where each side would
complete a line, then how central each side's stones are.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agents.board import playable_cells, safe_moves, winning_cells
from agents.solver.move_sorter import child_threats, move_column, ordered_moves
from agents.solver.position import Layout
from agents.solver.search import Timeout

WIN = 10_000  # decided scores are WIN + (Pons score), far above any heuristic value
THREAT = 16  # value of one threat cell, against 1 per line a stone lies in


def cell_weight_masks(lay: Layout) -> tuple[tuple[int, int], ...]:
    """``(weight, cells)`` groups: each cell's weight is the number of lines through it."""
    geo = lay.geo
    k, h = geo.inarow, geo.height
    weight: dict[int, int] = {}
    steps = ((0, 1), (1, 0), (1, 1), (1, -1))  # (column step, row step)
    for c in range(geo.columns):
        for r in range(geo.rows):
            for dc, dr in steps:
                cells = [(c + i * dc, r + i * dr) for i in range(k)]
                if all(0 <= x < geo.columns and 0 <= y < geo.rows for x, y in cells):
                    for x, y in cells:
                        weight[x * h + y] = weight.get(x * h + y, 0) + 1
    groups: dict[int, int] = {}
    for bit, w in weight.items():
        groups[w] = groups.get(w, 0) | (1 << bit)
    return tuple(sorted(groups.items()))


class HeuristicSearch:
    """Iterative deepening alpha-beta; ``best_move`` returns the deepest finished answer.

    ``table`` maps a position key to its best move found so far (move ordering
    only) and is cleared when it reaches ``capacity``.
    """

    def __init__(self, lay: Layout, capacity: int = 1 << 18) -> None:
        self.lay = lay
        self.weights = cell_weight_masks(lay)
        self.table: dict[int, int] = {}
        self.capacity = capacity
        self.nodes = 0
        self.deadline = float("inf")
        self.depth = 0  # the deepest search finished by the last best_move

    def evaluate(self, current: int, mask: int, mine: int, theirs: int) -> int:
        """A heuristic value for the side to move: its threat cells (``mine``) and central
        stones, minus the opponent's (``theirs``)."""
        other = current ^ mask
        value = THREAT * (mine.bit_count() - theirs.bit_count())
        for w, cells in self.weights:
            value += w * ((current & cells).bit_count() - (other & cells).bit_count())
        return value

    def _children(self, current: int, mask: int, candidates: int) -> list[tuple[int, int, int, int]]:
        """``child_threats`` best first, the remembered best move of this position before all."""
        scored = child_threats(current, mask, candidates, self.lay)
        scored.sort(reverse=True)
        first = self.table.get(current + mask)
        if first is not None and scored[0][2] != first:
            for i, child in enumerate(scored):
                if child[2] == first:
                    scored.insert(0, scored.pop(i))
                    break
        return scored

    def _remember(self, key: int, move: int) -> None:
        if len(self.table) >= self.capacity:
            self.table.clear()
        self.table[key] = move

    def negamax(self, current: int, mask: int, moves: int, depth: int, alpha: int, beta: int,
                mine: int, theirs: int) -> int:
        """The value of a position whose side to move cannot win at once.

        ``mine`` and ``theirs`` are both sides' threat cells (``winning_cells``),
        which the parent already computed to order its moves.
        """
        self.nodes += 1
        if not self.nodes & 1023 and time.perf_counter() > self.deadline:
            raise Timeout
        size = self.lay.size
        possible = safe_moves(playable_cells(mask, self.lay.geo), theirs)
        if not possible:
            return -(WIN + (size - moves) // 2)
        if moves >= size - 2:
            return 0
        if depth <= 0:
            return self.evaluate(current, mask, mine, theirs)
        best, best_move = -2 * WIN, 0
        other = current ^ mask
        for _, _, move, after in self._children(current, mask, possible):
            score = -self.negamax(other, mask | move, moves + 1, depth - 1, -beta, -alpha,
                                  theirs & ~move, after & ~move)
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        self._remember(current + mask, best_move)
        return best

    def root(self, current: int, mask: int, moves: int, depth: int) -> tuple[int, int]:
        """``(column, value)`` of the best move at ``depth`` (a win in one at once)."""
        lay = self.lay
        possible = playable_cells(mask, lay.geo)
        wins = winning_cells(current, mask, lay.geo) & possible
        if wins:
            return move_column(ordered_moves(current, mask, wins, lay)[0], lay), WIN + (lay.size + 1 - moves) // 2
        theirs = winning_cells(current ^ mask, mask, lay.geo)
        candidates = safe_moves(possible, theirs)
        if not candidates:  # lost anyway: block one threat if we can
            forced = possible & theirs
            move = (forced & -forced) if forced else ordered_moves(current, mask, possible, lay)[0]
            return move_column(move, lay), -(WIN + (lay.size - moves) // 2)
        alpha, beta = -2 * WIN, 2 * WIN
        best_move = 0
        other = current ^ mask
        for _, _, move, after in self._children(current, mask, candidates):
            score = -self.negamax(other, mask | move, moves + 1, depth - 1, -beta, -alpha,
                                  theirs & ~move, after & ~move)
            if score > alpha:
                alpha, best_move = score, move
        self._remember(current + mask, best_move)
        return move_column(best_move, lay), alpha

    def best_move(self, current: int, mask: int, moves: int, deadline: float,
                  max_depth: int | None = None, on_depth: Callable[[int, int, int], None] | None = None) -> int:
        """The best column found by iterative deepening before ``deadline``.

        Depth 1 always finishes, whatever the deadline.  Stops early once the
        result is decided (a forced win or loss) or the depth covers the board.
        """
        lay = self.lay
        limit = lay.size - moves if max_depth is None else min(max_depth, lay.size - moves)
        self.deadline = float("inf")
        col, value = self.root(current, mask, moves, 1)
        self.depth = 1
        self.deadline = deadline
        try:
            for depth in range(2, limit + 1):
                if abs(value) >= WIN:
                    break
                col, value = self.root(current, mask, moves, depth)
                self.depth = depth
                if on_depth is not None:
                    on_depth(depth, col, value)
        except Timeout:
            pass
        finally:
            self.deadline = float("inf")
        return col
