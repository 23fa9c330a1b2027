"""One solver engine interface (agents/solver/engine.py), the one factory that picks an engine
(agents/solver/chooser.py) and the solver agent's one policy (agents/solver/policy.py).

The factory makes each engine, both give the same values, a deadline is an
argument of each call, no caller branches on the engine's name, and the
agent's policy is one frozen dataclass.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path

import pytest

from agents.board import Board
from agents.solver import agent as solver_agent
from agents.solver.chooser import EngineError, available, describe, engine, resolve
from agents.solver.engine import KINDS, Engine, Kind
from agents.solver.native import NativeSolver
from agents.solver.policy import POLICY, ByEngine, Fallback, Policy
from agents.solver.search import Solver, Timeout
from connectx_forge import tool_engines
from connectx_forge.errors import UserError
from tests.unit.test_solver import read_set, sample

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "tools" / "connectx_forge" / "datasets" / "heldout"
SMALL = 131101  # a small compiled table: an odd size above 2**17
compiled = pytest.mark.skipif(not available(Kind.C), reason="the solver's C library does not load here")


def both() -> list[Engine]:
    """One engine of each kind that can be made here (the Python one always)."""
    return [engine(kind, c_entries=SMALL) for kind in Kind if available(kind)]


# -- the factory ---------------------------------------------------------------------------
def test_the_factory_makes_the_python_engine_everywhere() -> None:
    made = engine("python")
    assert isinstance(made, Solver) and made.kind is Kind.PYTHON == "python"
    assert resolve("python") is Kind.PYTHON and available("python") and describe("python") == "Python solver"


@compiled
def test_the_factory_makes_the_compiled_engine_where_it_loads() -> None:
    made = engine("c", c_entries=SMALL)
    assert isinstance(made, NativeSolver) and made.kind is Kind.C == "c"
    assert resolve("auto") is Kind.C and engine("auto", c_entries=SMALL).kind is Kind.C
    assert describe("c") == "C engine"


def test_auto_falls_back_to_python_where_the_library_does_not_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.solver import native

    monkeypatch.setattr(native, "library", lambda: None)
    assert resolve("auto") is Kind.PYTHON and engine("auto").kind is Kind.PYTHON
    assert not available("c") and resolve("c") is Kind.C  # resolve names the kind; it loads nothing
    with pytest.raises(EngineError, match="the compiled solver cannot be loaded here"):
        engine("c")
    with pytest.raises(UserError, match="use --engine python"):
        tool_engines.engine("c")


@pytest.mark.parametrize("bad", ["C", "native", "", "pyhton"])
def test_an_unknown_kind_is_one_clear_error(bad: str) -> None:
    with pytest.raises(EngineError, match=f"unknown solver engine {bad!r}: choose auto, c, python"):
        engine(bad)
    with pytest.raises(EngineError, match="unknown solver engine"):
        resolve(bad)
    with pytest.raises(UserError, match="unknown solver engine"):
        tool_engines.engine(bad)
    assert KINDS == ("auto", "c", "python")


def test_what_an_engine_plays() -> None:
    standard, small, five = Board(), Board(rows=5, columns=6), Board(rows=6, columns=7, inarow=5)
    python = engine("python")
    assert python.plays(standard) and python.plays(small) and not python.plays(five)
    assert NativeSolver.plays(standard) and not NativeSolver.plays(small) and not NativeSolver.plays(five)


# -- both engines give the same values -----------------------------------------------------
def test_both_engines_agree_on_pons_positions(pons_dir: Path) -> None:
    engines = both()
    for name, n in (("Test_L3_R1", 20), ("Test_L2_R1", 20), ("Test_L1_R1", 8)):
        for moves, expected in sample(read_set(pons_dir, name), n, seed=11):
            board = Board.from_pons(moves)
            for e in engines:
                e.reset()
                assert e.solve(board) == expected, (e.kind, moves)
                assert e.solve(board, weak=True) == (expected > 0) - (expected < 0), (e.kind, moves)
            assert len({e.best_move(board) for e in engines}) == 1, moves


def test_both_engines_agree_on_the_shipped_held_out_positions() -> None:
    path = HELDOUT / "Random-Middle.scores.jsonl"
    if not path.is_file():
        pytest.skip(f"the held-out set is not here ({path}; cxforge heldout build makes it)")
    records = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    records = sorted((r for r in records if "scores" in r), key=lambda r: -len(r["moves"]))[:4]  # the latest
    assert records
    engines = both()
    for rec in records:
        board = Board.from_pons(rec["moves"])
        for e in engines:
            e.reset()
            assert e.analyze(board) == rec["scores"], (e.kind, rec["moves"])


@pytest.mark.parametrize("call", ["solve", "analyze", "best_move", "negamax"])
def test_a_deadline_is_an_argument_of_the_call(call: str) -> None:
    board = Board.from_pons("4453")  # far beyond 4096 nodes: the first clock look raises
    for e in both():
        e.reset()
        args = (0, 1) if call == "negamax" else ()
        with pytest.raises(Timeout):
            getattr(e, call)(board, *args, deadline=time.perf_counter() - 1)
        late = Board.from_pons("1233722555341451114725221333")
        assert e.solve(late) == -1, e.kind  # no deadline given: none holds, the table is still sound


# -- no engine branches outside the factory -------------------------------------------------
BRANCH = re.compile(r"""\bengine\w*\s*(==|!=)\s*['"]|\bengine\w*\s+(not\s+)?in\s+[(\[{]\s*['"]"""
                    r"|(==|!=|\bis|\bis not)\s+Kind\.")
POKE = re.compile(r"(?<!self)\.deadline\s*=[^=]")


def _sources() -> list[Path]:
    folders = ("agents", "build", "tools")
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def test_no_engine_branches_outside_the_factory() -> None:
    factory = ROOT / "agents" / "solver" / "chooser.py"
    found = [f"{p.relative_to(ROOT)}:{no}: {line.strip()}" for p in _sources() if p != factory
             for no, line in enumerate(p.read_text().splitlines(), 1) if BRANCH.search(line)]
    assert not found, "pick the engine with agents.solver.chooser.engine(kind), not a branch:\n" + "\n".join(found)
    assert BRANCH.search('if engine == "c":') and BRANCH.search("engine in ('auto', 'c')")
    assert BRANCH.search("st.engine_used != 'python'") and BRANCH.search("if solver.kind is Kind.C:")
    assert not BRANCH.search('if reply.kind == "ok":')


def test_no_caller_sets_an_engines_deadline() -> None:
    found = [f"{p.relative_to(ROOT)}:{no}: {line.strip()}" for p in _sources()
             for no, line in enumerate(p.read_text().splitlines(), 1) if POKE.search(line)]
    assert not found, "pass deadline= to the engine's call instead:\n" + "\n".join(found)
    assert POKE.search("solver.deadline = 1.0") and not POKE.search("self.deadline = deadline")


# -- the agent's policy -------------------------------------------------------------------------
def test_the_policy_defaults() -> None:
    p = Policy()
    assert p == POLICY
    assert (p.move_budget, p.weak_share, p.extra_cap, p.overage_keep, p.safety, p.table_entries) == (
        1.0, 0.6, 8.0, 0.5, 0.3, 1 << 19)
    assert (p.solve_from, p.opening_share, p.extra_from, p.long_moves) == (ByEngine(python=10, c=7), 0.25,
                                                                           ByEngine(python=9, c=6), 1)
    assert (p.first_move, p.opening_move, p.fallback, p.rank_share) == (0.15, 3, Fallback.CHECKED, 0.5)
    assert (p.extra_from[Kind.C], p.extra_from["python"], p.solve_from["c"]) == (6, 9, 7)
    assert tuple(f.value for f in Fallback) == ("checked", "net", "heuristic")


def test_the_policy_is_frozen_and_checked() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICY.move_budget = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICY.extra_from.c = 3  # type: ignore[misc]
    assert Policy(fallback="net").fallback is Fallback.NET  # type: ignore[arg-type]  # a name is taken
    with pytest.raises(ValueError, match="unknown solver fallback 'nett': choose checked, net, heuristic"):
        Policy(fallback="nett")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Policy.weak_share is a share of the time, in \(0, 1\]"):
        Policy(weak_share=1.5)
    with pytest.raises(ValueError, match="Policy.move_budget must be positive"):
        dataclasses.replace(POLICY, move_budget=0)
    with pytest.raises(ValueError, match="not a valid Kind"):
        POLICY.solve_from["auto"]


def test_the_agents_state_holds_its_policy_and_engine() -> None:
    st = solver_agent._State(native_engine=False, policy=dataclasses.replace(POLICY, fallback=Fallback.HEURISTIC))
    assert st.engine is Kind.PYTHON and st.solver.kind is Kind.PYTHON
    assert st.policy.fallback is Fallback.HEURISTIC and POLICY.fallback is Fallback.CHECKED
    board = Board.from_pons("33324334")  # off the book: no solve ends in 50 ms, the fallback decides
    col = solver_agent.choose(board, time.perf_counter(), 0.05, st=st)
    assert board.can_play(col) and st.last.startswith("heuristic"), st.last
