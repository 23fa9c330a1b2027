"""The result objects of ``connectx_forge.ladder``, ``ladder_fit``, ``ghosts``, ``regress_add`` and
``regress_list``: the same shape as ``results.py``'s (``.report``, ``.text``, ``.tables()``, ``.to_pandas()``,
HTML in a notebook).

A ladder's ``games`` are the run's games, as ``--save`` writes them; the others play no game, so their
``games`` is empty and their table is their own (``to_pandas()`` gives it): a ladder fit's ``settings``, the
ghosts' ``teams``, a project's regression ``cases``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from connectx_forge.api.html import MAX_ROWS, Replay, Row, html_table, lines_html
from connectx_forge.api.results import GAME_COLUMNS, Result, _game_rows, _run_replay
from connectx_forge.leaderboard.regress.cases import HEADERS, rows_of
from connectx_forge.progress import count

if TYPE_CHECKING:
    from connectx_forge.arena.ladder.fit import FitResult
    from connectx_forge.arena.ladder.ladder_report import LadderReport

STANDING_COLUMNS = ["player", "role", "status", "episodes", "mu", "sigma", "predicted", "predicted_lo",
                    "predicted_hi", "settles_day"]


@dataclass(frozen=True, repr=False)
class LadderResult(Result):
    """``cxforge ladder``: each submission's predicted leaderboard score (the replicates' median, with its 95%
    interval), mu and sigma after the last day, the day it settles, its mu and sigma by day; and every game.

    ``store``: the results database, where one was asked for (``store=``); else the run played in a temporary
    one, removed at the end.
    """

    players: tuple[str, ...]  # the candidates' labels, in the order submitted
    games: list[Row]
    ladder: LadderReport = field(repr=False)  # the ladder's report; ``report`` is its JSON
    report: Mapping[str, object] = field(repr=False)
    text: str = field(repr=False)
    store: str | None = None
    saved: str | None = None
    default_table = "standings"

    @classmethod
    def of(cls, games: list[Row], ladder: LadderReport, text: str, store: str | None,
           saved: str | None) -> LadderResult:
        """The result of a ladder whose report is ``ladder``."""
        candidates = tuple(s.player for s in ladder.submissions if s.role == "candidate")
        return cls(candidates, games, ladder, ladder.to_json(), text, store, saved)

    @property
    def standings(self) -> list[Row]:
        """One row a submission, best predicted first (a submission whose validation broke last)."""
        return [{k: v for k, v in s.to_json().items() if k != "by_day"} for s in self.ladder.submissions]

    @property
    def leader(self) -> str:
        return self.ladder.submissions[0].player

    @property
    def distinct_games(self) -> int:
        """The rated episodes that were games no earlier episode of the same seats played."""
        return self.ladder.distinct_games

    def by_day(self) -> list[Row]:
        """One row a submission and day: mu, sigma, episodes so far and the replicates' lo, median and hi."""
        return [{"player": s.player, **d.to_json()} for s in self.ladder.submissions for d in s.by_day]

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "standings": self.standings, "by_day": self.by_day()}

    def replay(self, i: int = 0) -> Replay:
        return _run_replay(self.games, i)

    def __repr__(self) -> str:
        return (f"<LadderResult {count(len(self.ladder.submissions), 'submission')}, "
                f"{count(self.ladder.days, 'day')}, {count(len(self.games), 'game')}, leader {self.leader}>")

    def _summary_html(self) -> str:
        r = self.ladder
        head = (f"<p>ladder {html.escape(r.run)}: {count(len(r.submissions), 'submission')}, {count(r.days, 'day')}, "
                f"{count(r.episodes, 'episode')}; predicted score: the median of "
                f"{count(r.settings.replicates, 'replicate ladder')}, 95% interval</p>")
        return (head + html_table(self.standings, STANDING_COLUMNS, "standings")
                + html_table(_game_rows(self.games), GAME_COLUMNS, "games", limit=MAX_ROWS))


@dataclass(frozen=True, repr=False)
class LadderFitResult(Result):
    """``cxforge ladder --fit``: TrueSkill's sigma0, beta, tau and draw probability fitted to episode lists, the
    fit's root mean square error (points), and how much the lists held."""

    fitted: FitResult = field(repr=False)  # the fit; ``report`` is its JSON
    report: Mapping[str, object] = field(repr=False)
    text: str = field(repr=False)
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "settings"

    @classmethod
    def of(cls, fitted: FitResult, text: str) -> LadderFitResult:
        """The result of the fit ``fitted``."""
        return cls(fitted, fitted.to_json(), text)

    @property
    def settings(self) -> dict[str, float]:
        return self.fitted.settings.to_json()

    @property
    def rmse(self) -> float:
        return self.fitted.rmse

    def tables(self) -> dict[str, list[Row]]:
        return {"settings": [{**self.settings, **{k: v for k, v in self.report.items() if k != "settings"}}]}

    def __repr__(self) -> str:
        s = self.fitted.settings
        return (f"<LadderFitResult sigma0 {s.sigma0:.1f}, beta {s.beta:.1f}, tau {s.tau:.2f}, draw "
                f"probability {s.draw_probability:.3f}, rmse {self.rmse:.2f}>")

    def _summary_html(self) -> str:
        return f"<pre>{html.escape(self.text)}</pre>"


class GhostsJson(TypedDict):
    """``cxforge ghosts --json``: how many replay files were read, and the teams (``ghosts.teams.teams_of``'s
    rows)."""

    files: int
    teams: list[dict[str, object]]


TEAM_COLUMNS = ["team", "games", "episodes", "positions", "several_moves"]


@dataclass(frozen=True, repr=False)
class GhostsResult(Result):
    """``cxforge ghosts``: the teams the replays show (``teams``: games, episodes, positions recorded, positions
    where it played several moves), each playable as ``ghost:TEAM``; ``files``: the replay files read;
    ``skipped``: a line for each file that was not a 6x7 ConnectX replay; ``written``: the ghost file written
    (``write=``)."""

    report: GhostsJson = field(repr=False)  # ghosts --json
    text: str = field(repr=False)
    skipped: tuple[str, ...] = ()
    written: str | None = None
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "teams"

    @property
    def teams(self) -> list[Row]:
        return [dict(t) for t in self.report["teams"]]

    @property
    def files(self) -> int:
        return int(self.report["files"])

    def tables(self) -> dict[str, list[Row]]:
        return {"teams": self.teams}

    def __repr__(self) -> str:
        wrote = f", wrote {self.written}" if self.written else ""
        return f"<GhostsResult {len(self.teams)} teams from {self.files} replay files{wrote}>"

    def _summary_html(self) -> str:
        out = f"<p>{self.files} replay file(s); play a team as <code>ghost:TEAM</code></p>"
        if self.written:
            out += f"<p>wrote {html.escape(self.written)}</p>"
        return (out + html_table(self.teams, TEAM_COLUMNS, "teams", limit=MAX_ROWS)
                + lines_html([f"skipped {s}" for s in self.skipped]))


@dataclass(frozen=True, repr=False)
class RegressResult(Result):
    """``cxforge regress add`` or ``list``: the project's regression cases (``cases``, all of them, as
    ``tests/regressions.json`` keeps them), and for ``add`` how many games were ours (``report["games"]``), lost,
    and the cases ``added`` now (``new``).

    ``report``: ``regress add --json``'s object; for ``list``, ``{"cases": ...}`` (``regress list --json``
    prints the list alone).
    """

    project: str
    cases: list[Row]
    report: dict[str, Any] = field(repr=False)  # read back by key (``added``, ``new``): regress's own JSON
    text: str = field(repr=False)
    games: list[Row] = field(default_factory=list, repr=False)
    default_table = "cases"

    @property
    def added(self) -> int:
        return int(self.report.get("added", 0))

    @property
    def new(self) -> list[Row]:
        return list(self.report.get("new", []))

    def tables(self) -> dict[str, list[Row]]:
        return {"cases": [{"case": i, **c} for i, c in enumerate(self.cases, 1)]}

    def __repr__(self) -> str:
        return f"<RegressResult {self.project}: {len(self.cases)} cases, {self.added} added>"

    def _summary_html(self) -> str:
        rows = [dict(zip(HEADERS, r, strict=True)) for r in rows_of(self.cases)]
        return (f"<pre>{html.escape(self.text)}</pre>"
                + html_table(rows, list(HEADERS), "cases (columns from 1)", limit=MAX_ROWS))
