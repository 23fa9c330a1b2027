"""The practical tie-break: among moves of equal game-theoretic value, the one that gives an imperfect opponent
the most ways to go wrong.

Every perfect agent wins going first; what separates them is the second seat
against opponents that make mistakes.  Once the agent knows the position's
exact score and the move it would play (``today``: the fastest win or slowest
loss, ties in search order, centre first), ``practical_move`` looks at the
other moves of the SAME exact score (never a worse one) and, one ply deeper,
at the opponent's replies to each:

* a lost position (score < 0): among the slowest losses, the move after which
  the most replies throw the opponent's win (replies whose value for the
  opponent is a draw or a loss);
* a drawn position (score 0): the move after which the most replies lose for
  the opponent;
* a won position (score > 0): today's fastest win, which stays won.

Ties between those counts keep ``today``'s move, then search order.  The
reply values come from weak solves (win/draw/loss) on the engine, which reads
the opening book where it holds a position.  Everything runs before
``deadline``: a ``search.Timeout`` anywhere gives ``today`` back, so the rule
never costs a move its time.  Standard library and the ``Engine`` protocol
only: the module is embedded in submissions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from enum import StrEnum

from agents.board import Board
from agents.solver.engine import Engine
from agents.solver.search import Timeout


class TieBreak(StrEnum):
    """How the ``solver`` agent picks among moves of equal value (``Policy.tie_break``)."""

    PRACTICAL = "practical"  # the most chances for the opponent to go wrong (this module), then CENTRE
    CENTRE = "centre"  # the engine's search order: threats created, then centre first (the agent before the rule)

    @classmethod
    def named(cls, name: str) -> TieBreak:
        """The tie-break called ``name``; a ``ValueError`` naming the choices for any other."""
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"unknown solver tie-break {name!r}: choose {', '.join(t.value for t in cls)}") from None


def _check(deadline: float) -> None:
    """``Timeout`` once ``deadline`` has passed (a quick search may end without looking at the clock)."""
    if time.perf_counter() >= deadline:
        raise Timeout


def child_value(solver: Engine, child: Board, target: int, deadline: float) -> bool:
    """Whether ``child`` (the opponent to move, after our move) is worth exactly ``target`` to the opponent,
    given that it is worth at least ``target`` (``target`` is minus the best score of the parent)."""
    size = child.rows * child.columns
    _check(deadline)
    if child.winning_moves():
        return target == (size + 1 - child.moves) // 2
    if child.moves >= size:
        return target == 0
    return solver.negamax(child, target, target + 1, deadline=deadline) <= target


def equal_moves(solver: Engine, board: Board, today: int, score: int, order: Sequence[int],
                deadline: float) -> list[int]:
    """The moves of ``board`` whose exact score is ``score`` (the position's), in ``order``; ``today`` is one."""
    return [c for c in order if board.can_play(c)
            and (c == today or child_value(solver, board.play(c), -score, deadline))]


def thrown(solver: Engine, child: Board, score: int, deadline: float) -> int:
    """How many of the opponent's replies in ``child`` change the result in our favour: for a lost parent
    (``score`` < 0), replies that are not a win for the opponent; for a drawn one, replies that lose for it."""
    _check(deadline)
    values = solver.analyze(child, weak=True, deadline=deadline)
    if score < 0:
        return sum(1 for v in values if v is not None and v <= 0)
    return sum(1 for v in values if v is not None and v < 0)


def practical_move(solver: Engine, board: Board, today: int, score: int, order: Sequence[int],
                   deadline: float) -> tuple[int, int]:
    """``(move, chances)``: the move the rule picks among those of exact score ``score`` (``today``'s unless
    another gives the opponent more chances to go wrong), and the replies after it that would do so.

    ``today`` is the agent's choice (a move of score ``score``); a won position, a single move of that score,
    or a ``Timeout`` before ``deadline`` keep it (``chances`` -1 when not counted).
    """
    if score > 0:
        return today, -1
    try:
        candidates = equal_moves(solver, board, today, score, order, deadline)
        if len(candidates) < 2:
            return today, -1
        counts = {c: thrown(solver, board.play(c), score, deadline) for c in candidates}
    except Timeout:
        return today, -1
    rank = {c: i for i, c in enumerate(order)}
    best = max(candidates, key=lambda c: (counts[c], c == today, -rank[c]))
    return best, counts[best]
