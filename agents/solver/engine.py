"""One solver engine interface: ``Engine``, the protocol both engines implement, and ``Kind``, which one runs.

Two engines run the same search (same pruning, move order, book hook and
null-window driver) and return the same scores and best moves:

* ``Kind.C``: ``native.NativeSolver``, the search compiled from
  ``native/solver.c`` (6x7 four in a row; 20 to 30 times faster), where its
  library loads (embedded in a submission, prebuilt or built in the source
  tree; not with ``CXFORGE_NATIVE=off``);
* ``Kind.PYTHON``: ``search.Solver``, the pure-Python search (any board of
  four in a row up to 120 cells), which always works.

Callers ask ``chooser.engine(kind)`` for one and use it through ``Engine``
only: a time limit is the ``deadline`` argument of each call (a
``time.perf_counter`` value; past it the call raises ``search.Timeout``), never
an attribute set from outside.  Both engines import this module and nothing
above them; the chooser imports both.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from agents.board import Board

KINDS = ("auto", "c", "python")  # what ``chooser.engine()`` and the tools' ``--engine`` take: auto or a Kind


class Kind(StrEnum):
    """Which search an engine runs (a ``str``: ``Kind.C == "c"``, as the tools' JSON and flags spell it)."""

    C = "c"
    PYTHON = "python"


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
