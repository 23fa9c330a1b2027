"""``cxforge train``: train the networks behind ``net``, ``net-search`` and ``dqn``.

``--method supervised`` (default) fits a policy+value MLP to positions labelled
by the exact solver (tools/labels.py; ``--generate G`` labels G more games per
run first).  The policy target puts its mass on the moves of the best win/draw/
loss class, favouring higher scores inside it; the value target is that class
(+1, 0, -1).  Positions are deduplicated, mirrored for augmentation, and split
into training and validation sets by position (a mirror pair stays together).

``--method dqn`` trains the ``dqn`` agent's Q-network instead (tools/train_dqn.py).

A run lives in ``runs/<name>/``: ``checkpoint.pt`` after every epoch (``--resume``
continues from it), ``history.json``, ``curves.png`` (loss, accuracy and mistake
rate), and the exported numpy weights.  ``--export`` also copies them to
``agents/data/``, where the agents and the bundler read them.  Runs are seeded:
the same flags and data give the same weights.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from tools.errors import UserError

HELP = "Train the net / net-search (supervised on solver labels) or dqn networks."

WIN_CLASS_WEIGHT = 100.0  # the class dominates the score in the policy target


# -- targets -----------------------------------------------------------------
def score_class(score: int) -> int:
    """Win (1), draw (0) or loss (-1) from an exact score."""
    return (score > 0) - (score < 0)


def policy_target(scores: Iterable[int | None], tau: float = 2.0) -> np.ndarray:
    """A move distribution: the best class's moves, softly preferring higher scores."""
    scores = list(scores)
    keys = np.array([-np.inf if s is None else WIN_CLASS_WEIGHT * score_class(s) + s for s in scores])
    e = np.exp((keys - keys.max()) / tau)
    return (e / e.sum()).astype(np.float32)


def value_target(scores: Iterable[int | None]) -> float:
    return float(score_class(max(s for s in scores if s is not None)))


# -- dataset -----------------------------------------------------------------
def holdout_keys(paths: Iterable[Path]) -> set[int]:
    """Keys (mirrors included) of the positions in Pons-format files, and of their children.

    Training leaves these out, so that mistake rates measured on the files are
    on positions the network never saw, and never saw one move on.
    """
    from agents.board import Board
    from tools.bench_solver import read_positions

    keys: set[int] = set()
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(p for p in Path(path).glob("Test_*") if p.is_file()) if Path(path).is_dir() else [Path(path)])
    for file in files:
        for moves, _ in read_positions(file):
            board = Board.from_pons(moves)
            for b in [board] + [board.play(c) for c in board.legal_moves()]:
                keys.update((b.key(), b.mirror().key()))
    return keys


def build_arrays(labels: Iterable[Any], limit: int | None = None, val_fraction: float = 0.05,
                 children: bool = True, holdout: set[int] | frozenset[int] = frozenset()) -> dict[str, np.ndarray]:
    """Features, targets and move classes for deduplicated, mirrored positions.

    ``labels`` yields ``tools.labels.Label`` (every column's exact score) and
    ``BestMove`` (a score and one best move: a one-hot policy target, classes
    unknown).  Each ``Label`` also gives the exact value of every child position
    (minus its column's class); with ``children`` those become value-only rows.
    Positions whose key is in ``holdout`` are skipped.  Keys: ``x`` features
    (uint8), ``p`` policy targets, ``w`` 1.0 where the policy target is known,
    ``v`` value targets, ``cls`` each column's class (-2 where full or unknown),
    ``full`` True where every legal column's class is known (the rows move
    metrics use), ``val`` True for validation rows.
    """
    from agents.net.features import encode
    from tools.labels import BestMove

    seen: set[int] = set()
    rows: list[tuple[Any, ...]] = []
    pending: list[tuple[Any, float, bool]] = []
    count = 0
    unknown = np.full(7, -2, dtype=np.int8)
    for lab in labels:
        board = lab.board()
        mirror = board.mirror()
        group = min(board.key(), mirror.key())
        if group in seen or board.key() in holdout:
            continue
        seen.add(group)
        count += 1
        is_val = (group * 2654435761 % 1000) < val_fraction * 1000
        pair = (board, mirror)[:1 + (mirror.key() != board.key())]
        if isinstance(lab, BestMove):
            for b, col in zip(pair, (lab.move, 6 - lab.move)):
                target = np.zeros(7, dtype=np.float32)
                target[col] = 1.0
                rows.append((b, target, 1.0, float(score_class(lab.score)), unknown, False, is_val))
        else:
            scores = list(lab.scores)
            for b, sc in zip(pair, (scores, scores[::-1])):
                rows.append((b, policy_target(sc), 1.0, value_target(sc),
                             np.array([-2 if x is None else score_class(x) for x in sc], dtype=np.int8), True, is_val))
            if children:
                for col, sc in enumerate(scores):
                    if sc is not None and not board.is_winning_move(col):
                        child = board.play(col)
                        if not child.is_full():
                            pending.append((child, float(-score_class(sc)), is_val))
        if limit is not None and count >= limit:
            break
    if not rows:
        raise UserError("no labelled positions found: generate some with --generate N")
    zeros = np.zeros(7, dtype=np.float32)
    for child, value, is_val in pending:
        mirror = child.mirror()
        group = min(child.key(), mirror.key())
        if group in seen or child.key() in holdout:
            continue
        seen.add(group)
        for b in (child, mirror)[:1 + (mirror.key() != child.key())]:
            rows.append((b, zeros, 0.0, value, unknown, False, is_val))
    return {"x": np.stack([encode(r[0]).astype(np.uint8) for r in rows]),
            "p": np.stack([r[1] for r in rows]), "w": np.array([r[2] for r in rows], dtype=np.float32),
            "v": np.array([r[3] for r in rows], dtype=np.float32), "cls": np.stack([r[4] for r in rows]),
            "full": np.array([r[5] for r in rows], dtype=bool), "val": np.array([r[6] for r in rows], dtype=bool)}


def move_metrics(logits: np.ndarray, p: np.ndarray, cls: np.ndarray) -> tuple[float, float]:
    """(accuracy: the argmax is a top-target move; mistake rate: its class is below the best)."""
    masked = np.where(cls > -2, logits, -np.inf)
    pick = masked.argmax(axis=1)
    rows = np.arange(len(pick))
    best = np.where(p >= p.max(axis=1, keepdims=True) - 1e-6, True, False)
    accuracy = float(best[rows, pick].mean())
    mistakes = float((cls[rows, pick] < cls.max(axis=1)).mean())
    return accuracy, mistakes


# -- CLI ---------------------------------------------------------------------
def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse


def _fraction(text: str) -> float:
    value = _positive(float)(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}")
    return value


def _hidden(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated layer widths, got {text!r}") from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"layer widths must be positive, got {text!r}")
    return sizes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--method", choices=("supervised", "dqn"), default="supervised",
                        help="supervised: policy+value on solver labels (net, net-search); dqn: the dqn agent")
    parser.add_argument("--name", default=None, help="run name (default: the method)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="runs folder (default runs/)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=_positive(int), default=30)
    parser.add_argument("--batch-size", type=_positive(int), default=256)
    parser.add_argument("--lr", type=_positive(float), default=2e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--hidden", type=_hidden, default=None,
                        help="hidden layer widths, e.g. 384,256,128 (dqn default 128,64)")
    parser.add_argument("--labels", type=Path, default=Path(".cache/labels"), help="label cache folder")
    parser.add_argument("--positions", type=_positive(int), default=None,
                        help="use at most N labelled positions (before mirroring)")
    parser.add_argument("--generate", type=int, default=0, metavar="GAMES",
                        help="label this many more games (shard --seed) before training")
    parser.add_argument("--label-engine", choices=("auto", "python", "c"), default="auto",
                        help="label with the agents' solver or its compiled twin (tools/csolver: same scores, ~20x "
                             "faster); auto: c where a C compiler is found")
    parser.add_argument("--label-budget", type=_positive(float), default=1.0,
                        help="seconds the solver may spend on one position's labels")
    parser.add_argument("--holdout", type=Path, action="append", default=None, metavar="PATH",
                        help="leave out the positions (and their children) of this Pons-format file or folder of "
                             "Test_* files; repeatable (default: ../shared/data/pons where present)")
    parser.add_argument("--no-holdout", action="store_true", help="train on every labelled position")
    parser.add_argument("--min-stones", type=int, default=0, help="label only positions with this many stones")
    parser.add_argument("--episodes", type=_positive(int), default=20000, help="dqn: training episodes")
    parser.add_argument("--explore", type=_fraction, default=0.6,
                        help="dqn: fraction of the episodes over which epsilon falls from 1 to 0.05 (default 0.6)")
    parser.add_argument("--init", type=Path, default=None, metavar="WEIGHTS",
                        help="dqn: start from this weight file's hidden layers and move logits (e.g. agents/data/net_weights.npz)")
    parser.add_argument("--init-scale", type=_positive(float), default=0.1,
                        help="dqn: factor from --init's move logits to first action values (default 0.1)")
    parser.add_argument("--eval-every", type=int, default=0, metavar="EPISODES",
                        help="dqn: every EPISODES (a multiple of 500), play greedy games and keep the best policy (default off)")
    parser.add_argument("--eval-games", type=_positive(int), default=100, help="dqn: games per evaluation (default 100)")
    parser.add_argument("--eval-opponent", default="negamax-fast", help="dqn: evaluation opponent (default negamax-fast)")
    parser.add_argument("--opponents", default="random,tactical,self",
                        help="dqn: comma-separated opponents (player specs, 'tactical', 'self')")
    parser.add_argument("--dtype", choices=("float16", "int8", "float32"), default="float16",
                        help="weight file precision (default float16)")
    parser.add_argument("--device", default="auto", help="auto (CUDA if available), cpu or cuda")
    parser.add_argument("--threads", type=_positive(int), default=2, help="CPU threads for torch")
    parser.add_argument("--resume", action="store_true", help="continue from runs/<name>/checkpoint.pt")
    parser.add_argument("--export", action="store_true",
                        help="also copy the weights to agents/data/ (what the agents and builds use)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _label_engine(name: str) -> str:
    """The labelling engine: ``auto`` picks the compiled twin where it can be built."""
    if name != "auto":
        return name
    from tools import csolver

    return "c" if csolver.available() else "python"


def _holdout_paths(args: argparse.Namespace) -> list[Path]:
    """The test files training must not see (the Pons sets by default, where present)."""
    from tools.mistakes import PONS_DIR

    if args.no_holdout:
        return []
    if args.holdout is None:
        return [PONS_DIR] if PONS_DIR.is_dir() else []
    missing = [str(p) for p in args.holdout if not Path(p).exists()]
    if missing:
        raise UserError(f"--holdout: no such file or folder: {', '.join(missing)}")
    return list(args.holdout)


def run(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(args.threads)
    if args.device not in ("auto", "cpu", "cuda"):
        raise UserError(f"--device must be auto, cpu or cuda, got {args.device!r}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA device is available")
    if args.method == "dqn":
        from tools.train_dqn import run_dqn

        return run_dqn(args)
    return run_supervised(args)


def run_supervised(args: argparse.Namespace) -> int:
    import torch
    from torch.nn import functional as F
    from tqdm import tqdm

    from agents.net.features import feature_size
    from agents.resources import data_path
    from tools import labels as labelling
    from tools.netlib import (SUPERVISED_PANELS, build_mlp, load_checkpoint, pick_device, plot_curves,
                               prepare_run_dir, seed_everything, write_export)

    run_dir, ckpt_path = prepare_run_dir(args.out, args.name or "supervised", args.resume)
    held_files = _holdout_paths(args)

    if args.generate:
        labelling.generate(args.labels, args.seed, labelling._last_game(
            labelling.shard_path(args.labels, args.seed)) + 1 + args.generate,
            args.label_budget, args.min_stones, progress=not args.no_progress, engine=_label_engine(args.label_engine))
    holdout = holdout_keys(held_files)
    if held_files:
        print(f"held out: {len(holdout)} keys of the positions in {', '.join(map(str, held_files))} and their children")
    data = build_arrays(labelling.read_labels(args.labels), args.positions, holdout=holdout)
    train_idx = np.flatnonzero(~data["val"])
    val_idx = np.flatnonzero(data["val"])
    if len(val_idx) == 0:
        val_idx = train_idx[:1]
    print(f"positions: {int((data['w'] > 0).sum())} labelled and {int((data['w'] == 0).sum())} value-only rows "
          f"(mirrors included); {len(train_idx)} train, {len(val_idx)} validation")

    seed_everything(args.seed)
    device = pick_device(args.device)
    hidden = args.hidden or (384, 256, 128)
    model = build_mlp(feature_size(6, 7), hidden, 7 + 1).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    history: list[dict[str, float]] = []
    start_epoch = 0
    if args.resume:
        ckpt = load_checkpoint(ckpt_path, model, opt, device)
        history, start_epoch = ckpt["history"], ckpt["epoch"] + 1
        torch.set_rng_state(ckpt["torch_rng"])

    tensors = {k: torch.from_numpy(np.ascontiguousarray(data[k])) for k in ("x", "p", "w", "v", "cls")}
    # legal columns from the features' playable-cells plane (plane 2, 6x7 in grid order)
    legal = tensors["x"][:, 84:126].reshape(-1, 6, 7).amax(dim=1) > 0

    def forward(idx: np.ndarray):
        ix = torch.from_numpy(idx)
        out = model(tensors["x"][ix].to(device).float())
        logits = out[:, :7].masked_fill(~legal[ix].to(device), -1e9)
        return logits, torch.tanh(out[:, 7]), ix

    for epoch in range(start_epoch, args.epochs):
        for group in opt.param_groups:  # cosine decay, a function of the epoch alone (resumable)
            group["lr"] = args.lr * 0.5 * (1 + math.cos(math.pi * epoch / args.epochs))
        model.train()
        order = np.random.default_rng(args.seed * 7919 + epoch).permutation(train_idx)
        batches = [order[i:i + args.batch_size] for i in range(0, len(order), args.batch_size)]
        total = 0.0
        for idx in tqdm(batches, desc=f"epoch {epoch + 1}/{args.epochs}", disable=args.no_progress, leave=False):
            logits, value, ix = forward(idx)
            w = tensors["w"][ix].to(device)
            ce = -(tensors["p"][ix].to(device) * F.log_softmax(logits, dim=1)).sum(1)
            loss = ((ce * w).sum() / w.sum().clamp(min=1.0)
                    + F.mse_loss(value, tensors["v"][ix].to(device)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            logits, value, ix = forward(val_idx)
            vmse = float(F.mse_loss(value.cpu(), tensors["v"][ix]))
            pol = data["full"][val_idx]
            logits, ix = logits[torch.from_numpy(pol)], ix[torch.from_numpy(pol)]
            p = tensors["p"][ix]
            vloss = float(-(p * F.log_softmax(logits.cpu(), dim=1)).sum(1).mean()) if len(ix) else 0.0
            acc, mistakes = move_metrics(logits.cpu().numpy(), p.numpy(), data["cls"][val_idx][pol]) if len(ix) else (0.0, 0.0)
        row = {"epoch": epoch + 1, "train_loss": total / len(train_idx), "val_policy_loss": vloss,
               "val_value_mse": vmse, "val_accuracy": acc, "val_mistake_rate": mistakes}
        history.append(row)
        print(json.dumps(row))
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "history": history, "epoch": epoch,
                    "torch_rng": torch.get_rng_state(), "hidden": list(hidden)}, ckpt_path)
        (run_dir / "history.json").write_text(json.dumps(history, indent=1))
        plot_curves(history, run_dir / "curves.png", SUPERVISED_PANELS)

    out = write_export(model.cpu(), run_dir / "net_weights.npz", "policy_value", args.dtype,
                       extra={"hidden": list(hidden), "seed": args.seed})
    print(f"weights: {out}")
    if args.export:
        shutil.copyfile(out, data_path("net_weights.npz"))
        print(f"exported to {data_path('net_weights.npz')}")
    return 0


