"""Exact values of positions for the review: the rules, the opening book, then the solver within a time limit.

A value is the side to move's: ``wdl`` (1 win, 0 draw, -1 loss) and, where
known, Pons' exact ``score`` (a win's score is 22 minus the winner's stones at
the win on 6x7; a loss the negative of the opponent's; a draw 0).  Each comes
from the cheapest place that knows it:

1. the rules: a move that makes a line wins now; a move that fills the board
   draws;
2. the opening book (``agents/solver/book.py``, 6x7 four in a row): exact
   scores of the early positions of the solver's own game tree;
3. the solver: weak (win/draw/loss) first, then exact, with one deadline per
   position (``time_limit``), the compiled solver (``tools/connectx_forge/tool_engines``, the agent's C engine)
   where it loads, else the pure-Python solver; both also read the book's
   scores inside their search.

A value the deadline cut short stays unknown (``None``): never guessed.  With a
``LabelCache`` (``label_cache.py``), a position the solver labelled before is
taken from it, and each one it labels now is kept in it: a second review of the
same games solves nothing again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from agents.board import STANDARD, Board
from agents.solver.book import Book
from agents.solver.engine import Engine
from agents.solver.search import Solver, Timeout
from agents.solver.search import score_class as sign
from connectx_forge import tool_engines
from connectx_forge.errors import UserError

DEFAULT_TIME_LIMIT = 2.0  # seconds of solving per position (all its moves together)


@dataclass
class Value:
    """A position's value for the side to move; ``None`` parts are unknown."""

    wdl: int | None = None
    score: int | None = None
    source: str = ""  # "rules", "book" or "solver"

    def negated(self) -> Value:
        """The same position seen by the other side."""
        return Value(None if self.wdl is None else -self.wdl, None if self.score is None else -self.score,
                     self.source)

    @classmethod
    def exact(cls, score: int, source: str) -> Value:
        return cls(sign(score), score, source)


@dataclass
class PositionValues:
    """The values of a position before a move (``before``) and of each legal move (``moves``), all the mover's.

    ``book_move``: the book's best column, where the book holds the position; ``solve_s``: the time it took.
    """

    before: Value
    moves: dict[int, Value]
    book_move: int | None = None
    solve_s: float = 0.0
    timed_out: bool = False  # the deadline cut a solve short

    def best(self) -> list[int]:
        """The moves known to keep the position's value: its exact score where known, else its class."""
        if self.before.score is not None:
            found = [c for c, v in self.moves.items() if v.score == self.before.score]
        elif self.before.wdl is not None:
            found = [c for c, v in self.moves.items() if v.wdl == self.before.wdl]
        else:
            found = []
        return sorted(found)

    def unknown(self) -> list[int]:
        """Moves whose class is not known."""
        return sorted(c for c, v in self.moves.items() if v.wdl is None)


class Kept(Protocol):
    """Where positions labelled before are kept (``label_cache.LabelCache``)."""

    def get(self, board: Board, engine: str, time_limit: float) -> PositionValues | None: ...

    def keep(self, board: Board, position: PositionValues, engine: str, time_limit: float) -> None: ...


class Labeller:
    """Values of positions, each within ``time_limit`` seconds of solving (see the module's docstring).

    ``engine``: ``c`` (the C engine; a ``UserError`` where it cannot be loaded),
    ``python``, or ``auto`` (the C engine where it loads), as
    ``agents.solver.chooser.engine`` makes them; both read the book.  The C
    engine plays 6x7 only; other sizes with four in a row use the Python
    solver, and other rows of four are labelled by the rules alone.
    """

    def __init__(self, engine: str = "auto", time_limit: float = DEFAULT_TIME_LIMIT, book: Book | None = None,
                 cache: Kept | None = None) -> None:
        if not time_limit > 0:
            raise UserError(f"the time limit must be positive, got {time_limit}")
        self.time_limit = time_limit
        self.book = Book.load() if book is None else book
        self.engine = engine
        main = tool_engines.engine(engine, book=self.book)  # an unknown or unloadable engine: one clear line
        self._engines: tuple[Engine, ...] = (main, Solver(book=self.book))  # the first that plays a board solves it
        self.engine_used = str(main.kind)
        self.cache = cache
        self.solves = 0  # calls of the solver so far (a cached position makes none)

    def _solver(self, board: Board) -> Engine | None:
        return next((e for e in self._engines if e.plays(board)), None)

    def _book(self, board: Board) -> tuple[int, int | None] | None:
        if (board.rows, board.columns, board.inarow) != STANDARD or board.moves > self.book.max_moves:
            return None
        return self.book.lookup(board.current, board.mask)

    def position(self, board: Board, played: int | None = None) -> PositionValues:
        """The values before a move on ``board`` and of every legal move, ``played`` solved before the others;
        from the cache where it holds them, and kept there when the solver labelled them now."""
        if self.cache is not None:
            kept = self.cache.get(board, self.engine_used, self.time_limit)
            if kept is not None:
                return kept
        solves = self.solves
        start = time.perf_counter()
        deadline = start + self.time_limit
        size = board.rows * board.columns
        moves: dict[int, Value] = {}
        pending: list[tuple[int, Board]] = []  # (column, position after it) still to solve
        for col in board.legal_moves():
            if board.is_winning_move(col):
                moves[col] = Value.exact((size + 1 - board.moves) // 2, "rules")
                continue
            child = board.play(col)
            if child.is_full():
                moves[col] = Value.exact(0, "rules")
                continue
            found = self._book(child)
            if found is not None:
                moves[col] = Value.exact(-found[0], "book")
            else:
                moves[col] = Value()
                pending.append((col, child))
        before = Value()
        book_move = None
        found = self._book(board)
        if found is not None:
            before, book_move = Value.exact(found[0], "book"), found[1]
        elif any(v.source == "rules" and v.wdl == 1 for v in moves.values()):
            before = Value.exact((size + 1 - board.moves) // 2, "rules")
        pending.sort(key=lambda item: item[0] != played)  # the played move first
        result = PositionValues(before, moves, book_move)
        solver = self._solver(board)
        if solver is not None:
            self._solve_all(solver, board, pending, result, deadline)
        self._derive(result)
        result.solve_s = time.perf_counter() - start
        if self.cache is not None and (self.solves > solves or result.timed_out):
            self.cache.keep(board, result, self.engine_used, self.time_limit)
        return result

    def _solve_all(self, solver: Engine, board: Board, pending: list[tuple[int, Board]], result: PositionValues,
                   deadline: float) -> None:
        """Weak values first (the position, then each move), then exact ones, until ``deadline``."""
        moves = result.moves
        for weak in (True, False):
            self._derive(result)
            if result.before.wdl is None or (not weak and result.before.score is None):
                found = self._solve(solver, board, weak, deadline, result)
                if found is not None:
                    result.before = found
            for col, child in pending:
                if moves[col].wdl is None or (not weak and moves[col].score is None):
                    found = self._solve(solver, child, weak, deadline, result)
                    if found is not None:
                        moves[col] = found.negated()

    def _solve(self, solver: Engine, board: Board, weak: bool, deadline: float, result: PositionValues) -> Value | None:
        """``board``'s value for its side to move, or None (and ``result.timed_out``) past ``deadline``."""
        if time.perf_counter() >= deadline:
            result.timed_out = True
            return None
        self.solves += 1
        try:
            score = solver.solve(board, weak=weak, deadline=deadline)
        except Timeout:
            result.timed_out = True
            return None
        return Value(sign(score), None, "solver") if weak else Value.exact(score, "solver")

    @staticmethod
    def _derive(result: PositionValues) -> None:
        """What the known values imply: the book's move has the position's value, and the position has its
        best move's value (where every move is known, or one wins)."""
        column = result.book_move
        if column is not None and column in result.moves and result.moves[column].score is None \
                and result.before.score is not None:
            result.moves[column] = Value.exact(result.before.score, "book")
        values = list(result.moves.values())
        if not values:
            return
        if result.before.wdl is None:
            if any(v.wdl == 1 for v in values) or all(v.wdl is not None for v in values):
                result.before = Value(max(v.wdl for v in values if v.wdl is not None), None, "solver")
        if result.before.score is None and all(v.score is not None for v in values):
            best = max(v.score for v in values if v.score is not None)
            result.before = Value.exact(best, result.before.source or "solver")
