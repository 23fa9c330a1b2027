"""``cxforge openings``: write an opening suite (``openings.build_suite``) to a file or stdout."""

from __future__ import annotations

import argparse
import sys

from connectx_forge import options
from connectx_forge.arena import openings
from connectx_forge.games.catalog import CONNECTX, connectx_only

HELP = "write a suite of solver-labelled openings after K plies, mirror duplicates removed, filtered by score"
EXAMPLE = """\
cxforge openings
cxforge openings --plies 4 --band=-2:2 --size 80 -o suite.txt"""


def band(text: str) -> tuple[int, int]:
    """An argparse type: ``LO:HI``."""
    try:
        return openings.parse_band(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_plies(parser: argparse.ArgumentParser, default: int = openings.DEFAULT_PLIES) -> None:
    """``--plies K`` (shared with ``tournament`` and ``sprt``, whose default is its own)."""
    parser.add_argument("--plies", type=options.nonnegative_int, default=default, metavar="K",
                        help=f"moves played before the agents take over (default {default})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge openings``."""
    options.add_game(parser)
    add_plies(parser)
    lo, hi = openings.DEFAULT_BAND
    parser.add_argument("--band", type=band, default=openings.DEFAULT_BAND, metavar="LO:HI",
                        help=f"keep exact scores (Pons' convention, side to move) from LO to HI (default {lo}:{hi}: "
                             "draws and the narrowest wins and losses); a negative LO needs --band=LO:HI")
    parser.add_argument("--size", type=options.positive_int, default=openings.DEFAULT_SIZE, metavar="N",
                        help=f"openings in the suite (default {openings.DEFAULT_SIZE}); positions are labelled in "
                             "suite order until N are in the band")
    parser.add_argument("--all", action="store_true",
                        help="every position in the band instead (up to 6 plies: the opening book scores them "
                             "all in under a second; 7 plies and more: hours of solving)")
    options.add_engine(parser, "auto", "the solver for positions neither the shipped labels nor the book hold")
    options.add_out(parser, "write the suite to PATH (default: stdout)")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Build the suite, write it; a one-line summary on stderr."""
    connectx_only("cxforge openings (solver-labelled openings)", args.game or CONNECTX)
    suite = openings.build_suite(args.plies, args.band, None if args.all else args.size, args.engine,
                                 options.progress_of(args))
    text = openings.write_suite(suite, args.out)
    if args.out is None:
        sys.stdout.write(text)
    order = [o.moves for o in openings.spread(openings.Opening(m, 0) for m in openings.positions(args.plies))]
    seen = order.index(suite[-1].moves) + 1 if suite else len(order)
    where = f", written to {args.out}" if args.out is not None else ""
    print(f"{len(suite)} openings with scores in {args.band[0]}:{args.band[1]}: the first {seen} of the "
          f"{len(order)} positions after {args.plies} plies, in suite order{where}", file=sys.stderr)
    return 0
