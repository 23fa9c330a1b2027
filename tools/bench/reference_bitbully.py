"""bitbully as the reference of ``cxforge bench solver --reference bitbully``, from a bench-only layer.

bitbully (PyPI, C++ behind pybind11) is a strong Connect Four solver; it is
licensed AGPL, so it is never a dependency of this package, never embedded in
a submission, vendored or shipped.  ``make bench-reference`` installs the
pinned version into ``LAYER`` (``pip install --target``), a folder of the
user's cache; ``load()`` imports it from there only when a bench asks for it,
and where it is absent says in one line how to install it.

``solve_file`` times it as the bench times our engine: one position at a time,
its transposition table and node counter reset before each (Pons' protocol),
no opening book, the exact score by its MTD(f) driver (the sign alone with
``weak``), each position's CPU time of this process (``time.process_time``), the
clearing timed apart.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from typing import Any

from connectx_forge.tools.bench.solver import SolverFigures, figures
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.paths import user_cache

PIN = "0.0.79"  # the bitbully version that ``make bench-reference`` installs
LAYER = user_cache() / "bench-layer"
INSTALL = f"make bench-reference (pip install --no-deps --target {LAYER} bitbully=={PIN})"


def load(layer: Path | None = None) -> Any:
    """bitbully's core module from ``layer`` (default ``LAYER``), or a one-line ``UserError`` saying how to
    install it."""
    layer = LAYER if layer is None else layer
    if not (layer / "bitbully").is_dir():
        raise UserError(f"--reference bitbully: bitbully is not installed in the bench layer {layer}; run {INSTALL}")
    if str(layer) not in sys.path:
        sys.path.append(str(layer))  # after the venv: the layer adds bitbully, shadows nothing
    try:
        return importlib.import_module("bitbully.bitbully_core")
    except ImportError as exc:
        raise UserError(f"--reference bitbully: cannot import it from {layer} ({exc}); rerun {INSTALL}") from None


def solve_file(positions: list[tuple[str, int]], weak: bool, layer: Path | None = None) -> SolverFigures:
    """bitbully's figures on ``positions`` (Pons move strings, columns 1-7, and their exact scores), as
    ``solver.bench_file`` gives ours, timed in CPU seconds."""
    core = load(layer)
    solver = core.BitBullyCore()  # no book: the search alone
    correct = nodes = 0
    times: list[float] = []
    wrong: list[str] = []
    clearing = 0.0
    for moves, expected in positions:
        board = core.BoardCore()
        if not board.setBoard("".join(str(int(c) - 1) for c in moves)):  # bitbully numbers columns 0-6
            raise UserError(f"--reference bitbully: it refuses the position {moves}")
        start = time.process_time()
        solver.resetTranspositionTable()
        solver.resetNodeCounter()
        clearing += time.process_time() - start
        start = time.process_time()
        score = solver.mtdf(board, 0)
        times.append(time.process_time() - start)
        nodes += solver.getNodeCounter()
        got = (score > 0) - (score < 0) if weak else score
        want = (expected > 0) - (expected < 0) if weak else expected
        if got == want:
            correct += 1
        else:
            wrong.append(f"{moves} {got} (expected {want})")
    return figures(len(positions), correct, nodes, sum(times), wrong, clearing)
