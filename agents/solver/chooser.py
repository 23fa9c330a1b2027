"""``engine()``: the one place that picks the solver's engine, C where its library loads, else Python.

``kind`` is ``"auto"`` (the compiled ``native.NativeSolver`` where its library
loads and its table can be allocated, else the pure-Python ``search.Solver``),
``"c"`` (an ``EngineError`` saying why where it cannot be made) or
``"python"``; anything else is an ``EngineError`` naming the choices.  Callers
use what it makes through ``engine.Engine`` only.  It sits above both engines
and the interface they share, so neither engine imports it.
"""

from __future__ import annotations

from agents.solver import native
from agents.solver.book import Book
from agents.solver.engine import KINDS, Engine, Kind
from agents.solver.search import Solver
from agents.solver.transposition import TranspositionTable
from connectx_forge.runtime import native_note


class EngineError(ValueError):
    """An unknown engine kind, or the compiled engine asked for where it cannot be made (the message says why)."""


def _parse(kind: str) -> Kind | None:
    """``kind`` as a ``Kind``, None for ``auto``; ``EngineError`` for anything else."""
    if kind == "auto":
        return None
    try:
        return Kind(kind)
    except ValueError:
        raise EngineError(f"unknown solver engine {kind!r}: choose {', '.join(KINDS)}") from None


def available(kind: str = Kind.C) -> bool:
    """Whether ``engine(kind)`` can be made here (only the compiled engine may not load)."""
    return _parse(kind) is not Kind.C or native.library() is not None


def why_not() -> str:
    """Why the compiled engine does not load (after ``available()`` said so)."""
    return f"the compiled solver cannot be loaded here ({native_note('solver')})"


def describe(kind: str) -> str:
    """The engine ``kind`` names (auto resolved), in words: ``C engine`` or ``Python solver``."""
    return {Kind.C: "C engine", Kind.PYTHON: "Python solver"}[resolve(kind)]


def resolve(kind: str = "auto") -> Kind:
    """The ``Kind`` that ``engine(kind)`` makes: ``auto`` is C where its library loads, else Python.

    Loads nothing for ``c`` or ``python`` (``available`` says whether C loads).
    """
    chosen = _parse(kind)
    if chosen is None:
        return Kind.C if available(Kind.C) else Kind.PYTHON
    return chosen


def engine(kind: str = "auto", *, book: Book | None = None, c_entries: int | None = None,
           py_entries: int | None = None) -> Engine:
    """A solver engine of ``kind`` (``auto``, ``c`` or ``python``) that reads ``book``'s scores.

    ``c_entries`` sizes the compiled table (an odd number above 2**17, default
    ``native.DEFAULT_ENTRIES``, 50 MB), ``py_entries`` the Python one (default
    ``TranspositionTable``'s).  ``EngineError``: an unknown kind, or ``c`` where
    it cannot be made.
    """
    chosen = _parse(kind)
    if chosen is not Kind.PYTHON:
        lib = native.library()
        if lib is not None:
            try:
                return native.NativeSolver(lib, book, native.DEFAULT_ENTRIES if c_entries is None else c_entries)
            except MemoryError as exc:
                if chosen is Kind.C:
                    raise EngineError(f"the compiled solver cannot allocate its table ({exc})") from None
        elif chosen is Kind.C:
            raise EngineError(why_not())
    return Solver(table=TranspositionTable() if py_entries is None else TranspositionTable(py_entries), book=book)
