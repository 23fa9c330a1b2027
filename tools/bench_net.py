"""Benchmark: mistake rates of the network agents on Pascal Pons' six test sets.

A mistake is a move whose win/draw/loss class is below the best available one.
The best class comes from the set's own exact score for the side to move; the
played move's class is minus the exact solver's weak score (win/draw/loss) of
the position after it.  That is the same verdict as labelling every move with
``Solver.analyze``, for one solve per position instead of seven.  Positions
whose solve passes ``--solve-budget`` seconds are skipped and counted.

    .venv/bin/python -m tools.bench_net --agents net,net-search --sample 200 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from tqdm import tqdm

from agents.board import Board

SETS = [("Test_L3_R1", "End-Easy"), ("Test_L2_R1", "Middle-Easy"), ("Test_L2_R2", "Middle-Medium"),
        ("Test_L1_R1", "Begin-Easy"), ("Test_L1_R2", "Begin-Medium"), ("Test_L1_R3", "Begin-Hard")]
PONS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pons"


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def move_class(board: Board, col: int, solver, budget_s: float) -> int | None:
    """The win/draw/loss class of playing ``col`` for the side to move; None past the budget."""
    from agents.solver.search import Timeout

    if board.is_winning_move(col):
        return 1
    solver.deadline = time.perf_counter() + budget_s
    try:
        return -solver.solve(board.play(col), weak=True)
    except Timeout:
        return None
    finally:
        solver.deadline = float("inf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="net,net-search")
    parser.add_argument("--sample", type=int, default=200, help="positions per set (sampled, seeded)")
    parser.add_argument("--hard-sample", type=int, default=None, help="positions for Begin-Medium/Hard")
    parser.add_argument("--sets", default=",".join(n for _, n in SETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solve-budget", type=float, default=20.0)
    parser.add_argument("--pons", type=Path, default=PONS_DIR)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from agents.net.agent import net_move
    from agents.net.search import search_move
    from agents.solver.search import Solver

    movers = {"net": net_move, "net-search": search_move}
    names = [a for a in args.agents.split(",") if a]
    solver = Solver()
    wanted = set(args.sets.split(","))
    results = []
    for fname, label in SETS:
        if label not in wanted:
            continue
        lines = (args.pons / fname).read_text().split("\n")
        lines = [ln.split() for ln in lines if ln.strip()]
        n = args.sample if args.hard_sample is None or "Begin-M" not in label and "Hard" not in label else args.hard_sample
        picked = random.Random(args.seed).sample(lines, min(n, len(lines)))
        counts = {a: [0, 0, 0] for a in names}  # mistakes, judged, skipped
        for moves, score in tqdm(picked, desc=label, leave=False):
            board = Board.from_pons(moves)
            best = _sign(int(score))
            for a in names:
                cls = move_class(board, int(movers[a](board)), solver, args.solve_budget)
                if cls is None:
                    counts[a][2] += 1
                    continue
                counts[a][1] += 1
                counts[a][0] += cls < best
        for a in names:
            m, j, s = counts[a]
            results.append({"set": label, "agent": a, "mistakes": m, "judged": j, "skipped": s,
                            "rate": m / j if j else None})
            print(f"{label:14s} {a:11s} {m:4d}/{j:<4d} = {100 * m / max(j, 1):5.1f}%  (skipped {s})", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
