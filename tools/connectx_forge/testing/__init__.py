"""Test helpers for your own agent project: ``from connectx_forge import testing``.

The tests that ``cxforge new`` writes use them; any pytest file may::

    from hypothesis import given, settings
    from connectx_forge import testing
    from mybot.main import act

    @settings(max_examples=50, deadline=None)
    @given(testing.positions())
    def test_plays_a_legal_column(position):
        testing.assert_legal_move(act, position)

    def test_meets_its_floors():
        testing.assert_floors(".")        # the [floors] of cxforge.toml, checked as `cxforge check` does

    def test_avoids_the_losing_moves_of_lost_games():   # cases kept by `cxforge regress add`
        testing.assert_avoids(testing.entry_agent("."), testing.regressions("tests/regressions.json"))

``positions`` needs Hypothesis (``pip install hypothesis``, or the toolkit's
``dev`` extra); the rest needs only the toolkit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.board import Board
from connectx_bundler.project import find_root, load
from connectx_forge.leaderboard.regress.data import Case, read
from connectx_forge.submit.check import Gate, check_agent
from connectx_forge.submit.check_report import format_report

Agent = Callable[..., Any]
__all__ = ["Position", "assert_avoids", "assert_floors", "assert_legal_move", "check", "entry_agent", "positions",
           "regressions"]


@dataclass(frozen=True)
class Position:
    """A position with the side to move: ``obs`` and ``config`` as Kaggle passes them, and its moves."""

    moves: tuple[int, ...]  # 0-based columns from the empty board
    rows: int = 6
    columns: int = 7
    inarow: int = 4
    overage: float = 60.0
    board: Board = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "board", Board.from_moves(self.moves, self.rows, self.columns, self.inarow))

    @property
    def obs(self) -> Any:
        return _struct(board=self.board.to_grid(), mark=self.board.mark, step=len(self.moves),
                       remainingOverageTime=self.overage)

    @property
    def config(self) -> Any:
        return _struct(rows=self.rows, columns=self.columns, inarow=self.inarow, actTimeout=2, timeout=2,
                       episodeSteps=1000, agentTimeout=60, runTimeout=1200)

    def legal_moves(self) -> list[int]:
        return self.board.legal_moves()


class _Struct(dict[str, Any]):
    """Attribute and item access, as kaggle_environments' ``Struct``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _struct(**items: Any) -> Any:
    return _Struct(items)


def positions(rows: int = 6, columns: int = 7, inarow: int = 4, max_moves: int | None = None) -> Any:
    """A Hypothesis strategy of open positions (the game not over) reached by legal moves from the empty board."""
    from hypothesis import strategies as st

    cap = rows * columns - 1 if max_moves is None else min(max_moves, rows * columns - 1)

    @st.composite
    def draw_position(draw: Any) -> Position:
        target = draw(st.integers(0, cap))
        board, moves = Board(rows, columns, inarow), list[int]()
        while len(moves) < target:
            open_moves = [c for c in board.legal_moves() if not board.play(c).is_over()]
            if not open_moves:
                break
            column = draw(st.sampled_from(open_moves))
            board, moves = board.play(column), [*moves, column]
        return Position(tuple(moves), rows, columns, inarow)

    return draw_position()


def assert_legal_move(agent: Agent, position: Position, seconds: float = 2.0) -> int:
    """Call ``agent`` on ``position`` as Kaggle would; fail unless it returns a legal plain ``int`` in time."""
    start = time.perf_counter()
    move = agent(position.obs, position.config)
    took = time.perf_counter() - start
    assert type(move) is int, f"the agent returned {move!r} ({type(move).__name__}); Kaggle takes a plain int"
    assert move in position.legal_moves(), (f"the agent played column {move}, not a legal move "
                                            f"(legal: {position.legal_moves()}) after moves {list(position.moves)}")
    assert took <= seconds, f"the agent took {took:.2f} s, more than {seconds} s, after moves {list(position.moves)}"
    return move


def check(project: str | Path = ".", games: int = 8, workers: int | None = None,
          max_games: int | None = None) -> Any:
    """``cxforge check`` of a project (or any player ``cxforge check`` takes): its report.

    ``games`` per opponent first; against an opponent whose floor is not decided yet, more, up to
    ``max_games`` (``cxforge check --max-games``)."""
    return check_agent(str(project), Gate(games, max_games, workers=workers))


def assert_floors(project: str | Path = ".", games: int = 8, workers: int | None = None,
                  max_games: int | None = None) -> None:
    """Fail unless ``cxforge check`` says PASS: valid moves, and every floor of ``cxforge.toml`` shown met at
    95% confidence by its sequential test; FAIL (a floor missed, a rule broken) and UNDECIDED (a floor neither
    met nor missed within ``max_games``) both fail, with the check's report."""
    report = check(project, games, workers, max_games)
    assert report.passed, f"cxforge check: {report.verdict}\n" + format_report(report)


def entry_agent(project: str | Path = ".") -> Agent:
    """The project's agent function, imported from its ``entry`` (``module:function`` of cxforge.toml) with
    the project folder first on the import path."""
    import importlib
    import sys

    root = find_root(Path(project).resolve())
    if root is None:
        raise AssertionError(f"{project}: not inside an agent project (no cxforge.toml here or above)")
    spec = load(root)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    agent: object = getattr(importlib.import_module(spec.module), spec.function)
    if not callable(agent):
        raise AssertionError(f"{spec.module}:{spec.function} is not a function (cxforge.toml's entry)")
    return agent


def regressions(path: str | Path = "tests/regressions.json") -> list[Case]:
    """The cases ``cxforge regress add`` kept (none when the file does not exist): see ``assert_avoids``."""
    return read(Path(path))


def assert_avoids(agent: Agent, cases: Sequence[Mapping[str, Any]], seconds: float = 2.0) -> None:
    """Fail unless ``agent`` plays, in every case's position, a legal move the solver does not know to lose;
    the message lists each case it fails, with the moves that hold.  No case: it passes."""
    failures = []
    for case in cases:
        moves = tuple(int(c) - 1 for c in case["moves"])
        move = assert_legal_move(agent, Position(moves), seconds)
        if move in case.get("losing_columns", [case.get("bad_column")]):
            holds = ", ".join(str(c) for c in case.get("holding_columns", [])) or "none known"
            where = "; ".join(f"{k} {case[k]}" for k in ("episode_id", "source") if case.get(k) is not None)
            failures.append(f"after moves {case['moves']!r} (columns 1-7) the agent plays column {move}, which loses "
                            f"(solver's moves that hold, columns from 0: {holds}{'; ' + where if where else ''})")
    assert not failures, f"{len(failures)} of {len(cases)} regression case(s) still lost:\n" + "\n".join(failures)
