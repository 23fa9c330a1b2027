"""Benchmark: how deep the network search gets in a move's time.

On the first Begin-Medium positions, ``NetSearch`` with ``net``'s committed
network runs for ``budget`` seconds each, as ``net-search`` and the solver's
fallback do; reported are the deepest finished iteration and the positions
searched a second.  Depth in a fixed time is what a search change buys a move;
compare two versions by running this on each, back to back.

    cxforge bench search --positions 60 --budget 0.3
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from agents.board import Board
from agents.net.agent import policy_value_net
from agents.net.tree import NetSearch
from connectx_forge.boundedread import read_positions
from connectx_forge.errors import UserError
from connectx_forge.solver.mistakes import SETS


def run(folder: Path, positions: int, budget: float) -> int:
    """Print the mean depth reached and the node rate over the first ``positions`` of Begin-Medium; 0."""
    path = Path(folder) / next(fname for fname, name in SETS if name == "Begin-Medium")
    if not path.exists():
        raise UserError(f"no Pons set at {path} (pass --pons)")
    boards = [Board.from_pons(moves) for moves, _ in read_positions(path)[:positions]]
    net = policy_value_net()  # loaded before the clock starts
    depths, rates = [], []
    for board in boards:
        start = time.perf_counter()
        search = NetSearch(net, start + budget)
        depths.append(search.choose(board)[1])
        rates.append(search.nodes / (time.perf_counter() - start))
    print(f"network search, {budget:g} s on each of {len(boards)} Begin-Medium positions: depth reached "
          f"mean {statistics.mean(depths):.2f} (min {min(depths)}, max {max(depths)}), "
          f"{statistics.median(rates):,.0f} positions searched a second (median)")
    return 0
