"""One solver engine interface: ``Engine``, and ``engine()``, the one place that picks C or Python.

Two engines run the same search (same pruning, move order, book hook and
null-window driver) and return the same scores and best moves:

* ``Kind.C``: ``native.NativeSolver``, the search compiled from
  ``native/solver.c`` (6x7 four in a row; 20 to 30 times faster), where its
  library loads (embedded in a submission, prebuilt or built in the source
  tree; not with ``CXFORGE_NATIVE=off``);
* ``Kind.PYTHON``: ``search.Solver``, the pure-Python search (any board of
  four in a row up to 120 cells), which always works.

Callers ask ``engine(kind)`` for one and use it through ``Engine`` only: a
time limit is the ``deadline`` argument of each call (a ``time.perf_counter``
value; past it the call raises ``search.Timeout``), never an attribute set
from outside.  ``kind`` is ``"auto"`` (C where it loads, else Python),
``"c"`` (an ``EngineError`` saying why where it does not load) or
``"python"``; anything else is an ``EngineError`` naming the choices.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from agents.board import Board

if TYPE_CHECKING:
    from agents.solver.book import Book

KINDS = ("auto", "c", "python")  # what ``engine()``, ``resolve()`` and the tools' ``--engine`` take


class Kind(StrEnum):
    """Which search an engine runs (a ``str``: ``Kind.C == "c"``, as the tools' JSON and flags spell it)."""

    C = "c"
    PYTHON = "python"


class EngineError(ValueError):
    """An unknown engine kind, or the compiled engine asked for where it cannot be made (the message says why)."""


class Engine(Protocol):
    """What every caller of the solver uses: ``search.Solver`` and ``native.NativeSolver`` both are one.

    Scores follow Pons' convention, for the side to move.  ``deadline`` None
    searches without a time limit; past a given one a call raises
    ``search.Timeout`` and the engine's table stays valid.  The table persists
    from call to call; ``reset`` clears it and ``nodes``, which counts
    negamax calls.
    """

    @property
    def kind(self) -> Kind: ...

    @property
    def nodes(self) -> int: ...

    def reset(self) -> None: ...

    def plays(self, board: Board) -> bool:
        """Whether this engine can search ``board``'s size and line length."""
        ...

    def solve(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> int:
        """The exact score of ``board``; with ``weak``, only its sign."""
        ...

    def analyze(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> list[int | None]:
        """The score of each column (None for a full one)."""
        ...

    def best_move(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> tuple[int, int]:
        """``(column, score)``: the fastest win or slowest loss (weak: a move that keeps the class)."""
        ...

    def negamax(self, board: Board, alpha: int, beta: int, *, deadline: float | None = None) -> int:
        """One window search (the side to move must not be able to win at once)."""
        ...


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
    from agents.solver.native import library

    return _parse(kind) is not Kind.C or library() is not None


def why_not() -> str:
    """Why the compiled engine does not load (after ``available()`` said so)."""
    from connectx_forge.runtime import native_note

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

    ``auto`` gives the compiled engine where its library loads and its table can
    be allocated, else the pure-Python one.  ``c_entries`` sizes the compiled
    table (an odd number above 2**17, default ``native.DEFAULT_ENTRIES``, 50 MB),
    ``py_entries`` the Python one (default ``TranspositionTable``'s).
    ``EngineError``: an unknown kind, or ``c`` where it cannot be made.
    """
    from agents.solver.native import DEFAULT_ENTRIES, NativeSolver, library
    from agents.solver.search import Solver
    from agents.solver.transposition import TranspositionTable

    chosen = _parse(kind)
    if chosen is not Kind.PYTHON:
        lib = library()
        if lib is not None:
            try:
                return NativeSolver(lib, book, DEFAULT_ENTRIES if c_entries is None else c_entries)
            except MemoryError as exc:
                if chosen is Kind.C:
                    raise EngineError(f"the compiled solver cannot allocate its table ({exc})") from None
        elif chosen is Kind.C:
            raise EngineError(why_not())
    return Solver(table=TranspositionTable() if py_entries is None else TranspositionTable(py_entries), book=book)
