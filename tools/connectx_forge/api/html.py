"""The HTML the notebook results show: tables, lines, the LLR curve, and a game's replay.

Plain HTML and inline SVG, escaped with ``html.escape``; no plotting or templating library
(``connectx_forge.api.results`` uses them).  Nothing here prints or calls IPython's ``display``: Jupyter shows a
result once, by its ``_repr_html_``, where it is the value of a cell.  A game shows as a small board player of
our own in a sandboxed frame (a few kilobytes a game); kaggle-environments' 0.6 MB player is the page that
``Replay.save`` writes.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from connectx_forge import outputs, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.board_player import board_page, frame_size
from connectx_forge.leaderboard.review.games import Game, read_record
from connectx_forge.leaderboard.review.replay_page import game_page, replay_of, visualizer

if TYPE_CHECKING:
    from connectx_forge.leaderboard.review.annotate import Review

Row = dict[str, Any]  # a table's row (a game's JSON, a rating...): what pandas and ``html_table`` take
MAX_ROWS = 20  # games shown in a notebook's table; .games and .to_pandas() hold them all


def cell(value: object) -> str:
    """One table cell's text: floats to 3 decimals, lists joined by commas, None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    return str(value)


def html_table(rows: Sequence[Mapping[str, object]], columns: Sequence[str] | None = None, caption: str | None = None,
               limit: int | None = None) -> str:
    """An HTML table of ``rows`` (every value escaped); ``limit`` rows at most, then a line saying how many more."""
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))
    shown = rows if limit is None else rows[:limit]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(row.get(c)))}</td>" for c in columns) + "</tr>"
                   for row in shown)
    more = (f'<tr><td colspan="{len(columns)}">... and {len(rows) - len(shown)} more (.games, .to_pandas())'
            "</td></tr>") if len(rows) > len(shown) else ""
    title = f"<caption style=\"text-align:left\">{html.escape(caption)}</caption>" if caption else ""
    return f'<table class="cxforge">{title}<thead><tr>{head}</tr></thead><tbody>{body}{more}</tbody></table>'


def lines_html(lines: Sequence[str], tag: str = "p") -> str:
    return "".join(f"<{tag}>{html.escape(line)}</{tag}>" for line in lines)


@dataclass(frozen=True)
class Replay:
    """One game.  Jupyter shows a small board player of our own
    (``tools/connectx_forge/leaderboard/review/board_player.py``: a few
    kilobytes, in a frame sandboxed without ``allow-same-origin``, so nothing in it can reach the notebook);
    ``html`` is the full page, kaggle-environments' own player (offline), made when first asked for, and
    ``save(path)`` writes it (what ``cxforge replay -o`` writes, for a reviewed game).
    """

    title: str
    board: str = field(repr=False)  # the small player's page, what Jupyter shows
    page: Callable[[], str] = field(repr=False, compare=False)  # makes the full page
    width: int = 400
    height: int = 366

    @cached_property
    def html(self) -> str:
        """The full page: kaggle-environments' player, offline (beside the move list, for a review)."""
        return self.page()

    def _repr_html_(self) -> str:
        return (f'<iframe sandbox="allow-scripts" title="{html.escape(self.title)}" '
                f'style="width:{self.width}px;height:{self.height}px;border:0" '
                f'srcdoc="{html.escape(self.board, quote=True)}"></iframe>')

    def save(self, path: str | os.PathLike[str], force: bool = False) -> str:
        """Write the full page to ``path`` (a file there is replaced only with ``force``); the path written."""
        outputs.check_output(os.fspath(path), force, forcing="force=True")
        try:
            safe_write.write_text(os.fspath(path), self.html, replace=True)
        except OSError as exc:
            raise UserError(f"cannot write {os.fspath(path)}: {exc.strerror or exc}") from None
        return os.fspath(path)


def game_replay(game: Game, title: str, review: Review | None = None) -> Replay:
    """A ``Game``'s replay: the small player (with the review's verdicts, given one), and the full page:
    kaggle-environments' player alone, or ``cxforge replay``'s page beside the review's move list."""
    def page() -> str:
        player = visualizer(replay_of(game))
        return player if review is None else game_page(review, player, title)

    return Replay(title, board_page(game, review), page, *frame_size(game.size))


def record_replay(record: Row, title: str) -> Replay:
    """A saved game's replay (no solver: a review adds the verdicts, ``review_replay``)."""
    return game_replay(read_record(record, title), title)


def review_replay(review: Review) -> Replay:
    """A reviewed game's replay: the small player with each move's verdict; its full page is ``cxforge replay``'s."""
    names = review.game.names
    return game_replay(review.game, f"{names[0]} vs {names[1]}", review)


def llr_svg(history: Sequence[float], lower: float, upper: float, width: int = 360, height: int = 140) -> str:
    """The LLR after each pair against Wald's bounds, as a small inline SVG (no plotting library)."""
    if not history:
        return ""
    top, bottom = max(upper, *history) * 1.05, min(lower, *history) * 1.05
    n = max(len(history), 2)

    def y(v: float) -> float:
        return round((top - v) / (top - bottom) * height, 1)

    def x(i: int) -> float:
        return round(i / (n - 1) * width, 1) if n > 1 else 0.0

    points = " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(history))
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'xmlns="http://www.w3.org/2000/svg" role="img"><title>LLR after each pair</title>'
            f'<line x1="0" x2="{width}" y1="{y(upper)}" y2="{y(upper)}" stroke="#1a7f37" stroke-dasharray="4"/>'
            f'<line x1="0" x2="{width}" y1="{y(lower)}" y2="{y(lower)}" stroke="#cf222e" stroke-dasharray="4"/>'
            f'<line x1="0" x2="{width}" y1="{y(0)}" y2="{y(0)}" stroke="#999"/>'
            f'<polyline fill="none" stroke="#0969da" stroke-width="2" points="{points}"/></svg>')
