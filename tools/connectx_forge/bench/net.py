"""Benchmark: the policy network's weight precisions, and its move time.

Exports a supervised checkpoint at float32, float16 and int8, and counts how
often each picks the float32 file's move on Pons' positions (the mistake
tables' positions; training holds them out).  Also times ``net`` moves (encode,
forward, masked argmax) with the committed weights, after loading them once.

    cxforge bench net --checkpoint runs/net/checkpoint.pt
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from agents.board import Board
from agents.net.agent import net_move, policy_value_net
from agents.net.features import encode, feature_size
from agents.net.mlp import load_mlp, masked_argmax
from connectx_forge.boundedread import read_positions
from connectx_forge.errors import UserError
from connectx_forge.paths import PONS_DIR


def pons_positions(folder: Path, limit: int) -> list[Board]:
    """Up to ``limit`` positions from every Pons set in ``folder``, in file order."""
    boards: list[Board] = []
    for path in sorted(folder.glob("Test_L*_R*")):
        boards += [Board.from_pons(moves) for moves, _ in read_positions(path)[:limit // 6 + 1]]
    return boards[:limit]


def picks(weights: bytes, boards: list[Board]) -> list[int]:
    """The legal column a weight file's policy ranks highest, for each board."""
    logits, _ = load_mlp(weights).policy_value(np.stack([encode(b) for b in boards]))
    return [masked_argmax(row, b.legal_moves()) for row, b in zip(logits, boards, strict=True)]


def compare(checkpoint: Path, positions: int = 3000, pons: Path = PONS_DIR) -> int:
    """Print how often float16 and int8 exports pick float32's move, and the ``net`` move time; 0."""
    if not Path(checkpoint).exists():
        raise UserError(f"no checkpoint at {checkpoint} (train one with cxforge train)")
    if not Path(pons).is_dir():
        raise UserError(f"no Pons sets at {pons}")
    from connectx_forge.train import checkpoint as checkpoints  # torch at its top (and netlib's): loads here only
    from connectx_forge.train.netlib import build_mlp, export_bytes, hidden_of, restoring

    ckpt = checkpoints.load(Path(checkpoint))  # data, never code: a pickle is refused
    model = build_mlp(feature_size(6, 7), hidden_of(ckpt, feature_size(6, 7), 8, Path(checkpoint)), 8)
    with restoring(Path(checkpoint)):
        model.load_state_dict(ckpt["model"])
    boards = pons_positions(Path(pons), positions)
    ref = picks(export_bytes(model, "policy_value", "float32"), boards)
    for dtype in ("float16", "int8"):
        data = export_bytes(model, "policy_value", dtype)
        same = sum(a == b for a, b in zip(ref, picks(data, boards), strict=True))
        print(f"{dtype}: {len(data)} bytes, same move as float32 on {same}/{len(boards)} "
              f"({100 * same / len(boards):.2f}%)")
    policy_value_net.cache_clear()  # the import already loaded them: time a fresh load
    start = time.perf_counter()
    policy_value_net()
    load_ms = 1e3 * (time.perf_counter() - start)
    times = []
    for b in boards:
        start = time.perf_counter()
        net_move(b)
        times.append(time.perf_counter() - start)
    print(f"net move (committed weights): median {1e3 * statistics.median(times):.3f} ms, "
          f"max {1e3 * max(times):.2f} ms over {len(times)} positions; loading the weights first took {load_ms:.1f} ms")
    return 0
