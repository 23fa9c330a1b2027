"""Properties every registered agent must have, on positions of every size.

For each agent in ``agents.registry.REGISTRY`` (new agents are covered as soon as
they are registered): it returns a plain ``int`` naming a legal column, leaves
``obs`` unchanged, does not raise, and moves within its ``move_budget_s`` of CPU time, on
positions from 4x4x3 to 10x10x5, near-full boards and boards with one open
column (agents registered with ``sizes="standard"`` get 6x7x4 positions only:
other sizes are skipped for them, as they do not play them).  Agents whose
``move_budget_s`` exceeds ``SLOW_BUDGET_S`` are tested only under ``-m slow``, the solver and its variants
under ``-m long``.
Agents marked ``tactical`` must take a win in one and block the one threat of a
loss in one. ``middle`` is kept although it is invalid: its test asserts that it
does return the middle column, full or not.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kaggle_environments.utils import Struct

from agents.board import STANDARD, Board
from agents.registry import REGISTRY, AgentSpec
from tests.strategies import (
    forced_block_positions,
    near_full_positions,
    obs_config,
    one_open_column_positions,
    positions,
    threats,
    win_in_one_positions,
)

SLOW_BUDGET_S = 10.0  # agents allowed longer moves (e.g. an untimed solver) run only with -m slow


def _params(names: list[str]) -> list:
    """The agents as test parameters: the untimed ones marked slow, and the solver and its variants (``solver-*``,
    its engine and search with another tie-break or handicap, whose moves take most of a second) and the other
    measuring-pool variants (agents/pool.py: ``net-search-nodes``, ``net-search``'s code with another limit)
    marked long: ``make test-long`` runs them here, ``make test`` tests the solver's moves in
    tests/unit/test_solver.py, its choices in tests/unit/test_practical*.py, and ``net-search`` here."""
    def long(n: str) -> bool:
        return n.startswith("solver") or REGISTRY[n].module == "agents.pool"

    return [pytest.param(n, marks=pytest.mark.slow) if REGISTRY[n].move_budget_s > SLOW_BUDGET_S
            else pytest.param(n, marks=pytest.mark.long) if long(n) else n for n in names]


NAMES = _params(sorted(REGISTRY))
TACTICAL = _params([n for n in sorted(REGISTRY) if REGISTRY[n].tactical])


def _size(spec: AgentSpec) -> tuple[int, int, int] | None:
    """The board size to draw for ``spec``: 6x7x4 for agents that play only that, else any."""
    return STANDARD if spec.sizes == "standard" else None


def _move(spec: AgentSpec, board: Board) -> Any:
    """Call the agent as Kaggle does (``Struct`` obs and config) and check what must hold for any agent."""
    obs, config = obs_config(board)
    obs_s, config_s = Struct(**obs), Struct(**config)
    before = (copy.deepcopy(obs), copy.deepcopy(config))
    start = time.process_time()  # CPU time: a loaded machine slows the move's clock, not its work
    action = spec.load()(obs_s, config_s)
    cpu = time.process_time() - start
    assert (dict(obs_s), dict(config_s)) == before, f"{spec.name} changed obs or config"
    assert type(action) is int, f"{spec.name} returned {action!r} of type {type(action).__name__}, not int"
    assert cpu <= spec.move_budget_s, (f"{spec.name} used {cpu:.3f} s of CPU > budget {spec.move_budget_s} s "
                                       f"on\n{board}")
    return action


def _check_legal(spec: AgentSpec, board: Board) -> None:
    action = _move(spec, board)
    if spec.valid:
        assert board.can_play(action), f"{spec.name} played illegal column {action} on\n{board}"


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_legal_int_on_any_position(name: str, data: st.DataObject) -> None:
    spec = REGISTRY[name]
    _check_legal(spec, data.draw(positions(size=_size(spec))))


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_legal_int_near_full(name: str, data: st.DataObject) -> None:
    spec = REGISTRY[name]
    _check_legal(spec, data.draw(near_full_positions(size=_size(spec))))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30)
@given(data=st.data())
def test_plays_the_one_open_column(name: str, data: st.DataObject) -> None:
    spec = REGISTRY[name]
    board = data.draw(one_open_column_positions(size=_size(spec)))
    action = _move(spec, board)
    if spec.valid:
        assert [action] == board.legal_moves()


@given(board=st.one_of(positions(), one_open_column_positions()))
def test_middle_is_the_known_invalid_baseline(board: Board) -> None:
    """Expected to play illegally: ``middle`` returns the middle column even when it is full."""
    spec = REGISTRY["middle"]
    assert not spec.valid
    assert _move(spec, board) == board.columns // 2


@settings(max_examples=20)
@given(board=one_open_column_positions().filter(lambda b: not b.can_play(b.columns // 2)))
def test_middle_plays_a_full_column(board: Board) -> None:
    """The property that makes ``middle`` invalid, shown on a board whose middle column is full."""
    assert not board.can_play(_move(REGISTRY["middle"], board))


@pytest.mark.parametrize("name", TACTICAL)
@settings(max_examples=40)
@given(data=st.data())
def test_tactical_takes_a_win_in_one(name: str, data: st.DataObject) -> None:
    spec = REGISTRY[name]
    board = data.draw(win_in_one_positions(size=_size(spec)))
    action = _move(spec, board)
    assert action in board.winning_moves(), f"{name} played {action}, not a win in {board.winning_moves()}, on\n{board}"


@pytest.mark.parametrize("name", TACTICAL)
@settings(max_examples=40)
@given(data=st.data())
def test_tactical_blocks_a_loss_in_one(name: str, data: st.DataObject) -> None:
    spec = REGISTRY[name]
    board = data.draw(forced_block_positions(size=_size(spec)))
    action = _move(spec, board)
    assert [action] == threats(board), f"{name} played {action}, not the block {threats(board)}, on\n{board}"
