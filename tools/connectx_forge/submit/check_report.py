"""The text report of ``cxforge check``: the games by opponent and seat, the floors, the move times, the verdict."""

from __future__ import annotations

from connectx_forge import table
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.sandbox import jail
from connectx_forge.sandbox.escape import escape
from connectx_forge.stats import format_rate
from connectx_forge.submit.verdict import CheckReport


def seconds(s: float) -> str:
    """``"1.25 s"``, or ``"12.5 ms"`` under a second."""
    return f"{s:.2f} s" if s >= 1 else f"{1000 * s:.1f} ms"


def _header(report: CheckReport) -> list[str]:
    who = f" (agent {escape(report.agent, keep_newlines=False)})" if report.agent else ""  # a manifest's: anyone's
    games = f"{report.games_per_opponent} game(s) per opponent"
    if report.floors and report.max_games > report.games_per_opponent:
        games += f", up to {report.max_games} while a floor is undecided"
    game = "" if report.game == CONNECTX else f" of {report.game}"
    return [f"check {escape(report.path, keep_newlines=False)}{who}: {games}{game}, loaded as Kaggle "
            f"does from an empty folder; actTimeout {report.act_timeout:g} s, overage {report.overage:g} s",
            f"the file played in agent hosts (a limited child process per game), {jail.status()[1]}; "
            "kaggle_environments refereed",
            jail.bounds(),
            ""]


SEAT_HEADERS = (table.OPPONENT, table.SEAT, table.GAMES, table.W, table.D, table.L, table.WIN_RATE, table.INVALID,
                table.ERRORS, table.TIMEOUTS)


def _seat_rows(report: CheckReport, color: bool | None = None) -> list[str]:
    """The games by opponent and seat as a plain table (``tools/connectx_forge/table``), one string a line."""
    rows = [[s.opponent, s.seat, s.games, s.wins, s.draws, s.losses, format_rate(s.wins, s.games), s.invalid,
             s.errors, s.timeouts] for s in report.seats]
    return table.render(SEAT_HEADERS, rows, "plain", align="llrrrrlrrr", color=color).splitlines()


def _validation(report: CheckReport) -> list[str]:
    v = report.validation
    if v is None:
        return ["validation episode (the file against itself): not played (--no-validation)"]
    if not v.broke:
        if report.game != CONNECTX:
            return [f"validation episode (the file against itself): passed ({report.game}'s statuses: "
                    + ", ".join(v.record.statuses if v.record is not None and v.record.statuses else ["DONE"])
                    + ")"]
        return [f"validation episode (the file against itself): passed in {v.plies} moves"]
    return [f"validation episode (the file against itself): {v.status} ({v.error})"]


def _findings(report: CheckReport) -> list[str]:
    lines = _validation(report) + [f"floor vs {f.opponent}: {f.floor:.0%}; won {f.wins}/{f.games} = {f.rate:.0%}, "
                                   f"bounds [{f.lower:.1%}, {f.upper:.1%}] (each at {1 - f.level:.2%}, 95% over "
                                   f"the test's looks): {f.verdict}" for f in report.floors]
    if report.game == CONNECTX or report.moves:
        lines.append(f"first move, including the load: {seconds(report.slowest_first_move_s)} at most; "
                     f"slowest later move: {seconds(report.slowest_move_s)} ({report.moves} moves timed)")
    if report.breaks:
        lines.append("games lost by: " + ", ".join(f"{kind} {n}" for kind, n in sorted(report.breaks.items())))
    lines.extend(f"agent error: {e}" for e in report.errors_seen)
    if report.log_tail:
        lines.append(f"the agent's log in {report.log_game}, last lines:")
        lines.extend(f"  | {line}" for line in report.log_tail)
    lines.extend(f"note: {n}" for n in report.notes)
    return lines


def format_report(report: CheckReport, color: bool | None = None) -> str:
    """The readable table ``cxforge check`` prints, ending in PASS, one FAIL line per problem, or one UNDECIDED
    line per floor neither met nor missed; ``color``: the table's header in colour (by default on a terminal)."""
    if report.problems:
        verdict = [f"FAIL: {p}" for p in report.problems]
    elif report.undecided:
        verdict = [f"UNDECIDED: {u}" for u in report.undecided]
    else:
        verdict = ["PASS"]
    return "\n".join(_header(report) + _seat_rows(report, color) + [""] + _findings(report) + verdict)
