"""The result objects of ``connectx_forge.compare``, ``models`` and ``mistakes``: the same shape as ``results.py``'s
(``.report``, ``.text``, ``.tables()``, ``.to_pandas()``, HTML in a notebook).

None plays a game, so ``games`` is empty and the table is their own: a comparison's ``rows`` (one per
opponent, then ``all``), a fit's ``fits`` (one per model and opponent), the mistakes' ``rows`` (one per agent
and set).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connectx_forge.api.html import Row, html_table
from connectx_forge.api.results import Result
from connectx_forge.progress import count

if TYPE_CHECKING:
    from connectx_forge.play.comparison import ComparisonJson

ROW_COLUMNS = ["opponent", "games", "new_score", "base_score", "difference", "low", "high", "better", "worse",
               "distinct_games", "paired_games"]
FIT_COLUMNS = ["model", "opponent", "moves", "log_likelihood"]
MISTAKE_COLUMNS = ["set", "agent", "mistakes", "judged", "rate", "skipped", "mean_move_s", "max_move_s"]


@dataclass(frozen=True, repr=False)
class CompareResult(Result):
    """``cxforge compare``: NEW's score minus BASE's, game by game, per opponent and (with several) ``all``.

    Each row: ``games`` paired and counted, ``new_score`` and ``base_score`` (wins plus half the draws, a game),
    ``difference`` and its 95% interval ``low`` .. ``high``, the games each side did ``better`` or
    ``worse`` in, and ``distinct_games`` of the ``paired_games`` found (a repeat of deterministic agents
    counts once).  ``overall`` is the ``all`` row, or the one row; ``distinct_games`` its count.
    """

    new: str
    base: str
    rows: list[Row]
    report: ComparisonJson = field(repr=False)  # compare --json
    text: str = field(repr=False)
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "rows"

    @property
    def overall(self) -> Row:
        return self.rows[-1]

    @property
    def difference(self) -> float:
        return float(self.overall["difference"])

    @property
    def distinct_games(self) -> int:
        return int(self.overall["distinct_games"])

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of the overall difference."""
        return float(self.overall["low"]), float(self.overall["high"])

    def tables(self) -> dict[str, list[Row]]:
        return {"games": [], "rows": list(self.rows)}

    def __repr__(self) -> str:
        low, high = self.interval
        return (f"<CompareResult {self.new} - {self.base}: {100 * self.difference:+.1f} [{100 * low:+.1f}, "
                f"{100 * high:+.1f}] over {count(self.overall['games'], 'paired game')}>")

    def _summary_html(self) -> str:
        return (f"<p><b>{html.escape(self.new)}</b> (NEW) against <b>{html.escape(self.base)}</b> (BASE), paired game "
                f"by game</p>" + html_table(self.rows, ROW_COLUMNS))


@dataclass(frozen=True, repr=False)
class ModelsResult(Result):
    """``cxforge models``: each opponent model's mean log-likelihood per move (``fits``: per model, overall as
    opponent ``all`` and per opponent), the ``best`` model overall, each opponent's ``mistake_rates``, and the
    positions left out as ``unsolved`` in time."""

    best: str
    fits: list[Row]
    mistake_rates: dict[str, float]
    unsolved: int
    report: dict[str, Any] = field(repr=False)  # models --json
    text: str = field(repr=False)
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "fits"

    def tables(self) -> dict[str, list[Row]]:
        return {"games": [], "fits": list(self.fits)}

    def __repr__(self) -> str:
        return f"<ModelsResult best {self.best} over {count(self.report['moves'], 'move')}>"

    def _summary_html(self) -> str:
        rates = ", ".join(f"{o} {100 * r:.1f}%" for o, r in sorted(self.mistake_rates.items()))
        return (f"<p>best fit: <b>{html.escape(self.best)}</b>; mistake rates: {html.escape(rates)}; left out "
                f"(unsolved in time): {self.unsolved}</p>" + html_table(self.fits, FIT_COLUMNS))


@dataclass(frozen=True, repr=False)
class MistakesResult(Result):
    """``cxforge mistakes``: one row per agent and set: ``mistakes`` of ``judged`` moves, their ``rate``, the
    positions ``skipped`` (not labelled in time), five ``examples``, how the moves were chosen (``how``) and the
    mean and longest time to move.  ``report`` is ``--json``'s list, each row with every mistake's position
    (``mistake_positions``)."""

    rows: list[Row]
    report: list[Row] = field(repr=False)
    text: str = field(repr=False)
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "rows"

    def tables(self) -> dict[str, list[Row]]:
        return {"games": [], "rows": list(self.rows)}

    def __repr__(self) -> str:
        made = sum(int(r["mistakes"]) for r in self.rows)
        judged = sum(int(r["judged"]) for r in self.rows)
        return (f"<MistakesResult {count(made, 'mistake')} in {count(judged, 'move')} judged, "
                f"{count(len(self.rows), 'row')}>")

    def _summary_html(self) -> str:
        return html_table(self.rows, MISTAKE_COLUMNS, "mistakes per agent and set")
