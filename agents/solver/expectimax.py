"""The practical search: among moves that keep the position's value, the one with the best expected result against
an opponent model, searched several plies deep.

The one-ply rules of ``practical.py`` see only the traps the opponent can fall
into at once.  This search looks further: an expectimax where

* our moves are restricted to those that keep the position's value (at the
  root with ``Keep.SCORE``: the same exact score, as ``practical.equal_moves``
  finds them; below, and at the root with ``Keep.CLASS``: the same
  win/draw/loss class, and in a lost position only moves that do not hand the
  opponent a win in one, where there are such), so the search can never
  choose a move of a worse class than the solver's (with ``Keep.CLASS`` a lost
  position's move may lose sooner against perfect play, where a loss is a
  loss however long the game lasts);
* the opponent's replies are weighed by a model's chances (``opponents.py``),
  except that a win in one is always taken;
* a reply that is a mistake (it changes the win/draw/loss class in our
  favour) scores its exact result at once (1 a win, 0.5 a draw, 0 a loss for
  us); the others lead to our next choice, one level deeper;
* at the depth limit, and below a line the model reaches with less than
  ``min_reach`` chance, a position scores its exact class: no more mistakes
  are counted there.

The classes come from weak solves on the engine (which reads the opening book),
memoised per position.  ``practical_search`` deepens one level at a time while
time remains and returns the move of the deepest finished level; a ``Timeout``
in the first level gives ``today`` back, so the search never costs a move its
value or its time.  A won position keeps ``today`` (the fastest win).
Standard library and the ``Engine`` protocol only: embedded in submissions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from agents.board import Board
from agents.solver.engine import Engine
from agents.solver.opponents import Model
from agents.solver.practical import equal_moves
from agents.solver.search import Timeout

RESULT = {1: 1.0, 0: 0.5, -1: 0.0}  # a win/draw/loss class for us, as a game's score
MIN_REACH = 0.02  # a line the model plays with less chance is not searched deeper


class Keep(StrEnum):
    """Which of our moves the search chooses among at the root (``Policy.search_keeps``)."""

    SCORE = "score"  # those of the position's exact score: in a lost position the slowest losses
    CLASS = "class"  # those of its win/draw/loss class: in a lost position every loss that leaves no win in one


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


@dataclass
class Expectimax:
    """One move's search state: the engine, the model, the deadline and the classes solved so far."""

    solver: Engine
    model: Model
    deadline: float
    min_reach: float = MIN_REACH
    classes: dict[int, list[int | None]] = field(default_factory=dict)
    cut: bool = False  # a position was scored at the depth limit in the last level (a deeper one may differ)

    def classes_of(self, board: Board) -> list[int | None]:
        """The win/draw/loss class (1, 0, -1) of each column for the side to move (None: full)."""
        key = board.key()
        found = self.classes.get(key)
        if found is None:
            if time.perf_counter() >= self.deadline:
                raise Timeout
            values = self.solver.analyze(board, weak=True, deadline=self.deadline)
            found = self.classes[key] = [None if v is None else _sign(v) for v in values]
        return found

    def keeping(self, board: Board, cls: int) -> list[int]:
        """Our columns that keep class ``cls`` (in a lost position, those that leave no win in one if any do)."""
        values = self.classes_of(board)
        moves = [c for c, v in enumerate(values) if v == cls]
        if cls < 0:
            safe = set(board.non_losing_moves())
            return [c for c in moves if c in safe] or moves
        return moves

    def ours(self, board: Board, cls: int, depth: int, reach: float) -> float:
        """Our expected result in ``board`` (us to move, class ``cls``), ``depth`` more of our moves searched."""
        if cls > 0 or board.is_full():
            return RESULT[cls]
        if depth == 0 or reach < self.min_reach:
            self.cut = self.cut or reach >= self.min_reach
            return RESULT[cls]
        return max(self.theirs(board.play(c), cls, depth, reach) for c in self.keeping(board, cls))

    def theirs(self, child: Board, cls: int, depth: int, reach: float) -> float:
        """Our expected result after our move to ``child`` (the opponent to move; ``cls`` is our class there)."""
        if child.is_full():
            return RESULT[0]
        if child.winning_moves():
            return RESULT[-1]  # every model takes a win in one
        values = self.classes_of(child)
        chances = self.model.chances(child, values)
        total = weight = 0.0
        for reply, value in enumerate(values):
            p = chances[reply]
            if value is None or p <= 0:
                continue
            weight += p
            after = -value  # our class after the reply
            if after > cls:
                total += p * RESULT[after]  # a mistake: its exact result
            else:
                total += p * self.ours(child.play(reply), cls, depth - 1, reach * p)
        return total / weight if weight > 0 else RESULT[cls]


@dataclass(frozen=True)
class Found:
    """What ``practical_search`` chose: the move, its expected result (-1 when none was searched) and the
    deepest level finished (0: none, ``today`` kept)."""

    move: int
    expected: float
    depth: int


def practical_search(solver: Engine, board: Board, today: int, score: int, order: Sequence[int],
                     deadline: float, model: Model, max_depth: int, keep: Keep = Keep.SCORE) -> Found:
    """The move among those that ``keep`` the value of ``board`` (exact score ``score``) with the best expected
    result against ``model``, searched ``1 .. max_depth`` of our moves deep (iterative deepening) before
    ``deadline``.

    ``today`` is the agent's move (of score ``score``); it is kept in a won position, when it is the only
    move kept, when no level finishes in time, and among moves of equal expected result (then ``order``
    decides).
    """
    if score > 0 or max_depth < 1:
        return Found(today, -1.0, 0)
    search = Expectimax(solver, model, deadline)
    cls = _sign(score)
    try:
        if keep is Keep.CLASS and cls < 0:
            kept = set(search.keeping(board, cls)) | {today}
            candidates = [c for c in order if c in kept]
        else:
            candidates = equal_moves(solver, board, today, score, order, deadline)
    except Timeout:
        return Found(today, -1.0, 0)
    if len(candidates) < 2:
        return Found(today, -1.0, 0)
    rank = {c: i for i, c in enumerate(order)}
    found = Found(today, -1.0, 0)
    for depth in range(1, max_depth + 1):
        search.cut = False
        try:
            values = {c: search.theirs(board.play(c), cls, depth, 1.0) for c in candidates}
        except Timeout:
            break
        best = max(candidates, key=lambda c: (round(values[c], 12), c == today, -rank[c]))
        found = Found(best, values[best], depth)
        if not search.cut:
            break  # nothing was scored at the depth limit: a deeper level gives the same values
    return found
