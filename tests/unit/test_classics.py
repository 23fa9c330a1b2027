"""The classic windowed agents choose exactly what their plain definitions choose.

Each fast agent (numpy window counts, batched leaves, alpha-beta) is compared
with the plain transcription in ``tests/reference_agents.py`` on Hypothesis
positions of every size, small odd ones included: the set of equal-best moves
must be identical (and, where there is no pruning, every move's score).  Then
tactics, which differ by agent and are part of each definition.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import alphabeta, improved, lookahead, minimax
from agents.board import Board
from agents.heuristics import BERKELEY, COURSE_LOOKAHEAD, COURSE_MINIMAX, IMPROVED, window_bits, window_codes
from agents.minimax import move_scores
from tests import reference_agents as ref
from tests.strategies import forced_block_positions, positions, sizes, threats, win_in_one_positions

FAST_SCORES = {  # name -> the fast agent's scores for every legal column (no pruning)
    "lookahead": lambda b: lookahead.move_scores(b),
    "lookahead-berkeley": lambda b: lookahead.move_scores(b, BERKELEY),
    "minimax": lambda b: move_scores(b, 3, COURSE_MINIMAX),
    "minimax-2": lambda b: move_scores(b, 2, COURSE_MINIMAX),
    "improved": lambda b: improved.move_scores(b),
}
FAST_BEST = {  # name -> the fast agent's equal-best columns
    "lookahead": lookahead.best_moves,
    "lookahead-berkeley": lambda b: lookahead.best_moves(b, BERKELEY),
    "minimax": minimax.best_moves,
    "minimax-2": lambda b: minimax.best_moves(b, depth=2),
    "alphabeta": alphabeta.best_moves,
    "alphabeta-4": lambda b: alphabeta.best_moves(b, depth=4),
    "improved": improved.best_moves,
}
# the largest board side on which each plain reference is quick enough to run often
MAX_SIDE = {"lookahead": 10, "lookahead-berkeley": 10, "minimax-2": 7, "improved": 7,
            "minimax": 6, "alphabeta": 6, "alphabeta-4": 5}


def _reference(name: str, board: Board) -> dict[int, float]:
    return ref.reference_scores(name, board.to_grid(), board.mark, board.rows, board.columns, board.inarow)


def _sized_positions(name: str) -> st.SearchStrategy[Board]:
    return sizes(max_side=MAX_SIDE[name]).flatmap(lambda s: positions(size=s))


# -- the heuristic machinery ----------------------------------------------------
@given(size=sizes())
def test_window_count_matches_the_formula(size: tuple[int, int, int]) -> None:
    r, c, k = size
    expected = r * (c - k + 1) + (r - k + 1) * c + 2 * (r - k + 1) * (c - k + 1)
    wins = window_bits(r, c, k)
    assert wins.shape == (expected, k)
    assert len({tuple(sorted(w)) for w in wins.tolist()}) == expected


@given(board=positions(finished=True))
def test_window_codes_count_each_side(board: Board) -> None:
    """Each window's code is own + (inarow + 1) * opponent, read cell by cell."""
    k, h = board.inarow, board.rows + 1
    codes = window_codes([board], board.mark)[0]
    for code, cells in zip(codes.tolist(), window_bits(board.rows, board.columns, k).tolist(), strict=True):
        marks = [board.cell(board.rows - 1 - b % h, b // h) for b in cells]
        assert code == marks.count(board.mark) + (k + 1) * marks.count(board.opponent)


HEURISTICS = [(COURSE_LOOKAHEAD, ref.course_lookahead_heuristic), (COURSE_MINIMAX, ref.course_minimax_heuristic),
              (BERKELEY, ref.berkeley_heuristic), (IMPROVED, ref.improved_heuristic)]


@pytest.mark.parametrize("fast, plain", HEURISTICS, ids=["lookahead", "minimax", "berkeley", "improved"])
@given(board=positions(finished=True), mark=st.sampled_from([1, 2]))
def test_heuristic_matches_plain_count(fast, plain, board: Board, mark: int) -> None:
    grid = ref.to_grid(board.to_grid(), board.rows, board.columns)
    assert fast([board], mark) == [plain(grid, mark, board.inarow)]


def test_heuristic_scores_a_batch_like_one_by_one() -> None:
    boards = [Board.from_moves(m, 6, 7, 4) for m in ([], [3], [3, 3, 2], [0, 1, 0, 1, 0, 1])]
    assert COURSE_MINIMAX(boards, 1) == [COURSE_MINIMAX([b], 1)[0] for b in boards]


# -- speed-equivalence: same scores, same sets of best moves ----------------------
@pytest.mark.parametrize("name", sorted(FAST_SCORES))
@given(data=st.data())
def test_scores_equal_the_plain_definition(name: str, data: st.DataObject) -> None:
    board = data.draw(_sized_positions(name))
    assert FAST_SCORES[name](board) == _reference(name, board)


@pytest.mark.parametrize("name", ["lookahead", "lookahead-berkeley", "minimax-2", "improved"])
@given(data=st.data())
def test_best_moves_equal_the_plain_definition(name: str, data: st.DataObject) -> None:
    board = data.draw(_sized_positions(name))
    assert FAST_BEST[name](board) == ref.best_moves(_reference(name, board))


@pytest.mark.parametrize("name", ["minimax", "alphabeta"])
@settings(max_examples=25)
@given(data=st.data())
def test_depth3_best_moves_equal_the_plain_definition(name: str, data: st.DataObject) -> None:
    board = data.draw(_sized_positions(name))
    assert FAST_BEST[name](board) == ref.best_moves(_reference(name, board))


@pytest.mark.parametrize("name, depth", [("alphabeta", 3), ("alphabeta-4", 4)])
@settings(max_examples=10)
@given(data=st.data())
def test_deep_search_on_small_odd_boards(name: str, depth: int, data: st.DataObject) -> None:
    """The depth-3/4 Berkeley agents against the plain minimax, on 4..5-sided boards."""
    board = data.draw(sizes(max_side=5).flatmap(lambda s: positions(size=s, min_moves=2)))
    assert alphabeta.best_moves(board, depth) == ref.best_moves(_reference(name, board))


@pytest.mark.parametrize("depth, heuristic", [(3, BERKELEY), (3, COURSE_MINIMAX), (2, IMPROVED), (4, IMPROVED)],
                         ids=["berkeley-3", "course-3", "improved-2", "improved-4"])
@settings(max_examples=40)
@given(board=positions())
def test_alphabeta_keeps_the_minimax_best_set(depth: int, heuristic, board: Board) -> None:
    """On every size up to 10x10: pruning never changes the set of best moves (ints and +-inf)."""
    full = move_scores(board, depth, heuristic)
    pruned = move_scores(board, depth, heuristic, pruning=True)
    top = max(full.values())
    assert [c for c, s in pruned.items() if s == top] == [c for c, s in full.items() if s == top]
    assert max(pruned.values()) == top
    for c in full:  # the others get upper bounds, still below the best
        assert full[c] <= pruned[c] < top or full[c] == pruned[c] == top


def test_tie_break_is_uniform_over_the_best() -> None:
    """From the empty 4x4x3 board lookahead's best moves tie; the agent spreads over all of them."""
    board = Board(4, 4, 3)
    best = lookahead.best_moves(board)
    assert len(best) >= 2
    obs = {"board": board.to_grid(), "mark": 1}
    config = {"rows": 4, "columns": 4, "inarow": 3}
    counts = Counter(lookahead.agent(obs, config) for _ in range(400))
    assert set(counts) == set(best)
    assert min(counts.values()) > 400 / len(best) / 2


# -- tactics --------------------------------------------------------------------
def _has_forced_win(board: Board, col: int) -> bool:
    """Playing ``col`` wins now, or wins next move whatever the reply."""
    after = board.play(col)
    if after.winner() is not None:
        return True
    return all(after.play(r).winner() is None and after.play(r).winning_moves() for r in after.legal_moves())


@settings(max_examples=30)
@given(board=win_in_one_positions(max_cells=64))
def test_minimax_wins_or_keeps_a_forced_win(board: Board) -> None:
    """The course minimax scores a line by its count of fours, so it may prefer a forced double win."""
    assert all(_has_forced_win(board, c) for c in minimax.best_moves(board))


@settings(max_examples=30)
@given(board=forced_block_positions(max_cells=64))
def test_minimax_blocks(board: Board) -> None:
    assert minimax.best_moves(board) == threats(board)


# Found by Hypothesis (5x4x3, mark 1 to move): column 2 wins on the anti-diagonal, but
# the Berkeley weights (+6000 per own three, +10000 per four) score column 1 higher.
def _skips_win_board() -> Board:
    grid = [1, 0, 0, 0,
            2, 0, 0, 0,
            1, 2, 0, 0,
            2, 1, 0, 0,
            1, 2, 0, 0]
    return Board.from_grid(grid, 5, 4, 3, mark=1)


def test_berkeley_weights_can_skip_a_win_in_one() -> None:
    """Not a bug: the plain definition skips the win too, so the agents are not ``tactical``."""
    board = _skips_win_board()
    assert board.winning_moves() == [2]
    for name in ("lookahead-berkeley", "alphabeta"):
        plain = ref.best_moves(_reference(name, board))
        assert 2 not in plain
        assert FAST_BEST[name](board) == plain


def test_course_minimax_takes_the_win_the_berkeley_weights_skip() -> None:
    board = _skips_win_board()
    assert minimax.best_moves(board) == [2] == ref.best_moves(_reference("minimax", board))


def test_improved_search_stops_at_a_win() -> None:
    """A won child scores +inf whatever the replies could do."""
    board = _skips_win_board()
    scores = improved.move_scores(board)
    assert scores[2] == float("inf") and all(np.isfinite(s) for c, s in scores.items() if c != 2)
