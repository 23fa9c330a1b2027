"""``cxforge book``: the command-line face of the opening book's build and summary (tools/solver/book_builder.py).

``book build`` solves the positions of the first plies on all cores, resumably
(its progress file), and writes the book; ``book fill`` adds every position of
the first plies, off the agent's tree too (tools/solver/book_fill.py); ``book
info`` summarises a book file.
"""

from __future__ import annotations

import argparse

from connectx_forge.tools import options
from connectx_forge.tools.solver.book_builder import DEFAULT_BOOK, DEFAULT_PROGRESS, EASY_NODES, BookRun, build, info
from connectx_forge.tools.solver.book_fill import DEFAULT_FILL_PROGRESS, FILL_STONES, fill, parse_shard

HELP = "build or fill (resumable, parallel), or inspect, the solver's opening book"
EXAMPLE = """\
cxforge book info
cxforge book build --plies 8 --seconds 600
cxforge book build --root 44 --plies 6 --side second -w 2 -o /tmp/book.bin --progress /tmp/progress.jsonl
cxforge book fill --stones 6 -w 16
cxforge book fill --stones 6 -w 16 --shard 1/2 --progress runs/book/shard1.jsonl"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``book build`` and ``book info``, each with its flags."""
    sub = parser.add_subparsers(dest="book_command", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="solve positions of the first plies and write the book",
                       description="solve positions of the first plies and write the book",
                       epilog="example:\n  cxforge book build --plies 8 --seconds 600")
    b.add_argument("--plies", type=int, default=4, help="deepest ply (stones on the board) to solve (default 4)")
    b.add_argument("--min-plies", type=int, default=0, help="shallowest ply to solve (default 0)")
    b.add_argument("--root", default="", metavar="MOVES",
                   help="build below this position (a Pons move string) instead of the empty board")
    b.add_argument("--side", choices=("first", "second", "both"), default="both",
                   help="whose turns the book covers (default both)")
    b.add_argument("--seconds", type=float, default=60.0, help="time limit per position (default 60)")
    options.add_workers(b)
    b.add_argument("--progress", default=DEFAULT_PROGRESS, metavar="FILE",
                   help=f"append-only progress file (default {DEFAULT_PROGRESS})")
    options.add_out(b, "book file, rebuilt from the progress file (default agents/data/opening_book.bin)",
                    kind="update")
    options.add_engine(b, "auto", "the solver to build with")
    b.add_argument("--easy-nodes", type=int, default=EASY_NODES,
                   help=f"positions solved in fewer nodes are left to the agent's search (default {EASY_NODES}; "
                        "0 keeps all)")
    b.add_argument("--retry", action="store_true", help="retry positions recorded as unsolved")
    b.add_argument("--dry-run", action="store_true", help="only count the positions of each ply")
    options.add_progress(b)
    f = sub.add_parser("fill", help="add every position of up to N stones (off the agent's tree too) to the book",
                       description="solve every position of N+1 stones exactly, score those of up to N stones by "
                                   "minimax, and add the ones the book lacks and the agent cannot solve in time",
                       epilog="example:\n  cxforge book fill --stones 6 -w 16\n"
                              "  cxforge book fill --stones 6 -w 16 --shard 1/2 --progress runs/book/shard1.jsonl")
    f.add_argument("--stones", type=int, default=FILL_STONES,
                   help=f"fill every position of up to this many stones (default {FILL_STONES}: the shipped book's)")
    f.add_argument("--root", default="", metavar="MOVES",
                   help="fill below this position (a Pons move string) instead of the empty board")
    f.add_argument("--seconds", type=float, default=600.0, help="time limit per solve (default 600)")
    options.add_workers(f)
    f.add_argument("--progress", default=DEFAULT_FILL_PROGRESS, metavar="FILE",
                   help=f"append-only progress file of the solves (default {DEFAULT_FILL_PROGRESS}); the easy "
                        "checks go beside it (fill.easy.jsonl)")
    options.add_out(f, "book file to add to (default agents/data/opening_book.bin; made if missing)",
                    kind="update")
    options.add_engine(f, "auto", "the solver to fill with")
    f.add_argument("--easy-nodes", type=int, default=EASY_NODES,
                   help=f"positions solved in fewer nodes are left to the agent's search (default {EASY_NODES})")
    f.add_argument("--retry", action="store_true", help="retry solves recorded as unsolved")
    f.add_argument("--shard", default=None, metavar="K/N",
                   help="solve only every N-th position from the K-th and write no book: one machine's share; "
                        "a run without --shard over the shards' concatenated progress files writes it")
    f.add_argument("--dry-run", action="store_true", help="only count the positions of each ply")
    options.add_progress(f)
    i = sub.add_parser("info", help="entries, depth, size and load time of a book",
                       description="entries, depth, size and load time of a book",
                       epilog="example:\n  cxforge book info agents/data/opening_book.bin")
    i.add_argument("path", nargs="?", default=str(DEFAULT_BOOK), help="book file (default: the agents' book)")


def run(args: argparse.Namespace) -> int:
    """Build the book, or print a summary of a book file."""
    if args.book_command == "info":
        return info(args.path)
    from connectx_forge.tools.solver.solve_cmd import parse_moves

    parse_moves(args.root)  # one line naming what is wrong with a bad --root
    run = BookRun(args.root, args.seconds, options.workers_of(args), args.progress, args.out or DEFAULT_BOOK,
                  options.engine_of(args), args.easy_nodes, args.retry, args.dry_run, options.progress_of(args))
    if args.book_command == "fill":
        return fill(args.stones, run, parse_shard(args.shard) if args.shard is not None else None)
    return build(args.plies, run, min_plies=args.min_plies, side=args.side)
