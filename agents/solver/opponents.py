"""Opponent models: how likely an imperfect opponent is to play each column, for the practical search.

The practical search (``expectimax.py``) weighs the opponent's replies by a
model's chances.  Each model is a small frozen object with one method,
``chances(board, classes)``: a list of one chance per column (0 for a full
one) that sums to 1, for the side to move in ``board`` (the opponent), given
each column's exact win/draw/loss class for that side (``classes``, which the
search has solved; most models do not look at them).

* ``Slips``: a uniformly random legal column (as a ``NearPerfect`` guide,
  epsilon-noise: the slips of a player that is otherwise perfect);
* ``Minimax``: a ``depth``-ply minimax with the Kaggle course's heuristic
  (lesson 3's weights, ``agents.heuristics.COURSE_MINIMAX``), uniform among
  its equal-best columns: the classic depth-limited searcher;
* ``Prior``: a policy over the columns, the policy network's prior by default
  (``agents.net.agent.policy_prior``, passed in by the caller: a strong but
  fallible player's natural move);
* ``Mixture``: weights over other models;
* ``NearPerfect``: a perfect player that slips: a reply of its best class,
  except with chance ``slip``, when another model (the ``guide``) plays for
  it.  The guide also picks among the best replies.  This is the opponent a
  second seat meets at the top of the leaderboard: it rarely errs, so a trap
  several of our moves deep counts almost as much as one at once (under a
  plain model, every reply that is not a mistake already counts as one
  chance less of reaching the next).

``named(name, prior)`` gives the models the ``Policy.opponent`` field names
(``MODELS``); ``near-prior`` is ``Policy.opponent``'s default (docs/solver.md, "The
practical search").  Models are memoised per position (``Cached``): the search asks for
the same position many times.  Bundle-safe: the standard library, numpy (through
the heuristic) and the game core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agents.board import Board
from agents.heuristics import COURSE_MINIMAX
from agents.minimax import best_moves

PriorFn = Callable[[Board], Sequence[float]]  # a policy's chance of each column in a position
Classes = Sequence[int | None]  # each column's exact class for the side to move: 1, 0, -1 (None: full)


class Model(Protocol):
    """An opponent model: the chance of each column for the side to move in ``board``, whose columns' exact
    classes for that side are ``classes``."""

    def chances(self, board: Board, classes: Classes) -> list[float]: ...


def _uniform_over(board: Board, columns: Sequence[int]) -> list[float]:
    """Chance ``1 / len(columns)`` on each of ``columns`` (legal ones), 0 elsewhere."""
    out = [0.0] * board.columns
    for c in columns:
        out[c] = 1.0 / len(columns)
    return out


@dataclass(frozen=True)
class Slips:
    """A uniformly random legal column."""

    def chances(self, board: Board, classes: Classes) -> list[float]:
        return _uniform_over(board, board.legal_moves())


@dataclass(frozen=True)
class Minimax:
    """A ``depth``-ply minimax with the Kaggle course's heuristic, uniform among its equal-best columns."""

    depth: int = 2

    def chances(self, board: Board, classes: Classes) -> list[float]:
        return _uniform_over(board, best_moves(board, depth=self.depth, heuristic=COURSE_MINIMAX, pruning=True))


@dataclass(frozen=True)
class Prior:
    """A policy's chances (``prior``), renormalised over the legal columns; uniform where it gives none."""

    prior: PriorFn

    def chances(self, board: Board, classes: Classes) -> list[float]:
        legal = board.legal_moves()
        raw = self.prior(board)
        weights = [max(0.0, float(raw[c])) if c in legal else 0.0 for c in range(board.columns)]
        total = sum(weights)
        return [w / total for w in weights] if total > 0 else _uniform_over(board, legal)


@dataclass(frozen=True)
class Mixture:
    """``parts``' chances weighted by their weights (normalised): a population of opponents."""

    parts: tuple[tuple[float, Model], ...]

    def __post_init__(self) -> None:
        if not self.parts or any(w < 0 for w, _ in self.parts) or sum(w for w, _ in self.parts) <= 0:
            raise ValueError("a Mixture needs models with weights >= 0 and a positive total")

    def chances(self, board: Board, classes: Classes) -> list[float]:
        total = sum(w for w, _ in self.parts)
        out = [0.0] * board.columns
        for weight, model in self.parts:
            if weight > 0:
                for c, p in enumerate(model.chances(board, classes)):
                    out[c] += weight / total * p
        return out


@dataclass(frozen=True)
class NearPerfect:
    """A reply of the best class for the side to move, except with chance ``slip`` ``guide``'s reply; among the
    best replies, ``guide``'s chances decide (uniform where it gives them none)."""

    slip: float
    guide: Model

    def __post_init__(self) -> None:
        if not 0 <= self.slip <= 1:
            raise ValueError(f"a NearPerfect model's slip is a chance in [0, 1]: got {self.slip!r}")

    def chances(self, board: Board, classes: Classes) -> list[float]:
        guided = self.guide.chances(board, classes)
        top = max((v for v in classes if v is not None), default=None)
        best = [c for c, v in enumerate(classes) if v is not None and v == top]
        weights = [guided[c] if c in best else 0.0 for c in range(board.columns)]
        total = sum(weights)
        perfect = [w / total for w in weights] if total > 0 else _uniform_over(board, best or board.legal_moves())
        return [(1 - self.slip) * a + self.slip * b for a, b in zip(perfect, guided, strict=True)]


@dataclass
class Cached:
    """``model``'s chances, memoised by position (``limit`` entries, then forgotten all at once)."""

    model: Model
    limit: int = 1 << 16
    memo: dict[int, list[float]] = field(default_factory=dict)

    def chances(self, board: Board, classes: Classes) -> list[float]:
        key = board.key()  # current + mask: one position, whose stone count says who moves (and its classes)
        found = self.memo.get(key)
        if found is None:
            if len(self.memo) >= self.limit:
                self.memo.clear()
            found = self.memo[key] = self.model.chances(board, classes)
        return found


MODELS = ("near-prior", "near-slips", "mix", "slips", "minimax", "prior", "slips-minimax")  # what ``named`` takes
# near-prior's chance of a slip: the fit to the pool's moves is flat from 0.3 to 0.5, and 0.3 is the one measured in
# games (docs/solver.md, "The practical search")
NEAR_PRIOR_SLIP = 0.3
NEAR_SLIPS_SLIP = 0.1  # near-slips': the pool's solver-eps players slip 0.05 and 0.2 of their moves


def named(name: str, prior: PriorFn) -> Model:
    """The model called ``name`` (``MODELS``); ``prior`` is the policy network's (the ``prior``, ``mix`` and
    ``near-prior`` models use it).  A ``ValueError`` naming the choices for any other name.

    ``near-prior``: a perfect player that slips ``NEAR_PRIOR_SLIP`` of its moves, its moves (and slips) as the
    prior finds them natural; ``near-slips``: one that slips ``NEAR_SLIPS_SLIP`` of its moves, uniformly;
    ``mix``: a third each of slips, the course's 2-ply minimax and the prior.
    """
    models: dict[str, Model] = {
        "near-prior": NearPerfect(NEAR_PRIOR_SLIP, Prior(prior)),
        "near-slips": NearPerfect(NEAR_SLIPS_SLIP, Slips()),
        "slips": Slips(),
        "minimax": Minimax(),
        "prior": Prior(prior),
        "slips-minimax": Mixture(((1.0, Slips()), (1.0, Minimax()))),
        "mix": Mixture(((1.0, Slips()), (1.0, Minimax()), (1.0, Prior(prior)))),
    }
    if name not in models:
        raise ValueError(f"unknown opponent model {name!r}: choose {', '.join(MODELS)}")
    return models[name]
