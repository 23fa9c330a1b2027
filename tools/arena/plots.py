"""The PNGs of a run: a tournament's ratings with their intervals, an SPRT's LLR against games.

matplotlib (the train layer) is imported only here, when a plot is drawn, with
the Agg backend (no display needed).  A plot comes after the games, so a
missing matplotlib never fails the run: the plot is skipped, and the one line
returned (``Skipped``) says so and how to install it; the table and every other
file are written as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from connectx_forge.errors import UserError

if TYPE_CHECKING:
    from connectx_forge.arena.tournament import TournamentReport

Report = TypeVar("Report")  # the report a plot draws, as that plot reads it

INSTALL = "make test, or pip install matplotlib (the train extra)"


class Skipped(Exception):
    """A plot that was not drawn: its message is the one line to show."""


def _pyplot(path: Path) -> Any:
    try:
        import matplotlib
    except ImportError:
        raise Skipped(f"{path} not written: the plot needs matplotlib, which is not installed ({INSTALL})") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(plot: Callable[[Report, Path], None], report: Report, path: Path) -> str | None:
    """Draw ``plot(report, path)``; None when it was written, else the line saying why it was skipped."""
    try:
        plot(report, path)
    except Skipped as exc:
        return str(exc)
    return None


def _save(fig: Any, path: Path) -> None:
    try:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def ratings_png(report: TournamentReport, path: Path) -> None:
    """A tournament's ratings, best at the top, each with its 95% interval."""
    plt = _pyplot(path)
    rows = list(reversed(report.ratings))
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
    try:
        ys = range(len(rows))
        elo = [r.elo for r in rows]
        err = [[r.elo - r.elo_lo for r in rows], [r.elo_hi - r.elo for r in rows]]
        ax.errorbar(elo, list(ys), xerr=err, fmt="o", capsize=4)
        ax.set_yticks(list(ys), [r.player for r in rows])
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_xlabel("Elo (95% interval)")
        ax.set_title(f"{report.run}: {report.games} games, {report.openings} openings")
        _save(fig, path)
    finally:
        plt.close(fig)


def llr_png(report: dict[str, Any], path: Path) -> None:
    """An SPRT's log-likelihood ratio after each pair, against games played, with its two bounds."""
    plt = _pyplot(path)
    llr = report["llr_history"]
    fig, ax = plt.subplots(figsize=(7, 4))
    try:
        ax.plot([2 * (i + 1) for i in range(len(llr))], llr, lw=1)
        ax.axhline(report["upper"], color="green", ls="--", label=f"accept H1 ({report['upper']:.2f})")
        ax.axhline(report["lower"], color="red", ls="--", label=f"accept H0 ({report['lower']:.2f})")
        ax.set_xlabel("games")
        ax.set_ylabel("log-likelihood ratio")
        ax.set_title(f"SPRT {report['new']} vs {report['base']}: [{report['elo0']:g}, {report['elo1']:g}] "
                     f"{report['model']} Elo, result {report['result']}")
        ax.legend(loc="best")
        _save(fig, path)
    finally:
        plt.close(fig)
