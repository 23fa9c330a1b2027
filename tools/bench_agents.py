"""Benchmark: the classic agents' move time against their plain transcriptions.

For every windowed agent (``lookahead``, ``minimax``, ``alphabeta``, ``improved``
and variants) it times, on the same seeded positions in the same run, the fast
agent's choice of best moves and the plain definition in
``tests/reference_agents.py``, and reports the medians and their ratio.  It
also checks that both choose the same set of best moves on every position.

Run from the repository root::

    .venv/bin/python -m tools.bench_agents                      # 6x7x4, 30 positions
    .venv/bin/python -m tools.bench_agents --size 10 10 4 --fast-only
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from time import process_time
from typing import Callable

from tqdm import tqdm

from agents import alphabeta, improved, lookahead, minimax
from agents.board import Board
from agents.heuristics import BERKELEY

try:
    from tests import reference_agents as ref
except ImportError:  # run outside the repository root
    sys.exit("tools.bench_agents needs tests/reference_agents.py: run it from the repository root")

FAST: dict[str, Callable[[Board], list[int]]] = {
    "lookahead": lookahead.best_moves,
    "lookahead-berkeley": lambda b: lookahead.best_moves(b, BERKELEY),
    "minimax-2": lambda b: minimax.best_moves(b, depth=2),
    "minimax": minimax.best_moves,
    "alphabeta": alphabeta.best_moves,
    "alphabeta-4": lambda b: alphabeta.best_moves(b, depth=4),
    "improved": improved.best_moves,
}


def bench_positions(size: tuple[int, int, int], count: int, seed: int) -> list[Board]:
    """``count`` open positions after 0 to half-board random moves that never end the game."""
    rng = random.Random(seed)
    rows, columns, inarow = size
    out = []
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


def run(names: list[str], boards: list[Board], fast_only: bool, ref_positions: int) -> list[dict]:
    rows = []
    for name in names:
        fast_t, ref_t, mismatches = [], [], 0
        for i, board in enumerate(tqdm(boards, desc=name, leave=False)):
            FAST[name](board)  # warm caches (window tables) outside the timing
            t, best = _time(lambda: FAST[name](board))
            fast_t.append(t)
            if not fast_only and i < ref_positions:
                t, scores = _time(lambda: ref.reference_scores(name, board.to_grid(), board.mark,
                                                               board.rows, board.columns, board.inarow))
                ref_t.append(t)
                mismatches += best != ref.best_moves(scores)
        row = {"agent": name, "fast_ms": 1e3 * statistics.median(fast_t), "max_ms": 1e3 * max(fast_t)}
        if ref_t:
            paired = fast_t[:len(ref_t)]
            row.update(plain_ms=1e3 * statistics.median(ref_t),
                       ratio=statistics.median(ref_t) / statistics.median(paired),
                       mismatches=mismatches, compared=len(ref_t))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_agents", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs=3, default=(6, 7, 4), metavar=("ROWS", "COLUMNS", "INAROW"))
    parser.add_argument("--positions", type=int, default=30, help="positions to time (default 30)")
    parser.add_argument("--ref-positions", type=int, default=None,
                        help="time the plain reference on the first N positions only (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", choices=sorted(FAST), default=list(FAST))
    parser.add_argument("--fast-only", action="store_true", help="skip the plain references (big boards)")
    args = parser.parse_args(argv)
    boards = bench_positions(tuple(args.size), args.positions, args.seed)
    ref_n = args.positions if args.ref_positions is None else args.ref_positions
    results = run(args.agents, boards, args.fast_only, ref_n)
    r, c, k = args.size
    print(f"\n{r}x{c}x{k}, {len(boards)} positions (seed {args.seed}); median CPU time per move (process_time)\n")
    if args.fast_only:
        print("| agent | fast median ms | slowest ms |\n|---|---:|---:|")
        for row in results:
            print(f"| {row['agent']} | {row['fast_ms']:.2f} | {row['max_ms']:.2f} |")
    else:
        print("| agent | fast median ms | plain median ms | speed-up | same best set | slowest fast ms |")
        print("|---|---:|---:|---:|---:|---:|")
        for row in results:
            same = f"{row['compared'] - row['mismatches']}/{row['compared']}"
            print(f"| {row['agent']} | {row['fast_ms']:.2f} | {row['plain_ms']:.1f} | {row['ratio']:.0f}x | {same} | {row['max_ms']:.2f} |")
    return 1 if any(row.get("mismatches") for row in results) else 0


if __name__ == "__main__":
    sys.exit(main())
