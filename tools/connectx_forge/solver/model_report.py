"""What ``cxforge models`` reports: the opponent models fitted to the opponents' moves in saved games
(tools/connectx_forge/solver/model_fit.py), solved on a tool engine, and the report's text table."""

from __future__ import annotations

from collections.abc import Sequence

from agents.solver.book import Book
from connectx_forge import tool_engines
from connectx_forge.errors import UserError
from connectx_forge.play.game_record import GameRecord
from connectx_forge.sandbox.escape import escape
from connectx_forge.solver.model_fit import FitReport, fit_samples, samples
from connectx_forge.table import render


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
