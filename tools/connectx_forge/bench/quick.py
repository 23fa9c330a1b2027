"""The quick benchmarks of BENCHMARKS.md (``cxforge bench`` with no NAME, what ``make bench`` runs).

The game-loop benchmark, the classic agents' speed against their plain
definitions, and the solver on Pons' easy sets (when ../shared is present),
one after another, each under a heading.  The long runs (win-rate tables,
mistake rates, hard Pons sets) have their own commands, listed in BENCHMARKS.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from connectx_forge.paths import PONS_DIR

EASY = ("Test_L3_R1", "Test_L2_R1", "Test_L1_R1")


class Step(NamedTuple):
    """One benchmark of the quick set: its heading, and its ``cxforge bench`` arguments (None: skipped, why)."""

    heading: str
    argv: list[str] | None
    skipped: str = ""


def steps(pons: Path = PONS_DIR) -> list[Step]:
    """The quick set, in order."""
    solver = (Step("Solver on Pons' easy sets", ["solver", *(str(pons / name) for name in EASY)])
              if (pons / EASY[0]).is_file() else
              Step("Solver on Pons' easy sets", None, f"skipped: Pons' sets not found at {pons}"))
    return [Step("Game loop vs kaggle_environments.evaluate", ["loop"]),
            Step("Classic agents vs their plain definitions", ["agents"]),
            solver]
