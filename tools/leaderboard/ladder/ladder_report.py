"""A ladder's report: a JSON-ready dict, its text (tables through ``table.render``) and its plot.

Per submission: its role (your candidate or the pool), status (rated, retired:
no longer among the team's latest N, or error: its validation episode broke),
episodes played, the main run's mu +/- sigma after the last day, the predicted
leaderboard score (the replicates' median) with its 95% interval, and the day
it settles (``replicates``).  Then mu +/- sigma by day.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from connectx_forge import table
from connectx_forge.arena.plots import _pyplot, _save
from connectx_forge.leaderboard.ladder.replicates import Spread
from connectx_forge.leaderboard.ladder.simulate import YOU, Ladder, Played

MAX_ROWS = 12  # the by-day table shows at most this many days (evenly spread, the last always)


def ladder_report(t: Ladder, played: Played, spread: Spread, info: dict[str, Any]) -> dict[str, Any]:
    """The report of a finished ladder."""
    proc = played.process
    plan = proc.plan
    last_day = len(proc.history) - 1
    active = set(proc.active(last_day))
    subs = []
    for i, label in enumerate(plan.labels):
        status = "error" if i in proc.errored else "rated" if i in active else "retired"
        settled = spread.settled_day(i, t.settle)
        subs.append({
            "player": label, "role": "candidate" if plan.teams[i] == YOU else "pool", "status": status,
            "submitted_day": plan.submitted[i] + 1, "episodes": proc.episodes[-1][i],
            "mu": round(proc.history[-1][i].mu, 2), "sigma": round(proc.history[-1][i].sigma, 2),
            "predicted": round(spread.median[-1][i], 1), "predicted_lo": round(spread.lo[-1][i], 1),
            "predicted_hi": round(spread.hi[-1][i], 1), "settles_day": settled,
            "by_day": [{"day": d + 1, "mu": round(h[i].mu, 2), "sigma": round(h[i].sigma, 2),
                        "episodes": proc.episodes[d][i], "lo": round(spread.lo[d][i], 1),
                        "median": round(spread.median[d][i], 1), "hi": round(spread.hi[d][i], 1)}
                       for d, h in enumerate(proc.history)],
        })
    order = sorted(range(len(subs)), key=lambda i: float("inf") if i in proc.errored else -spread.median[-1][i])
    subs = [subs[i] for i in order]
    return {"kind": "ladder", "run": played.run, "days": t.days, "settings": t.to_json(),
            "episodes": sum(len(d) for d in played.days), "validation_episodes": played.validations,
            "submissions": subs, "run_note": played.note, **info}


def _mu(mu: float, sigma: float) -> str:
    return f"{mu:.0f} +/- {sigma:.0f}"


def format_ladder(report: dict[str, Any]) -> str:
    """The report as text: the predicted leaderboard, then mu +/- sigma by day."""
    subs = report["submissions"]
    s = report["settings"]
    rows = []
    for sub in subs:
        rated = sub["status"] != "error"
        settles = ("-" if not rated else f"day {sub['settles_day']}" if sub["settles_day"] is not None
                   else f"> {report['days']} days")
        rows.append([sub["player"], sub["role"], sub["status"], sub["episodes"],
                     _mu(sub["mu"], sub["sigma"]) if rated else "-",
                     f"{sub['predicted']:.0f} [{sub['predicted_lo']:.0f}, {sub['predicted_hi']:.0f}]" if rated
                     else "-", settles])
    games = report["episodes"] + report["validation_episodes"]
    lines = [f"ladder {report['run']}: {len(subs)} submissions, {report['days']} days, {report['episodes']} "
             f"rated episodes + {report['validation_episodes']} validation episodes = {games} games "
             f"({report['played_now']} played now, {games - report['played_now']} from the store; "
             f"{report['executor']})",
             table.render([table.PLAYER, "role", "status", "episodes", "mu +/- sigma",
                           "predicted score [95%]", "settles"], rows, "rule", align="lllrrrl")]
    days = len(subs[0]["by_day"]) if subs else 0
    step = max(1, -(-days // MAX_ROWS))
    shown = sorted({*range(step - 1, days, step), days - 1}) if days else []
    rated = [sub for sub in subs if sub["status"] != "error"]
    by_day = [[d + 1, *(_mu(sub["by_day"][d]["mu"], sub["by_day"][d]["sigma"]) for sub in rated)] for d in shown]
    lines += ["", "mu +/- sigma after each day (the main run):",
              table.render(["day", *(sub["player"] for sub in rated)], by_day, "rule")]
    r = s["rating"]
    lines += ["", f"model: TrueSkill, mu0 {r['mu0']:g}, sigma0 {r['sigma0']:g}, beta {r['beta']:g}, tau "
                  f"{r['tau']:g}, draw probability {r['draw_probability']:g}; {s['per_day']} episodes a day "
                  f"({s['new_per_day']} on a submission's first day), matchmaking window {s['window']:g}",
              f"predicted score: median of {s['replicates']} replicate ladders on the played games' outcomes, "
              f"95% interval; settles: the first day from which that median stays within {s['settle']:g} of "
              "its last value",
              "mu +/- sigma: the main run, one ladder of those (the first days set the whole field's level, so "
              "its players tend to sit above or below their medians together)"]
    if report.get("run_note"):
        lines.append(f"note: {report['run_note']}")
    return "\n".join(lines)


def ladder_png(report: dict[str, Any], path: Path) -> None:
    """Each submission's mu +/- sigma (the main run) against days."""
    plt = _pyplot(path)
    fig, ax = plt.subplots(figsize=(8, 5))
    try:
        for sub in report["submissions"]:
            if sub["status"] == "error":
                continue
            days = [b["day"] for b in sub["by_day"]]
            mu = [b["mu"] for b in sub["by_day"]]
            sig = [b["sigma"] for b in sub["by_day"]]
            line = ax.plot(days, mu, marker="o", ms=3, label=sub["player"])[0]
            ax.fill_between(days, [m - x for m, x in zip(mu, sig, strict=True)],
                            [m + x for m, x in zip(mu, sig, strict=True)], color=line.get_color(), alpha=0.15)
        ax.set_xlabel("day")
        ax.set_ylabel("mu +/- sigma")
        ax.set_title(f"ladder {report['run']}: {report['days']} days")
        ax.legend(loc="best")
        _save(fig, path)
    finally:
        plt.close(fig)
