"""``cxforge bench-solver``: the solver on Pascal Pons' benchmark files.

With ``--agent`` it measures the ``solver`` agent's mistake rate instead.

Each file holds ``<moves> <score>`` lines.  Per file it reports how many scores
are right, the mean nodes and time per position, the nodes per second, and the
ratio of the mean nodes to the counts Pons published for his C++ solver.  The
transposition table is cleared before each position, as in Pons' protocol.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from agents.board import Board, BoardError
from tools.errors import UserError

HELP = "run the solver on Pons-format benchmark files (<moves> <score> per line)"

# Pons' published mean nodes per position (exact, weak), keyed by file name.
PONS_NODES: dict[str, tuple[str, float, float]] = {
    "Test_L3_R1": ("End-Easy", 51.28, 29.4),
    "Test_L2_R1": ("Middle-Easy", 449.6, 533),
    "Test_L2_R2": ("Middle-Medium", 39_900, 20_210),
    "Test_L1_R1": ("Begin-Easy", 3_298, 22_230),
    "Test_L1_R2": ("Begin-Medium", 1_201_000, 538_700),
    "Test_L1_R3": ("Begin-Hard", 65_920_000, 38_120_000),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", metavar="PATH", nargs="+", help="Pons-format files")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N positions of each file")
    parser.add_argument("--sample", type=int, metavar="N", help="N positions drawn at random (seeded) from each file")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument("--weak", action="store_true", help="win/draw/loss only (compares signs)")
    parser.add_argument("--agent", action="store_true",
                        help="instead: the solver agent's mistake rate (a move whose win/draw/loss class is below the best)")
    parser.add_argument("--budget", type=float, help="the agent's seconds per move (default: its normal budget)")
    parser.add_argument("--engine", choices=("python", "c"), default="python",
                        help="solve with the agent's Python solver, or its compiled twin (tools/csolver: the same "
                             "search, for C-speed figures and, with --agent, fast labels)")


def read_positions(path: Path) -> list[tuple[str, int]]:
    """The ``(moves, score)`` pairs of a Pons file; ``UserError`` names a bad line."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise UserError(f"{path}:{no}: expected '<moves> <score>', got {line!r}")
        try:
            Board.from_pons(parts[0])
            out.append((parts[0], int(parts[1])))
        except (ValueError, BoardError) as exc:
            raise UserError(f"{path}:{no}: {exc}") from None
    return out


def select(positions: list, limit: int | None, sample: int | None, seed: int) -> list:
    if sample is not None:
        positions = random.Random(seed).sample(positions, min(sample, len(positions)))
    if limit is not None:
        positions = positions[:limit]
    return positions


def bench_file(path: Path, positions: list[tuple[str, int]], weak: bool, engine: str = "python") -> dict:
    """Solve each position with a cleared table; the figures for one file."""
    from tqdm import tqdm

    if engine == "c":
        from tools.csolver import CSolver as Solver
    else:
        from agents.solver.search import Solver  # type: ignore[assignment]

    solver = Solver()
    correct = nodes = 0
    elapsed = 0.0
    wrong: list[str] = []
    for moves, expected in tqdm(positions, desc=path.name, unit="pos", leave=False):
        solver.reset()
        board = Board.from_pons(moves)
        start = time.perf_counter()
        score = solver.solve(board, weak=weak)
        elapsed += time.perf_counter() - start
        nodes += solver.nodes
        want = (expected > 0) - (expected < 0) if weak else expected
        if score == want:
            correct += 1
        else:
            wrong.append(f"{moves} {score} (expected {want})")
    n = max(len(positions), 1)
    return {"n": len(positions), "correct": correct, "mean_nodes": nodes / n,
            "mean_time": elapsed / n, "nps": nodes / elapsed if elapsed else 0.0, "wrong": wrong}


def run_agent(files: list, args: argparse.Namespace) -> int:
    """The solver agent's mistake rate per file (tools/mistakes.py's harness)."""
    from agents.solver.agent import MOVE_BUDGET
    from tools.mistakes import measure, solver_mover
    from tools.stats import format_rate

    budget = MOVE_BUDGET if args.budget is None else args.budget
    if budget <= 0:
        raise UserError(f"--budget must be positive, got {budget}")
    print(f"solver agent, {budget:g} s a move, no overage; mistake = a move below the best win/draw/loss class "
          f"(labels: {'compiled twin' if args.engine == 'c' else 'Python solver'})")
    print(f"{'set':<16} {'mistakes':>10} {'rate [95% CI]':>22} {'mean time':>10} {'max time':>9}  how the moves were chosen")
    for path, positions in files:
        positions = select(positions, args.limit, args.sample, args.seed)
        name = PONS_NODES.get(path.name, (path.name,))[0]
        r = measure(name, positions, {"solver": solver_mover(budget)}, engine=args.engine)["solver"]
        n, think = len(r.mistakes), r.think_s or [0.0]
        how = ", ".join(f"{k} {v}" for k, v in r.how.most_common())
        print(f"{name:<16} {n:>4}/{r.judged:<5} {format_rate(n, r.judged):>22} "
              f"{sum(think) / len(think):>9.3f}s {max(think):>8.2f}s  {how}")
        for line in r.mistakes[:3]:
            print(f"  mistake: {line}")
    return 0


def run(args: argparse.Namespace) -> int:
    for flag in ("limit", "sample"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UserError(f"--{flag} must be at least 1, got {value}")
    files = [(Path(p), read_positions(Path(p))) for p in args.paths]
    if args.agent:
        return run_agent(files, args)
    print(f"{'set':<22} {'correct':>11} {'mean nodes':>12} {'Pons':>12} {'ratio':>6} {'mean time':>11} {'nodes/s':>9}")
    failed = False
    for path, positions in files:
        positions = select(positions, args.limit, args.sample, args.seed)
        result = bench_file(path, positions, args.weak, args.engine)
        name, exact, weak = PONS_NODES.get(path.name, (path.name, 0.0, 0.0))
        pons = weak if args.weak else exact
        ratio = f"{result['mean_nodes'] / pons:.2f}" if pons else "-"
        print(f"{name:<22} {result['correct']:>5}/{result['n']:<5} {result['mean_nodes']:>12,.1f} "
              f"{pons:>12,.1f} {ratio:>6} {result['mean_time'] * 1e3:>9.2f}ms {result['nps']:>9,.0f}")
        for line in result["wrong"][:5]:
            print(f"  wrong: {line}")
        failed |= bool(result["wrong"])
    return 1 if failed else 0
