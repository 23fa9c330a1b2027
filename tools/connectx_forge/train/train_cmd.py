"""``cxforge train``: the command-line face of the training (tools/connectx_forge/train/train.py and
tools/connectx_forge/train/dqn_training.py).

``--method supervised`` (default) fits the policy+value network of ``net`` and
``net-search`` to exact solver labels; ``--method dqn`` trains the ``dqn``
agent's Q-network.  A run lives in ``-o/--out`` (``runs/``) under ``--name``.
torch, matplotlib and gymnasium (the training layer) are imported only when a
run starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from connectx_forge import options
from connectx_forge.errors import UserError
from connectx_forge.train.dqn_training import run_dqn
from connectx_forge.train.train import run_supervised
from connectx_forge.train.training_settings import TrainSettings

HELP = "train the net / net-search (supervised on solver labels) or dqn networks"
EXAMPLE = """\
cxforge train --epochs 30 --export
cxforge train --name small --hidden 128,64 --epochs 5 --generate 200 --seed 3
cxforge train --method dqn --episodes 20000 --init agents/data/net_weights.npz --eval-every 1000"""


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
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
    """The flags of ``cxforge train`` (``dqn:`` ones only matter to ``--method dqn``)."""
    parser.add_argument("--method", choices=("supervised", "dqn"), default="supervised",
                        help="supervised: policy+value on solver labels (net, net-search); dqn: the dqn agent")
    parser.add_argument("--name", default=None, help="run name (default: the method)")
    options.add_out(parser, "runs folder; the run goes in DIR/NAME", default=Path("runs"), kind="folder")
    options.add_seed(parser, "seed of the run (weights, batches, labels generated)")
    parser.add_argument("--epochs", type=options.positive_int, default=30)
    parser.add_argument("--batch-size", type=options.positive_int, default=256)
    parser.add_argument("--lr", type=_positive(float), default=2e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--hidden", type=_hidden, default=None,
                        help="hidden layer widths, e.g. 384,256,128 (dqn default 128,64)")
    parser.add_argument("--labels", type=Path, default=Path(".cache/labels"), help="label cache folder")
    parser.add_argument("--positions", type=options.positive_int, default=None,
                        help="use at most N labelled positions (before mirroring)")
    parser.add_argument("--generate", type=options.nonnegative_int, default=0, metavar="GAMES",
                        help="label this many more games (shard --seed) before training")
    parser.add_argument("--label-engine", choices=("auto", "python", "c"), default="auto",
                        help="label with the agents' solver or its C engine (tools/connectx_forge/tool_engines: same "
                             "scores, ~20x faster); auto: c where it loads")
    parser.add_argument("--label-budget", type=_positive(float), default=1.0,
                        help="seconds the solver may spend on one position's labels")
    parser.add_argument("--holdout", type=Path, action="append", default=None, metavar="PATH",
                        help="leave out the positions (and their children) of this Pons-format file or folder of "
                             "Test_* and *.txt files; repeatable (default: ../shared/data/pons and "
                             "tools/connectx_forge/datasets/heldout "
                             "where present)")
    parser.add_argument("--no-holdout", action="store_true", help="train on every labelled position")
    parser.add_argument("--min-stones", type=int, default=0, help="label only positions with this many stones")
    parser.add_argument("--episodes", type=options.positive_int, default=20000, help="dqn: training episodes")
    parser.add_argument("--explore", type=_fraction, default=0.6,
                        help="dqn: fraction of the episodes over which epsilon falls from 1 to 0.05 (default 0.6)")
    parser.add_argument("--init", type=Path, default=None, metavar="WEIGHTS",
                        help="dqn: start from this weight file's hidden layers and move logits "
                             "(e.g. agents/data/net_weights.npz)")
    parser.add_argument("--init-scale", type=_positive(float), default=0.1,
                        help="dqn: factor from --init's move logits to first action values (default 0.1)")
    parser.add_argument("--eval-every", type=int, default=0, metavar="EPISODES",
                        help="dqn: every EPISODES (a multiple of 500), play greedy games and keep the best policy "
                             "(default off)")
    parser.add_argument("--eval-games", type=options.positive_int, default=100,
                        help="dqn: games per evaluation (default 100)")
    parser.add_argument("--eval-opponent", default="negamax-fast",
                        help="dqn: evaluation opponent (default negamax-fast)")
    parser.add_argument("--opponents", default="random,tactical,self",
                        help="dqn: comma-separated opponents (player specs, 'tactical', 'self')")
    parser.add_argument("--dtype", choices=("float16", "int8", "float32"), default="float16",
                        help="weight file precision (default float16)")
    parser.add_argument("--device", default="auto", help="auto (CUDA if available), cpu or cuda")
    parser.add_argument("--threads", type=options.positive_int, default=2, help="CPU threads for torch")
    parser.add_argument("--resume", action="store_true", help="continue from runs/<name>/checkpoint.pt")
    options.add_force(parser)
    parser.add_argument("--export", action="store_true",
                        help="also copy the weights to agents/data/ (what the agents and builds use)")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Check the device, then train with the method asked for."""
    import torch

    torch.set_num_threads(args.threads)
    if args.device not in ("auto", "cpu", "cuda"):
        raise UserError(f"--device must be auto, cpu or cuda, got {args.device!r}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA device is available")
    settings = TrainSettings.from_args(args)
    if settings.method == "dqn":
        return run_dqn(settings)
    return run_supervised(settings)
