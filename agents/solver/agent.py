"""The ``solver`` agent (perfect play within Kaggle's time) and ``perfect`` (no time limit).

A move, on the 6x7 board with four in a row:

0. on the empty board, the centre column (the only winning first move, Allis
   1988; deeper than this solver can prove within a game's time);
1. a win in one is played at once;
2. a position in the opening book is played from the book (the book holds
   the positions of our tree that the search below cannot solve in time, and
   every other position of up to ``cxforge book fill``'s few stones that it
   cannot solve in time either);
3. a weak (win/draw/loss) solve runs until ``weak_share`` of the budget, then an
   exact solve picks the fastest win or the slowest loss with the time left
   (before ``solve_from`` stones of the engine, unless our previous move on
   our own tree came from the book,
   the weak solve gets only ``opening_share``: the heuristic needs the time
   there, while the book's builder checked that its tree's other positions
   solve in time);
4. off the book's tree (a game that did not begin at the empty board), a
   hard position (the weak solve did not finish) from ``extra_from`` stones
   of the engine on (6 on the C engine, whose solves of six stones
   and more end within the cap) may take extra time from Kaggle's overage: at most ``extra_cap``
   seconds, ``long_moves`` such moves a game, never leaving less than half of
   the first overage seen (with fewer stones a solve rarely ends within the
   cap; from the empty board, the book's builder checked that every solve on
   the agent's tree fits the budget);
4b. after an exact solve (not after a book move: the book's line is kept),
   with ``TieBreak.LIKELY`` (the shipped ``Policy.tie_break``) or
   ``TieBreak.PRACTICAL`` (``practical.py``), among the moves of the same
   exact score the one that leaves the opponent the most replies that lose
   its win (lost position) or lose outright (drawn one), weighed by how
   likely an opponent plays them (LIKELY: half uniformly, half by the policy
   network's prior) or counted (PRACTICAL); solved one ply deeper within the
   move's budget (never in overage); if that does not finish, the move of
   step 3; with ``TieBreak.SEARCH`` (``expectimax.py``), the move of the best
   expected result against ``Policy.opponent``'s model, several of our moves
   deep (iterative deepening, at most ``Policy.search_time``);
5. if no solve finished, the network-guided search of ``agents/net/tree.py``
   with ``net``'s network ranks the moves in part of the time left, and the
   solver spends the rest checking them in that order: a move it proves lost
   gives way to the next (``fallback`` ``Fallback.CHECKED``).  The other fallbacks, kept
   for measurement: the network search alone (``NET``), and the classical
   heuristic search of ``agents/solver/heuristic_search.py`` (``HEURISTIC``).  When the
   weak solve found the position lost, the network search alone picks the move.

The names in ``code`` are the fields of ``policy.Policy`` (``POLICY``, the
shipped one; ``_State(policy)`` and ``choose(..., policy=)`` take another).
The solves run on the engine ``chooser.engine()`` gives: the compiled search
(``native.py``, the C engine embedded in the submission) where it loads, else
the pure-Python ``Solver`` with the same results, more slowly (``engine``
says which).  The solver's transposition
table persists from move to move (bounded), so work on one move speeds up the
next.  Other board sizes are played by the
heuristic search alone (the network knows only 6x7).  ``gc`` is off during a move: collection pauses were
reported to cause timeouts on Kaggle.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence

from agents.board import Board, config_value
from agents.net.agent import policy_prior, policy_value_net
from agents.net.tree import NetSearch
from agents.solver.book import Book
from agents.solver.chooser import engine as solver_engine
from agents.solver.engine import Engine, Kind
from agents.solver.expectimax import practical_search
from agents.solver.heuristic_search import HeuristicSearch
from agents.solver.opponents import Cached, named
from agents.solver.policy import POLICY, Fallback, Policy
from agents.solver.position import Layout, layout_of
from agents.solver.practical import TieBreak, practical_move
from agents.solver.search import Timeout


class _State:
    """Module-level search state, kept between moves (and games) of one process."""

    def __init__(self, native_engine: bool = True, policy: Policy = POLICY) -> None:
        self.policy = policy  # what ``choose`` does unless given another
        self.book = Book.load()
        self.solver: Engine = solver_engine("auto" if native_engine else "python", book=self.book,
                                            py_entries=policy.table_entries)
        self.heuristics: dict[Layout, HeuristicSearch] = {}
        self.overage_start = 0.0  # the largest overage seen: the game's allowance
        self.last = ""  # how the last move was chosen (for logs and tests)
        self.tie_changed = False  # the practical tie-break changed the last book or exact move
        self.seen = 99  # stones on the board at our last move (fewer or as many now: a new game)
        self.opponent: Cached | None = None  # the practical search's model, made on its first use
        self.new_game(from_start=False)

    def new_game(self, from_start: bool) -> None:
        """Forget the last game's per-game facts; ``from_start``: this one began at the empty board."""
        self.book_stones = -9  # stones on the board at our last book (or fixed opening) move this game
        self.long_moves = 0  # moves this game that took overage
        self.from_start = from_start  # every position of this game is on the book's tree

    @property
    def engine(self) -> Kind:
        """Which search the solves run on (``Kind.C == "c"``, ``Kind.PYTHON == "python"``)."""
        return self.solver.kind

    def model(self) -> Cached:
        """The practical search's opponent model (``policy.opponent``), memoised by position across moves."""
        if self.opponent is None:
            self.opponent = Cached(named(self.policy.opponent, policy_prior))
        return self.opponent

    def heuristic(self, board: Board) -> HeuristicSearch:
        lay = layout_of(board)
        if lay not in self.heuristics:
            self.heuristics[lay] = HeuristicSearch(lay)
        return self.heuristics[lay]


_STATE: _State | None = None  # the solver agent's
_PERFECT: _State | None = None  # the perfect agent's: two agents in one process share nothing


def state() -> _State:
    global _STATE
    if _STATE is None:
        _STATE = _State()
    return _STATE


def perfect_state() -> _State:
    global _PERFECT
    if _PERFECT is None:
        _PERFECT = _State()
    return _PERFECT


def reset() -> None:
    """Forget the search tables (the book stays): the next move starts from scratch."""
    st = state()
    st.solver.reset()
    st.heuristics.clear()


def extra_time(remaining: float, st: _State, policy: Policy | None = None) -> float:
    """Overage seconds this move may use: at most ``extra_cap``, keeping ``overage_keep`` of the game's overage
    (``policy``: ``st``'s unless given)."""
    policy = policy or st.policy
    st.overage_start = max(st.overage_start, remaining)
    spare = remaining - policy.overage_keep * st.overage_start - policy.safety
    return max(0.0, min(policy.extra_cap, spare))


def choose(board: Board, start: float, budget: float | None, extra: float = 0.0, st: _State | None = None,
           policy: Policy | None = None) -> int:
    """The column to play; ``budget`` None searches without a time limit; ``policy``: ``st``'s unless given."""
    st = st or state()
    policy = policy or st.policy
    if board.moves <= 1 or board.moves <= st.seen:  # a new game
        st.new_game(from_start=board.moves <= 1)
    st.seen = board.moves
    st.tie_changed = False
    legal = board.legal_moves()
    if len(legal) == 1:
        st.last = "only move"
        return legal[0]
    order = layout_of(board).order
    if board.moves == 0 and (board.rows, board.columns, board.inarow) == (6, 7, 4):
        st.last = "opening"
        st.book_stones = 0
        return policy.opening_move
    wins = [c for c in order if c in legal and board.is_winning_move(c)]
    if wins:
        st.last = "win in one"
        return wins[0]
    if board.inarow != 4 or (board.rows, board.columns) != (6, 7):
        st.last = "heuristic (other size)"
        deadline = float("inf") if budget is None else start + budget
        return st.heuristic(board).best_move(board.current, board.mask, board.moves, deadline)
    found = st.book.lookup(board.current, board.mask)
    if found is not None and found[1] is not None:
        st.last = "book"
        st.book_stones = board.moves
        return found[1]  # the book's line, never left for a tie-break (docs/solver.md, "The practical tie-break")
    solver = st.solver
    if budget is None:
        st.last = "exact"
        return solver.best_move(board, deadline=float("inf"))[0]
    # on our tree, one move after a book move, a position the book lacks is one its builder found easy
    in_tree = st.from_start and st.book_stones == board.moves - 2
    share = policy.weak_share if board.moves >= policy.solve_from[solver.kind] or in_tree else policy.opening_share
    if board.moves < policy.extra_from[solver.kind] or st.long_moves >= policy.long_moves or st.from_start:
        extra = 0.0  # from the empty board the book's builder checked that every solve fits the budget
    weak_move = None
    try:
        weak_move, weak = solver.best_move(board, weak=True, deadline=start + share * budget + extra)
        st.last = "weak"
        hard = time.perf_counter() > start + share * budget  # the weak solve used overage
        exact_move, score = solver.best_move(board, deadline=start + budget + (extra if hard else 0.0))
        st.last = "exact"
        return tie_break(st, policy, board, exact_move, score, order, start, budget)
    except Timeout:
        pass
    finally:
        st.long_moves += extra > 0 and time.perf_counter() > start + budget + 0.1  # this move took overage
    if weak_move is not None and weak >= 0:
        return weak_move  # keeps the win or the draw; the exact search ran out of time
    lost = weak_move is not None
    fallback = Fallback.NET if lost and policy.fallback is Fallback.CHECKED else policy.fallback  # nothing to check
    st.last = fallback.value + (" (lost position)" if lost else "")
    now = time.perf_counter()
    # after a solve that took overage and still failed, the fallback gets its usual time again
    deadline = max(start + budget, now + ((1 - share) * budget if extra and now > start + budget else 0.05))
    if fallback is Fallback.HEURISTIC:
        return st.heuristic(board).best_move(board.current, board.mask, board.moves, deadline)
    if fallback is Fallback.NET:
        return NetSearch(policy_value_net(), deadline).choose(board)[0]
    search = NetSearch(policy_value_net(), now + policy.rank_share * (deadline - now))
    move = search.choose(board)[0]
    if len(search.ranked) < 2 or search.ranked[0] != move:
        return move  # a forced move, or every move loses or draws at once
    move, refuted = first_unrefuted(solver, board, search.ranked, deadline)
    if refuted:
        st.last = f"checked ({refuted} refuted)"
    return move


def tie_break(st: _State, policy: Policy, board: Board, move: int, score: int, order: Sequence[int], start: float,
              budget: float | None) -> int:
    """``move`` (of exact score ``score``), or with ``TieBreak.PRACTICAL`` or ``LIKELY`` another move of the same
    score that gives the opponent more chances to go wrong (practical.py), or with ``SEARCH`` the one of the best
    expected result against ``policy.opponent``'s model (expectimax.py, at most ``policy.search_time``), found
    before the move's budget ends (never in overage); ``st.tie_changed`` says whether the rule changed the move."""
    st.tie_changed = False
    if policy.tie_break is TieBreak.CENTRE or budget is None:
        return move
    deadline = start + budget
    now = time.perf_counter()
    if now >= deadline:
        return move
    if policy.tie_break is TieBreak.SEARCH:
        found = practical_search(st.solver, board, move, score, order, min(deadline, now + policy.search_time),
                                 st.model(), policy.search_depth[st.solver.kind], policy.search_keeps)
        st.tie_changed = found.move != move
        return found.move
    prior = policy_prior if policy.tie_break is TieBreak.LIKELY else None
    chosen, _ = practical_move(st.solver, board, move, score, order, deadline, prior)
    st.tie_changed = chosen != move
    return chosen


def first_unrefuted(solver: Engine, board: Board, ranked: list[int], deadline: float) -> tuple[int, int]:
    """``(move, refuted)``: the first move of ``ranked`` the solver does not prove lost before ``deadline``.

    A proof that a move loses (the opponent wins after it) is far cheaper than
    a full solve: one winning reply a level suffices.  The last move is played
    unproven when all the others lose.
    """
    try:
        for refuted, col in enumerate(ranked[:-1]):
            child = board.play(col)
            if not child.winning_moves() and solver.negamax(child, 0, 1, deadline=deadline) <= 0:
                return col, refuted  # proven not to lose
    except Timeout:
        return col, refuted
    return ranked[-1], len(ranked) - 1


def agent(obs: object, config: object) -> int:
    """Kaggle entry point: perfect play where the search finishes within the time budget."""
    start = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()
    try:
        first = _STATE is None
        st = state()  # loads the book on the first call
        board = Board.from_obs(obs, config)
        remaining = float(config_value(obs, "remainingOverageTime", 0.0) or 0.0)
        budget = st.policy.first_move if first else st.policy.move_budget
        return int(choose(board, start, budget, extra_time(remaining, st)))
    finally:
        if collecting:
            gc.enable()


def perfect_agent(obs: object, config: object) -> int:
    """Exact play with no time limit (for tests and matches; not for Kaggle)."""
    return int(choose(Board.from_obs(obs, config), time.perf_counter(), None, st=perfect_state()))
