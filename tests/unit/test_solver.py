"""The exact solver: Pons' benchmark scores, weak mode, analyze, and negamax consistency.

Default run: every position of End-Easy, Middle-Easy and Begin-Easy (exact),
a seeded sample of Middle-Medium, weak mode on samples, and property tests.
``-m slow``: all of Middle-Medium and samples of Begin-Medium and Begin-Hard.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.board import Board, BoardError, canonical_key, mirror_bits, non_losing_moves, winning_cells
from agents.solver.move_sorter import move_column, ordered_moves
from agents.solver.position import centre_first, layout
from agents.solver.search import Solver, Timeout
from tests.strategies import positions, standard_positions


def read_set(pons_dir: Path, name: str) -> list[tuple[str, int]]:
    lines = (pons_dir / name).read_text().split("\n")
    return [(m, int(s)) for m, s in (line.split() for line in lines if line.strip())]


def sample(items: list, n: int, seed: int = 4) -> list:
    return random.Random(seed).sample(items, min(n, len(items)))


def check_exact(positions: list[tuple[str, int]], weak: bool = False) -> None:
    solver = Solver()
    wrong = []
    for moves, expected in positions:
        solver.reset()
        got = solver.solve(Board.from_pons(moves), weak=weak)
        want = (expected > 0) - (expected < 0) if weak else expected
        if got != want:
            wrong.append((moves, got, want))
    assert not wrong, f"{len(wrong)} wrong scores, first: {wrong[:3]}"


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1",
                                  pytest.param("Test_L1_R1", marks=pytest.mark.long)])  # Begin-Easy: 20 s of CPU
def test_exact_on_every_easy_position(pons_dir: Path, name: str) -> None:
    positions = read_set(pons_dir, name)
    assert len(positions) == 1000
    check_exact(positions)


def test_exact_on_a_middle_medium_sample(pons_dir: Path) -> None:
    check_exact(sample(read_set(pons_dir, "Test_L2_R2"), 15))


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1", "Test_L1_R1", "Test_L2_R2"])
def test_weak_mode_gives_the_sign(pons_dir: Path, name: str) -> None:
    check_exact(sample(read_set(pons_dir, name), {"Test_L2_R2": 10, "Test_L1_R1": 30}.get(name, 100)), weak=True)


@pytest.mark.slow
def test_exact_on_every_middle_medium_position(pons_dir: Path) -> None:
    check_exact(read_set(pons_dir, "Test_L2_R2"))


@pytest.mark.slow
@pytest.mark.parametrize("name,n", [("Test_L1_R2", 20), ("Test_L1_R3", 2)])
def test_exact_on_begin_samples(pons_dir: Path, name: str, n: int) -> None:
    check_exact(sample(read_set(pons_dir, name), n))


def test_analyze_agrees_with_solve(pons_dir: Path) -> None:
    solver = Solver()
    for moves, expected in sample(read_set(pons_dir, "Test_L2_R1"), 40):
        board = Board.from_pons(moves)
        scores = solver.analyze(board)
        assert len(scores) == 7
        for col, score in enumerate(scores):
            assert (score is None) == (not board.can_play(col))
        assert max(s for s in scores if s is not None) == expected == solver.solve(board)


def test_analyze_scores_an_immediate_win_and_weak_columns(pons_dir: Path) -> None:
    solver = Solver()
    checked = 0
    for moves, _ in read_set(pons_dir, "Test_L3_R1")[:100]:
        parent = Board.from_pons(moves)  # its children that leave a win in one
        children = [parent.play(c) for c in parent.legal_moves() if not parent.is_winning_move(c)]
        board = next((b for b in children if b.winning_moves()), None)
        if board is None:
            continue
        wins = board.winning_moves()
        win_score = (42 + 1 - board.moves) // 2
        scores = solver.analyze(board)
        assert all(scores[c] == win_score for c in wins)
        assert win_score == solver.solve(board)
        weak = solver.analyze(board, weak=True)
        assert all(weak[c] == 1 for c in wins)
        assert all(w is None or w == (s > 0) - (s < 0) for w, s in zip(weak, scores, strict=True))
        checked += 1
    assert checked >= 5


def test_nodes_are_counted_and_reset() -> None:
    solver = Solver()
    solver.solve(Board.from_pons("1233722555341451114725221333"))
    assert solver.nodes > 0
    solver.reset()
    assert solver.nodes == 0 and len(solver.table) == 0


def test_full_and_finished_boards() -> None:
    solver = Solver()
    with pytest.raises(BoardError):
        solver.solve(Board.from_pons("1212121"))
    with pytest.raises(BoardError):
        solver.solve(Board(6, 7, 5))


def test_deadline_raises_timeout_and_the_table_stays_usable() -> None:
    solver = Solver()
    board = Board.from_pons("4453")
    with pytest.raises(Timeout):
        solver.solve(board, deadline=0.0)  # already passed: the first clock check raises
    assert solver._deadline == float("inf")  # the call's deadline held for that call only
    late = Board.from_pons("1233722555341451114725221333")
    assert solver.solve(late) == -1


def test_tiny_table_still_gives_exact_scores(pons_dir: Path) -> None:
    from agents.solver.transposition import TranspositionTable

    table = TranspositionTable(capacity=64)
    solver = Solver(table=table)
    for moves, expected in sample(read_set(pons_dir, "Test_L2_R1"), 30):
        assert solver.solve(Board.from_pons(moves)) == expected
    assert len(table) <= 64 and table.clears > 0


# -- bitboard helpers -------------------------------------------------------------
def test_centre_first_order() -> None:
    assert centre_first(7) == (3, 2, 4, 1, 5, 0, 6)
    assert centre_first(6) == (2, 3, 1, 4, 0, 5)


@given(standard_positions(max_moves=36))
def test_winning_cells_are_exactly_the_cells_that_complete_four(board: Board) -> None:
    lay = layout()
    cells = winning_cells(board.current, board.mask, lay.geo)
    for col in range(7):
        for row in range(6):
            bit = 1 << (col * 7 + row)
            if board.mask & bit:
                assert not cells & bit
                continue
            trial = Board._from(board.geo, board.current | bit, board.mask | bit, board.moves)
            assert bool(cells & bit) == (trial.winner() == board.mark)


@given(standard_positions(max_moves=38))
def test_non_losing_moves_leave_no_win_in_one(board: Board) -> None:
    lay = layout()
    if board.winning_moves():
        return
    keep = non_losing_moves(board.current, board.mask, lay.geo)
    for col in board.legal_moves():
        child = board.play(col)
        loses = bool(child.winning_moves())
        kept = bool(keep & lay.geo.column_masks[col])
        if kept:
            assert not loses
        elif not loses:  # dropped although safe: only when another move is forced
            forced = [c for c in board.legal_moves() if board.play(c).winning_moves() == []]
            assert forced  # there was a safe move...
            opp = Board._from(board.geo, board.current ^ board.mask, board.mask, board.moves + 1)
            assert opp.winning_moves()  # ...and the opponent threatened to win


@given(standard_positions())
def test_mirror_bits_match_board_mirror(board: Board) -> None:
    lay = layout()
    mirrored = board.mirror()
    assert mirror_bits(board.key(), lay.geo) == mirrored.key()
    assert canonical_key(board.current, board.mask, lay.geo) == canonical_key(mirrored.current, mirrored.mask, lay.geo)


@given(standard_positions(max_moves=40))
def test_ordered_moves_are_a_permutation_centre_first_on_ties(board: Board) -> None:
    lay = layout()
    candidates = (board.mask + lay.geo.bottom) & lay.geo.full
    moves = ordered_moves(board.current, board.mask, candidates, lay)
    assert sorted(move_column(m, lay) for m in moves) == board.legal_moves()
    threats = [winning_cells(board.current | m, board.mask, lay.geo).bit_count() for m in moves]
    assert threats == sorted(threats, reverse=True)
    rank = {c: i for i, c in enumerate(lay.order)}
    for a, b, ta, tb in zip(moves, moves[1:], threats, threats[1:], strict=False):
        if ta == tb:
            assert rank[move_column(a, lay)] < rank[move_column(b, lay)]


# -- exactness against brute force and negamax consistency ---------------------------
@cache
def brute_force(board: Board) -> int:
    """Plain minimax over every move, in the solver's score convention."""
    size = board.rows * board.columns
    if board.is_full():
        return 0
    best = -size
    for col in board.legal_moves():
        if board.is_winning_move(col):
            return (size + 1 - board.moves) // 2
        best = max(best, -brute_force(board.play(col)))
    return best


@settings(max_examples=40)
@given(st.sampled_from([(4, 4), (4, 5), (5, 4), (5, 5), (4, 6), (4, 9)]).flatmap(
    lambda rc: positions(size=(rc[0], rc[1], 4), min_moves=rc[0] * rc[1] - 12)))
def test_exact_against_brute_force_on_small_boards(board: Board) -> None:
    assert Solver().solve(board) == brute_force(board)
    assert Solver().solve(board, weak=True) == (lambda s: (s > 0) - (s < 0))(brute_force(board))


@settings(max_examples=25)
@given(standard_positions(min_moves=26))
def test_score_is_the_best_child_score(board: Board) -> None:
    solver = Solver()
    score = solver.solve(board)
    children = solver.analyze(board)
    best = max(s for s in children if s is not None)
    assert score == best
    for col, child_score in enumerate(children):
        if child_score is not None and not board.is_winning_move(col):
            assert child_score == -Solver().solve(board.play(col))


# -- the solver agent ----------------------------------------------------------------
def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _quick_agent(board: Board) -> int:
    """The agent's move with a 0.2 s budget (property tests play many positions)."""
    from dataclasses import replace

    import agents.solver.agent as solver_agent
    from tests.strategies import obs_config

    st = solver_agent.state()
    saved = st.policy
    st.policy = replace(saved, move_budget=0.2)
    try:
        return solver_agent.agent(*obs_config(board))
    finally:
        st.policy = saved


def test_agent_plays_a_perfect_move_on_end_easy_positions(pons_dir: Path) -> None:
    from agents.solver.agent import agent
    from tests.strategies import obs_config

    solver = Solver()
    for moves, expected in sample(read_set(pons_dir, "Test_L3_R1"), 150, seed=7):
        board = Board.from_pons(moves)
        col = agent(*obs_config(board))
        assert type(col) is int and board.can_play(col)
        scores = solver.analyze(board)
        assert max(s for s in scores if s is not None) == expected
        assert _sign(scores[col]) == _sign(expected), (moves, col, scores)


def test_agent_plays_the_fastest_win_and_the_slowest_loss(pons_dir: Path) -> None:
    from agents.solver.agent import agent
    from tests.strategies import obs_config

    solver = Solver()
    for moves, expected in sample(read_set(pons_dir, "Test_L2_R1"), 60, seed=8):
        board = Board.from_pons(moves)
        col = agent(*obs_config(board))
        assert solver.analyze(board)[col] == expected, moves


@given(standard_positions(min_moves=8, max_moves=40))
def test_agent_takes_a_win_in_one(board: Board) -> None:
    wins = board.winning_moves()
    col = _quick_agent(board)
    assert board.can_play(col)
    if wins:
        assert col in wins


@settings(max_examples=15)
@given(positions(min_moves=0))
def test_agent_plays_legally_on_any_board_size(board: Board) -> None:
    col = _quick_agent(board)
    assert type(col) is int and board.can_play(col)
    wins = board.winning_moves()
    if wins:
        assert col in wins


def test_heuristic_search_blocks_and_sees_short_forced_wins() -> None:
    from agents.solver.heuristic_search import WIN, HeuristicSearch
    from agents.solver.position import layout

    search = HeuristicSearch(layout())
    board = Board.from_pons("4455")  # X to move: 3 or 6 makes two threats at once
    col = search.best_move(board.current, board.mask, board.moves, deadline=float("inf"), max_depth=5)
    assert col in (2, 5)
    assert search.root(board.current, board.mask, board.moves, 3)[1] >= WIN
    blocked = Board.from_pons("41424")  # O to move must block column 4
    assert search.best_move(blocked.current, blocked.mask, blocked.moves, float("inf"), max_depth=4) == 3


@pytest.fixture
def python_engine() -> Iterator[None]:
    """The solver agent's state on the pure-Python search, whose slower solves these timing tests use."""
    from agents.solver import agent as solver_agent

    kept = solver_agent._STATE
    solver_agent._STATE = solver_agent._State(native_engine=False)
    try:
        yield
    finally:
        solver_agent._STATE = kept


def test_the_agent_solves_on_the_compiled_engine_where_it_loads() -> None:
    from agents.solver import agent as solver_agent
    from agents.solver.native import NativeSolver, library

    st = solver_agent._State()
    assert st.engine == ("c" if library() is not None else "python")
    assert isinstance(st.solver, NativeSolver) == (st.engine == "c")
    assert solver_agent._State(native_engine=False).engine == "python"


@pytest.mark.usefixtures("python_engine")
@pytest.mark.parametrize("fallback", ["checked", "net", "heuristic"])
def test_an_unfinished_solve_falls_back_to_the_chosen_search(fallback: str) -> None:
    """Off the book, with too little time to solve, the fallback decides (and says so)."""
    from agents.solver import agent as solver_agent
    from agents.solver.policy import Policy

    board = Board.from_pons("33324334")  # 8 stones, past the book's fill, off its tree: no solve ends in 50 ms
    assert solver_agent.state().book.lookup(board.current, board.mask) is None
    st = solver_agent.state()
    solver_agent.reset()
    col = solver_agent.choose(board, __import__("time").perf_counter(), 0.05, policy=Policy(fallback=fallback))
    assert st.last.partition(" (")[0] == fallback and board.can_play(col)


def test_the_net_fallback_blocks_a_threat_it_cannot_solve() -> None:
    """The network search plays the exact tactics: a lone threat is blocked even when no solve finishes."""
    from agents.net.agent import policy_value_net
    from agents.net.tree import NetSearch

    blocked = Board.from_pons("41424")  # O to move must block column 4
    assert NetSearch(policy_value_net(), float("inf")).choose(blocked)[0] == 3


def test_the_checked_fallback_skips_moves_the_solver_proves_lost() -> None:
    """The network's ranking is checked in order: a move proven to lose gives way to the next."""
    import time

    from agents.solver.agent import first_unrefuted

    board = Board.from_pons("522264452736756")  # won (12) by columns 4 and 5; 1, 2, 6 and 7 lose
    assert [s is not None and s >= 0 for s in Solver().analyze(board)] == [False, False, False, True, True,
                                                                           False, False]
    solver = Solver()
    assert first_unrefuted(solver, board, [0, 1, 3, 5], float("inf")) == (3, 2)
    assert first_unrefuted(solver, board, [0, 5, 6], float("inf")) == (6, 2)  # all lose: the last is played
    hard = Board.from_pons("7114165755333")  # checking its move 1 takes far more than 4096 nodes (one clock look)
    assert first_unrefuted(Solver(), hard, [0, 3], time.perf_counter() - 1) == (0, 0)  # no time: unchecked
    assert solver._deadline == float("inf")


def _timed_moves(boards: list[Board], budget: float, extra: float,
                 monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float, int]]:
    """The solver agent on each of ``boards``, in order (one game when the stones grow): for each move the CPU
    seconds it took (a loaded machine slows the clock the agent stops by, not its work), the seconds it gave its
    solves (their latest deadline, from the move's start) and, after it, the moves this game it says took
    overage."""
    import time

    from agents.solver import agent as solver_agent

    st = solver_agent.state()
    solve, given = st.solver.best_move, [0.0]

    def spy(board: Board, weak: bool = False, *, deadline: float | None = None) -> tuple[int, int]:
        assert deadline is not None  # the agent gives every solve its deadline
        given[0] = max(given[0], deadline - start)
        return solve(board, weak, deadline=deadline)

    monkeypatch.setattr(st.solver, "best_move", spy)
    took = []
    for board in boards:
        solver_agent.reset()
        given[0], cpu, start = 0.0, time.process_time(), time.perf_counter()
        solver_agent.choose(board, start, budget, extra)
        took.append((time.process_time() - cpu, given[0], st.long_moves))
    return took


@pytest.mark.usefixtures("python_engine")
def test_overage_is_taken_on_one_move_a_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off the book's tree, a hard position past ``extra_from`` stones takes overage once a game."""
    from agents.solver import agent as solver_agent

    game = [Board.from_pons("7114165755333"), Board.from_pons("711416575533345")]  # weak solves: 1 M, 50 k nodes
    st = solver_agent.state()
    assert game[0].moves >= st.policy.extra_from[st.engine]
    (_, given, first), (cpu, kept, second) = _timed_moves(game, 0.1, 0.4, monkeypatch)
    assert given > 0.4 and first == 1, (given, first)  # the first move is given the overage and takes it ...
    assert kept < 0.15 and cpu < 0.3 and second == 1, (kept, cpu)  # ... the second keeps to its budget
    _, given, again = _timed_moves(game[:1], 0.1, 0.4, monkeypatch)[0]
    assert given > 0.4 and again == 1  # a new game (fewer stones than the last move saw)


@pytest.mark.usefixtures("python_engine")
def test_a_game_from_the_empty_board_takes_no_overage(monkeypatch: pytest.MonkeyPatch) -> None:
    """From the empty board every position is on the book's tree, whose solves fit the budget."""
    from agents.solver import agent as solver_agent

    took = _timed_moves([Board.from_pons(""), Board.from_pons("7114165755333")], 0.1, 0.4, monkeypatch)
    assert solver_agent.state().from_start and [long for _, _, long in took] == [0, 0]
    assert took[1][1] < 0.15 and took[1][0] < 0.3, took


def test_extra_time_keeps_half_of_the_overage() -> None:
    from agents.solver.agent import _State, extra_time
    from agents.solver.policy import POLICY

    st = _State.__new__(_State)
    st.overage_start, st.policy = 0.0, POLICY
    assert extra_time(60.0, st) == POLICY.extra_cap
    assert extra_time(31.0, st) < 1.0
    assert extra_time(29.0, st) == 0.0
    assert st.overage_start == 60.0


@given(positions(min_moves=0))
def test_lane_ordering_equals_one_child_at_a_time(board: Board) -> None:
    from agents.solver.move_sorter import ordered_moves_plain
    from agents.solver.position import layout_of

    lay = layout_of(board)
    candidates = (board.mask + lay.geo.bottom) & lay.geo.full
    assert ordered_moves(board.current, board.mask, candidates, lay) == \
        ordered_moves_plain(board.current, board.mask, candidates, lay)
