"""THE table renderer of every ``cxforge`` command: one function, three styles, the same header words.

``render(headers, rows, style=...)`` returns a table as text (rich lays it out):

* ``"markdown"``: a Markdown table, ``---:`` under a right-aligned column (``cxforge winrates``, ``cxforge bench``,
  pasted into BENCHMARKS.md);
* ``"rule"``: aligned columns under a header with a line of ``-`` beneath it (``cxforge match``, tournaments, SPRT);
* ``"plain"``: aligned columns under a header, nothing else (``cxforge check``'s seats).

Numbers are right-aligned, text left-aligned (or as ``align`` says: one letter a column, ``l`` or ``r``).
Colour (a bold header) only where the output is a terminal and ``NO_COLOR`` is not set (``use_color``): piped
or redirected, a table is plain text with no ANSI code, so that snapshot tests and scripts see the same bytes
on every machine.  Cells are text, never rich markup (an agent's name may hold brackets).

The header words every table uses for the same thing are the constants below (``GAMES``, ``W``, ``D``, ``L``,
``WIN_RATE``...).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import TextIO

STYLES = ("markdown", "rule", "plain")

# the header words: one word for one thing in every table
PLAYER = "player"
OPPONENT = "opponent"
SEAT = "seat"
GAMES = "games"
W, D, L = "W", "D", "L"
WIN_RATE = "win rate [95% CI]"
INVALID = "invalid"
ERRORS = "errors"
TIMEOUTS = "timeouts"
OTHER = "crashes/other"
ELO = "Elo"
SCORE = "score"

HEADER_STYLE = "bold cyan"


def use_color(stream: TextIO | None = None) -> bool:
    """Whether to colour what goes to ``stream`` (default stdout): a terminal, and ``NO_COLOR`` unset or empty
    (https://no-color.org), and ``TERM`` not ``dumb``."""
    stream = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _numeric(cell: object) -> bool:
    return isinstance(cell, int | float) and not isinstance(cell, bool)


def _text(cell: object) -> str:
    return "" if cell is None else str(cell)


def render(headers: Sequence[str], rows: Sequence[Sequence[object]], style: str = "rule", align: str | None = None,
           color: bool | None = None) -> str:
    """``rows`` under ``headers`` as a table in ``style`` (``STYLES``), without a final newline.

    ``align``: one letter a column, ``l`` (left) or ``r`` (right); by default a column whose cells are all
    numbers (int or float) is right-aligned, any other left.  ``color``: a bold header; by default where
    stdout is a terminal (``use_color``).  A cell is shown as ``str(cell)`` (``None``: empty).
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if style not in STYLES:
        raise ValueError(f"unknown table style {style!r}; one of {', '.join(STYLES)}")
    if any(len(row) != len(headers) for row in rows):
        raise ValueError("every row needs one cell per header")
    if align is None:
        align = "".join("r" if rows and all(_numeric(r[i]) or r[i] is None for r in rows)
                        and any(_numeric(r[i]) for r in rows) else "l" for i in range(len(headers)))
    if len(align) != len(headers) or set(align) - {"l", "r"}:
        raise ValueError(f"align needs one letter l or r per column, got {align!r}")
    color = use_color() if color is None else color
    markdown = style == "markdown"
    rule = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)  # box.SIMPLE_HEAD in ASCII
    table = Table(box={"markdown": box.MARKDOWN, "rule": rule, "plain": None}[style],
                  show_edge=markdown, pad_edge=markdown, header_style=HEADER_STYLE if color else "",
                  highlight=False)
    for head, side in zip(headers, align, strict=True):
        table.add_column(Text(head), justify="right" if side == "r" else "left", no_wrap=True)
    for row in rows:
        table.add_row(*(Text(_text(cell)) for cell in row))
    out = io.StringIO()
    console = Console(file=out, width=10_000, force_terminal=color, color_system="standard" if color else None,
                      no_color=not color, highlight=False, emoji=False, legacy_windows=False, soft_wrap=False)
    console.print(table)
    lines = "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n").split("\n")
    if markdown and len(lines) > 1:  # ``---:`` under a right-aligned column, as Markdown spells it
        cells = lines[1].split("|")
        lines[1] = "|".join([cells[0], *(c[:-1] + ":" if side == "r" else c for c, side in zip(cells[1:-1], align,
                                                                                                  strict=True)),
                             cells[-1]])
    return "\n".join(lines)
