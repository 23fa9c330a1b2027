"""``cxforge labels``: the command-line face of the solver labels that ``cxforge train`` learns from.

``labels generate`` plays and labels games into a shard of the label cache
(resuming after its last game), ``labels book`` turns a book build's progress
file into labels, and ``labels pack`` gzips a cache's shards into a dataset
folder.  The logic is tools/connectx_forge/train/labels.py.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from connectx_forge import options, outputs
from connectx_forge.errors import UserError
from connectx_forge.solver.book_builder import book_labels
from connectx_forge.train.labels import DEFAULT_DIR, generate, pack, packed_path, shards, write_shard

HELP = "generate, import and pack the exact solver labels that train uses"
EXAMPLE = """\
cxforge labels generate --seed 10 -n 20000 --budget 0.15 --engine c
cxforge labels book runs/book/progress.jsonl .cache/labels/labels-book.jsonl.gz
cxforge labels pack .cache/labels tools/connectx_forge/datasets/labels"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``labels generate``, ``labels book`` and ``labels pack``, each with its arguments."""
    sub = parser.add_subparsers(dest="labels_command", metavar="ACTION")
    sub.required = True
    g = sub.add_parser("generate", help="label the positions of seeded random games (shard SEED, resumable)",
                       description="label the positions of seeded random games into shard --seed of the cache\n"
                                   "(resuming after the last game written)",
                       epilog="example:\n  cxforge labels generate --seed 10 -n 20000 --budget 0.15 --engine c")
    options.add_seed(g, "the shard: its games are seeded from it")
    options.add_games(g, None, "games the shard should hold when done (required)")
    g.add_argument("--budget", type=options.positive_float, default=1.0, metavar="S",
                   help="seconds the solver may spend on one position's labels (default 1)")
    options.add_engine(g, "python", "the solver (c: the same scores, about 20x faster)")
    options.add_out(g, "the label cache folder", default=DEFAULT_DIR, kind="folder")
    options.add_progress(g)
    b = sub.add_parser("book", help="labels from a book build's progress file, in one gzipped shard",
                       description="labels from a book build's progress file, in one gzipped shard",
                       epilog="example:\n  cxforge labels book runs/book/progress.jsonl")
    b.add_argument("progress", type=Path, metavar="PROGRESS", help="a book build's progress file")
    b.add_argument("out", type=Path, nargs="?", default=DEFAULT_DIR / "labels-book.jsonl.gz", metavar="OUT",
                   help=f"the shard to write (default {DEFAULT_DIR / 'labels-book.jsonl.gz'}); an existing OUT "
                        "is refused unless --force")
    options.register_output(b, "out", "file")
    p = sub.add_parser("pack", help="gzip the shards of a label cache into a dataset folder",
                       description="gzip the shards of a label cache into a dataset folder (torn lines dropped)",
                       epilog="example:\n  cxforge labels pack .cache/labels tools/connectx_forge/datasets/labels")
    p.add_argument("src", type=Path, metavar="SRC", help="the label cache folder")
    p.add_argument("dst", type=Path, metavar="DST", help="the dataset folder (a DST holding a packed shard of the "
                                                          "same name is refused unless --force)")
    options.add_force(p)


def run(args: argparse.Namespace) -> int:
    """Generate, import or pack labels."""
    if args.labels_command == "book":
        if not args.progress.is_file():
            raise UserError(f"no progress file at {args.progress}")
        print(f"{write_shard(args.out, book_labels(args.progress))} labels written to {args.out}")
        return 0
    if args.labels_command == "pack":
        if not shards(args.src):
            raise UserError(f"no labels-*.jsonl shards in {args.src}")
        outputs.check_folder(args.dst, lambda dst: [packed_path(p, dst) for p in shards(args.src)], args.force)
        for path in pack(args.src, args.dst):
            print(path)
        return 0
    seed, games, budget, engine = _generate_args(args)
    os.nice(5)  # a long background job
    generate(args.out, seed, games, budget, progress=options.progress_of(args), engine=engine)
    return 0


def _generate_args(args: argparse.Namespace) -> tuple[int, int, float, str]:
    """Seed, games, budget and engine, from the flags (``-n`` is required)."""
    if args.games is None:
        raise UserError("give the number of games with -n/--games")
    return args.seed, args.games, args.budget, options.engine_of(args)
