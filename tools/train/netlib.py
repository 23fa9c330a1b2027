"""Torch counterparts of agents/net: the trainable MLP and its export to the numpy format.

Only tools import this module (it needs torch).  The layer layout matches
``agents.net.mlp.MLP`` exactly: Linear layers with ReLU between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.net.features import VERSION, feature_size
from agents.net.mlp import save_mlp
from connectx_forge.errors import UserError


def build_mlp(inputs: int, hidden: Sequence[int], outputs: int) -> nn.Sequential:
    """Linear -> ReLU -> ... -> Linear."""
    layers: list[nn.Module] = []
    width = inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, outputs))
    return nn.Sequential(*layers)


def linear_layers(model: nn.Sequential) -> list[nn.Linear]:
    return [m for m in model if isinstance(m, nn.Linear)]


def export_bytes(model: nn.Sequential, kind: str, dtype: str = "float16", rows: int = 6,
                 columns: int = 7, extra: dict[str, Any] | None = None) -> bytes:
    """The numpy weight file (agents.net.mlp format) of a torch MLP."""
    weights, biases = [], []
    for layer in linear_layers(model):
        weights.append(layer.weight.detach().cpu().numpy().T.copy())
        biases.append(layer.bias.detach().cpu().numpy().copy())
    meta = {"kind": kind, "rows": rows, "columns": columns, "features": VERSION,
            "inputs": feature_size(rows, columns), **(extra or {})}
    return save_mlp(weights, biases, meta, dtype=dtype)


def write_export(model: nn.Sequential, path: Path, kind: str, dtype: str = "float16",
                 extra: dict[str, Any] | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(export_bytes(model, kind, dtype, extra=extra))
    return path


def pick_device(name: str = "auto") -> torch.device:
    """CUDA when asked or when ``auto`` finds it, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    import random

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def prepare_run_dir(out: str | Path, name: str, resume: bool) -> tuple[Path, Path]:
    """The run folder and its checkpoint path; refuses to overwrite a run unless resuming one."""
    run_dir = Path(out) / name
    ckpt_path = run_dir / "checkpoint.pt"
    if resume and not ckpt_path.exists():
        raise UserError(f"--resume: no checkpoint at {ckpt_path}")
    if not resume and ckpt_path.exists():
        raise UserError(f"{ckpt_path} exists: pass --resume to continue it, or another --name")
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir, ckpt_path


def load_checkpoint(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                    device: torch.device) -> dict[str, Any]:
    """Restore ``model`` and ``optimizer`` from a run's checkpoint; the whole checkpoint for the rest."""
    ckpt = torch.load(path, map_location=device, weights_only=False)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt


Panels = Sequence[tuple[str, Sequence[str]]]
SUPERVISED_PANELS: Panels = [("loss", ["train_loss", "val_policy_loss", "val_value_mse"]),
                             ("validation accuracy", ["val_accuracy"]),
                             ("validation mistake rate", ["val_mistake_rate"])]
DQN_PANELS: Panels = [("Huber loss", ["train_loss"]),
                      ("win rate", ["win_rate", "epsilon", "eval_win_rate"])]


def plot_curves(history: list[dict[str, float]], path: Path, panels: Panels, xlabel: str = "epoch") -> None:
    """Training curves as a PNG: one panel per (title, history keys), against ``history[i]["epoch"]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels), 3.6))
    for ax, (title, keys) in zip(axes, panels, strict=True):
        for k in keys:  # a key missing from some rows (an evaluation every few rows) plots where present
            rows = [h for h in history if h.get(k) is not None]
            ax.plot([h["epoch"] for h in rows], [h[k] for h in rows], marker=".", label=k)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
