"""``cxforge models FILE...``: which of the practical search's opponent models fits the opponents' moves in games
saved by ``cxforge match --save`` (tools/connectx_forge/solver/model_fit.py).

Prints one row per model, best first: its mean log-likelihood per move over
every opponent's moves, then per opponent; under the table each opponent's
mistake rate, and the positions passed over because they did not solve in
time.  ``--json`` prints the report as JSON instead.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from connectx_forge import options
from connectx_forge.play.records import read_all
from connectx_forge.solver.model_report import fitted, text

HELP = ("which opponent model of the practical search fits the opponents' moves in saved games: mean "
        "log-likelihood per model and opponent")
EXAMPLE = """\
cxforge match solver net-search --seats second --openings 165 -n 40 --save runs/ns.jsonl
cxforge models runs/ns.jsonl
cxforge models runs/*.jsonl --seconds 1 --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge models``."""
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="games saved by cxforge match --save (the moves of A's opponent are fitted)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="most seconds to solve one position; one that takes longer is passed over (default 2)")
    options.add_engine(parser, "auto", "the solver labelling the positions")
    options.add_json(parser, "print the report as JSON instead of the table")
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Print the fit; 0."""
    report = fitted(read_all(args.files), args.seconds, options.engine_of(args), options.progress_of(args))
    print(json.dumps(report.to_json(), indent=1) if args.json else text(report, args.seconds))
    return 0
