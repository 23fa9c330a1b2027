"""``NativeSolver``: the solver's search compiled from C (``native/solver.c``), the compiled ``engine.Engine``.

``library()`` loads it with ``connectx_forge.runtime.load_native`` (embedded
in a submission, built or prebuilt in the source tree) and returns None where
it cannot be loaded (another architecture, no writable place,
``CXFORGE_NATIVE=off``); ``chooser.engine()`` then makes the pure-Python
``Solver``, which returns the same scores and best moves.  The C search is the Python one line
for line (same pruning, move order, book hook and null-window driver); only
its transposition table differs (a fixed array that always replaces).
"""

from __future__ import annotations

import ctypes
import time

from agents.board import Board, BoardError
from agents.solver.book import Book
from agents.solver.engine import Kind
from agents.solver.search import Timeout
from connectx_forge.runtime import load_native

ABORTED = -1000
INCONSISTENT = -2000
DEFAULT_ENTRIES = 10000019  # a prime far from a power of two (5 bytes each, 50 MB): structured keys spread evenly
DEEP_ENTRIES = 524309  # the deep table's slots (solver.c's DEEP_ENTRIES, 2.6 MB), beside the large table
DEEP_MOVES = 22  # positions of this many stones or more go to the deep table (solver.c's DEEP_MOVES)
MIN_ENTRIES = (1 << 17) + 1  # an odd size above 2**17: a slot and a key's low 32 bits then name one key


class NativeTimeout(Timeout):
    """The compiled search passed its deadline (a ``Timeout``, as the Python solver raises)."""


_LIB: ctypes.CDLL | None = None
_TRIED = False


def library() -> ctypes.CDLL | None:
    """The loaded library with its functions typed, or None (loaded once per process)."""
    global _LIB, _TRIED
    if not _TRIED:
        _TRIED = True
        loaded = load_native("solver")  # a ctypes.CDLL, or None
        lib = loaded if isinstance(loaded, ctypes.CDLL) else None
        if lib is not None:
            u64, i32, i64, dbl, ptr = ctypes.c_uint64, ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
            lib.cx_new.argtypes, lib.cx_new.restype = [u64], ptr
            lib.cx_free.argtypes = [ptr]
            lib.cx_reset.argtypes = [ptr]
            lib.cx_nodes.argtypes, lib.cx_nodes.restype = [ptr], u64
            lib.cx_set_book.argtypes = [ptr, ptr, ptr, i64, i32]
            lib.cx_solve.argtypes = [ptr, u64, u64, i32, i32, dbl]
            lib.cx_negamax.argtypes = [ptr, u64, u64, i32, i32, i32, dbl]
            lib.cx_best_move.argtypes = [ptr, u64, u64, i32, i32, dbl, ctypes.POINTER(i32)]
        _LIB = lib
    return _LIB


def native_solver(book: Book | None = None, entries: int = DEFAULT_ENTRIES) -> NativeSolver | None:
    """A compiled solver with ``book``, or None where the library cannot be loaded or the table allocated
    (``chooser.engine("c", ...)`` says why instead)."""
    lib = library()
    if lib is None:
        return None
    try:
        return NativeSolver(lib, book, entries)
    except MemoryError:
        return None


class NativeSolver:
    """The compiled solver, with ``Solver``'s API for 6x7 boards (an ``engine.Engine``).

    A call's ``deadline`` (a ``time.perf_counter`` value, as on ``Solver``)
    makes its search raise ``NativeTimeout`` once passed (without one, it has
    no time limit).  The table persists across
    calls; ``reset`` clears it and the node count.  ``nodes`` counts negamax
    calls.
    """

    kind = Kind.C

    def __init__(self, lib: ctypes.CDLL, book: Book | None = None, entries: int = DEFAULT_ENTRIES) -> None:
        if entries % 2 == 0 or entries < MIN_ENTRIES:
            raise ValueError(f"the table needs an odd number of entries above 2**17 (a prime is best), not {entries}")
        self.lib = lib
        self.handle = lib.cx_new(entries)
        if not self.handle:
            raise MemoryError(f"cannot allocate a table of {entries} entries")
        self.book = book
        if book is not None and len(book):  # the book's arrays stay alive with it (self.book)
            lib.cx_set_book(self.handle, book.keys.buffer_info()[0], book.scores.buffer_info()[0], len(book),
                            book.max_moves)

    def __del__(self) -> None:
        handle, self.handle = getattr(self, "handle", None), None
        if handle:
            self.lib.cx_free(handle)

    @property
    def nodes(self) -> int:
        return int(self.lib.cx_nodes(self.handle))

    def reset(self) -> None:
        """Forget the table and the node count (as ``Solver.reset``)."""
        self.lib.cx_reset(self.handle)

    def _limit(self, deadline: float | None) -> float:
        """Seconds left before ``deadline`` (None: no limit; the C side takes a duration)."""
        return 1e9 if deadline is None or deadline == float("inf") else max(0.0, deadline - time.perf_counter())

    @staticmethod
    def plays(board: Board) -> bool:
        """Whether the compiled search plays ``board``: 6x7, four in a row."""
        return (board.rows, board.columns, board.inarow) == (6, 7, 4)

    @staticmethod
    def _check(board: Board) -> None:
        if not NativeSolver.plays(board):
            size = f"{board.rows}x{board.columns}x{board.inarow}"
            raise BoardError(f"the compiled solver plays 6x7 four in a row, not {size}")
        if board.winner() is not None:
            raise BoardError("the game is already won; there is nothing to solve")

    @staticmethod
    def _done(score: int) -> int:
        if score == ABORTED:
            raise NativeTimeout
        if score == INCONSISTENT:
            raise AssertionError("no move reaches the solved score")  # the search is inconsistent
        return score

    def solve(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> int:
        """The exact score of ``board`` for the side to move; with ``weak``, only its sign."""
        self._check(board)
        return self._done(self.lib.cx_solve(self.handle, board.current, board.mask, board.moves, int(weak),
                                            self._limit(deadline)))

    def negamax(self, board: Board, alpha: int, beta: int, *, deadline: float | None = None) -> int:
        """One window search (the side to move must not be able to win at once), as ``Solver.negamax``."""
        self._check(board)
        return self._done(self.lib.cx_negamax(self.handle, board.current, board.mask, board.moves, alpha, beta,
                                              self._limit(deadline)))

    def analyze(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> list[int | None]:
        """The score of each column for the side to move (``None`` for a full column)."""
        self._check(board)
        scores: list[int | None] = []
        for col in range(board.columns):
            if not board.can_play(col):
                scores.append(None)
            elif board.is_winning_move(col):
                scores.append(1 if weak else (43 - board.moves) // 2)
            elif board.moves + 1 >= 42:
                scores.append(0)
            else:
                scores.append(-self.solve(board.play(col), weak, deadline=deadline))
        return scores

    def best_move(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> tuple[int, int]:
        """``(column, score)`` as ``Solver.best_move`` picks them."""
        self._check(board)
        if board.moves >= 42:
            raise BoardError("the board is full; there is no move to play")
        column = ctypes.c_int(-1)
        score = self._done(self.lib.cx_best_move(self.handle, board.current, board.mask, board.moves, int(weak),
                                                 self._limit(deadline), ctypes.byref(column)))
        return column.value, score
