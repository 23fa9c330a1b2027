"""The solver engines as the tools (book, labels, mistakes, review) use them: the agent's C engine and Python solver.

``agents/solver/native/solver.c`` is one source for the ``solver`` agent and
for these tools: ``CSolver`` is ``agents.solver.native.NativeSolver`` with a
larger table and no book, loaded the way the agent loads it in the source tree
(the committed prebuilt library while it matches the source, else compiled with
the pinned toolchain of the ``native`` extra).  ``available()`` says whether it
loads; ``require()`` says in one line why not.

``engine(kind)`` is ``agents.solver.chooser.engine`` for the tools: their
larger compiled table, no load line on stderr, and a ``UserError`` (one line)
for an unknown kind or a compiled engine that cannot be made; ``resolve(kind)``
says which kind ``auto`` means here, and checks that a ``c`` asked for loads.
"""

from __future__ import annotations

import ctypes

from agents.solver import chooser
from agents.solver.book import Book
from agents.solver.chooser import EngineError
from agents.solver.engine import Engine, Kind
from agents.solver.native import NativeSolver, NativeTimeout, library
from connectx_forge import runtime
from connectx_forge.errors import UserError

DEFAULT_ENTRIES = 20000003  # a prime far from a power of two (5 bytes each, 100 MB): structured keys spread evenly
SolverTimeout = NativeTimeout
__all__ = ["CSolver", "DEFAULT_ENTRIES", "SolverTimeout", "available", "engine", "require", "resolve", "why_not"]


def _library() -> ctypes.CDLL | None:
    runtime.ANNOUNCE = False  # a tool names its engine itself; only agents log the line
    lib: ctypes.CDLL | None = library()
    return lib


def available() -> bool:
    """Whether the compiled solver loads in this process."""
    return _library() is not None


def why_not() -> str:
    """Why the compiled solver does not load (after ``available()`` said so)."""
    return f"it cannot be loaded here ({runtime.native_note('solver')})"


def resolve(kind: str = "auto", check: bool = True) -> Kind:
    """The engine ``engine(kind)`` makes here (``auto``: C where it loads); ``UserError`` for an unknown kind, or
    (with ``check``) for ``c`` where the compiled solver does not load: one line before any work, not one per
    worker."""
    _library()
    try:
        chosen = chooser.resolve(kind)
    except EngineError as exc:
        raise UserError(str(exc)) from None
    if check and not chooser.available(chosen):
        require()
    return chosen


def engine(kind: str = "auto", *, book: Book | None = None, c_entries: int = DEFAULT_ENTRIES,
           py_entries: int | None = None) -> Engine:
    """``agents.solver.chooser.engine`` with the tools' table (100 MB compiled); ``UserError``s as ``resolve``."""
    try:
        return chooser.engine(resolve(kind), book=book, c_entries=c_entries, py_entries=py_entries)
    except EngineError as exc:
        raise UserError(f"{exc}; use --engine python") from None


def require() -> ctypes.CDLL:
    """The loaded library, or ``UserError`` saying why it cannot be loaded and what to do."""
    lib = _library()
    if lib is None:
        raise UserError(f"the compiled solver: {why_not()}; use --engine python")
    return lib


class CSolver(NativeSolver):
    """The compiled solver for the tools: ``Solver``'s API on 6x7, its own table, no book unless given."""

    def __init__(self, entries: int = DEFAULT_ENTRIES, book: Book | None = None) -> None:
        super().__init__(require(), book, entries)
