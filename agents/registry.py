"""The agent registry: short names, where each agent lives, and what it must achieve.

This module is for the tools (build, check, match, tests); it is never bundled.
Agent modules are imported lazily, by name, only when an agent is loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from difflib import get_close_matches

# an agent function: Kaggle's obs and config in (Structs, or dicts: agents.board.config_value reads both), a column out
Agent = Callable[[object, object], int]


class UnknownAgent(KeyError):
    """A name that is not in the registry."""

    def __str__(self) -> str:
        return str(self.args[0])  # the message itself, not KeyError's repr of it


@dataclass(frozen=True)
class AgentSpec:
    """One registered agent.

    ``floors`` maps an opponent (``random``, ``negamax``) to the win rate the agent
    must reach against it, over both seats, as ``cxforge check`` shows it at 95%
    confidence (tools/connectx_forge/submit/sequential.py): the higher a floor, the more games it
    takes (with no loss, 32 games a floor up to 0.86, 64 up to 0.92, 128 up to
    0.96).  ``valid`` is False for an agent that is kept on purpose although it
    plays illegal moves (the checker must catch it).
    ``submittable`` is False for agents that are not meant for Kaggle (no time limit).
    ``move_budget_s`` bounds one move in the property tests.  ``strength`` orders the
    agents: ``make submission`` without ``AGENT`` builds the strongest submittable one.
    """

    name: str
    module: str
    description: str
    source: str
    function: str = "agent"
    floors: dict[str, float] = field(default_factory=dict)
    valid: bool = True
    submittable: bool = True
    move_budget_s: float = 1.0
    strength: int = 0
    tactical: bool = False  # takes a win in one and blocks a loss in one
    sizes: str = "any"  # "any" board size, or "standard" (6x7x4 only)

    def load(self) -> Agent:
        """Import the agent's module and return its agent function."""
        module = importlib.import_module(self.module)
        function: Agent = getattr(module, self.function)  # a registered name: an agent function by contract
        return function


def _tie_break_variant(name: str, function: str, rule: str, what: str, opponent: str = "",
                       keeps: str = "") -> AgentSpec:
    """A pool agent (agents/pool.py): the solver with its own search state and ``Policy(tie_break=rule)``
    (and ``opponent=opponent``, ``search_keeps=Keep.keeps`` where given)."""
    model = (f", opponent={opponent!r}" if opponent else "") + (f", search_keeps=Keep.{keeps}" if keeps else "")
    return AgentSpec(
        name=name, module="agents.pool", function=function,
        description=f"The solver with its own search state and {what}.",
        source=f"connectx-forge: the solver agent with Policy(tie_break=TieBreak.{rule}{model})",
        floors={"random": 0.85, "negamax": 0.85}, strength=98, tactical=True, move_budget_s=10.0,
    )


_SPECS: list[AgentSpec] = [
    AgentSpec(
        name="random", module="agents.simple", function="random_agent",
        description="A uniformly random legal column.",
        source="Kaggle Learn, Intro to Game AI, lesson 1 (agent_random)",
        floors={"random": 0.30}, strength=0, move_budget_s=0.05,
    ),
    AgentSpec(
        name="leftmost", module="agents.simple", function="leftmost_agent",
        description="The leftmost legal column.",
        source="Kaggle Learn, Intro to Game AI, lesson 1 (agent_leftmost)",
        floors={"random": 0.70}, strength=1, move_budget_s=0.05,
    ),
    AgentSpec(
        name="lookahead", module="agents.lookahead",
        description=("One-step lookahead with the course heuristic (+1e6 four, +1 own three, -100 opponent three), "
                     "random tie-break."),
        source="Kaggle Learn, Intro to Game AI, lesson 2 (one-step lookahead)",
        floors={"random": 0.85, "negamax": 0.40}, strength=10, tactical=True, move_budget_s=0.5,
    ),
    AgentSpec(
        name="middle", module="agents.simple", function="middle_agent", valid=False,
        description=("Always the middle column, even when it is full: a known-invalid baseline, kept as the course kept"
                     " it (the checker must catch it)."),
        source="Kaggle Learn, Intro to Game AI, lesson 1 (agent_middle)",
        floors={}, strength=0, move_budget_s=0.05,
    ),
    AgentSpec(
        name="lookahead-berkeley", module="agents.lookahead", function="berkeley_agent",
        description=("One-step lookahead with the Berkeley report's weights (+500/+6000/+10000 own two/three/four, "
                     "-300/-10000/-15000 opponent's), random tie-break. Not tactical: a move making two own threes can "
                     "outscore a win."),
        source="Kaggle Learn lesson 2's one-step lookahead with the Berkeley report's weights",
        floors={"random": 0.85, "negamax": 0.30}, strength=9, move_budget_s=0.25,
    ),
    AgentSpec(
        name="minimax", module="agents.minimax",
        description=("3-step minimax with the course heuristic (+1e6 four, +1 own three, -100 opponent three, -1e4 "
                     "opponent four), random tie-break. Blocks; may prefer a forced win to a win in one."),
        source="Kaggle Learn, Intro to Game AI, lesson 3 (N-step lookahead, N_STEPS = 3)",
        floors={"random": 0.90, "negamax": 0.60}, strength=12, move_budget_s=0.5,
    ),
    AgentSpec(
        name="minimax-2", module="agents.minimax", function="minimax2_agent",
        description="The course's minimax with N_STEPS = 2 (our move and the reply), random tie-break.",
        source="Kaggle Learn, Intro to Game AI, lesson 3 (N-step lookahead, N_STEPS = 2)",
        floors={"random": 0.85, "negamax": 0.55}, strength=11, tactical=True, move_budget_s=0.25,
    ),
    AgentSpec(
        name="alphabeta", module="agents.alphabeta",
        description=("3-step lookahead with alpha-beta pruning and the Berkeley report's tuned weights "
                     "(+500/+6000/+10000 own two/three/four, -300/-10000/-15000 opponent's), random tie-break. Not "
                     "tactical: its weights can outscore a win in one."),
        source="Berkeley report on ConnectX: multistep lookahead with alpha-beta pruning and tuned weights",
        floors={"random": 0.85, "negamax": 0.75}, strength=13, move_budget_s=0.5,
    ),
    AgentSpec(
        name="alphabeta-4", module="agents.alphabeta", function="alphabeta4_agent",
        description="The Berkeley alpha-beta agent searching 4 steps.",
        source="Berkeley report on ConnectX (depth raised to 4)",
        floors={"random": 0.90, "negamax": 0.75}, strength=13, move_budget_s=1.0,
    ),
    AgentSpec(
        name="improved", module="agents.improved",
        description=("The DQN notebook's improved minimax: 2 plies, +-inf on a line, else 4**i per own window of i+1 "
                     "stones and -2**(2i+1) per opponent one, random tie-break."),
        source="The ConnectX DQN notebook's improved minimax agent",
        floors={"random": 0.90, "negamax": 0.75}, strength=14, tactical=True, move_budget_s=0.25,
    ),
    AgentSpec(
        name="weighted", module="agents.weighted",
        description=("Wins or blocks in one, else the move onto the cell in the most lines of four (table read from "
                     "agents/data/cell_weights.json)."),
        source="The classic Connect Four cell-weight table (number of winning lines through each cell)",
        floors={"random": 0.85}, strength=5, move_budget_s=0.1,
    ),
    AgentSpec(
        name="mcts", module="agents.mcts",
        description=("Monte Carlo tree search (UCT, C = sqrt 2) of 300 uniformly random playouts a move, the most "
                     "visited column; a win in one ends a playout."),
        source="The ConnectX notebooks' Monte Carlo tree search (UCT with random playouts)",
        floors={"random": 0.85}, strength=8, move_budget_s=1.0,
    ),
    AgentSpec(
        name="dqn", module="agents.dqn",
        description=("A double-DQN Q-network (MLP on threat features) trained from random weights in torch by `cxforge "
                     "train --method dqn`, mostly against Kaggle's negamax; run with numpy, full columns masked."),
        source="The ConnectX DQN notebook's agent, rebuilt (masking at action selection and in the target max)",
        # first call loads the weights
        floors={"random": 0.85, "negamax": 0.70}, strength=14, move_budget_s=0.5, sizes="standard",
    ),
    AgentSpec(
        name="dqn-warm", module="agents.dqn_warm",
        description=("The dqn method started from the previous supervised net's layers (384-256-128) (`--init`), then "
                     "DQN-trained against Kaggle's negamax; run with numpy, full columns masked."),
        source="dqn, warm-started from net",
        # first call loads the weights
        floors={"random": 0.90, "negamax": 0.80}, strength=16, move_budget_s=0.5, sizes="standard",
    ),
    AgentSpec(
        name="net", module="agents.net.agent",
        description=("A policy+value MLP trained on exact solver labels (`cxforge train`); plays the policy's best "
                     "legal column, numpy only."),
        source="connectx-forge: supervised learning on Pons-style solver labels",
        # first call loads the weights
        floors={"random": 0.90, "negamax": 0.50}, strength=15, move_budget_s=0.5, sizes="standard",
    ),
    AgentSpec(
        name="net-search", module="agents.net.net_search",
        description=("A policy+value MLP (its own weight file: the 512-512-256 network its figures were measured with) "
                     "guiding iterative-deepening alpha-beta with exact win/block/non-losing-move pruning, 0.3 s a "
                     "move; from 20 stones the exact solver gets half the budget first."),
        source="connectx-forge: network-guided alpha-beta search",
        floors={"random": 0.95, "negamax": 0.80}, strength=20, tactical=True, move_budget_s=2.0,
        sizes="standard",
    ),
    AgentSpec(
        name="solver", module="agents.solver.agent",
        description=("Exact solver (bitboard negamax, alpha-beta, transposition table, null-window search) with an "
                     "opening book for both seats (34,580 entries); 1 s a move, overage for hard moves, "
                     "iterative-deepening heuristic search when the solve cannot finish; among moves of equal "
                     "value, the one the opponent most likely answers with a mistake."),
        source="Own implementation of the ideas in Pascal Pons, 'Solving Connect 4' (blog.gamesolver.org)",
        # 400/400 against each (BENCHMARKS.md); 0.85 is what cxforge check shows in 32 games without a loss
        floors={"random": 0.85, "negamax": 0.85}, strength=100, tactical=True, move_budget_s=10.0,
    ),
    AgentSpec(
        name="perfect", module="agents.solver.agent", function="perfect_agent",
        description=("The solver without a time limit: always a perfect move (slow before move ~12 without a deep "
                     "book)."),
        source="Own implementation of the ideas in Pascal Pons, 'Solving Connect 4' (blog.gamesolver.org)",
        submittable=False, strength=99, tactical=True, sizes="standard", move_budget_s=600.0,
    ),
    # near-perfect opponents (agents/pool.py): what separates perfect agents is the second seat against them
    _tie_break_variant("solver-centre", "centre_agent", "CENTRE",
                       "the centre-first tie-break: among moves of equal value, search order (centre first); the "
                       "agent before the practical rules, their baseline"),
    _tie_break_variant("solver-practical", "practical_agent", "PRACTICAL",
                       "the practical tie-break: among moves of equal value, the one leaving the most replies that "
                       "throw the result (practical.py); it lost more to net-search going second"),
    _tie_break_variant("solver-likely", "likely_agent", "LIKELY",
                       "the likely-slip tie-break (the shipped agent's): among moves of equal value, the one after "
                       "which an opponent half random, half the policy network's, most likely throws the result"),
    _tie_break_variant("solver-search", "search_agent", "SEARCH",
                       "the practical search: among moves of equal value, the best expected result, several plies "
                       "deep, against a mixture of uniform slips, the course's 2-ply minimax and the policy "
                       "network's prior (expectimax.py)", "mix"),
    _tie_break_variant("solver-search-near-prior", "search_near_prior_agent", "SEARCH",
                       "the practical search against a near-perfect player (a best reply but for 0.3 of its moves) "
                       "whose moves follow the policy network's prior", "near-prior"),
    _tie_break_variant("solver-search-class", "search_class_agent", "SEARCH",
                       "the practical search against near-prior, choosing in a lost position among every loss that "
                       "leaves no win in one, not only the slowest", "near-prior", "CLASS"),
    _tie_break_variant("solver-search-near-slips", "search_near_slips_agent", "SEARCH",
                       "the practical search against a near-perfect player that slips 0.1 of its moves uniformly",
                       "near-slips"),
    _tie_break_variant("solver-search-slips", "search_slips_agent", "SEARCH",
                       "the practical search against uniform slips", "slips"),
    _tie_break_variant("solver-search-minimax", "search_minimax_agent", "SEARCH",
                       "the practical search against the course's 2-ply minimax", "minimax"),
    _tie_break_variant("solver-search-prior", "search_prior_agent", "SEARCH",
                       "the practical search against the policy network's prior", "prior"),
    AgentSpec(
        name="solver-eps05", module="agents.pool", function="eps05_agent",
        description=("The solver, playing a random legal move (never when it can win at once) with probability 0.05, "
                     "drawn from its seat's seeded generator."),
        source="connectx-forge: a near-perfect opponent for the second seat",
        floors={"random": 0.85}, strength=70, move_budget_s=10.0,
    ),
    AgentSpec(
        name="solver-eps20", module="agents.pool", function="eps20_agent",
        description=("The solver, playing a random legal move (never when it can win at once) with probability 0.20, "
                     "drawn from its seat's seeded generator."),
        source="connectx-forge: a near-perfect opponent for the second seat",
        floors={"random": 0.85}, strength=60, move_budget_s=10.0,
    ),
    AgentSpec(
        name="net-search-nodes", module="agents.pool", function="net_nodes_agent",
        description=("net-search with 4,000 nodes of network search a move instead of 0.3 s (and its endgame solve "
                     "up to 1.5 s): the same move on any machine, for paired comparisons."),
        source="connectx-forge: a reproducible near-perfect opponent for the second seat",
        floors={"random": 0.95}, strength=20, tactical=True, move_budget_s=2.0, sizes="standard",
    ),
    AgentSpec(
        name="solver-starved", module="agents.pool", function="starved_agent",
        description=("The solver with 0.02 s a move and no overage: the book and quick solves where they answer, the "
                     "network search's guess elsewhere."),
        source="connectx-forge: a near-perfect opponent for the second seat",
        floors={"random": 0.85}, strength=80, move_budget_s=2.0,
    ),
]

# the near-perfect opponents a second-seat measurement plays (docs/solver.md, "The practical tie-break")
POOL = ("solver-eps05", "solver-eps20", "solver-starved", "net-search", "net-search-nodes", "alphabeta")

REGISTRY: dict[str, AgentSpec] = {spec.name: spec for spec in _SPECS}


def register(spec: AgentSpec) -> AgentSpec:
    """Add an agent to the registry (used by agent families and plugins)."""
    REGISTRY[spec.name] = spec
    return spec


def get(name: str) -> AgentSpec:
    """The spec registered as ``name``; ``UnknownAgent`` names the known ones otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        hint = did_you_mean(name, REGISTRY)
        raise UnknownAgent(f"unknown agent {name!r}{hint}; registered agents: {', '.join(sorted(REGISTRY))}; or "
                           "give a project folder or a .py file") from None


def did_you_mean(word: str, choices: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``word``, or ``""`` when none is close: the one
    did-you-mean of every unknown name (agents here; players, settings, sets and teams in the tools)."""
    close = get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6) if word else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def load(name: str) -> Agent:
    """The agent function registered as ``name``."""
    return get(name).load()


def strongest() -> AgentSpec:
    """The strongest submittable agent: the default of ``make submission``."""
    return max((s for s in REGISTRY.values() if s.submittable and s.valid), key=lambda s: s.strength)
