"""Torch counterparts of agents/net: the trainable MLP and its export to the numpy format.

Only tools import this module (it needs torch).  The layer layout matches
``agents.net.mlp.MLP`` exactly: Linear layers with ReLU between them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.net.features import VERSION, feature_size
from agents.net.mlp import save_mlp
from connectx_forge.boundedread import one_line
from connectx_forge.errors import UserError
from connectx_forge.safe_write import make_folder, savefig, write_bytes
from connectx_forge.train import checkpoint


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
                 columns: int = 7, extra: Mapping[str, object] | None = None) -> bytes:
    """The numpy weight file (agents.net.mlp format) of a torch MLP."""
    weights, biases = [], []
    for layer in linear_layers(model):
        weights.append(layer.weight.detach().cpu().numpy().T.copy())
        biases.append(layer.bias.detach().cpu().numpy().copy())
    meta = {"kind": kind, "rows": rows, "columns": columns, "features": VERSION,
            "inputs": feature_size(rows, columns), **(extra or {})}
    return save_mlp(weights, biases, meta, dtype=dtype)


def write_export(model: nn.Sequential, path: Path, kind: str, dtype: str = "float16",
                 extra: Mapping[str, object] | None = None) -> Path:
    path = Path(path)
    write_bytes(path, export_bytes(model, kind, dtype, extra=extra), replace=True)
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


def prepare_run_dir(out: str | Path, name: str, resume: bool, force: bool = False) -> tuple[Path, Path]:
    """The run folder and its checkpoint path; refuses to replace a run unless resuming one or ``force``
    (``--force``: a new run in its place)."""
    run_dir = Path(out) / name
    ckpt_path = run_dir / "checkpoint.pt"
    if resume and not ckpt_path.exists():
        raise UserError(f"--resume: no checkpoint at {ckpt_path}")
    if not resume and not force and ckpt_path.exists():
        raise UserError(f"{ckpt_path}: the file exists; pass --resume to continue the run, --force to replace it, "
                        "or another --name")
    make_folder(run_dir)
    return run_dir, ckpt_path


RESUME_HINT = "; resume a run with the flags it was started with"


def load_checkpoint(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                    fields: Mapping[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """Restore ``model`` and ``optimizer`` from a run's checkpoint (``checkpoint.load``: data, never code); the
    whole checkpoint for the rest, whose ``fields`` (and ``history``) are checked to be of their types.
    ``UserError`` naming the file when it is not a checkpoint of such a run."""
    ckpt = checkpoint.load(path)
    check_fields(ckpt, {"model": dict, "optimizer": dict, "history": list, **fields}, path)
    check_history(ckpt["history"], path)
    with restoring(path, RESUME_HINT):
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt


def check_fields(ckpt: Mapping[str, object], fields: Mapping[str, type | tuple[type, ...]], path: Path) -> None:
    """``UserError`` naming ``path`` unless each of ``fields`` is in ``ckpt`` with its type (a bool is no int)."""
    for key, kind in fields.items():
        value = ckpt.get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise UserError(f"{path}: not a checkpoint of this kind of run ({key!r} is not a "
                            f"{getattr(kind, '__name__', kind)})")


def check_history(history: list[object], path: Path) -> None:
    """A run's history: rows mapping names to numbers (or None), as the curves and history.json take them."""
    for row in history:
        if not (isinstance(row, dict) and isinstance(row.get("epoch"), int)
                and all(isinstance(k, str) and (v is None or isinstance(v, int | float)) for k, v in row.items())):
            raise UserError(f"{path}: not a checkpoint of this kind of run (a history row is not a row of numbers)")


@contextmanager
def restoring(path: Path, hint: str = "") -> Iterator[None]:
    """Restoring state read from checkpoint ``path`` (weights, optimizer, random generators): what does not
    fit is one line naming the file (``hint``: what to do then)."""
    try:
        yield
    except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as exc:
        raise UserError(f"{path}: does not fit ({one_line(exc)}){hint}") from None


def hidden_of(ckpt: Mapping[str, object], inputs: int, outputs: int, path: Path) -> list[int]:
    """The hidden layer widths of a checkpoint's MLP, checked against its weights' shapes (so that a network
    is built no larger than the file holds)."""
    check_fields(ckpt, {"hidden": list, "model": dict}, path)
    hidden, state = ckpt["hidden"], ckpt["model"]
    assert isinstance(hidden, list) and isinstance(state, dict)  # as check_fields found them
    widths = [inputs, *hidden, outputs]
    for i, (width_in, width_out) in enumerate(zip(widths, widths[1:], strict=False)):
        weight, bias = state.get(f"{2 * i}.weight"), state.get(f"{2 * i}.bias")
        if not (isinstance(weight, torch.Tensor) and isinstance(bias, torch.Tensor) and isinstance(width_out, int)
                and tuple(weight.shape) == (width_out, width_in) and tuple(bias.shape) == (width_out,)):
            raise UserError(f"{path}: its weights are not an MLP of {inputs} inputs, hidden layers "
                            f"{str(hidden)[:40]} and {outputs} outputs")
    return hidden


Panels = Sequence[tuple[str, Sequence[str]]]
SUPERVISED_PANELS: Panels = [("loss", ["train_loss", "val_policy_loss", "val_value_mse"]),
                             ("validation accuracy", ["val_accuracy"]),
                             ("validation mistake rate", ["val_mistake_rate"])]
DQN_PANELS: Panels = [("Huber loss", ["train_loss"]),
                      ("win rate", ["win_rate", "epsilon", "eval_win_rate"])]


def plot_curves(history: list[dict[str, float]], path: Path, panels: Panels, xlabel: str = "epoch") -> None:
    """Training curves as a PNG: one panel per (title, history keys), against ``history[i]["epoch"]``."""
    from connectx_forge.arena.plots import figure  # the plots' safe settings (names as text, no matplotlibrc)

    with figure(path, ncols=len(panels), figsize=(4.3 * len(panels), 3.6)) as (fig, axes):
        for ax, (title, keys) in zip(axes, panels, strict=True):
            for k in keys:  # a key missing from some rows (an evaluation every few rows) plots where present
                rows = [h for h in history if h.get(k) is not None]
                ax.plot([h["epoch"] for h in rows], [h[k] for h in rows], marker=".", label=k)
            ax.set_title(title)
            ax.set_xlabel(xlabel)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        fig.tight_layout()
        savefig(fig, path, replace=True, dpi=90)
