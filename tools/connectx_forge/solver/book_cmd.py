"""``cxforge book``: the command-line face of the opening book's build and summary
(tools/connectx_forge/solver/book_builder.py).

``book build`` solves the positions of the first plies on all cores, resumably
(its progress file), and writes the book; ``book fill`` adds every position of
the first plies, off the agent's tree too (tools/connectx_forge/solver/book_fill.py); ``book
practical`` makes the second seat's book moves practical (tools/connectx_forge/solver/book_practical.py); ``book info``
summarises a book file.
"""

from __future__ import annotations

import argparse

from agents.solver.opponents import MODELS
from agents.solver.policy import POLICY
from connectx_forge import options
from connectx_forge.solver.book_builder import DEFAULT_BOOK, DEFAULT_PROGRESS, EASY_NODES, BookRun, build, info
from connectx_forge.solver.book_fill import DEFAULT_FILL_PROGRESS, FILL_STONES, fill, parse_shard
from connectx_forge.solver.book_practical import (
    DEFAULT_PRACTICAL_PROGRESS,
    PRACTICAL_DEPTH,
    PRACTICAL_STONES,
    PracticalRun,
    practical,
)
from connectx_forge.solver.solve_cmd import parse_moves

HELP = "build or fill (resumable, parallel), or inspect, the solver's opening book"
EXAMPLE = """\
cxforge book info
cxforge book build --plies 8 --seconds 600
cxforge book build --root 44 --plies 6 --side second -w 2 -o /tmp/book.bin --progress /tmp/progress.jsonl
cxforge book fill --stones 6 -w 16
cxforge book fill --stones 6 -w 16 --shard 1/2 --progress runs/book/shard1.jsonl
cxforge book practical --stones 3 --seconds 120 -w 16"""


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
    options.add_out(b, "book file, written anew from the progress file", default=DEFAULT_BOOK,
                    shown="agents/data/opening_book.bin")
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
    p = sub.add_parser("practical", help="make the second seat's book moves practical (the practical search, "
                                         "offline)",
                       description="search the book's second-seat positions of the first plies with the practical "
                                   "search (expectimax against an opponent model, deeper than a move allows) and "
                                   "write its moves into the book (same exact scores)",
                       epilog="example:\n  cxforge book practical --stones 3 --seconds 120 -w 16\n"
                              "  cxforge book practical --stones 3 --shard 1/2 --progress runs/book/practical1.jsonl")
    p.add_argument("--stones", type=int, default=PRACTICAL_STONES,
                   help=f"the second seat's positions of up to this many stones (default {PRACTICAL_STONES})")
    p.add_argument("--root", default="", metavar="MOVES",
                   help="search below this position (a Pons move string) instead of the empty board")
    p.add_argument("--opponent", default=POLICY.opponent, metavar="MODEL",
                   help=f"the opponent model (agents/solver/opponents.py: {', '.join(MODELS)}; default "
                        f"{POLICY.opponent}, the agent's)")
    p.add_argument("--depth", type=int, default=PRACTICAL_DEPTH,
                   help=f"most of our moves searched deep (default {PRACTICAL_DEPTH})")
    p.add_argument("--seconds", type=float, default=120.0, help="time limit per position (default 120)")
    options.add_workers(p)
    p.add_argument("--progress", default=DEFAULT_PRACTICAL_PROGRESS, metavar="FILE",
                   help=f"append-only progress file (default {DEFAULT_PRACTICAL_PROGRESS})")
    options.add_out(p, "book file to read and rewrite (default agents/data/opening_book.bin)", kind="update")
    options.add_engine(p, "auto", "the solver to search with")
    p.add_argument("--easy-nodes", type=int, default=EASY_NODES,
                   help=f"a position below a changed move must be in the book or solve in fewer nodes (default "
                        f"{EASY_NODES})")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="search only every N-th position from the K-th and write no book; a run without --shard "
                        "over the shards' concatenated progress files writes it")
    p.add_argument("--dry-run", action="store_true", help="only count the positions")
    options.add_progress(p)
    i = sub.add_parser("info", help="entries, depth, size and load time of a book",
                       description="entries, depth, size and load time of a book",
                       epilog="example:\n  cxforge book info agents/data/opening_book.bin")
    i.add_argument("path", nargs="?", default=str(DEFAULT_BOOK), help="book file (default: the agents' book)")


def run(args: argparse.Namespace) -> int:
    """Build the book, or print a summary of a book file."""
    if args.book_command == "info":
        return info(args.path)

    parse_moves(args.root)  # one line naming what is wrong with a bad --root
    if args.book_command == "practical":
        shard = parse_shard(args.shard) if args.shard is not None else None
        return practical(PracticalRun(args.opponent, args.depth, args.stones, shard),
                         BookRun(args.root, args.seconds, options.workers_of(args), args.progress,
                                 args.out or DEFAULT_BOOK, options.engine_of(args), args.easy_nodes,
                                 dry_run=args.dry_run, bars=options.progress_of(args)))
    run = BookRun(args.root, args.seconds, options.workers_of(args), args.progress, args.out or DEFAULT_BOOK,
                  options.engine_of(args), args.easy_nodes, args.retry, args.dry_run, options.progress_of(args))
    if args.book_command == "fill":
        return fill(args.stones, run, parse_shard(args.shard) if args.shard is not None else None)
    return build(args.plies, run, min_plies=args.min_plies, side=args.side)
