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
the opening book where it holds a position.

``TieBreak.LIKELY`` weighs the same replies by how likely an opponent is to
play them instead of counting them (``slip_chance``): half uniformly (a
random slip), half by a ``prior`` over its replies (the agent passes the
policy network's: the move a strong but fallible player finds natural).  A
trap whose refutation looks unnatural then outranks a move with many throwing
replies that no player would choose.

Everything runs before ``deadline``: a ``search.Timeout`` anywhere gives
``today`` back, so the rule never costs a move its time.  Standard library and
the ``Engine`` protocol only (the prior is a function the caller passes): the
module is embedded in submissions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from enum import StrEnum

from agents.board import Board
from agents.solver.engine import Engine
from agents.solver.search import Timeout


class TieBreak(StrEnum):
    """How the ``solver`` agent picks among moves of equal value (``Policy.tie_break``)."""

    PRACTICAL = "practical"  # the most chances for the opponent to go wrong (this module), then CENTRE
    CENTRE = "centre"  # the engine's search order: threats created, then centre first (the agent before the rule)
    LIKELY = "likely"  # the likeliest throw by an opponent half random, half the prior's (this module), then CENTRE
    SEARCH = "search"  # the best expected result against an opponent model, several plies deep (expectimax.py)


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


Prior = Callable[[Board], Sequence[float]]  # an opponent's chance of each column in a position
PRIOR_WEIGHT = 0.5  # LIKELY's share of the prior in the opponent model; the rest is a uniform slip


def throws(solver: Engine, child: Board, score: int, deadline: float) -> list[int]:
    """The opponent's replies in ``child`` that change the result in our favour: for a lost parent
    (``score`` < 0), replies that are not a win for the opponent; for a drawn one, replies that lose for it."""
    _check(deadline)
    values = solver.analyze(child, weak=True, deadline=deadline)
    if score < 0:
        return [c for c, v in enumerate(values) if v is not None and v <= 0]
    return [c for c, v in enumerate(values) if v is not None and v < 0]


def slip_chance(child: Board, replies: Sequence[int], prior: Prior) -> float:
    """The chance that an opponent in ``child`` plays one of ``replies``: with weight ``PRIOR_WEIGHT`` as
    ``prior`` says (renormalised over the legal columns), else uniformly among them."""
    legal = child.legal_moves()
    chances = prior(child)
    total = sum(max(0.0, chances[c]) for c in legal)
    guided = sum(max(0.0, chances[c]) for c in replies) / total if total > 0 else len(replies) / len(legal)
    return PRIOR_WEIGHT * guided + (1 - PRIOR_WEIGHT) * len(replies) / len(legal)


def practical_move(solver: Engine, board: Board, today: int, score: int, order: Sequence[int],
                   deadline: float, prior: Prior | None = None) -> tuple[int, float]:
    """``(move, chances)``: the move the rule picks among those of exact score ``score`` (``today``'s unless
    another gives the opponent more chances to go wrong), and its chances: the replies after it that would do
    so (``TieBreak.PRACTICAL``), or with a ``prior`` (``TieBreak.LIKELY``) the chance of one (``slip_chance``).

    ``today`` is the agent's choice (a move of score ``score``); a won position, a single move of that score,
    or a ``Timeout`` before ``deadline`` keep it (``chances`` -1 when not counted).
    """
    if score > 0:
        return today, -1
    try:
        candidates = equal_moves(solver, board, today, score, order, deadline)
        if len(candidates) < 2:
            return today, -1
        counts: dict[int, float] = {}
        for c in candidates:
            child = board.play(c)
            replies = throws(solver, child, score, deadline)
            counts[c] = len(replies) if prior is None else slip_chance(child, replies, prior)
    except Timeout:
        return today, -1
    rank = {c: i for i, c in enumerate(order)}
    best = max(candidates, key=lambda c: (counts[c], c == today, -rank[c]))
    return best, counts[best]
