"""``CSolver``: the solver compiled from C, for offline work (opening book, labels).

``solver.c`` is a line-for-line twin of ``agents/solver/search.py`` on the 6x7
board (same pruning, move order and null-window driver), about 20-30 times
faster.  It is compiled on first use with the system's C compiler into
``~/.cache/cxforge/csolver/`` and loaded with ``ctypes``.  It is never bundled: the
submission's solver stays pure Python.  ``available()`` says whether a
compiler is there; the tests compare both solvers on Pons' positions.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from agents.board import Board, BoardError
from agents.solver.search import Timeout
from connectx_forge.tools import paths
from connectx_forge.tools.errors import UserError

SOURCE = Path(__file__).with_name("solver.c")
CACHE = paths.CACHE / "csolver"
ABORTED = -1000
DEFAULT_ENTRIES = 8388593  # a prime near 2**23 (about 85 MB): keys spread evenly


class SolverTimeout(Timeout):
    """The compiled search passed its deadline (a ``Timeout``, as the Python solver raises)."""


def compiler() -> str | None:
    """The C compiler to use (``$CC``, else cc, gcc or clang), or None."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def available() -> bool:
    return compiler() is not None


def library_path() -> Path:
    """The shared library for the current source, compiled if it is not there yet."""
    source = SOURCE.read_bytes()
    out = CACHE / f"solver-{hashlib.sha256(source).hexdigest()[:12]}.so"
    if out.exists():
        return out
    cc = compiler()
    if cc is None:
        raise UserError("the compiled solver needs a C compiler (cc, gcc or clang, or $CC); none was found. "
                        "Use --engine python instead")
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    cmd = [cc, "-O3", "-march=native", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 and "-march=native" in cmd:  # some compilers lack it
        cmd.remove("-march=native")
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"compiling {SOURCE} failed:\n{done.stderr.strip()}")
    tmp.replace(out)
    return out


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library_path()))
    u64, i32, dbl = ctypes.c_uint64, ctypes.c_int, ctypes.c_double
    lib.cx_init.argtypes = [u64]
    lib.cx_nodes.restype = u64
    lib.cx_solve.argtypes = [u64, u64, i32, i32, dbl]
    lib.cx_negamax.argtypes = [u64, u64, i32, i32, i32, dbl]
    lib.cx_best_move.argtypes = [u64, u64, i32, i32, dbl, ctypes.POINTER(i32)]
    return lib


_LIB: ctypes.CDLL | None = None


class CSolver:
    """The compiled solver, with ``Solver``'s API for 6x7 boards (one per process).

    ``deadline`` (a ``time.perf_counter`` value, as on ``Solver``) makes a
    search raise ``SolverTimeout`` once passed.  The table persists across
    calls; ``reset`` clears it.  ``nodes`` counts negamax calls since this
    object was made or last reset.
    """

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        global _LIB
        if _LIB is None:
            _LIB = _load()
        self.lib = _LIB
        if self.lib.cx_init(entries) != 0:
            raise MemoryError(f"cannot allocate a table of {entries} entries")
        self.deadline = float("inf")
        self._base = self.lib.cx_nodes()

    @property
    def nodes(self) -> int:
        return self.lib.cx_nodes() - self._base

    def reset(self) -> None:
        """Forget the table and the node count (as ``Solver.reset``)."""
        self.lib.cx_reset()
        self._base = self.lib.cx_nodes()

    def _limit(self) -> float:
        """Seconds left before ``deadline`` (the C side takes a duration)."""
        return 1e9 if self.deadline == float("inf") else max(0.0, self.deadline - time.perf_counter())

    @staticmethod
    def _check(board: Board) -> None:
        if (board.rows, board.columns, board.inarow) != (6, 7, 4):
            size = f"{board.rows}x{board.columns}x{board.inarow}"
            raise BoardError(f"the compiled solver plays 6x7 four in a row, not {size}")
        if board.winner() is not None:
            raise BoardError("the game is already won; there is nothing to solve")

    def solve(self, board: Board, weak: bool = False) -> int:
        self._check(board)
        score = self.lib.cx_solve(board.current, board.mask, board.moves, int(weak), self._limit())
        if score == ABORTED:
            raise SolverTimeout
        return score

    def analyze(self, board: Board, weak: bool = False) -> list[int | None]:
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
                scores.append(-self.solve(board.play(col), weak))
        return scores

    def best_move(self, board: Board, weak: bool = False) -> tuple[int, int]:
        """``(column, score)`` as ``Solver.best_move`` picks them."""
        self._check(board)
        if board.moves >= 42:
            raise BoardError("the board is full; there is no move to play")
        column = ctypes.c_int(-1)
        score = self.lib.cx_best_move(board.current, board.mask, board.moves, int(weak), self._limit(),
                                      ctypes.byref(column))
        if score == ABORTED:
            raise SolverTimeout
        if score == -2000:
            raise AssertionError("no move reaches the solved score")
        return column.value, score
