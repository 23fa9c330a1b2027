"""``Policy``: how the ``solver`` agent spends its time, in one frozen dataclass (agent.py reads only this).

The defaults are the shipped agent's, measured in BENCHMARKS.md ("The
``solver`` agent's mistake rate", "The solver agent on its C engine");
docs/solver.md says why they were chosen.  ``Policy(fallback=Fallback.NET)``
or ``dataclasses.replace(POLICY, move_budget=0.5)`` make another; a bad value
is a ``ValueError`` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import TypeVar

from agents.solver.engine import Kind
from agents.solver.expectimax import Keep
from agents.solver.opponents import MODELS
from agents.solver.practical import TieBreak


class Fallback(StrEnum):
    """What decides a move when no solve finished in time (``cxforge mistakes --agents solver@net`` compares)."""

    CHECKED = "checked"  # the network search ranks the moves, the solver drops those it proves lost
    NET = "net"  # the network-guided search alone (agents/net/tree.py)
    HEURISTIC = "heuristic"  # the classical iterative-deepening search (agents/solver/heuristic_search.py)


E = TypeVar("E", bound=StrEnum)


def _choice(kind: type[E], value: str, what: str) -> E:
    """``value`` as a member of ``kind``; a ``ValueError`` naming ``what`` and the choices for any other value."""
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"unknown {what} {value!r}: choose {', '.join(k.value for k in kind)}") from None


@dataclass(frozen=True)
class ByEngine:
    """A number of stones that depends on the engine's speed: ``python`` for the pure-Python search, ``c`` for
    the compiled one (about 20 times faster); ``by[kind]`` reads it for an engine's ``kind``."""

    python: int
    c: int

    def __getitem__(self, kind: str) -> int:
        return int(getattr(self, Kind(kind).value))


@dataclass(frozen=True)
class Policy:
    """The ``solver`` agent's policy (see agent.py's docstring for the move it drives).

    Times are seconds; shares are of the move's budget (``weak_share``,
    ``opening_share``) or of the time left (``rank_share``).
    """

    move_budget: float = 1.0  # an ordinary move (Kaggle allows 2)
    first_move: float = 0.15  # the first move of a process, load included
    weak_share: float = 0.6  # the weak solve's share of the budget before the fallback gets its turn
    # below ``solve_from`` stones a solve rarely finishes in time (Begin-Hard: ~10^7 nodes), so the weak solve
    # gets only ``opening_share`` (decided positions still solve), unless the last move came from the book; the
    # C engine's weak solves of 7-9 stones mostly end within ``weak_share`` (BENCHMARKS.md, mistake rates)
    solve_from: ByEngine = ByEngine(python=10, c=7)
    opening_share: float = 0.25
    # stones on the board before a hard move may use overage (fewer: a solve rarely ends within the cap; the C
    # engine's solves of 6 stones and more do)
    extra_from: ByEngine = ByEngine(python=9, c=6)
    extra_cap: float = 8.0  # most overage seconds one hard move may take
    overage_keep: float = 0.5  # never spend more than this share of the game's overage
    safety: float = 0.3  # seconds kept in hand whenever overage is used
    long_moves: int = 1  # moves a game that may use overage: one in the ten or more of ours a game lasts
    table_entries: int = 1 << 19  # the pure-Python engine's table (about 50 MB); the C one has its own size
    opening_move: int = 3  # the centre column on the empty 6x7 board: the only winning first move (Allis 1988)
    fallback: Fallback = Fallback.CHECKED  # what decides when no solve finished (BENCHMARKS.md compares them)
    rank_share: float = 0.5  # CHECKED: the network search's share of the time left; the solver checks in the rest
    # among moves of equal value (practical.py): LIKELY, the likeliest slip by an opponent half random, half the
    # policy network's, which scored more going second against the pool than CENTRE, the search's order (also
    # solver-centre); PRACTICAL counts throwing replies (solver-practical) and lost far more often to net-search
    # (docs/solver.md, "The practical tie-break")
    tie_break: TieBreak = TieBreak.LIKELY
    # TieBreak.SEARCH (expectimax.py): the opponent model (opponents.MODELS; near-prior fits the pool's moves best,
    # docs/solver.md), the most of our moves searched deep (iterative deepening; the Python engine's solves are too
    # slow for more than one), and the most seconds the search may take of what the move's budget leaves
    opponent: str = "near-prior"
    search_depth: ByEngine = ByEngine(python=1, c=8)
    search_time: float = 0.5
    # TieBreak.SEARCH's moves at the root of a lost position: the slowest losses (SCORE) or every loss that leaves
    # no win in one (CLASS: a loss is a loss however long; docs/solver.md, "The practical search")
    search_keeps: Keep = Keep.SCORE

    def __post_init__(self) -> None:
        object.__setattr__(self, "fallback", _choice(Fallback, self.fallback, "solver fallback"))
        object.__setattr__(self, "tie_break", _choice(TieBreak, self.tie_break, "solver tie-break"))
        object.__setattr__(self, "search_keeps", _choice(Keep, self.search_keeps, "search root rule"))
        if self.opponent not in MODELS:
            raise ValueError(f"Policy.opponent: unknown opponent model {self.opponent!r}: choose {', '.join(MODELS)}")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_share") and not 0 < value <= 1:
                raise ValueError(f"Policy.{f.name} is a share of the time, in (0, 1]: got {value!r}")
            if f.name in ("move_budget", "first_move", "table_entries", "search_time") and not value > 0:
                raise ValueError(f"Policy.{f.name} must be positive: got {value!r}")
            if f.name in ("extra_cap", "overage_keep", "safety", "long_moves") and not value >= 0:
                raise ValueError(f"Policy.{f.name} must be at least 0: got {value!r}")


POLICY = Policy()  # the shipped agent's
