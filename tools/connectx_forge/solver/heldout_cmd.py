"""``cxforge heldout``: the command-line face of the held-out sets (tools/connectx_forge/solver/heldout.py).

``heldout build`` draws and labels the sets asked for, one after the other, in
the order given (resumable: a rerun continues each set's files), and prints a
line per set; ``heldout info`` describes the sets built.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agents.registry import did_you_mean
from connectx_forge import options, table, tool_engines
from connectx_forge.errors import UserError
from connectx_forge.paths import HELDOUT_DIR, PONS_DIR
from connectx_forge.solver import heldout

HELP = ("build our held-out sets of arbitrary positions, every column labelled by the exact solver "
        "(resumable)")
EXAMPLE = """\
nice cxforge heldout build --sets Random-Middle,Centre-Middle --size 200
cxforge heldout info"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``heldout build`` and ``heldout info``, each with its flags."""
    sub = parser.add_subparsers(dest="heldout_command", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="draw and label held-out sets (resumable)",
                       description="draw positions by playouts and label every column with the compiled exact solver\n"
                                   "(resumable: a rerun continues each set's files)",
                       epilog="example:\n  cxforge heldout build --sets Random-Middle --size 200 --seed 0")
    options.add_names(b, "--sets", list(heldout.SETS), "the sets to build, in this order", metavar="SET")
    b.add_argument("--size", type=options.positive_int, default=heldout.DEFAULT_SIZE, metavar="N",
                   help=f"labelled positions per set (default {heldout.DEFAULT_SIZE})")
    options.add_seed(b, "seed of the draws")
    b.add_argument("--label-budget", type=options.positive_float, default=heldout.DEFAULT_BUDGET, metavar="S",
                   help=f"CPU seconds to label one position before it is skipped (default {heldout.DEFAULT_BUDGET:g})")
    options.add_out(b, "folder of the sets", default=HELDOUT_DIR, kind="folder",
                    shown="tools/connectx_forge/datasets/heldout")
    b.add_argument("--training", type=Path, action="append", default=None, metavar="DIR",
                   help="folder of training label shards whose positions (and children) are left out; repeatable "
                        "(default: tools/connectx_forge/datasets/labels and .cache/labels)")
    b.add_argument("--pons", type=Path, default=None, metavar="DIR",
                   help="folder of Pons' sets whose positions are left out "
                        "(default: ../shared/data/pons where present)")
    options.add_progress(b)
    i = sub.add_parser("info", help="labelled and skipped positions of each held-out set",
                       description="labelled and skipped positions of each held-out set built",
                       epilog="example:\n  cxforge heldout info")
    i.add_argument("--heldout", type=Path, default=HELDOUT_DIR, metavar="DIR",
                   help="folder of the sets (default tools/connectx_forge/datasets/heldout)")


def _set_names(names: list[str]) -> list[str]:
    bad = [s for s in names if s not in heldout.SETS]
    if bad or not names:
        raise UserError(f"unknown held-out sets {bad}{did_you_mean(bad[0] if bad else '', heldout.SETS)}; "
                        f"the sets are {', '.join(heldout.SETS)}")
    return names


def run(args: argparse.Namespace) -> int:
    """Build the sets asked for, or describe those built."""
    if args.heldout_command == "info":
        rows: list[list[object]] = []
        for name in heldout.SETS:
            if heldout.set_files(args.heldout, name)[1].is_file():
                s = heldout.summary(args.heldout, name)
                rows.append([name, s.labelled, "" if s.contested is None else s.contested, s.skipped, "built"])
            else:
                rows.append([name, "", "", "", f"not built (cxforge heldout build --sets {name})"])
        print(table.render(["set", "labelled", "where a move can be a mistake", "skipped past the budget", "state"],
                           rows, "rule", align="lrrrl"))
        return 0
    names = _set_names(args.sets)
    if args.pons is not None and not args.pons.is_dir():
        raise UserError(f"--pons: no such folder: {args.pons}")
    pons = args.pons if args.pons is not None else (PONS_DIR if PONS_DIR.is_dir() else None)
    training = heldout.TRAINING_DIRS if args.training is None else tuple(args.training)
    missing = [str(p) for p in training if args.training is not None and not p.is_dir()]
    if missing:
        raise UserError(f"--training: no such folder: {', '.join(missing)}")
    if args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out must be a folder, {args.out} is a file")

    if not tool_engines.available():  # one clear line before any drawing
        raise UserError(f"the held-out sets are labelled by the compiled solver, and {tool_engines.why_not()}")
    solver = tool_engines.CSolver()
    os.nice(5)  # a long background job
    for name in names:
        done = heldout.build_set(name, args.out, args.size, args.seed, args.label_budget, training, pons,
                                 options.progress_of(args), solver)
        print(done.line(), flush=True)
    return 0
