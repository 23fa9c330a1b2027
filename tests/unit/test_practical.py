"""The solver's practical tie-break (agents/solver/practical.py) and the near-perfect pool (agents/pool.py).

The tie-break may only choose among moves of the position's exact score, and
must prefer the one that leaves the opponent the most replies that throw its
result; the pool's agents must replay their games from the game's seed.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.board import Board
from agents.net.agent import policy_prior
from agents.solver.chooser import engine
from agents.solver.engine import Engine
from agents.solver.policy import POLICY, Policy
from agents.solver.position import layout_of
from agents.solver.practical import PRIOR_WEIGHT, TieBreak, practical_move, slip_chance
from agents.solver.search import Timeout
from tests.strategies import quiet_position, scores_within_a_second

INF = float("inf")
# found by playing random positions and comparing both rules; each test below re-derives what it asserts
LOST = "6763611427513246427"  # every move loses in 11; the moves differ in the replies that throw the win
DRAWN = "7362344453766637331"  # four moves draw; they differ in the replies that lose for the opponent
WON = "73623444537"  # the side to move wins


@pytest.fixture(scope="module")
def solver() -> Engine:
    return engine("auto")


def _today(solver: Engine, board: Board) -> tuple[int, int]:
    return solver.best_move(board, deadline=INF)


def _chances(solver: Engine, board: Board, col: int, score: int) -> int:
    """The replies after ``col`` that change the result in our favour, counted from exact scores."""
    child = board.play(col)
    values = [v for v in solver.analyze(child, deadline=INF) if v is not None]
    return sum(1 for v in values if (v <= 0 if score < 0 else v < 0))


def _equal(solver: Engine, board: Board, score: int) -> list[int]:
    return [c for c, v in enumerate(solver.analyze(board, deadline=INF)) if v == score]


@pytest.mark.parametrize("moves", [LOST, DRAWN], ids=["lost", "drawn"])
def test_the_rule_picks_the_move_with_the_most_chances(solver: Engine, moves: str) -> None:
    board = Board.from_pons(moves)
    today, score = _today(solver, board)
    chosen, chances = practical_move(solver, board, today, score, layout_of(board).order, INF)
    counts = {c: _chances(solver, board, c, score) for c in _equal(solver, board, score)}
    assert chosen in counts and chances == counts[chosen] == max(counts.values())
    assert counts[chosen] > counts[today] and chosen != today  # the position was chosen to tell the rules apart


def test_a_slip_is_weighed_half_by_the_prior_half_uniformly() -> None:
    board = Board.from_pons("4444")
    sure = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]  # an opponent that always plays column 2
    assert slip_chance(board, [2], lambda b: sure) == pytest.approx(PRIOR_WEIGHT + (1 - PRIOR_WEIGHT) / 7)
    assert slip_chance(board, [0, 1], lambda b: sure) == pytest.approx((1 - PRIOR_WEIGHT) * 2 / 7)
    assert slip_chance(board, [], lambda b: sure) == 0.0
    assert slip_chance(board, [0, 1], lambda b: [0.0] * 7) == pytest.approx(2 / 7)  # no prior: uniform
    full = Board.from_pons("444444")  # column 3 is full: its chance does not count
    assert slip_chance(full, [0], lambda b: [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]) == pytest.approx(1 / 6)


@pytest.mark.parametrize("moves", [LOST, DRAWN, pytest.param("44444", marks=pytest.mark.long)],
                         ids=["lost", "drawn", "book"])
def test_the_likely_rule_picks_the_likeliest_slip(solver: Engine, moves: str) -> None:
    """Among the moves of the position's score, the one after which an opponent half uniform, half the policy
    network's plays a reply that changes the result, the reply values re-derived from exact scores."""
    board = Board.from_pons(moves)
    today, score = _today(solver, board)
    chosen, chance = practical_move(solver, board, today, score, layout_of(board).order, INF, policy_prior)
    slips = {}
    for c in _equal(solver, board, score):
        child = board.play(c)
        values = solver.analyze(child, deadline=INF)
        replies = [r for r, v in enumerate(values) if v is not None and (v <= 0 if score < 0 else v < 0)]
        slips[c] = slip_chance(child, replies, policy_prior)
    assert chosen in slips and chance == pytest.approx(slips[chosen]) and slips[chosen] == max(slips.values())
    assert slips[chosen] >= slips[today]


def test_a_won_position_keeps_the_fastest_win(solver: Engine) -> None:
    board = Board.from_pons(WON)
    today, score = _today(solver, board)
    assert score > 0
    assert practical_move(solver, board, today, score, layout_of(board).order, INF) == (today, -1)


class _TimesOut:
    """An engine whose reply analyses run out of time (the window searches before them answer)."""

    def __init__(self, inner: Engine) -> None:
        self.inner, self.calls = inner, 0

    def negamax(self, board: Board, alpha: int, beta: int, *, deadline: float | None = None) -> int:
        return self.inner.negamax(board, alpha, beta, deadline=deadline)

    def analyze(self, board: Board, weak: bool = False, *, deadline: float | None = None) -> list[int | None]:
        self.calls += 1
        raise Timeout


def test_out_of_time_keeps_today(solver: Engine) -> None:
    board = Board.from_pons(LOST)
    today, score = _today(solver, board)
    order = layout_of(board).order
    assert practical_move(solver, board, today, score, order, time.perf_counter() - 1) == (today, -1)
    late = _TimesOut(solver)
    assert practical_move(late, board, today, score, order, INF) == (today, -1)  # type: ignore[arg-type]
    assert late.calls == 1


def test_the_policy_selects_the_rule() -> None:
    from agents.solver.agent import _State, choose

    board = Board.from_pons(LOST)
    new, old = _State(policy=Policy(tie_break=TieBreak.PRACTICAL)), _State(policy=Policy(tie_break=TieBreak.CENTRE))
    assert POLICY.tie_break is TieBreak.LIKELY and Policy(tie_break="practical").tie_break is TieBreak.PRACTICAL  # type: ignore[arg-type]
    today = choose(board, time.perf_counter(), 30.0, st=old)
    assert old.last == "exact" and not old.tie_changed and today == _today(old.solver, board)[0]
    practical = choose(board, time.perf_counter(), 30.0, st=new)
    assert new.last == "exact" and new.tie_changed and practical != today
    with pytest.raises(ValueError, match="tie-break"):
        Policy(tie_break="left")  # type: ignore[arg-type]




@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), stones=st.integers(14, 30), likely=st.booleans())
def test_the_rule_never_changes_the_value(solver: Engine, data: st.DataObject, stones: int, likely: bool) -> None:
    """The chosen move's exact score is the position's, on random positions that solve quickly (CPU-bounded:
    a position whose analysis takes more than a second of CPU is skipped)."""
    board = quiet_position(data, stones)
    scores = scores_within_a_second(solver, board)
    best = max(v for v in scores if v is not None)
    today, score = _today(solver, board)
    assert score == best
    prior = policy_prior if likely else None  # TieBreak.LIKELY's model, or PRACTICAL's count
    chosen, _ = practical_move(solver, board, today, score, layout_of(board).order, INF, prior)
    assert scores[chosen] == best


# -- the pool ---------------------------------------------------------------------------------------------------
OPENING = [int(c) - 1 for c in "736234445376"]  # twelve stones: every later solve is quick, only the draws vary


def _game(seed: int) -> list[int]:
    from connectx_forge.play.game import play_game

    return play_game("solver-eps20", "solver-eps20", seed=seed, opening=OPENING).moves


def test_pool_games_replay_from_their_seed() -> None:
    games = [_game(seed) for seed in (1, 1, 2, 3)]
    assert games[0] == games[1]
    assert len({tuple(g) for g in games[1:]}) > 1  # the random moves differ with the seed


def test_net_search_nodes_plays_the_same_move_under_any_clock() -> None:
    """A node budget, not the clock, ends its search: the same move with a clock one machine runs far slower than
    another's (a deadline that never comes, and one that comes only after the budget)."""
    from agents.net.net_search import search_net
    from agents.net.tree import NetSearch

    board = Board.from_pons("4453")
    searches = [NetSearch(search_net(), deadline, max_nodes=400) for deadline in (INF, time.perf_counter() + 60)]
    moves = [s.choose(board)[0] for s in searches]
    assert moves[0] == moves[1] and all(s.nodes == 401 for s in searches)  # the node past the budget stops it


def test_the_pool_is_registered() -> None:
    from agents.registry import POOL, REGISTRY

    assert set(POOL) <= set(REGISTRY) and {"solver-centre", "solver-practical", "solver-likely"} <= set(REGISTRY)
    assert all(REGISTRY[name].submittable and REGISTRY[name].valid for name in POOL)


def test_each_pool_agent_plays_its_own_policy_and_state(solver: Engine) -> None:
    """``solver-centre`` plays the centre-first rule with its own search state: where the rules differ (LOST) it
    plays the search's move, not the practical one, and it does not touch the shipped agent's state."""
    from agents import pool
    from agents.solver import agent

    board = Board.from_pons(LOST)
    today, score = _today(solver, board)
    practical, _ = practical_move(solver, board, today, score, layout_of(board).order, INF)
    obs = {"board": board.to_grid(), "mark": 1 + board.moves % 2, "remainingOverageTime": 60.0, "step": board.moves}
    config = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 30}
    pool._STATES.clear()
    shipped = agent.state()
    seen = shipped.seen
    assert pool.centre_agent(obs, config) == today
    assert pool._STATES["centre"].last == "exact" and shipped.seen == seen  # its own state, not the agent's
    assert pool._STATES["centre"].policy.tie_break is TieBreak.CENTRE
    assert practical != today

