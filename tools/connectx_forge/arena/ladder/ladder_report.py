"""A ladder's report: a frozen ``LadderReport`` (``to_json`` is ``cxforge ladder --json``'s object and the
report.json ``-o`` writes, ``from_json`` reads it back), its text (tables through ``table.render``), its
plot, and the files ``-o`` writes (``write_ladder_outputs``).

Per submission (``Submission``): its role (your candidate or the pool), status (rated, retired:
no longer among the team's latest N, or error: its validation episode broke),
episodes played, the main run's mu +/- sigma after the last day, the predicted
leaderboard score (the replicates' median) with its 95% interval, and the day
it settles (``replicates``).  Then mu +/- sigma by day (``DayRating``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from connectx_forge import safe_write, table
from connectx_forge.arena.ladder.replicates import Spread
from connectx_forge.arena.ladder.simulate import YOU, Ladder, Played
from connectx_forge.arena.plots import _save, draw, figure, text

MAX_ROWS = 12  # the by-day table shows at most this many days (evenly spread, the last always)


@dataclass(frozen=True)
class DayRating:
    """One submission after one day (1-based): the main run's mu and sigma, its episodes so far, and the
    replicates' 2.5%, 50% and 97.5% quantiles of mu."""

    day: int
    mu: float
    sigma: float
    episodes: int
    lo: float
    median: float
    hi: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DayRating:
        """The day ``to_json`` wrote."""
        return cls(**data)


@dataclass(frozen=True)
class Submission:
    """One submission's line of the report: its label, role (``candidate`` or ``pool``), status (``rated``,
    ``retired`` or ``error``), the day it was submitted (1-based), its episodes, the main run's mu and sigma
    after the last day, the predicted score with its 95% interval, the day it settles (None: not within the
    days run), and its ratings by day."""

    player: str
    role: str
    status: str
    submitted_day: int
    episodes: int
    mu: float
    sigma: float
    predicted: float
    predicted_lo: float
    predicted_hi: float
    settles_day: int | None
    by_day: tuple[DayRating, ...]

    @property
    def rated(self) -> bool:
        """Whether it was rated at all (its validation episode did not break)."""
        return self.status != "error"

    def to_json(self) -> dict[str, object]:
        return {"player": self.player, "role": self.role, "status": self.status,
                "submitted_day": self.submitted_day, "episodes": self.episodes, "mu": self.mu, "sigma": self.sigma,
                "predicted": self.predicted, "predicted_lo": self.predicted_lo, "predicted_hi": self.predicted_hi,
                "settles_day": self.settles_day, "by_day": [d.to_json() for d in self.by_day]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Submission:
        """The submission ``to_json`` wrote."""
        return cls(data["player"], data["role"], data["status"], data["submitted_day"], data["episodes"],
                   data["mu"], data["sigma"], data["predicted"], data["predicted_lo"], data["predicted_hi"],
                   data["settles_day"], tuple(DayRating.from_json(d) for d in data["by_day"]))


@dataclass(frozen=True)
class LadderReport:
    """A ladder's report: its run, the ladder as played (``settings``), the rated and validation episodes, the
    submissions best predicted first (one whose validation broke last), the run's note, how this call went
    (the store, the games played now, the executor) and how many rated episodes were distinct games.
    ``to_json`` is ``cxforge ladder --json``."""

    run: str
    settings: Ladder
    episodes: int
    validation_episodes: int
    submissions: tuple[Submission, ...]
    run_note: str | None
    store: str
    played_now: int
    executor: str
    distinct_games: int

    @property
    def days(self) -> int:
        return self.settings.days

    @property
    def games(self) -> int:
        """Every game of the run: the rated episodes and the validation episodes."""
        return self.episodes + self.validation_episodes

    def to_json(self) -> dict[str, object]:
        return {"kind": "ladder", "run": self.run, "days": self.days, "settings": self.settings.to_json(),
                "episodes": self.episodes, "validation_episodes": self.validation_episodes,
                "submissions": [s.to_json() for s in self.submissions], "run_note": self.run_note,
                "store": self.store, "played_now": self.played_now, "executor": self.executor,
                "distinct_games": self.distinct_games}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderReport:
        """The report ``to_json`` wrote."""
        return cls(data["run"], Ladder.from_json(data["settings"]), data["episodes"], data["validation_episodes"],
                   tuple(Submission.from_json(s) for s in data["submissions"]), data["run_note"], data["store"],
                   data["played_now"], data["executor"], int(data["distinct_games"]))


def _submission(played: Played, spread: Spread, i: int) -> Submission:
    """Submission ``i``'s line: its status after the last day, its ratings and the replicates' quantiles."""
    proc = played.process
    plan = proc.plan
    status = "error" if i in proc.errored else "rated" if i in proc.active(len(proc.history) - 1) else "retired"
    by_day = tuple(DayRating(d + 1, round(h[i].mu, 2), round(h[i].sigma, 2), proc.episodes[d][i],
                             round(spread.lo[d][i], 1), round(spread.median[d][i], 1), round(spread.hi[d][i], 1))
                   for d, h in enumerate(proc.history))
    last = by_day[-1]
    return Submission(plan.labels[i], "candidate" if plan.teams[i] == YOU else "pool", status,
                      plan.submitted[i] + 1, last.episodes, last.mu, last.sigma, last.median, last.lo, last.hi,
                      spread.settled_day(i, played.ladder.settle), by_day)


def ladder_report(played: Played, spread: Spread) -> LadderReport:
    """The report of a finished ladder (``played``, its replicates' ``spread``)."""
    proc = played.process
    subs = [_submission(played, spread, i) for i in range(len(proc.plan.labels))]
    order = sorted(range(len(subs)), key=lambda i: float("inf") if i in proc.errored else -spread.median[-1][i])
    return LadderReport(played.run, played.ladder, sum(len(d) for d in played.days), played.validations,
                        tuple(subs[i] for i in order), played.note, str(played.store), played.played_now,
                        played.executor, played.distinct_games)


def _mu(mu: float, sigma: float) -> str:
    return f"{mu:.0f} +/- {sigma:.0f}"


def _row(sub: Submission, days: int) -> list[object]:
    """A submission's row of the predicted leaderboard."""
    if not sub.rated:
        return [sub.player, sub.role, sub.status, sub.episodes, "-", "-", "-"]
    settles = f"day {sub.settles_day}" if sub.settles_day is not None else f"> {days} days"
    return [sub.player, sub.role, sub.status, sub.episodes, _mu(sub.mu, sub.sigma),
            f"{sub.predicted:.0f} [{sub.predicted_lo:.0f}, {sub.predicted_hi:.0f}]", settles]


def format_ladder(report: LadderReport) -> str:
    """The report as text: the predicted leaderboard, then mu +/- sigma by day."""
    subs, s, r = report.submissions, report.settings, report.settings.rating
    games = report.games
    lines = [f"ladder {report.run}: {len(subs)} submissions, {report.days} days, {report.episodes} "
             f"rated episodes + {report.validation_episodes} validation episodes = {games} games "
             f"({report.played_now} played now, {games - report.played_now} from the store; "
             f"{report.executor})",
             table.render([table.PLAYER, "role", "status", "episodes", "mu +/- sigma",
                           "predicted score [95%]", "settles"], [_row(sub, report.days) for sub in subs], "rule",
                          align="lllrrrl")]
    days = len(subs[0].by_day) if subs else 0
    step = max(1, -(-days // MAX_ROWS))
    shown = sorted({*range(step - 1, days, step), days - 1}) if days else []
    rated = [sub for sub in subs if sub.rated]
    by_day = [[d + 1, *(_mu(sub.by_day[d].mu, sub.by_day[d].sigma) for sub in rated)] for d in shown]
    lines += ["", "mu +/- sigma after each day (the main run):",
              table.render(["day", *(sub.player for sub in rated)], by_day, "rule")]
    lines += ["", f"model: TrueSkill, mu0 {r.mu0:g}, sigma0 {r.sigma0:g}, beta {r.beta:g}, tau "
                  f"{r.tau:g}, draw probability {r.draw_probability:g}; {s.per_day} episodes a day "
                  f"({s.new_per_day} on a submission's first day), matchmaking window {s.window:g}",
              f"predicted score: median of {s.replicates} replicate ladders on the played games' outcomes, "
              f"95% interval; settles: the first day from which that median stays within {s.settle:g} of "
              "its last value",
              "mu +/- sigma: the main run, one ladder of those (the first days set the whole field's level, so "
              "its players tend to sit above or below their medians together)",
              f"distinct games: {report.distinct_games} of {report.episodes} rated episodes (a repeat is the same "
              "two agents in the same seats playing the same game again: Kaggle rates it, and the replicates "
              "draw it as the one outcome it is)"]
    if report.run_note:
        lines.append(f"note: {report.run_note}")
    return "\n".join(lines)


def ladder_png(report: LadderReport, path: Path) -> None:
    """Each submission's mu +/- sigma (the main run) against days."""
    with figure(path, figsize=(8, 5)) as (fig, ax):
        for sub in report.submissions:
            if not sub.rated:
                continue
            days = [b.day for b in sub.by_day]
            mu = [b.mu for b in sub.by_day]
            sig = [b.sigma for b in sub.by_day]
            line = ax.plot(days, mu, marker="o", ms=3, label=text(sub.player))[0]
            ax.fill_between(days, [m - x for m, x in zip(mu, sig, strict=True)],
                            [m + x for m, x in zip(mu, sig, strict=True)], color=line.get_color(), alpha=0.15)
        ax.set_xlabel("day")
        ax.set_ylabel("mu +/- sigma")
        ax.set_title(text(f"ladder {report.run}: {report.days} days"))
        ax.legend(loc="best")
        _save(fig, path)


FILES = ("report.json", "ladder.png")  # what -o DIR holds after a ladder


def write_ladder_outputs(report: LadderReport, out: Path) -> list[str]:
    """``report.json`` and ``ladder.png`` (``FILES``) in the folder ``out`` (``-o``); a note for each file
    skipped."""
    safe_write.write_text(out / FILES[0], json.dumps(report.to_json(), indent=2), replace=True)
    note = draw(ladder_png, report, out / FILES[1])
    return [] if note is None else [note]
