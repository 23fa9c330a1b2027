"""A tournament's report: one JSON-ready dict, and its text, CSV and PNG forms.

The dict holds everything computed from the stored games (the same for an
interrupted-then-resumed run as for an uninterrupted one) and, under ``info``
alone, what depends on this invocation (store path, seconds, executor).
``write_outputs`` writes ``report.json``, ``ratings.csv``, ``pairs.csv`` and
``ratings.png`` into a folder.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from connectx_forge import table
from connectx_forge.arena import elo, standings
from connectx_forge.arena.openings import Opening
from connectx_forge.arena.run import RunInfo, version_lines
from connectx_forge.arena.store import StoredGame
from connectx_forge.errors import UserError
from connectx_forge.sandbox import jail


def tournament_report(t: Any, run: str, suite: Sequence[Opening], games: Sequence[StoredGame],
                      info: RunInfo, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The report of tournament ``t`` (a ``tournament.Tournament``) from its stored games, its players named by
    their ``labels`` (as the store names them; default: their specs)."""
    names = labels or {}
    players = [names.get(p, p) for p in t.players]
    gauntlet = None if t.gauntlet is None else names.get(t.gauntlet, t.gauntlet)
    seen = {g.a for g in games} | {g.b for g in games}
    ratings = (standings.ratings_json(standings.ratings(games, players, gauntlet), games)
               if seen == set(players) else [])
    return {
        "kind": "tournament", "run": run, "settings": t.to_json(), "players": players, "gauntlet": gauntlet,
        "openings": len(suite), "plies": t.plies, "band": list(t.band), "games": len(games),
        "rating_method": elo.METHOD, "pair_method": elo.PAIR_METHOD, "ratings": ratings,
        "pairs": [table.to_json() for table in standings.pairing_tables(games)],
        "seats": {p: {s: w.to_json() for s, w in by.items()} for p, by in standings.seats(games, players).items()},
        "failures": standings.failures(games, players),
        "slowed": jail.slowed_games(g.record.slowed for g in games if g.record is not None),
        "info": info.to_json(),
    }


def slowdown_lines(report: dict[str, Any]) -> list[str]:
    """What a text report says of a run's ``--slowdown``: ``jail.slowdown_line`` with the ways its games
    recorded, once, when above 1."""
    slowdown = float(report.get("settings", {}).get("game", {}).get("slowdown", 1.0))
    return [jail.slowdown_line(slowdown, report.get("slowed"))] if slowdown > 1 else []


def _wdl(d: dict[str, int]) -> str:
    return f"{d['wins']}-{d['draws']}-{d['losses']}"


def elo_text(x: float | str | None, digits: int = 0) -> str:
    """An Elo figure of a report (``"+inf"``/``"-inf"`` as they are)."""
    if isinstance(x, str) or x is None:
        return str(x)
    return f"{round(x, digits) + 0.0:+.{digits}f}"  # no negative zero


def format_tournament(report: dict[str, Any], color: bool | None = None) -> str:
    """The text report ``cxforge tournament`` prints, its tables in the ``rule`` style of ``tools/table``
    (``color``: coloured headers; by default where stdout is a terminal)."""
    s = report["settings"]
    lo, hi = report["band"]
    gauntlet = report.get("gauntlet", s["gauntlet"])
    kind = f"gauntlet of {gauntlet}" if gauntlet else "round robin"
    scheduled = report.get("scheduled")
    played = f"{report['games']} games" if scheduled in (None, report["games"]) else \
        f"{report['games']} of {scheduled} games"
    capped = (f" (-n {report['max_games']}: the schedule's first {report['max_games']}; a larger -n plays more)"
              if report.get("max_games") is not None and report["max_games"] < (scheduled or 0) else "")
    lines = [f"{report['run']}: {kind}, {len(s['players'])} players, {report['openings']} openings after "
             f"{report['plies']} plies (scores {lo}:{hi}), each played twice per pairing, colours swapped: "
             f"{played}{capped}", ""]
    rows = []
    for rank, row in enumerate(report["ratings"], 1):
        los = "" if row["los_next"] is None else f"{100 * row['los_next']:.1f}%"
        rows.append([rank, row["player"], elo_text(row["elo"]),
                     f"[{elo_text(row['elo_lo'])}, {elo_text(row['elo_hi'])}]", row["games"],
                     f"{100 * row['score']:.1f}%", los])
    lines.append(table.render(["rank", table.PLAYER, table.ELO, "95% interval", table.GAMES, table.SCORE,
                               "LOS(next)"], rows, "rule", align="rlrlrrr", color=color))
    lines += [f"Ratings: {report['rating_method']}.", f"Pairings' Elo: {report['pair_method']}.", ""]
    rows = []
    for p in report["pairs"]:
        e = p["elo"]
        rows.append([f"{p['a']} vs {p['b']}", p["games"], _wdl(p), _wdl(p["a_first"]), _wdl(p["a_second"]),
                     "/".join(str(v) for v in p["pentanomial"].values()),
                     f"{elo_text(e['elo'])} [{elo_text(e['elo_lo'])}, {elo_text(e['elo_hi'])}]"])
    lines.append(table.render(["pairing (A vs B)", table.GAMES, f"A {table.W}-{table.D}-{table.L}", "A first",
                               "A second", "pairs LL/LD/WL/DD/WD/WW", "A's Elo (pentanomial)"], rows, "rule",
                              color=color))
    lines += ["", "by seat (first: mark 1, whose stones began the opening)"]
    lines.append(table.render([table.PLAYER, f"first {table.W}-{table.D}-{table.L}",
                               f"second {table.W}-{table.D}-{table.L}"],
                              [[player, _wdl(by["first"]), _wdl(by["second"])]
                               for player, by in report["seats"].items()], "rule", color=color))
    broke = {p: f for p, f in report["failures"].items() if f}
    lines.append("")
    if broke:
        for player, kinds in broke.items():
            lines.append(f"{player} lost games by breaking a rule: "
                         + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    else:
        lines.append("no player lost a game by an invalid move, an error or a timeout")
    info = report["info"]
    lines.append(f"store: {info['store']} ({info['played_now']} games played now, {info['seconds']:.1f} s, "
                 f"{info['executor']})")
    lines += slowdown_lines(report)
    lines += version_lines(report)
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(rows)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None


def write_json(report: dict[str, Any], path: Path) -> None:
    """A report as indented JSON."""
    _write(path, json.dumps(report, indent=2) + "\n")


def write_outputs(report: dict[str, Any], folder: Path) -> list[str]:
    """Write the tournament's JSON, CSVs and ratings PNG into ``folder``; a line for each file not written."""
    from connectx_forge.arena import plots

    make_folder(folder)
    out = [folder / "report.json", folder / "ratings.csv", folder / "pairs.csv", folder / "ratings.png"]
    write_json(report, out[0])
    _csv(out[1], ["rank", "player", "elo", "elo_lo", "elo_hi", "games", "score", "los_next"],
         [[i, r["player"], r["elo"], r["elo_lo"], r["elo_hi"], r["games"], r["score"], r["los_next"]]
          for i, r in enumerate(report["ratings"], 1)])
    penta = ["LL", "LD", "WL", "DD", "WD", "WW"]
    _csv(out[2], ["a", "b", "games", "wins", "draws", "losses", "score", "a_first_wins", "a_first_draws",
                  "a_first_losses", "a_second_wins", "a_second_draws", "a_second_losses", *penta,
                  "elo", "elo_lo", "elo_hi", "nelo", "los"],
         [[p["a"], p["b"], p["games"], p["wins"], p["draws"], p["losses"], p["score"],
           *p["a_first"].values(), *p["a_second"].values(), *(p["pentanomial"][k] for k in penta),
           p["elo"]["elo"], p["elo"]["elo_lo"], p["elo"]["elo_hi"], p["elo"]["nelo"], p["elo"]["los"]]
          for p in report["pairs"]])
    skipped = plots.draw(plots.ratings_png, report, out[3])
    return [skipped] if skipped else []
