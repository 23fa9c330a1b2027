"""Near-perfect opponents, for measuring what separates perfect agents: play in the second seat.

Every perfect agent wins going first; going second, only an opponent's
mistakes can be exploited.  These agents make few, of known kinds:

* ``solver-eps05``, ``solver-eps20``: the ``solver`` agent (with the
  ``LIKELY`` tie-break, whatever the shipped one), which plays a uniformly
  random legal move instead with probability 0.05 or 0.20 (never one that
  misses a win in one: the mistakes are positional);
* ``solver-starved``: the ``solver`` with a tiny budget a move and no
  overage: perfect where the book or a quick solve knows the position,
  the network search's guess elsewhere;
* ``net-search-nodes``: ``net-search`` stopped by a count of nodes, not the
  clock (its endgame solve has the whole safety limit): the same move on any
  machine and under any load.  A player cut by the clock (``net-search``,
  ``solver-starved``) answers the same position differently from run to run,
  and a paired comparison against it mixes those changes with the compared
  agents' own;
* ``solver-centre``: the ``solver`` with the centre-first tie-break
  (``TieBreak.CENTRE``, the agent before the practical rules),
  ``solver-practical``: with the count of throwing replies
  (``TieBreak.PRACTICAL``), and ``solver-likely``: with the likely slip
  (``TieBreak.LIKELY``, the shipped policy's), the rules measured side by side.

Each keeps its own search state (two of them in one process share nothing).
The random draws come from the process's ``random`` module, which the referee
seeds for each seat from the game's seed (tools/connectx_forge/play/seat_random.py; on Kaggle
each agent has its own process), so the draws, and the moves of every game
whose searches finish in time, replay from the seed.  A search cut by the
clock (the starved solver's, or any solver's in a hard position) may still
end elsewhere on another machine.  Bundle-safe: the standard library and the
solver's modules only.
"""

from __future__ import annotations

import dataclasses
import gc
import random
import time

from agents.board import Board, config_value, standard_board
from agents.net.net_search import MAX_BUDGET_S, search_move
from agents.solver.agent import _State, choose, extra_time
from agents.solver.expectimax import Keep
from agents.solver.opponents import MODELS
from agents.solver.policy import POLICY, Policy
from agents.solver.practical import TieBreak

EPS_LOW = 0.05  # solver-eps05's chance of a random move
EPS_HIGH = 0.20  # solver-eps20's
CENTRE = dataclasses.replace(POLICY, tie_break=TieBreak.CENTRE)  # solver-centre's: the agent before the rules
PRACTICAL = dataclasses.replace(POLICY, tie_break=TieBreak.PRACTICAL)  # solver-practical's
LIKELY = dataclasses.replace(POLICY, tie_break=TieBreak.LIKELY)  # solver-likely's
# the near-perfect opponents play LIKELY whatever the shipped policy's tie-break: the pool stays the one measured
OPPONENT = LIKELY  # solver-eps05's and solver-eps20's
STARVED = dataclasses.replace(LIKELY, move_budget=0.02, first_move=0.02, extra_cap=0.0)  # solver-starved's
NET_NODES = 4000  # net-search-nodes' network search a move: about net-search's 0.3 s on a busy 2-core machine
# solver-search's: the practical search against its opponent model (``SEARCHES``: one agent each)
SEARCHES = {name: dataclasses.replace(POLICY, tie_break=TieBreak.SEARCH, opponent=name) for name in MODELS}
# solver-search-class's: the search against near-prior, choosing among every loss of a lost position
SEARCH_CLASS = dataclasses.replace(SEARCHES["near-prior"], search_keeps=Keep.CLASS)

_STATES: dict[str, _State] = {}


def _state(name: str, policy: Policy) -> tuple[_State, bool]:
    """The search state of the pool agent ``name`` (made on its first call: then also True)."""
    if name in _STATES:
        return _STATES[name], False
    _STATES[name] = _State(policy=policy)
    return _STATES[name], True


def _solver_move(name: str, policy: Policy, obs: object, config: object, start: float) -> int:
    """The move of a ``solver`` playing ``policy`` with its own state ``name``, as ``agent.agent`` plays it."""
    st, first = _state(name, policy)
    board = Board.from_obs(obs, config)
    remaining = float(config_value(obs, "remainingOverageTime", 0.0) or 0.0)
    budget = policy.first_move if first else policy.move_budget
    return int(choose(board, start, budget, extra_time(remaining, st), st=st))  # st plays its own policy


def _play(name: str, policy: Policy, eps: float, obs: object, config: object) -> int:
    """The solver's move, or with probability ``eps`` a random legal one that does not miss a win in one."""
    start = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()
    try:
        if eps > 0 and random.random() < eps:
            board = Board.from_obs(obs, config)
            legal = board.legal_moves()
            if legal and not board.winning_moves():
                return random.choice(legal)
        return _solver_move(name, policy, obs, config, start)
    finally:
        if collecting:
            gc.enable()


def eps05_agent(obs: object, config: object) -> int:
    """The solver, with a random move one time in twenty."""
    return _play("eps05", OPPONENT, EPS_LOW, obs, config)


def eps20_agent(obs: object, config: object) -> int:
    """The solver, with a random move one time in five."""
    return _play("eps20", OPPONENT, EPS_HIGH, obs, config)


def starved_agent(obs: object, config: object) -> int:
    """The solver with a tiny budget a move and no overage."""
    return _play("starved", STARVED, 0.0, obs, config)


def net_nodes_agent(obs: object, config: object) -> int:
    """``net-search`` with a node budget instead of a clock: the same move on any machine, so that two agents'
    games against it differ only where their own moves do."""
    return search_move(standard_board(obs, config, "net-search-nodes"), MAX_BUDGET_S, nodes=NET_NODES)


def centre_agent(obs: object, config: object) -> int:
    """The solver with the centre-first tie-break among equal moves (the agent before the practical rules)."""
    return _play("centre", CENTRE, 0.0, obs, config)


def practical_agent(obs: object, config: object) -> int:
    """The solver with the practical tie-break among equal moves (practical.py)."""
    return _play("practical", PRACTICAL, 0.0, obs, config)


def likely_agent(obs: object, config: object) -> int:
    """The solver with the likely-slip tie-break among equal moves (practical.py)."""
    return _play("likely", LIKELY, 0.0, obs, config)


def search_agent(obs: object, config: object) -> int:
    """The solver with the practical search among equal moves, against the mixed opponent model (expectimax.py)."""
    return _play("search-mix", SEARCHES["mix"], 0.0, obs, config)


def search_near_prior_agent(obs: object, config: object) -> int:
    """The solver with the practical search against a near-perfect player whose moves follow the prior."""
    return _play("search-near-prior", SEARCHES["near-prior"], 0.0, obs, config)


def search_class_agent(obs: object, config: object) -> int:
    """The solver with the practical search against ``near-prior``, choosing among every loss that leaves no
    win in one in a lost position (not only the slowest)."""
    return _play("search-class", SEARCH_CLASS, 0.0, obs, config)


def search_near_slips_agent(obs: object, config: object) -> int:
    """The solver with the practical search against a near-perfect player that slips uniformly."""
    return _play("search-near-slips", SEARCHES["near-slips"], 0.0, obs, config)


def search_slips_agent(obs: object, config: object) -> int:
    """The solver with the practical search against uniform slips."""
    return _play("search-slips", SEARCHES["slips"], 0.0, obs, config)


def search_minimax_agent(obs: object, config: object) -> int:
    """The solver with the practical search against the course's 2-ply minimax."""
    return _play("search-minimax", SEARCHES["minimax"], 0.0, obs, config)


def search_prior_agent(obs: object, config: object) -> int:
    """The solver with the practical search against the policy network's prior."""
    return _play("search-prior", SEARCHES["prior"], 0.0, obs, config)
