"""What ``cxforge train`` was asked for, as one typed value: the flags parsed once (``from_args``), then read by
both methods (``train.run_supervised``, ``dqn_training.run_dqn``).  Fields named as the flags; ``dqn:`` ones
matter only to ``--method dqn``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class TrainSettings:
    """A training run: the method, where it goes, the net and its optimiser, the labels (supervised), the
    episodes and their opponents (dqn), the weight file written, the device and what the run shows."""

    method: str = "supervised"
    name: str | None = None  # the run's folder under ``out`` (default: the method)
    out: Path = Path("runs")
    seed: int = 0
    epochs: int = 30
    batch_size: int = 256
    lr: float = 2e-3
    weight_decay: float = 1e-4
    hidden: tuple[int, ...] | None = None  # layer widths (dqn default 128,64)
    labels: Path = Path(".cache/labels")
    positions: int | None = None
    generate: int = 0
    label_engine: str = "auto"
    label_budget: float = 1.0
    holdout: tuple[Path, ...] | None = None  # None: Pons' sets and the held-out sets where present
    no_holdout: bool = False
    min_stones: int = 0
    episodes: int = 20000  # dqn
    explore: float = 0.6  # dqn
    init: Path | None = None  # dqn
    init_scale: float = 0.1  # dqn
    eval_every: int = 0  # dqn
    eval_games: int = 100  # dqn
    eval_opponent: str = "negamax-fast"  # dqn
    opponents: str = "random,tactical,self"  # dqn
    dtype: str = "float16"
    device: str = "auto"
    threads: int = 2
    resume: bool = False
    force: bool = False
    export: bool = False
    no_progress: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TrainSettings:
        """The settings ``cxforge train``'s flags give (its parser's every field)."""
        given = {f.name: getattr(args, f.name) for f in fields(cls)}
        if given["holdout"] is not None:
            given["holdout"] = tuple(given["holdout"])
        return cls(**given)
