"""The practical search (agents/solver/expectimax.py), its opponent models (agents/solver/opponents.py) and the
``mcts`` agent (agents/mcts.py).

The search may only choose among moves of the position's exact score (with
``Keep.CLASS``, in a lost position, among its losses); its expected results
must be what an independent expectimax over exact scores gives; a position
out of time keeps the solver's move; each model is a probability distribution
over the legal columns.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agents.board import Board
from agents.heuristics import COURSE_MINIMAX
from agents.minimax import best_moves
from agents.net.agent import policy_prior
from agents.solver.chooser import engine
from agents.solver.engine import Engine
from agents.solver.expectimax import RESULT, Found, Keep, practical_search
from agents.solver.opponents import MODELS, Cached, Minimax, Mixture, Model, NearPerfect, Prior, Slips, named
from agents.solver.policy import POLICY, ByEngine, Policy
from agents.solver.position import layout_of
from agents.solver.practical import TieBreak
from tests.strategies import quiet_position, scores_within_a_second, standard_positions

INF = float("inf")
DRAWN = "7362344453766637331"  # four moves draw; one and two plies deep, against slips, the best of them differ
LOST = "6763611427513246427"  # every move loses in 11
WON = "73623444537"
SLOW_LOSS = "11716336776555245"  # one slowest loss (column 2, in 2); column 6 loses in 11 but sets traps


@pytest.fixture(scope="module")
def solver() -> Engine:
    return engine("auto")


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def _reference_theirs(solver: Engine, child: Board, cls: int, depth: int, model: Model) -> float:
    """Our expected result after our move to ``child``: a plain expectimax over exact scores (no memo, no cut)."""
    if child.is_full():
        return 0.5
    if child.winning_moves():
        return 0.0
    values = solver.analyze(child, deadline=INF)
    chances = model.chances(child, [None if v is None else _sign(v) for v in values])
    total = 0.0
    for reply, value in enumerate(values):
        if value is None or chances[reply] == 0:
            continue
        after = -_sign(value)
        if after > cls or depth == 1:
            total += chances[reply] * RESULT[after]
            continue
        grand = child.play(reply)
        if grand.is_full():
            total += chances[reply] * 0.5
            continue
        ours = [c for c, v in enumerate(solver.analyze(grand, deadline=INF)) if v is not None and _sign(v) == cls]
        total += chances[reply] * max(_reference_theirs(solver, grand.play(c), cls, depth - 1, model) for c in ours)
    return total


def _equal(solver: Engine, board: Board, score: int) -> list[int]:
    return [c for c, v in enumerate(solver.analyze(board, deadline=INF)) if v == score]


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("model", [Slips(), NearPerfect(0.2, Slips())], ids=["slips", "near-perfect"])
def test_the_search_picks_the_best_expected_result(solver: Engine, depth: int, model: Model) -> None:
    """On a drawn position the chosen move's expected result against the model is the best of the moves of its
    score, and it is what a plain expectimax over exact scores gives (no reply is cut: every one is >= 2%)."""
    board = Board.from_pons(DRAWN)
    today, score = solver.best_move(board, deadline=INF)
    found = practical_search(solver, board, today, score, layout_of(board).order, INF, model, depth)
    expected = {c: _reference_theirs(solver, board.play(c), 0, depth, model) for c in _equal(solver, board, score)}
    assert found.depth == depth and found.move in expected
    assert found.expected == pytest.approx(expected[found.move]) == pytest.approx(max(expected.values()))
    if isinstance(model, Slips):
        assert expected[found.move] > expected[today]  # the position tells the rule from the search's move


def test_a_deeper_search_sees_a_trap_one_ply_misses(solver: Engine) -> None:
    board = Board.from_pons(DRAWN)
    today, score = solver.best_move(board, deadline=INF)
    order = layout_of(board).order
    one, two = (practical_search(solver, board, today, score, order, INF, Slips(), d) for d in (1, 2))
    assert one.move != two.move
    assert _reference_theirs(solver, board.play(two.move), 0, 2, Slips()) > \
        _reference_theirs(solver, board.play(one.move), 0, 2, Slips())


def test_a_won_position_and_no_time_keep_today(solver: Engine) -> None:
    order = layout_of(Board()).order
    board = Board.from_pons(WON)
    today, score = solver.best_move(board, deadline=INF)
    assert score > 0 and practical_search(solver, board, today, score, order, INF, Slips(), 4) == Found(today, -1, 0)
    board = Board.from_pons(DRAWN)
    today, score = solver.best_move(board, deadline=INF)
    late = practical_search(solver, board, today, score, order, time.perf_counter() - 1, Slips(), 4)
    assert late == Found(today, -1, 0)


def test_iterative_deepening_stops_when_nothing_is_cut(solver: Engine) -> None:
    """A lost position where no reply throws: every level gives the same values, so the search stops at once."""
    board = Board.from_pons(LOST)
    today, score = solver.best_move(board, deadline=INF)
    found = practical_search(solver, board, today, score, layout_of(board).order, INF, Slips(), 8)
    assert found.depth < 8 and found.move in _equal(solver, board, score)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), stones=st.integers(14, 30), name=st.sampled_from(MODELS))
def test_the_search_never_changes_the_value(solver: Engine, data: st.DataObject, stones: int, name: str) -> None:
    """The chosen move's exact score is the position's, on random positions that solve quickly (CPU-bounded: a
    position whose analysis takes more than a second of CPU is skipped), for every model, 0.5 s of search."""
    board = quiet_position(data, stones)
    scores = scores_within_a_second(solver, board)
    today, score = solver.best_move(board, deadline=INF)
    model = named(name, policy_prior)
    found = practical_search(solver, board, today, score, layout_of(board).order, time.perf_counter() + 0.5, model, 6)
    assert scores[found.move] == max(v for v in scores if v is not None)


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("model", [Slips(), NearPerfect(0.2, Slips())], ids=["slips", "near-perfect"])
def test_keep_class_chooses_among_every_loss(solver: Engine, depth: int, model: Model) -> None:
    """In a lost position with one slowest loss, ``Keep.SCORE`` has nothing to choose, while ``Keep.CLASS`` plays
    the loss of the best expected result, as a plain expectimax over every losing move gives it."""
    board = Board.from_pons(SLOW_LOSS)
    today, score = solver.best_move(board, deadline=INF)
    order = layout_of(board).order
    assert score < 0 and _equal(solver, board, score) == [today]
    assert practical_search(solver, board, today, score, order, INF, model, depth) == Found(today, -1, 0)
    found = practical_search(solver, board, today, score, order, INF, model, depth, Keep.CLASS)
    losses = [c for c, v in enumerate(solver.analyze(board, deadline=INF)) if v is not None and v < 0]
    expected = {c: _reference_theirs(solver, board.play(c), -1, depth, model) for c in losses}
    assert found.depth == depth and found.move in losses and found.move != today
    assert found.expected == pytest.approx(expected[found.move]) == pytest.approx(max(expected.values()))
    assert expected[found.move] > expected[today]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), stones=st.integers(14, 30), name=st.sampled_from(MODELS))
def test_keep_class_never_changes_the_class(solver: Engine, data: st.DataObject, stones: int, name: str) -> None:
    """With ``Keep.CLASS`` the chosen move keeps the position's win/draw/loss class and, in a lost position, leaves
    no win in one where a move avoids it; a won or drawn position's move still has the exact score."""
    board = quiet_position(data, stones)
    scores = scores_within_a_second(solver, board)
    today, score = solver.best_move(board, deadline=INF)
    model = named(name, policy_prior)
    found = practical_search(solver, board, today, score, layout_of(board).order, time.perf_counter() + 0.5, model, 6,
                             Keep.CLASS)
    best = max(v for v in scores if v is not None)
    chosen = scores[found.move]
    assert chosen is not None
    if best >= 0:
        assert chosen == best
    else:
        assert chosen < 0 and (found.move in board.non_losing_moves() or not board.non_losing_moves())


# -- the models ---------------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(board=standard_positions(max_moves=40), name=st.sampled_from(MODELS),
       drawn=st.lists(st.sampled_from([-1, 0, 1]), min_size=7, max_size=7))
def test_each_model_is_a_distribution_over_the_legal_columns(board: Board, name: str, drawn: list[int]) -> None:
    """Whatever classes the columns have (any the search could pass)."""
    assume(not board.is_over())
    classes = [v if board.can_play(c) else None for c, v in enumerate(drawn)]
    chances = named(name, policy_prior).chances(board, classes)
    assert len(chances) == board.columns and sum(chances) == pytest.approx(1.0)
    assert all(p >= 0 for p in chances) and all(chances[c] == 0 for c in range(7) if not board.can_play(c))


def test_the_models_say_what_they_are() -> None:
    board = Board.from_pons("444444")  # column 4 full
    classes = [0, -1, 0, None, 1, -1, 1]  # for the side to move: columns 5 and 7 win
    uniform = Slips().chances(board, classes)
    assert uniform == [1 / 6, 1 / 6, 1 / 6, 0.0, 1 / 6, 1 / 6, 1 / 6]
    best = best_moves(board, depth=2, heuristic=COURSE_MINIMAX)
    assert [c for c, p in enumerate(Minimax().chances(board, classes)) if p > 0] == best
    sure = Prior(lambda b: [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    assert sure.chances(board, classes) == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert Prior(lambda b: [0.0] * 7).chances(board, classes) == uniform  # no prior: uniform
    assert Prior(lambda b: [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]).chances(board, classes) == uniform  # full column
    half = Mixture(((1.0, Slips()), (1.0, sure))).chances(board, classes)
    assert half[2] == pytest.approx(0.5 + 0.5 / 6) and half[0] == pytest.approx(0.5 / 6)
    # a near-perfect player: a winning column but for its slips, which follow its guide
    near = NearPerfect(0.1, Slips()).chances(board, classes)
    assert near[4] == near[6] == pytest.approx(0.9 / 2 + 0.1 / 6) and near[0] == pytest.approx(0.1 / 6)
    guided = NearPerfect(0.1, Prior(lambda b: [0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 1.0])).chances(board, classes)
    assert guided[4] == pytest.approx(0.75) and guided[6] == pytest.approx(0.25) and guided[0] == 0.0
    assert NearPerfect(0.1, sure).chances(board, classes)[4] == pytest.approx(0.9 / 2)  # the guide has no best: uniform
    with pytest.raises(ValueError, match="slip"):
        NearPerfect(1.5, Slips())
    with pytest.raises(ValueError, match="weights"):
        Mixture(((0.0, Slips()),))
    with pytest.raises(ValueError, match="opponent model"):
        named("strong", policy_prior)


def test_a_cached_model_asks_once_per_position() -> None:
    calls: list[int] = []

    def counting(board: Board) -> list[float]:
        calls.append(board.key())
        return [1.0] * 7

    cached = Cached(Prior(counting), limit=2)
    boards = [Board.from_pons(m) for m in ("4", "4", "3", "4", "2", "1")]
    for b in boards:
        cached.chances(b, [0] * 7)
    assert len(calls) == 4  # "4" once until the memo fills at "2" and is forgotten; then "1"


# -- the agent --------------------------------------------------------------------------------------------------
def test_the_policy_runs_the_search_within_the_budget(solver: Engine) -> None:
    from agents.solver.agent import _State, choose

    board = Board.from_pons(DRAWN)
    today, score = solver.best_move(board, deadline=INF)
    st_ = _State(policy=Policy(tie_break=TieBreak.SEARCH, opponent="slips"))
    move = choose(board, time.perf_counter(), 30.0, st=st_)
    assert st_.last == "exact" and move in _equal(solver, board, score)
    deep = practical_search(solver, board, today, score, layout_of(board).order, INF, Slips(), 8)
    assert move == deep.move and st_.tie_changed == (move != today)
    with pytest.raises(ValueError, match="opponent model"):
        Policy(opponent="strong")
    with pytest.raises(ValueError, match="search_time"):
        Policy(search_time=0)


def test_the_policy_chooses_among_every_loss_with_keep_class(solver: Engine) -> None:
    from agents.solver.agent import _State, choose

    board = Board.from_pons(SLOW_LOSS)
    today, score = solver.best_move(board, deadline=INF)
    st_ = _State(policy=Policy(tie_break=TieBreak.SEARCH, opponent="slips", search_keeps="class"))  # type: ignore[arg-type]
    move = choose(board, time.perf_counter(), 30.0, st=st_)
    deep = practical_search(solver, board, today, score, layout_of(board).order, INF, Slips(), 8, Keep.CLASS)
    assert st_.last == "exact" and st_.tie_changed and move == deep.move != today
    assert POLICY.search_keeps is Keep.SCORE
    with pytest.raises(ValueError, match="search root rule"):
        Policy(search_keeps="deep")  # type: ignore[arg-type]


def test_the_python_engine_searches_one_level() -> None:
    """The pure-Python engine's solves are too slow for more: the policy gives it one level, which still picks a
    move of the position's score."""
    assert POLICY.search_depth == ByEngine(python=1, c=POLICY.search_depth.c) and POLICY.search_depth.c > 1
    py = engine("python")
    board = Board.from_pons(DRAWN)
    today, score = py.best_move(board, deadline=INF)
    found = practical_search(py, board, today, score, layout_of(board).order, time.perf_counter() + 20, Slips(),
                             POLICY.search_depth[py.kind])
    assert found.depth == 1 and found.move in _equal(py, board, score)


# -- mcts ---------------------------------------------------------------------------------------------------------
def test_mcts_replays_from_its_seed_and_takes_a_win() -> None:
    from agents.mcts import search

    board = Board.from_pons("4455")  # quiet: the playouts decide
    moves = []
    for seed in (1, 1, 2, 3, 4):
        random.seed(seed)
        moves.append(search(board, 100))
    assert moves[0] == moves[1]
    random.seed(0)
    won = Board.from_pons("445566")  # four in a row on the bottom row at 3 or 7
    assert search(won) in won.winning_moves()
