"""Training the networks behind ``net``, ``net-search`` and ``dqn`` (the command: ``cxforge train``).

``--method supervised`` (default) fits a policy+value MLP to positions labelled
by the exact solver (tools/connectx_forge/train/labels.py; ``--generate G`` labels G more games per
run first).  The policy target puts its mass on the moves of the best win/draw/
loss class, favouring higher scores inside it; the value target is that class
(+1, 0, -1).  Positions are deduplicated, mirrored for augmentation, and split
into training and validation sets by position (a mirror pair stays together).

``--method dqn`` trains the ``dqn`` agent's Q-network instead (tools/connectx_forge/train/dqn_training.py).

A run lives in ``runs/<name>/``: ``checkpoint.pt`` after every epoch (``--resume``
continues from it; data, never a pickle: tools/connectx_forge/train/checkpoint.py), ``history.json``,
``curves.png`` (loss, accuracy and mistake rate), and the exported numpy weights.  ``--export`` also copies them to
``agents/data/``, where the agents and the bundler read them.  Runs are seeded:
the same flags and data give the same weights.  The flags are in
tools/connectx_forge/train/train_cmd.py; ``run_supervised`` and ``run_dqn`` take them parsed once, a
``TrainSettings``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from agents.board import Board
from agents.net.features import encode, feature_size
from agents.solver.search import score_class
from connectx_forge import paths, tool_engines
from connectx_forge import progress as progress_bars
from connectx_forge.boundedread import read_positions
from connectx_forge.errors import UserError
from connectx_forge.paths import agent_data
from connectx_forge.safe_write import write_bytes, write_text
from connectx_forge.train import labels as labelling
from connectx_forge.train.labels import BestMove, Label
from connectx_forge.train.training_settings import TrainSettings

WIN_CLASS_WEIGHT = 100.0  # the class dominates the score in the policy target


# -- targets -----------------------------------------------------------------
def policy_target(scores: Iterable[int | None], tau: float = 2.0) -> np.ndarray:
    """A move distribution: the best class's moves, softly preferring higher scores."""
    scores = list(scores)
    keys = np.array([-np.inf if s is None else WIN_CLASS_WEIGHT * score_class(s) + s for s in scores])
    e = np.exp((keys - keys.max()) / tau)
    target: np.ndarray = (e / e.sum()).astype(np.float32)
    return target


def value_target(scores: Iterable[int | None]) -> float:
    return float(score_class(max(s for s in scores if s is not None)))


# -- dataset -----------------------------------------------------------------
def family_keys(board: Board) -> set[int]:
    """Keys of a position and of each of its children, mirrors included: what holding it out leaves out."""
    boards = [board] + [board.play(c) for c in board.legal_moves()]
    return {k for b in boards for k in (b.key(), b.mirror().key())}


def pons_files(path: Path) -> list[Path]:
    """The Pons-format files a holdout path names: the file itself, or a folder's ``Test_*`` and ``*.txt`` files.

    Pons' folder holds ``Test_L*_R*`` files; ``tools/connectx_forge/datasets/heldout`` holds ``<Set-Name>.txt`` files.
    """
    folder = Path(path)
    if not folder.is_dir():
        return [folder]
    return sorted(p for p in folder.iterdir() if p.is_file() and (p.name.startswith("Test_") or p.suffix == ".txt"))


def holdout_keys(paths: Iterable[Path]) -> set[int]:
    """Keys (mirrors included) of the positions in Pons-format files, and of their children.

    Training leaves these out, so that mistake rates measured on the files are
    on positions the network never saw, and never saw one move on.
    """
    keys: set[int] = set()
    for file in (f for path in paths for f in pons_files(path)):
        for moves, _ in read_positions(file):
            keys |= family_keys(Board.from_pons(moves))
    return keys


def build_arrays(labels: Iterable[Label | BestMove], limit: int | None = None, val_fraction: float = 0.05,
                 children: bool = True, holdout: set[int] | frozenset[int] = frozenset()) -> dict[str, np.ndarray]:
    """Features, targets and move classes for deduplicated, mirrored positions.

    ``labels`` yields ``connectx_forge.train.labels.Label`` (every column's exact score) and
    ``BestMove`` (a score and one best move: a one-hot policy target, classes
    unknown).  Each ``Label`` also gives the exact value of every child position
    (minus its column's class); with ``children`` those become value-only rows.
    Positions whose key is in ``holdout`` are skipped.  Keys: ``x`` features
    (uint8), ``p`` policy targets, ``w`` 1.0 where the policy target is known,
    ``v`` value targets, ``cls`` each column's class (-2 where full or unknown),
    ``full`` True where every legal column's class is known (the rows move
    metrics use), ``val`` True for validation rows.
    """
    seen: set[int] = set()
    # a row: board, policy target, its weight, value target, each column's class, every class known, validation
    rows: list[tuple[Board, np.ndarray, float, float, np.ndarray, bool, bool]] = []
    pending: list[tuple[Board, float, bool]] = []  # children: board, value target, validation
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
            for b, col in zip(pair, (lab.move, 6 - lab.move), strict=False):  # one board when symmetric
                target = np.zeros(7, dtype=np.float32)
                target[col] = 1.0
                rows.append((b, target, 1.0, float(score_class(lab.score)), unknown, False, is_val))
        else:
            scores = list(lab.scores)
            for b, sc in zip(pair, (scores, scores[::-1]), strict=False):
                rows.append((b, policy_target(sc), 1.0, value_target(sc),
                             np.array([-2 if x is None else score_class(x) for x in sc], dtype=np.int8), True, is_val))
            if children:
                for col, col_score in enumerate(scores):
                    if col_score is not None and not board.is_winning_move(col):
                        child = board.play(col)
                        if not child.is_full():
                            pending.append((child, float(-score_class(col_score)), is_val))
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


# -- runs ----------------------------------------------------------------------
def _label_engine(name: str) -> str:
    """The labelling engine: ``auto`` picks the C engine where it can be built."""
    return tool_engines.resolve(name, check=False)


def _holdout_paths(settings: TrainSettings) -> list[Path]:
    """The test files training must not see: by default Pons' sets and our held-out sets, where present."""
    if settings.no_holdout:
        return []
    if settings.holdout is None:
        return [folder for folder in (paths.PONS_DIR, paths.HELDOUT_DIR) if folder.is_dir() and pons_files(folder)]
    missing = [str(p) for p in settings.holdout if not Path(p).exists()]
    if missing:
        raise UserError(f"--holdout: no such file or folder: {', '.join(missing)}")
    return list(settings.holdout)


def run_supervised(settings: TrainSettings) -> int:
    import torch  # torch and netlib (torch at its top) load when training runs
    from torch.nn import functional as F

    from connectx_forge.train import checkpoint
    from connectx_forge.train.netlib import (
        RESUME_HINT,
        SUPERVISED_PANELS,
        build_mlp,
        load_checkpoint,
        pick_device,
        plot_curves,
        prepare_run_dir,
        restoring,
        seed_everything,
        write_export,
    )

    run_dir, ckpt_path = prepare_run_dir(settings.out, settings.name or "supervised", settings.resume, settings.force)
    held_files = _holdout_paths(settings)

    if settings.generate:
        labelling.generate(settings.labels, settings.seed, labelling._last_game(
            labelling.shard_path(settings.labels, settings.seed)) + 1 + settings.generate,
            settings.label_budget, settings.min_stones, progress=not settings.no_progress,
            engine=_label_engine(settings.label_engine))
    holdout = holdout_keys(held_files)
    if held_files:
        print(f"held out: {len(holdout)} keys of the positions in {', '.join(map(str, held_files))} and their children")
    data = build_arrays(labelling.read_labels(settings.labels), settings.positions, holdout=holdout)
    train_idx = np.flatnonzero(~data["val"])
    val_idx = np.flatnonzero(data["val"])
    if len(val_idx) == 0:
        val_idx = train_idx[:1]
    print(f"positions: {int((data['w'] > 0).sum())} labelled and {int((data['w'] == 0).sum())} value-only rows "
          f"(mirrors included); {len(train_idx)} train, {len(val_idx)} validation")

    seed_everything(settings.seed)
    device = pick_device(settings.device)
    hidden = settings.hidden or (384, 256, 128)
    model = build_mlp(feature_size(6, 7), hidden, 7 + 1).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    history: list[dict[str, float]] = []
    start_epoch = 0
    if settings.resume:
        ckpt = load_checkpoint(ckpt_path, model, opt, {"epoch": int, "torch_rng": torch.Tensor})
        history, start_epoch = ckpt["history"], ckpt["epoch"] + 1
        with restoring(ckpt_path, RESUME_HINT):
            torch.set_rng_state(ckpt["torch_rng"])

    tensors = {k: torch.from_numpy(np.ascontiguousarray(data[k])) for k in ("x", "p", "w", "v", "cls")}
    # legal columns from the features' playable-cells plane (plane 2, 6x7 in grid order)
    legal = tensors["x"][:, 84:126].reshape(-1, 6, 7).amax(dim=1) > 0

    def forward(idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ix = torch.from_numpy(idx)
        out = model(tensors["x"][ix].to(device).float())
        logits = out[:, :7].masked_fill(~legal[ix].to(device), -1e9)
        return logits, torch.tanh(out[:, 7]), ix

    def _train_step(idx: np.ndarray) -> float:
        """One optimiser step on a batch; its summed loss."""
        logits, value, ix = forward(idx)
        w = tensors["w"][ix].to(device)
        ce = -(tensors["p"][ix].to(device) * F.log_softmax(logits, dim=1)).sum(1)
        loss = ((ce * w).sum() / w.sum().clamp(min=1.0)
                + F.mse_loss(value, tensors["v"][ix].to(device)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss.item()) * len(idx)

    for epoch in range(start_epoch, settings.epochs):
        for group in opt.param_groups:  # cosine decay, a function of the epoch alone (resumable)
            group["lr"] = settings.lr * 0.5 * (1 + math.cos(math.pi * epoch / settings.epochs))
        model.train()
        order = np.random.default_rng(settings.seed * 7919 + epoch).permutation(train_idx)
        batches = [order[i:i + settings.batch_size] for i in range(0, len(order), settings.batch_size)]
        total = 0.0
        first = epoch == start_epoch  # the first line, at the run's first epoch
        plan = f"cxforge train: {settings.epochs - epoch} epochs of {len(batches):,} batches" if first else None
        with progress_bars.bar(len(batches), f"epoch {epoch + 1}/{settings.epochs}", unit="batch",
                               enabled=not settings.no_progress, plan=plan) as bar:
            for idx in batches:
                total += _train_step(idx)
                bar.update()
        model.eval()
        with torch.no_grad():
            logits, value, ix = forward(val_idx)
            vmse = float(F.mse_loss(value.cpu(), tensors["v"][ix]))
            pol = data["full"][val_idx]
            logits, ix = logits[torch.from_numpy(pol)], ix[torch.from_numpy(pol)]
            p = tensors["p"][ix]
            vloss = float(-(p * F.log_softmax(logits.cpu(), dim=1)).sum(1).mean()) if len(ix) else 0.0
            acc, mistakes = (move_metrics(logits.cpu().numpy(), p.numpy(), data["cls"][val_idx][pol]) if len(ix)
                             else (0.0, 0.0))
        row = {"epoch": epoch + 1, "train_loss": total / len(train_idx), "val_policy_loss": vloss,
               "val_value_mse": vmse, "val_accuracy": acc, "val_mistake_rate": mistakes}
        history.append(row)
        print(json.dumps(row))
        checkpoint.save(ckpt_path, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                    "history": history, "epoch": epoch,
                                    "torch_rng": torch.get_rng_state(), "hidden": list(hidden)})
        write_text(run_dir / "history.json", json.dumps(history, indent=1), replace=True)
        plot_curves(history, run_dir / "curves.png", SUPERVISED_PANELS)

    out = write_export(model.cpu(), run_dir / "net_weights.npz", "policy_value", settings.dtype,
                       extra={"hidden": list(hidden), "seed": settings.seed})
    print(f"weights: {out}")
    if settings.export:
        write_bytes(agent_data("net_weights.npz"), out.read_bytes(), replace=True)
        print(f"exported to {agent_data('net_weights.npz')}")
    return 0


