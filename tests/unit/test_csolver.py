"""The compiled solver (agents/solver/native/solver.c): same scores, best moves and (almost) node counts.

The node counts differ only where two keys share a slot of the compiled
solver's fixed-size table (the Python table is a dict): a few nodes more.

Book building and labelling trust the compiled solver, so it must return what
``agents.solver.search.Solver`` returns.  Skipped where it does not load.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings

from agents.board import Board, BoardError
from agents.solver.search import ETC_EMPTIES, Solver, Timeout
from connectx_forge import tool_engines
from tests.strategies import standard_positions
from tests.unit.test_solver import read_set, sample

pytestmark = pytest.mark.skipif(not tool_engines.available(),
                                reason="the compiled solver (agents/solver/native) does not load here")

SMALL = tool_engines.DEFAULT_ENTRIES


@pytest.fixture(scope="module")
def engine() -> tool_engines.CSolver:
    return tool_engines.CSolver(entries=SMALL)


@pytest.mark.parametrize("name, n", [("Test_L3_R1", 60), ("Test_L2_R1", 60), ("Test_L1_R1", 25)])
def test_same_scores_moves_and_nodes_as_the_python_solver(pons_dir: Path, engine: tool_engines.CSolver,
                                                           name: str, n: int) -> None:
    c_total = py_total = 0
    for moves, expected in sample(read_set(pons_dir, name), n):
        board = Board.from_pons(moves)
        py = Solver()
        engine.reset()
        before = engine.nodes
        assert engine.solve(board) == py.solve(board) == expected, moves
        nodes = engine.nodes - before
        assert py.nodes <= nodes <= 1.02 * py.nodes + 2, moves  # slot collisions only add work
        c_total, py_total = c_total + nodes, py_total + py.nodes
        assert engine.best_move(board) == py.best_move(board), moves
        assert engine.best_move(board, weak=True) == py.best_move(board, weak=True), moves
    assert c_total <= 1.002 * py_total + 2


@settings(max_examples=40)
@given(standard_positions(min_moves=16))
def test_analyze_matches_on_random_positions(board: Board) -> None:
    engine = tool_engines.CSolver(entries=SMALL)
    assert engine.analyze(board) == Solver().analyze(board)
    assert engine.analyze(board, weak=True) == Solver().analyze(board, weak=True)


def test_time_limit_and_bad_boards(engine: tool_engines.CSolver) -> None:
    engine.reset()
    with pytest.raises(tool_engines.SolverTimeout):
        engine.solve(Board.from_pons("44"), deadline=time.perf_counter() + 0.001)
    assert issubclass(tool_engines.SolverTimeout, Timeout)  # callers catch the Python solver's Timeout for both
    with pytest.raises(BoardError, match="6x7"):
        engine.solve(Board(rows=5, columns=6))
    with pytest.raises(BoardError, match="already won"):
        engine.solve(Board.from_pons("1212121"))


def test_the_deep_tables_constants_are_the_c_sources() -> None:
    """``native.DEEP_ENTRIES``/``DEEP_MOVES`` (read by the bench and docs) say what solver.c compiles, and the
    Python search's enhanced transposition cutoff runs at the same nodes as the C one's."""
    import re

    from agents.solver import native

    source = (Path(native.__file__).parent / "native" / "solver.c").read_text()
    defines = dict(re.findall(r"^#define (DEEP_\w+) (\d+)", source, re.M))
    assert defines == {"DEEP_MOVES": str(native.DEEP_MOVES), "DEEP_ENTRIES": str(native.DEEP_ENTRIES)}
    assert 42 - native.DEEP_MOVES == ETC_EMPTIES  # both searches cut on children's entries at the same nodes
