"""Benchmark: the classic agents' move time against their plain transcriptions.

For every windowed agent (``lookahead``, ``minimax``, ``alphabeta``, ``improved``
and variants) it times, on the same seeded positions in the same run, the fast
agent's choice of best moves and the plain definition in
``tests/reference_agents.py``, and reports the medians and their ratio.  It
also checks that both choose the same set of best moves on every position.

The plain definitions live in the checkout's tests/, so this runs from a
checkout (not an installed wheel)::

    cxforge bench agents                                        # 6x7x4, 30 positions
    cxforge bench agents --rows 10 --columns 10 --fast-only
"""

from __future__ import annotations

import importlib.util
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from time import process_time
from types import ModuleType

from agents import alphabeta, improved, lookahead, minimax
from agents.board import Board, Size
from agents.heuristics import BERKELEY
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.paths import PROJECT_ROOT
from connectx_forge.table import render

REFERENCE = PROJECT_ROOT / "tests" / "reference_agents.py"

FAST: dict[str, Callable[[Board], list[int]]] = {
    "lookahead": lookahead.best_moves,
    "lookahead-berkeley": lambda b: lookahead.best_moves(b, BERKELEY),
    "minimax-2": lambda b: minimax.best_moves(b, depth=2),
    "minimax": minimax.best_moves,
    "alphabeta": alphabeta.best_moves,
    "alphabeta-4": lambda b: alphabeta.best_moves(b, depth=4),
    "improved": improved.best_moves,
}


@dataclass(frozen=True)
class AgentTiming:
    """One agent's row: its median and slowest move in milliseconds; against the plain definition (on the
    first ``compared`` positions), that one's median, their ratio, and on how many positions the best sets
    differed (``plain_ms`` None: not compared)."""

    agent: str
    fast_ms: float
    max_ms: float
    plain_ms: float | None = None
    ratio: float = 0.0
    mismatches: int = 0
    compared: int = 0


def plain_definitions() -> ModuleType:
    """tests/reference_agents.py, the plain transcriptions, loaded from the checkout by path."""
    if not REFERENCE.is_file():
        raise UserError(f"the plain definitions are not at {REFERENCE}: run from a checkout, or use --fast-only")
    spec = importlib.util.spec_from_file_location("reference_agents", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_positions(size: Size, count: int, seed: int) -> list[Board]:
    """``count`` open positions after 0 to half-board random moves that never end the game."""
    rng = random.Random(seed)
    rows, columns, inarow = size
    out: list[Board] = []
    while len(out) < count:
        board = Board(rows, columns, inarow)
        for _ in range(rng.randint(0, rows * columns // 2)):
            moves = [c for c in board.legal_moves() if not board.play(c).is_over()]
            if not moves:
                break
            board = board.play(rng.choice(moves))
        if not board.is_over():
            out.append(board)
    return out


def _time(fn: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds (``process_time``), so that other jobs on a shared machine do not count."""
    start = process_time()
    result = fn()
    return process_time() - start, result


def run(names: list[str], boards: list[Board], fast_only: bool, ref_positions: int,
        progress: bool = True) -> list[AgentTiming]:
    """Each agent's median move time on ``boards``, and the plain definition's on the first ``ref_positions``."""
    ref = None if fast_only or ref_positions <= 0 else plain_definitions()
    rows = []
    for name in names:
        fast_t: list[float] = []
        ref_t: list[float] = []
        mismatches = 0
        plan = f"cxforge bench agents: {name}: {progress_bars.count(len(boards), 'position')}"
        with progress_bars.bar(len(boards), name, unit="pos", enabled=progress, plan=plan) as bar:
            for i, board in enumerate(boards):
                mismatches += _time_one(name, board, ref if i < ref_positions else None, fast_t, ref_t)
                bar.update()
        rows.append(_row(name, fast_t, ref_t, mismatches))
    return rows


def _time_one(name: str, board: Board, ref: ModuleType | None, fast_t: list[float], ref_t: list[float]) -> int:
    """Time the fast agent (and the plain one, given ``ref``) on one board; 1 if their best sets differ."""
    FAST[name](board)  # warm caches (window tables) outside the timing
    t, best = _time(lambda: FAST[name](board))
    fast_t.append(t)
    if ref is None:
        return 0
    t, scores = _time(lambda: ref.reference_scores(name, board.to_grid(), board.mark,
                                                   board.rows, board.columns, board.inarow))
    ref_t.append(t)
    return int(best != ref.best_moves(scores))


def _row(name: str, fast_t: list[float], ref_t: list[float], mismatches: int) -> AgentTiming:
    fast_ms, max_ms = 1e3 * statistics.median(fast_t), 1e3 * max(fast_t)
    if not ref_t:
        return AgentTiming(name, fast_ms, max_ms)
    paired = fast_t[:len(ref_t)]
    return AgentTiming(name, fast_ms, max_ms, plain_ms=1e3 * statistics.median(ref_t),
                       ratio=statistics.median(ref_t) / statistics.median(paired), mismatches=mismatches,
                       compared=len(ref_t))


def table(rows: list[AgentTiming], size: Size, positions: int, seed: int,
          fast_only: bool) -> str:
    """``run``'s rows as the markdown table, under a line naming the board and positions."""
    r, c, k = size
    fast_only = fast_only or not any(row.plain_ms is not None for row in rows)
    lines = [f"\n{r}x{c}x{k}, {positions} positions (seed {seed}); median CPU time per move (process_time)\n"]
    if fast_only:
        headers = ["agent", "fast median ms", "slowest ms"]
        cells = [[row.agent, f"{row.fast_ms:.2f}", f"{row.max_ms:.2f}"] for row in rows]
    else:
        headers = ["agent", "fast median ms", "plain median ms", "speed-up", "same best set", "slowest fast ms"]
        cells = [[row.agent, f"{row.fast_ms:.2f}", f"{row.plain_ms or 0.0:.1f}", f"{row.ratio:.0f}x",
                  f"{row.compared - row.mismatches}/{row.compared}", f"{row.max_ms:.2f}"] for row in rows]
    lines.append(render(headers, cells, "markdown", align="l" + "r" * (len(headers) - 1)))
    return "\n".join(lines)
