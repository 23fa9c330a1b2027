"""The PNGs of a run: a tournament's ratings with their intervals, an SPRT's LLR against games.

matplotlib (the train layer) is imported only here, when a plot is drawn, with
the Agg backend (no display needed).  A plot comes after the games, so a
missing matplotlib never fails the run: the plot is skipped, and the one line
returned (``Skipped``) says so and how to install it; the table and every other
file are written as usual.

A name in a plot is text (a player, a team, a run: from files anyone may write): every figure is drawn in
``figure``, under matplotlib's own default settings with mathtext and TeX off (``text.parse_math``,
``text.usetex``), so ``$\\frac{a}{b}$`` shows as written, a broken or huge expression is not parsed, and no
LaTeX runs.  Those settings hold whatever a ``matplotlibrc`` says, and matplotlib is first imported from an
empty folder of its own: it reads ``./matplotlibrc`` before any other, and the working folder may be anyone's (a
FIFO there would hang the import, a bad byte fail it).  A name longer than ``MAX_LABEL`` characters is cut
(``text``): a label wider than the figure cannot be drawn.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from connectx_forge import safe_write
from connectx_forge.errors import UserError

if TYPE_CHECKING:
    from connectx_forge.arena.tournament import TournamentReport

Report = TypeVar("Report")  # the report a plot draws, as that plot reads it

INSTALL = "make test, or pip install matplotlib (the train extra)"
PLAIN_TEXT = {"text.usetex": False, "text.parse_math": False}  # every text as written: no TeX, no mathtext
MAX_LABEL = 200  # characters of a name in a plot (a longer one is cut, with an ellipsis)


class Skipped(Exception):
    """A plot that was not drawn: its message is the one line to show."""


def _matplotlib(path: Path) -> ModuleType:
    """matplotlib with the Agg backend, imported (the first time) from an empty folder, so that it reads no
    ``matplotlibrc`` of the working folder; ``Skipped`` where it is not installed."""
    try:
        if "matplotlib" not in sys.modules:
            _import_elsewhere("matplotlib")
        import matplotlib
    except ImportError:
        raise Skipped(f"{path} not written: the plot needs matplotlib, which is not installed ({INSTALL})") from None
    matplotlib.use("Agg")
    return matplotlib


def _import_elsewhere(module: str) -> None:
    """Import ``module`` with an empty folder as the working folder, then return to the working folder (by its
    descriptor: the same folder, whatever its path now leads to)."""
    try:
        here = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:  # no working folder to read a matplotlibrc from
        __import__(module)
        return
    try:
        with tempfile.TemporaryDirectory(prefix="cxforge-import-") as empty:
            os.chdir(empty)
            try:
                __import__(module)
            finally:
                os.fchdir(here)
    finally:
        os.close(here)


@contextmanager
def figure(path: Path, *, figsize: tuple[float, float], ncols: int = 1) -> Iterator[tuple[Any, Any]]:
    """A new figure and its axes (``plt.subplots(ncols=ncols, figsize=figsize)``) to draw and save ``path`` in,
    under matplotlib's defaults and ``PLAIN_TEXT`` whatever a ``matplotlibrc`` or the caller set; closed after.
    Both untyped: the axes are one ``Axes`` or an array of ``ncols`` (matplotlib's own stubs leave them so), and
    its ``Figure.savefig`` is typed apart from what ``safe_write.savefig`` takes, which draws the figure."""
    matplotlib = _matplotlib(path)
    import matplotlib.pyplot as plt

    # "default": matplotlib's own settings, read from no file
    with matplotlib.style.context("default"), matplotlib.rc_context(PLAIN_TEXT):
        fig, axes = plt.subplots(ncols=ncols, figsize=figsize)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


def text(name: object) -> str:
    """A name as a plot's label: itself, cut to ``MAX_LABEL`` characters; one starting with "_" (which a
    legend would leave out) after a space."""
    label = str(name)
    label = label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + "\u2026"
    return " " + label if label.startswith("_") else label


def draw(plot: Callable[[Report, Path], None], report: Report, path: Path) -> str | None:
    """Draw ``plot(report, path)``; None when it was written, else the line saying why it was skipped."""
    try:
        plot(report, path)
    except Skipped as exc:
        return str(exc)
    return None


def _save(fig: safe_write.Figure, path: Path) -> None:
    try:
        safe_write.savefig(fig, path, replace=True, dpi=120, bbox_inches="tight")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def ratings_png(report: TournamentReport, path: Path) -> None:
    """A tournament's ratings, best at the top, each with its 95% interval."""
    rows = list(reversed(report.ratings))
    with figure(path, figsize=(7, 0.5 * len(rows) + 1.5)) as (fig, ax):
        ys = range(len(rows))
        elo = [r.elo for r in rows]
        err = [[r.elo - r.elo_lo for r in rows], [r.elo_hi - r.elo for r in rows]]
        ax.errorbar(elo, list(ys), xerr=err, fmt="o", capsize=4)
        ax.set_yticks(list(ys), [text(r.player) for r in rows])
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_xlabel("Elo (95% interval)")
        ax.set_title(text(f"{report.run}: {report.games} games, {report.openings} openings"))
        _save(fig, path)


class LlrReport(TypedDict):
    """What ``llr_png`` reads of an SPRT's JSON report (``sprt_run.SprtReportJson`` holds it)."""

    llr_history: list[float]
    lower: float
    upper: float
    new: str
    base: str
    elo0: float
    elo1: float
    model: str
    result: str


def llr_png(report: LlrReport, path: Path) -> None:
    """An SPRT's log-likelihood ratio after each pair, against games played, with its two bounds."""
    llr = report["llr_history"]
    with figure(path, figsize=(7, 4)) as (fig, ax):
        ax.plot([2 * (i + 1) for i in range(len(llr))], llr, lw=1)
        ax.axhline(report["upper"], color="green", ls="--", label=f"accept H1 ({report['upper']:.2f})")
        ax.axhline(report["lower"], color="red", ls="--", label=f"accept H0 ({report['lower']:.2f})")
        ax.set_xlabel("games")
        ax.set_ylabel("log-likelihood ratio")
        ax.set_title(f"SPRT {text(report['new'])} vs {text(report['base'])}: [{report['elo0']:g}, "
                     f"{report['elo1']:g}] {report['model']} Elo, result {report['result']}")
        ax.legend(loc="best")
        _save(fig, path)
