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

from connectx_forge.tools import options
from connectx_forge.tools.arena import elo, results
from connectx_forge.tools.arena.openings import Opening
from connectx_forge.tools.arena.store import StoredGame
from connectx_forge.tools.errors import UserError


def tournament_report(t: Any, run: str, suite: Sequence[Opening], games: Sequence[StoredGame],
                      info: dict[str, Any]) -> dict[str, Any]:
    """The report of tournament ``t`` (a ``tournament.Tournament``) from its stored games."""
    players = list(t.players)
    seen = {g.a for g in games} | {g.b for g in games}
    ratings = (results.ratings_json(results.ratings(games, players, t.gauntlet), games)
               if seen == set(players) else [])
    return {
        "kind": "tournament", "run": run, "settings": t.to_json(),
        "openings": len(suite), "plies": t.plies, "band": list(t.band), "games": len(games),
        "rating_method": elo.METHOD, "pair_method": elo.PAIR_METHOD, "ratings": ratings,
        "pairs": [table.to_json() for table in results.pairing_tables(games)],
        "seats": {p: {s: w.to_json() for s, w in by.items()} for p, by in results.seats(games, players).items()},
        "failures": results.failures(games, players),
        "slowed": options.slowed_games(g.record.slowed for g in games if g.record is not None),
        "info": info,
    }


def slowdown_lines(report: dict[str, Any]) -> list[str]:
    """What a text report says of a run's ``--slowdown``: ``options.slowdown_line`` with the ways its games
    recorded, once, when above 1."""
    slowdown = float(report.get("settings", {}).get("slowdown", 1.0))
    return [options.slowdown_line(slowdown, report.get("slowed"))] if slowdown > 1 else []


def _wdl(d: dict[str, int]) -> str:
    return f"{d['wins']}-{d['draws']}-{d['losses']}"


def elo_text(x: float | str | None, digits: int = 0) -> str:
    """An Elo figure of a report (``"+inf"``/``"-inf"`` as they are)."""
    if isinstance(x, str) or x is None:
        return str(x)
    return f"{round(x, digits) + 0.0:+.{digits}f}"  # no negative zero


def format_tournament(report: dict[str, Any]) -> str:
    """The plain-text report ``cxforge tournament`` prints."""
    s = report["settings"]
    lo, hi = report["band"]
    kind = f"gauntlet of {s['gauntlet']}" if s["gauntlet"] else "round robin"
    lines = [f"{report['run']}: {kind}, {len(s['players'])} players, {report['openings']} openings after "
             f"{report['plies']} plies (scores {lo}:{hi}), each played twice per pairing, colours swapped: "
             f"{report['games']} games", ""]
    lines.append(f"{'rank':<5}{'player':<24}{'Elo':>6}  {'95% interval':<14}{'games':>6}{'score':>8}  LOS(next)")
    for rank, row in enumerate(report["ratings"], 1):
        los = "" if row["los_next"] is None else f"{100 * row['los_next']:.1f}%"
        interval = f"[{elo_text(row['elo_lo'])}, {elo_text(row['elo_hi'])}]"
        lines.append(f"{rank:<5}{row['player']:<24}{elo_text(row['elo']):>6}  {interval:<14}{row['games']:>6}"
                     f"{100 * row['score']:>7.1f}%  {los}")
    lines += [f"Ratings: {report['rating_method']}.", f"Pairings' Elo: {report['pair_method']}.", ""]
    lines.append(f"{'pairing (A vs B)':<40}{'games':>6}  {'A W-D-L':<10}{'A first':<10}{'A second':<10}"
                 f"{'pairs LL/LD/WL/DD/WD/WW':<26}A's Elo (pentanomial)")
    for p in report["pairs"]:
        penta = "/".join(str(v) for v in p["pentanomial"].values())
        e = p["elo"]
        lines.append(f"{p['a'] + ' vs ' + p['b']:<40}{p['games']:>6}  {_wdl(p):<10}{_wdl(p['a_first']):<10}"
                     f"{_wdl(p['a_second']):<10}{penta:<26}{elo_text(e['elo'])} "
                     f"[{elo_text(e['elo_lo'])}, {elo_text(e['elo_hi'])}]")
    lines += ["", "by seat (first: mark 1, whose stones began the opening)  W-D-L"]
    for player, by in report["seats"].items():
        lines.append(f"  {player:<24} first {_wdl(by['first']):<12} second {_wdl(by['second'])}")
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
    from connectx_forge.tools.arena import plots

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
