"""A tournament's report (``tournament.TournamentReport``) in its text, JSON, CSV and PNG forms.

``format_tournament`` is what ``cxforge tournament`` prints; ``write_tournament_outputs``
writes ``report.json``, ``ratings.csv``, ``pairs.csv`` and ``ratings.png`` into
a folder.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path

from connectx_forge import safe_write, table
from connectx_forge.arena import plots
from connectx_forge.arena.pentanomial import NAMES
from connectx_forge.arena.run import version_lines
from connectx_forge.arena.standings import WDL, PairingTable
from connectx_forge.arena.tournament import TournamentReport
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.sandbox import jail


def slowdown_lines(slowdown: float, slowed: dict[str, int] | None) -> list[str]:
    """What a text report says of a run's ``--slowdown``: ``jail.slowdown_line`` with the ways its games
    recorded (``slowed``), once, when above 1."""
    return [jail.slowdown_line(slowdown, slowed)] if slowdown > 1 else []


def _wdl(d: WDL) -> str:
    return f"{d.wins}-{d.draws}-{d.losses}"


def elo_text(x: float | str | None, digits: int = 0) -> str:
    """An Elo figure of a report (infinite: ``"+inf"``/``"-inf"``, as the JSON says it)."""
    if isinstance(x, str) or x is None:
        return str(x)
    return f"{round(x, digits) + 0.0:+.{digits}f}"  # no negative zero


def format_tournament(report: TournamentReport, color: bool | None = None) -> str:
    """The text report ``cxforge tournament`` prints, its tables in the ``rule`` style of ``tools/connectx_forge/table``
    (``color``: coloured headers; by default where stdout is a terminal)."""
    t = report.settings
    lo, hi = t.band
    kind = f"gauntlet of {report.gauntlet}" if report.gauntlet else "round robin"
    played = f"{report.games} games" if report.scheduled == report.games else \
        f"{report.games} of {report.scheduled} games"
    cap = report.max_games
    capped = (f" (-n {cap}: the schedule's first {cap}; a larger -n plays more)"
              if cap is not None and cap < report.scheduled else "")
    starts = (f"{report.openings} openings after {t.plies} plies (scores {lo}:{hi})" if t.game.game == CONNECTX
              else f"{t.game.game} on {report.openings} seeds")
    lines = [f"{report.run}: {kind}, {len(t.players)} players, {starts}, each played twice per pairing, "
             f"colours swapped: {played}{capped}",
             f"distinct games: {report.distinct_games} of {report.games} (a game repeated move for move in the same "
             "pairing, seats and opening counts once)", ""]
    rows = []
    for rank, row in enumerate(report.ratings, 1):
        los = "" if row.los_next is None else f"{100 * row.los_next:.1f}%"
        rows.append([rank, row.player, elo_text(row.elo), f"[{elo_text(row.elo_lo)}, {elo_text(row.elo_hi)}]",
                     row.games, f"{100 * row.score:.1f}%", los])
    lines.append(table.render(["rank", table.PLAYER, table.ELO, "95% interval", table.GAMES, table.SCORE,
                               "LOS(next)"], rows, "rule", align="rlrlrrr", color=color))
    lines += [f"Ratings: {report.rating_method}.", f"Pairings' Elo: {report.pair_method}.", ""]
    rows = []
    for p in report.pairs:
        e = p.elo.to_json()  # the figures as the JSON report rounds them
        rows.append([f"{p.a} vs {p.b}", p.overall.games, _wdl(p.overall), _wdl(p.first), _wdl(p.second),
                     "/".join(str(v) for v in p.penta.to_json().values()),
                     f"{elo_text(e['elo'])} [{elo_text(e['elo_lo'])}, {elo_text(e['elo_hi'])}]"])
    lines.append(table.render(["pairing (A vs B)", table.GAMES, f"A {table.W}-{table.D}-{table.L}", "A first",
                               "A second", "pairs LL/LD/WL/DD/WD/WW", "A's Elo (pentanomial)"], rows, "rule",
                              color=color))
    lines += ["", "by seat (first: mark 1, whose stones began the opening)" if t.game.game == CONNECTX
              else f"by seat (first: {t.game.game}'s first agent)"]
    lines.append(table.render([table.PLAYER, f"first {table.W}-{table.D}-{table.L}",
                               f"second {table.W}-{table.D}-{table.L}"],
                              [[player, _wdl(by.first), _wdl(by.second)] for player, by in report.seats.items()],
                              "rule", color=color))
    broke = {p: f for p, f in report.failures.items() if f}
    lines.append("")
    if broke:
        for player, kinds in broke.items():
            lines.append(f"{player} lost games by breaking a rule: "
                         + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    else:
        lines.append("no player lost a game by an invalid move, an error or a timeout")
    info = report.info
    lines.append(f"store: {info.store} ({info.played_now} games played now, {info.seconds:.1f} s, "
                 f"{info.executor})")
    lines += slowdown_lines(t.game.slowdown, report.slowed)
    lines += version_lines(report.mixed_versions, report.run_note)
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    try:  # a folder output (-o DIR): its files are the command's own, rewritten each run
        safe_write.write_text(path, text, replace=True)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def _csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    _write(path, buf.getvalue())


def make_report_folder(folder: Path) -> None:
    try:
        safe_write.make_folder(folder)
    except OSError as exc:
        raise UserError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None


def write_json(report: Mapping[str, object], path: Path) -> None:
    """A report as indented JSON."""
    _write(path, json.dumps(report, indent=2) + "\n")


FILES = ("report.json", "ratings.csv", "pairs.csv", "ratings.png")  # what -o DIR holds after a tournament


def write_tournament_outputs(report: TournamentReport, folder: Path) -> list[str]:
    """Write the tournament's JSON, CSVs and ratings PNG (``FILES``) into ``folder``; a line for each file not
    written."""
    make_report_folder(folder)
    out = [folder / name for name in FILES]
    write_json(report.to_json(), out[0])
    _csv(out[1], ["rank", "player", "elo", "elo_lo", "elo_hi", "games", "score", "los_next"],
         [[i, r.player, r.elo, r.elo_lo, r.elo_hi, r.games, r.score, r.los_next]
          for i, r in enumerate(report.ratings, 1)])
    _csv(out[2], ["a", "b", "games", "wins", "draws", "losses", "score", "a_first_wins", "a_first_draws",
                  "a_first_losses", "a_second_wins", "a_second_draws", "a_second_losses", *NAMES,
                  "elo", "elo_lo", "elo_hi", "nelo", "los"],
         [[*_pair_cells(p)] for p in report.pairs])
    skipped = plots.draw(plots.ratings_png, report, out[3])
    return [skipped] if skipped else []


def _pair_cells(p: PairingTable) -> list[object]:
    """A row of ``pairs.csv``: its figures as the JSON report has them."""
    e = p.elo.to_json()
    return [p.a, p.b, p.overall.games, p.overall.wins, p.overall.draws, p.overall.losses,
            round(p.overall.score, 4), *p.first.to_json().values(), *p.second.to_json().values(),
            *p.penta.to_json().values(), e["elo"], e["elo_lo"], e["elo_hi"], e["nelo"], e["los"]]
