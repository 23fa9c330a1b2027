"""``cxforge models FILE...``: which of the practical search's opponent models fits the opponents' moves in games
saved by ``cxforge match --save`` (tools/solver/model_fit.py).

Prints one row per model, best first: its mean log-likelihood per move over
every opponent's moves, then per opponent; under the table each opponent's
mistake rate, and the positions passed over because they did not solve in
time.  ``--json`` prints the report as JSON instead.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from agents.solver.book import Book
from connectx_forge import options, tool_engines
from connectx_forge.errors import UserError
from connectx_forge.play.game import GameRecord
from connectx_forge.play.records import read_all
from connectx_forge.sandbox.escape import escape
from connectx_forge.solver.model_fit import FitReport, fit_samples, samples
from connectx_forge.table import render

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


def table(report: FitReport) -> str:
    """The report as the text table ``cxforge models`` prints."""
    opponents = sorted(report.mistakes)
    by = {(f.model, f.opponent): f.log_likelihood for f in report.fits}
    models = sorted({f.model for f in report.fits}, key=lambda m: -by[(m, "all")])
    body = [[m, f"{by[(m, 'all')]:.3f}", *(f"{by[(m, o)]:.3f}" for o in opponents)] for m in models]
    heads = ["model", f"all ({report.moves})", *(escape(o, keep_newlines=False) for o in opponents)]
    return render(heads, body, align="l" + "r" * (len(heads) - 1))


def fitted(games: Sequence[GameRecord], seconds: float, engine: str, progress: bool) -> FitReport:
    """The models' fit to the opponents' moves in ``games``, each position solved within ``seconds`` on
    ``engine``; ``UserError`` for a bad ``seconds`` or when no move is left to fit."""
    if not seconds > 0:
        raise UserError(f"--seconds must be positive, got {seconds:g}")
    found = samples(games)
    solver = tool_engines.engine(engine, book=Book.load())
    report = fit_samples(found, solver, seconds, progress=progress)
    if not report.fits:
        raise UserError("no opponent moves to fit in these games (6x7 four in a row games, after their openings, "
                        "solved in time)")
    return report


def text(report: FitReport, seconds: float) -> str:
    """What the command prints without ``--json``: the table, the best model and the mistake rates."""
    rates = ", ".join(f"{escape(o, keep_newlines=False)} {100 * r:.1f}%" for o, r in sorted(report.mistakes.items()))
    return (f"{table(report)}\nmean log-likelihood per move (natural log; higher fits better); best: {report.best}\n"
            f"mistake rates: {rates}; positions not solved within {seconds:g} s, left out: {report.unsolved}")


def run(args: argparse.Namespace) -> int:
    """Print the fit; 0."""
    report = fitted(read_all(args.files), args.seconds, options.engine_of(args), options.progress_of(args))
    print(json.dumps(report.to_json(), indent=1) if args.json else text(report, args.seconds))
    return 0
