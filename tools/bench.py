"""``make bench``: the quick benchmarks of BENCHMARKS.md, one after another.

Runs the game-loop benchmark, the classic agents' speed against their plain
definitions, and the solver on Pons' easy sets (when ../shared is present).
The long runs (win-rate tables, mistake rates, hard Pons sets) have their own
commands, listed in BENCHMARKS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tools import bench_agents, bench_loop
from tools.cli import main as cxforge

PONS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pons"
EASY = ("Test_L3_R1", "Test_L2_R1", "Test_L1_R1")


def main() -> int:
    print("## Game loop vs kaggle_environments.evaluate\n", flush=True)
    bench_loop.main([])
    print("\n## Classic agents vs their plain definitions\n", flush=True)
    bench_agents.main([])
    print("\n## Solver on Pons' easy sets\n", flush=True)
    if not (PONS / EASY[0]).is_file():
        print(f"skipped: Pons' sets not found at {PONS}")
        return 0
    return cxforge(["bench-solver", *(str(PONS / name) for name in EASY)])


if __name__ == "__main__":
    sys.exit(main())
