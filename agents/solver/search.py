"""``Solver``: the exact score of a four-in-a-row position, by negamax with alpha-beta.

Scores follow Pons' benchmark, for the side to move: a win scores
``(cells + 1 - stones_played_at_the_win_by_both) // 2`` (22 minus the winner's
stones on 6x7), a draw 0, a loss the negative of the opponent's win.

The search (ideas from Pons' tutorial, our own code):

* negamax with alpha-beta, the window clamped to the scores still reachable;
* moves that lose at once are never searched: a forced block is the only move,
  two opponent threats lose, and a move under an opponent's threat cell is out;
* move order: most threats created first, centre first on ties;
* a transposition table of upper and lower bounds; at nodes far from the end
  a child's upper bound there cuts before any child is searched (an enhanced
  transposition cutoff);
* ``solve`` narrows the score with null-window searches (a binary search
  biased towards 0), ``weak=True`` only tells win, draw or loss.

The hot loop works on raw ints and inlines the game core's ``winning_cells``
and ``non_losing_moves`` (``agents.board``) and ``move_sorter.ordered_moves``;
those modules hold the readable versions (the comment at ``threat_cells`` gives
the measured gain).
To order the moves it computes every child's threat cells in one pass: child
``i``'s stones sit in lane ``i`` of one wide int, the lanes far enough apart
that no shift carries a bit from one lane into another's board bits (one pass
over a wide int costs far less than seven passes in CPython).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from agents.board import Board, BoardError, can_win_next, non_losing_moves, playable_cells, winning_cells
from agents.solver.engine import Kind
from agents.solver.move_sorter import move_column, ordered_moves
from agents.solver.position import Layout, layout_of
from agents.solver.transposition import LOWER, LOWER_MIN, TranspositionTable


class OpeningBook(Protocol):
    """What the search needs of an opening book (``agents.solver.book.Book`` is one)."""

    max_moves: int  # no entry has more stones than this

    def score(self, current: int, mask: int) -> int | None: ...


def score_class(score: int) -> int:
    """Win (1), draw (0) or loss (-1): the class of an exact (or weak) score."""
    return (score > 0) - (score < 0)


# The enhanced transposition cutoff runs at nodes with more empty cells than this (fewer than 22 stones on 6x7:
# solver.c's DEEP_MOVES, the positions of its large table), where a subtree saved outweighs the children's lookups.
ETC_EMPTIES = 20


class Timeout(Exception):
    """The search passed its deadline; the transposition table stays valid."""


def _half_toward_zero(x: int) -> int:
    return -((-x) // 2) if x < 0 else x // 2


class Solver:
    """An exact solver for four in a row (any board of up to 120 cells; built for 6x7): the pure-Python
    ``engine.Engine``.

    ``nodes`` counts negamax calls (``reset`` zeroes it).  A call's ``deadline``
    (a ``time.perf_counter`` value) makes its search raise ``Timeout`` once passed;
    without one it has no time limit.  The table persists across calls; ``reset`` clears it.
    """

    kind = Kind.PYTHON

    def __init__(self, table: TranspositionTable | None = None, book: OpeningBook | None = None) -> None:
        self.table = table if table is not None else TranspositionTable()
        self.book = book
        self.nodes = 0
        self._deadline = float("inf")  # the running call's deadline, read by the search's clock checks
        self._searches: dict[Layout, Callable[..., int]] = {}

    def reset(self) -> None:
        """Forget the transposition table and the node count."""
        self.table.reset()
        self.nodes = 0

    # -- public API ------------------------------------------------------------
    @staticmethod
    def plays(board: Board) -> bool:
        """Whether this solver searches ``board``: four in a row, up to 120 cells."""
        return board.inarow == 4 and board.rows * board.columns <= 120

    def solve(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> int:
        """The exact score of ``board`` for the side to move; with ``weak``, only its sign."""
        lay = self._check(board)
        with self._until(deadline):
            return self._solve(lay, board.current, board.mask, board.moves, weak)

    def analyze(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> list[int | None]:
        """The score of each column for the side to move (``None`` for a full column)."""
        lay = self._check(board)
        with self._until(deadline):
            return self._analyze(lay, board, weak)

    def _analyze(self, lay: Layout, board: Board, weak: bool) -> list[int | None]:
        scores: list[int | None] = []
        for col in range(board.columns):
            if not board.can_play(col):
                scores.append(None)
            elif board.is_winning_move(col):
                win = (lay.size + 1 - board.moves) // 2
                scores.append(1 if weak else win)
            else:
                child = board.play(col)
                scores.append(-self._solve(lay, child.current, child.mask, child.moves, weak))
        return scores

    def best_move(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> tuple[int, int]:
        """``(column, score)``: a move that reaches the position's score, and that score.

        Exact mode picks the fastest win or the slowest loss.  Weak mode keeps
        the win/draw/loss class (score -1, 0 or 1); when every move loses, it
        picks the first move in search order.  Ties go to the search order
        (threats created, then centre first).
        """
        lay = self._check(board)
        if board.moves >= lay.size:
            raise BoardError("the board is full; there is no move to play")
        with self._until(deadline):
            return self._best_move(lay, board, weak)

    def _best_move(self, lay: Layout, board: Board, weak: bool) -> tuple[int, int]:
        cur, mask, moves = board.current, board.mask, board.moves
        wins = [c for c in lay.order if board.can_play(c) and board.is_winning_move(c)]
        if wins:
            return wins[0], 1 if weak else (lay.size + 1 - moves) // 2
        geo = lay.geo
        candidates = non_losing_moves(cur, mask, geo)
        if not candidates:  # lost at once whatever we do: block a threat if there is one
            threats = winning_cells(cur ^ mask, mask, geo) & playable_cells(mask, geo)
            move = (threats & -threats) or ordered_moves(cur, mask, playable_cells(mask, geo), lay)[0]
            return move_column(move, lay), -1 if weak else -((lay.size - moves) // 2)
        score = self._solve(lay, cur, mask, moves, weak)
        ordered = ordered_moves(cur, mask, candidates, lay)
        if weak and score < 0:
            return move_column(ordered[0], lay), score
        search = self._search(lay)
        for move in ordered:  # the first child whose value is at most -score
            if search(cur ^ mask, mask | move, moves + 1, -score, -score + 1) <= -score:
                return move_column(move, lay), score
        raise AssertionError("no move reaches the solved score")  # the search is inconsistent

    def negamax(self, board: Board, alpha: int, beta: int, *, deadline: float | None = None) -> int:
        """One window search: the score if inside ``(alpha, beta)``, else a bound on that side.

        The side to move must not be able to win at once (``solve`` checks that).
        """
        lay = self._check(board)
        with self._until(deadline):
            return self._search(lay)(board.current, board.mask, board.moves, alpha, beta)

    # -- internals ---------------------------------------------------------------
    @contextmanager
    def _until(self, deadline: float | None) -> Iterator[None]:
        """``deadline`` holds for the call (None: no time limit)."""
        self._deadline = float("inf") if deadline is None else deadline
        try:
            yield
        finally:
            self._deadline = float("inf")

    def _check(self, board: Board) -> Layout:
        lay = layout_of(board)
        if board.inarow != 4:
            raise BoardError(f"the solver plays four in a row, not {board.inarow} in a row")
        if lay.size > 120:
            raise BoardError(f"the solver handles boards of up to 120 cells, not {lay.size}")
        if board.winner() is not None:
            raise BoardError("the game is already won; there is nothing to solve")
        return lay

    def _solve(self, lay: Layout, current: int, mask: int, moves: int, weak: bool) -> int:
        if moves >= lay.size:
            return 0
        if can_win_next(current, mask, lay.geo):
            return 1 if weak else (lay.size + 1 - moves) // 2
        lo, hi = (-1, 1) if weak else (-((lay.size - moves) // 2), (lay.size + 1 - moves) // 2)
        search = self._search(lay)
        while lo < hi:  # null-window searches, probing nearer 0 first
            med = lo + (hi - lo) // 2
            if med <= 0 and _half_toward_zero(lo) < med:
                med = _half_toward_zero(lo)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = search(current, mask, moves, med, med + 1)
            if r <= med:
                hi = r
            else:
                lo = r
        if weak:
            return (lo > 0) - (lo < 0)
        return lo

    def _search(self, lay: Layout) -> Callable[[int, int, int, int, int], int]:
        search = self._searches.get(lay)
        if search is None:
            search = self._searches[lay] = self._make_negamax(lay)
        return search

    def _make_negamax(self, lay: Layout) -> Callable[[int, int, int, int, int], int]:
        """The negamax function for one layout, with its constants bound as locals."""
        solver = self
        size = lay.size
        h = lay.geo.height
        h1, h2 = h - 1, h + 1
        bottom, full = lay.geo.bottom, lay.geo.full
        cols = tuple(enumerate(lay.column_masks))
        width = lay.geo.columns * h + 3 * h2 + 1  # a lane: the board, and room for shifts
        n = len(cols)
        lanes = tuple((n - 1 - rank, m, rank * width) for rank, m in cols)  # (tie-break, column, lane)
        repl = sum(1 << shift for _, _, shift in lanes)
        diag = sum(m << shift for _, m, shift in lanes)
        tie_bits = max(1, (n - 1).bit_length())
        tie_mask = (1 << tie_bits) - 1
        tie_masks = [0] * (1 << tie_bits)
        for tie, m, _ in lanes:
            tie_masks[tie] = m
        lane = (1 << width) - 1
        table = self.table
        entries = table.entries
        capacity = table.capacity
        book = self.book
        book_moves = book.max_moves if book is not None else -1
        clock = time.perf_counter
        etc_empties = ETC_EMPTIES
        hx2, hx3, h1x2, h1x3, h2x2, h2x3 = 2 * h, 3 * h, 2 * h1, 3 * h1, 2 * h2, 3 * h2

        # Hot-path inlines of agents.board's winning_cells (four in a row: the same formula, its shifts
        # precomputed and bound as closure constants) and, in negamax, of non_losing_moves (safe_moves there).
        # Measured on Pons' Test_L2_R1 / Test_L1_R1 (the first 200 positions each, as bench solver runs them),
        # every position solved by each variant in turn in one process, as the machine was shared: calling the
        # core's winning_cells instead costs 4.7% / 3.3% (245,484 -> 234,448 and 279,449 -> 270,581 nodes/s);
        # calling the core's safe_moves instead of the inlined rule costs 0.4% / 5.1% (314,123 -> 312,916 and
        # 359,423 -> 342,056 nodes/s).
        def threat_cells(s: int, empty: int) -> int:
            """Empty cells completing a line of ``s`` (one board, or several packed in lanes)."""
            t = (s << 1) & (s << 2) & (s << 3)
            p = (s << h) & (s << hx2)
            t |= p & ((s << hx3) | (s >> h))
            p = (s >> h) & (s >> hx2)
            t |= p & ((s << h) | (s >> hx3))
            p = (s << h1) & (s << h1x2)
            t |= p & ((s << h1x3) | (s >> h1))
            p = (s >> h1) & (s >> h1x2)
            t |= p & ((s << h1) | (s >> h1x3))
            p = (s << h2) & (s << h2x2)
            t |= p & ((s << h2x3) | (s >> h2))
            p = (s >> h2) & (s >> h2x2)
            t |= p & ((s << h2) | (s >> h2x3))
            return t & empty

        def negamax(cur: int, mask: int, moves: int, alpha: int, beta: int, t: int = -1) -> int:
            """``t``: the opponent's threat cells when the caller knows them (it ordered its moves by them)."""
            nodes = solver.nodes = solver.nodes + 1
            if not nodes & 4095 and clock() > solver._deadline:
                raise Timeout
            if t < 0:  # the opponent's threat cells (winning_cells, inlined)
                t = threat_cells(cur ^ mask, full ^ mask)
            # moves that do not lose at once (non_losing_moves, inlined)
            possible = (mask + bottom) & full
            forced = possible & t
            if forced:
                if forced & (forced - 1):
                    return -((size - moves) // 2)
                possible = forced
            possible &= ~(t >> 1)
            if not possible:
                return -((size - moves) // 2)
            if moves >= size - 2:
                return 0
            lo = -((size - 2 - moves) // 2)  # the opponent cannot win at once
            if alpha < lo:
                alpha = lo
                if alpha >= beta:
                    return alpha
            hi = (size - 1 - moves) // 2  # we cannot win at once
            key = cur + mask
            entry = entries.get(key)
            if entry is not None:
                if entry >= LOWER_MIN:
                    lo = entry - LOWER
                    if alpha < lo:
                        alpha = lo
                        if alpha >= beta:
                            return alpha
                elif entry < hi:
                    hi = entry
            if beta > hi:
                beta = hi
                if alpha >= beta:
                    return beta
            if moves <= book_moves and book is not None:  # (book_moves is -1 without a book)
                known = book.score(cur, mask)
                if known is not None:
                    return known
            if size - moves > etc_empties:  # enhanced transposition cutoff: a child's upper bound is our lower one
                rest, child_base = possible, (cur ^ mask) + mask
                while rest:
                    move = rest & -rest
                    rest ^= move
                    upper = entries.get(child_base + move)
                    if upper is not None and upper < LOWER_MIN and -upper > alpha:
                        alpha = -upper
                        if alpha >= beta:
                            return alpha
            # order the moves: threats created, then centre first (move_sorter, inlined)
            opp = cur ^ mask
            if not possible & (possible - 1):  # a single move: nothing to order
                score = -negamax(opp, mask | possible, moves + 1, -beta, -alpha)
                if score >= beta:
                    if len(entries) >= capacity:
                        table.make_room()
                    entries[key] = score + LOWER
                    return score
                if score > alpha:
                    alpha = score
                if len(entries) >= capacity:
                    table.make_room()
                entries[key] = alpha
                return alpha
            # every child's threat cells at once: child i in lane i of one wide int
            r = threat_cells(cur * repl | (possible * repl) & diag, (full ^ mask) * repl)
            child_threats = [0] * len(tie_masks)
            scored = []  # threats, then the centre-first tie-break, packed in one int
            for tie, col_mask, shift in lanes:
                if possible & col_mask:
                    cells = (r >> shift) & lane
                    child_threats[tie] = cells
                    scored.append(cells.bit_count() << tie_bits | tie)
            scored.sort(reverse=True)
            for order_key in scored:
                tie = order_key & tie_mask
                move = possible & tie_masks[tie]
                score = -negamax(opp, mask | move, moves + 1, -beta, -alpha, child_threats[tie] & ~move)
                if score >= beta:
                    if len(entries) >= capacity:
                        table.make_room()
                    entries[key] = score + LOWER
                    return score
                if score > alpha:
                    alpha = score
            if len(entries) >= capacity:
                table.make_room()
            entries[key] = alpha
            return alpha

        return negamax
