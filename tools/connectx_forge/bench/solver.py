"""Benchmark: the solver on Pascal Pons' benchmark files (``cxforge bench solver``).

``agent_mistakes`` measures the ``solver`` agent's mistake rate on them instead
(``--agent``).

Each file holds ``<moves> <score>`` lines.  Per file it reports how many scores
are right, the mean nodes and time per position, the nodes per second, and the
ratio of the mean nodes to the counts Pons published for his C++ solver.  The
transposition table is cleared before each position, as in Pons' protocol.
"""

from __future__ import annotations

import random
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agents.board import Board
from agents.solver.chooser import describe
from agents.solver.engine import Kind
from agents.solver.policy import POLICY
from connectx_forge import progress as progress_bars
from connectx_forge import tool_engines
from connectx_forge.errors import UserError
from connectx_forge.solver.mistakes import measure, solver_mover
from connectx_forge.stats import format_rate
from connectx_forge.table import render

T = TypeVar("T")

# Pons' published mean nodes per position (exact, weak), keyed by file name.
PONS_NODES: dict[str, tuple[str, float, float]] = {
    "Test_L3_R1": ("End-Easy", 51.28, 29.4),
    "Test_L2_R1": ("Middle-Easy", 449.6, 533),
    "Test_L2_R2": ("Middle-Medium", 39_900, 20_210),
    "Test_L1_R1": ("Begin-Easy", 3_298, 22_230),
    "Test_L1_R2": ("Begin-Medium", 1_201_000, 538_700),
    "Test_L1_R3": ("Begin-Hard", 65_920_000, 38_120_000),
}


@dataclass(frozen=True)
class SolverFigures:
    """One solver's figures on one file: of ``n`` positions, ``correct`` scored right (``wrong``: the others,
    as "moves got (expected want)"), the mean nodes and seconds a position, nodes per second, and the mean
    seconds spent clearing the table (not in the search's time)."""

    n: int
    correct: int
    mean_nodes: float
    mean_time: float
    nps: float
    wrong: tuple[str, ...] = ()
    mean_clear: float = 0.0


def figures(positions: int, correct: int, nodes: int, elapsed: float, wrong: list[str],
            clearing: float = 0.0) -> SolverFigures:
    """The figures of a run over ``positions`` positions from its totals (nodes, seconds searching, clearing)."""
    n = max(positions, 1)
    return SolverFigures(positions, correct, nodes / n, elapsed / n, nodes / elapsed if elapsed else 0.0,
                         tuple(wrong), clearing / n)


def select(positions: list[T], limit: int | None, sample: int | None, seed: int) -> list[T]:
    """``sample`` positions drawn with ``seed`` (all when None), then the first ``limit`` of them."""
    if sample is not None:
        positions = random.Random(seed).sample(positions, min(sample, len(positions)))
    if limit is not None:
        positions = positions[:limit]
    return positions


def bench_file(path: Path, positions: list[tuple[str, int]], weak: bool, engine: str = "python",
               progress: bool = True, clock: Callable[[], float] = time.perf_counter,
               c_entries: int | None = None) -> SolverFigures:
    """Solve each position with a cleared table (the clearing untimed); the figures for one file, timed by
    ``clock``, the compiled table of ``c_entries`` (default: the tools' size)."""
    solver = tool_engines.engine(engine) if c_entries is None else tool_engines.engine(engine, c_entries=c_entries)
    correct = nodes = 0
    elapsed = 0.0
    wrong: list[str] = []
    plan = f"cxforge bench solver: {path.name}: {progress_bars.count(len(positions), 'position')}"
    bar = progress_bars.bar(len(positions), path.name, unit="pos", enabled=progress, plan=plan)
    clearing = 0.0
    for moves, expected in positions:
        start = clock()
        solver.reset()
        clearing += clock() - start
        board = Board.from_pons(moves)
        start = clock()
        score = solver.solve(board, weak=weak)
        elapsed += clock() - start
        nodes += solver.nodes
        want = (expected > 0) - (expected < 0) if weak else expected
        if score == want:
            correct += 1
        else:
            wrong.append(f"{moves} {score} (expected {want})")
        bar.update()
    bar.close()
    return figures(len(positions), correct, nodes, elapsed, wrong, clearing)


def agent_mistakes(files: Sequence[tuple[Path, list[tuple[str, int]]]], budget: float | None = None,
                   engine: str = "python", limit: int | None = None, sample: int | None = None, seed: int = 0,
                   progress: bool = True) -> int:
    """Print the solver agent's mistake rate per file (tools/connectx_forge/solver/mistakes.py's harness); 0."""
    budget = POLICY.move_budget if budget is None else budget
    if budget <= 0:
        raise UserError(f"--budget must be positive, got {budget}")
    print(f"solver agent, {budget:g} s a move, no overage; mistake = a move below the best win/draw/loss class "
          f"(labels: {describe(engine)})")
    rows, notes = [], []
    for path, positions in files:
        positions = select(positions, limit, sample, seed)
        name = PONS_NODES.get(path.name, (path.name,))[0]
        r = measure(name, positions, {"solver": solver_mover(budget)}, progress=progress, engine=engine)["solver"]
        n, think = len(r.mistakes), r.think_s or [0.0]
        how = ", ".join(f"{k} {v}" for k, v in r.how.most_common())
        rows.append([name, f"{n}/{r.judged}", format_rate(n, r.judged), f"{sum(think) / len(think):.3f}s",
                     f"{max(think):.2f}s", how])
        notes += [f"  mistake ({name}): {line}" for line in r.mistakes[:3]]
    print(render(["set", "mistakes", "rate [95% CI]", "mean time", "max time", "how the moves were chosen"], rows,
                 "markdown", align="lrrrrl"))
    if notes:
        print("\n".join(notes))
    return 0


def solve_files(files: Sequence[tuple[Path, list[tuple[str, int]]]], weak: bool = False, engine: str = "python",
                limit: int | None = None, sample: int | None = None, seed: int = 0, progress: bool = True) -> int:
    """Print the solver's figures per file next to Pons'; 1 if any score was wrong, else 0."""
    rows, notes = [], []
    failed = False
    for path, positions in files:
        positions = select(positions, limit, sample, seed)
        result = bench_file(path, positions, weak, engine, progress)
        name, exact, weak_nodes = PONS_NODES.get(path.name, (path.name, 0.0, 0.0))
        pons = weak_nodes if weak else exact
        ratio = f"{result.mean_nodes / pons:.2f}" if pons else "-"
        rows.append([name, f"{result.correct}/{result.n}", f"{result.mean_nodes:,.1f}", f"{pons:,.1f}", ratio,
                     f"{result.mean_time * 1e3:.2f}ms", f"{result.nps:,.0f}"])
        notes += [f"  wrong ({name}): {line}" for line in result.wrong[:5]]
        failed |= bool(result.wrong)
    print(render(["set", "correct", "mean nodes", "Pons", "ratio", "mean time", "nodes/s"], rows, "markdown",
                 align="lrrrrrr"))
    if notes:
        print("\n".join(notes))
    return 1 if failed else 0


def reference_file(program: str, positions: list[tuple[str, int]], weak: bool) -> SolverFigures:
    """A reference solver's figures for one file: ``program`` reads move strings, one a line, and answers
    ``score nodes seconds`` for each (bench/pons_harness.cpp puts Pons' C++ behind this protocol)."""
    moves = "".join(m + "\n" for m, _ in positions)
    try:
        done = subprocess.run([program, *(["-w"] if weak else [])], input=moves, capture_output=True, text=True,
                              timeout=3600)
    except OSError as exc:
        raise UserError(f"--reference {program}: cannot run it ({exc.strerror})") from None
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or len(rows) != len(positions) or any(len(r) != 3 for r in rows):
        raise UserError(f"--reference {program}: expected one 'score nodes seconds' line per position, got "
                        f"{len(rows)} for {len(positions)} (exit {done.returncode}) {done.stderr.strip()[:200]}")
    correct = nodes = 0
    elapsed = 0.0
    for (_, expected), (score, count, seconds) in zip(positions, rows, strict=True):
        want = (expected > 0) - (expected < 0) if weak else expected
        correct += int(score) == want
        nodes += int(count)
        elapsed += float(seconds)
    return figures(len(positions), correct, nodes, elapsed, [])


def side_by_side(files: Sequence[tuple[Path, list[tuple[str, int]]]], weak: bool = False,
                 reference: str | None = None, limit: int | None = None, sample: int | None = None, seed: int = 0,
                 progress: bool = True) -> int:
    """Print, per file, the compiled and the Python solver (and ``reference``) on the same positions in one run,
    with each one's nodes per second as a ratio to the first row's; 1 if any score was wrong, else 0."""
    tool_engines.resolve(Kind.C)  # both engines run: one line if the compiled one cannot
    cells = []
    failed = False
    for path, positions in files:
        positions = select(positions, limit, sample, seed)
        name = PONS_NODES.get(path.name, (path.name,))[0]
        rows = [(str(kind), bench_file(path, positions, weak, kind, progress)) for kind in Kind]
        if reference:
            rows.insert(0, ("reference", reference_file(reference, positions, weak)))
        base = rows[0][1].nps or 1.0
        for engine, r in rows:
            cells.append([name, engine, f"{r.correct}/{r.n}", f"{r.mean_nodes:,.1f}",
                          f"{r.mean_time * 1e3:.3f}ms", f"{r.nps:,.0f}", f"{r.nps / base:.2f}x"])
            failed |= r.correct != r.n
    print(render(["set", "engine", "correct", "mean nodes", "mean time", "nodes/s", "vs ref"], cells, "markdown",
                 align="llrrrrr"))
    return 1 if failed else 0
