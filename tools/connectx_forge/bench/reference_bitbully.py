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
clearing timed apart; ``against_bitbully`` prints it beside the compiled solver.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from agents.solver.engine import Kind
from agents.solver.native import DEEP_ENTRIES, DEFAULT_ENTRIES
from connectx_forge import tool_engines
from connectx_forge.bench.solver import PONS_NODES, SolverFigures, bench_file, figures, select
from connectx_forge.errors import UserError
from connectx_forge.paths import user_cache
from connectx_forge.table import render

PIN = "0.0.79"  # the bitbully version that ``make bench-reference`` installs
LAYER = user_cache() / "bench-layer"
INSTALL = f"make bench-reference (pip install --no-deps --target {LAYER} bitbully=={PIN})"


def load(layer: Path | None = None) -> ModuleType:
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


def against_bitbully(files: Sequence[tuple[Path, list[tuple[str, int]]]], weak: bool = False,
                     limit: int | None = None, sample: int | None = None, seed: int = 0,
                     progress: bool = True) -> int:
    """Print, per file and over all, the compiled solver at the agent's table size and bitbully on the same
    positions in one run, each position's CPU time, and
    bitbully's time over ours (above 1: ours is faster); 1 if any score was wrong, else 0."""
    load()  # one line, before any work, if it is not installed
    tool_engines.resolve(Kind.C)
    ours_name = f"c ({DEFAULT_ENTRIES:,} + {DEEP_ENTRIES:,} deep entries)"
    ref_name = f"bitbully {PIN}"
    cells, notes = [], []
    failed = False
    totals = {ours_name: [0.0, 0, 0, 0.0, 0.0], ref_name: [0.0, 0, 0, 0.0, 0.0]}  # CPU s, correct, n, nodes, clear
    for path, positions in files:
        positions = select(positions, limit, sample, seed)
        name = PONS_NODES.get(path.name, (path.name,))[0]
        ours = bench_file(path, positions, weak, Kind.C, progress, time.process_time, DEFAULT_ENTRIES)
        ref = solve_file(positions, weak)
        for engine, r in ((ours_name, ours), (ref_name, ref)):
            ratio = ref.mean_time / r.mean_time if r.mean_time else 0.0
            cells.append([name, engine, f"{r.correct}/{r.n}", f"{r.mean_nodes:,.1f}",
                          f"{r.mean_time * 1e3:.3f}ms", f"{r.mean_clear * 1e3:.3f}ms", f"{r.nps:,.0f}",
                          f"{ratio:.2f}x"])
            total = totals[engine]
            total[0] += r.mean_time * r.n
            total[1] += r.correct
            total[2] += r.n
            total[3] += r.mean_nodes * r.n
            total[4] += r.mean_clear * r.n
            notes += [f"  wrong ({name}, {engine}): {line}" for line in r.wrong[:5]]
            failed |= r.correct != r.n
    if len(files) > 1:
        for engine, (cpu, correct, n, nodes, clear) in totals.items():
            ratio = totals[ref_name][0] / cpu if cpu else 0.0
            cells.append(["all", engine, f"{correct}/{n}", f"{nodes / max(n, 1):,.1f}",
                          f"{cpu / max(n, 1) * 1e3:.3f}ms", f"{clear / max(n, 1) * 1e3:.3f}ms",
                          f"{nodes / cpu if cpu else 0.0:,.0f}", f"{ratio:.2f}x"])
    print("clock: CPU time of this process per position (time.process_time); each table cleared before each "
          "position (its own column, not in the search's time or the ratio); no opening books; exact scores"
          + (" (signs compared: --weak)" if weak else ""))
    print(render(["set", "engine", "correct", "mean nodes", "mean CPU time", "clearing", "nodes/s",
                  "bitbully time / this"], cells, "markdown", align="llrrrrrr"))
    if notes:
        print("\n".join(notes))
    return 1 if failed else 0
