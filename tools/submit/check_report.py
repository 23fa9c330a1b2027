"""The text report of ``cxforge check``: the games by opponent and seat, the floors, the move times, the verdict."""

from __future__ import annotations

from connectx_forge.tools.sandbox import jail
from connectx_forge.tools.stats import format_rate
from connectx_forge.tools.submit.verdict import CheckReport


def seconds(s: float) -> str:
    """``"1.25 s"``, or ``"12.5 ms"`` under a second."""
    return f"{s:.2f} s" if s >= 1 else f"{1000 * s:.1f} ms"


def _header(report: CheckReport) -> list[str]:
    who = f" (agent {report.agent})" if report.agent else ""
    games = f"{report.games_per_opponent} game(s) per opponent"
    if report.floors and report.max_games > report.games_per_opponent:
        games += f", up to {report.max_games} while a floor is undecided"
    return [f"check {report.path}{who}: {games}, loaded as Kaggle "
            f"does from an empty folder; actTimeout {report.act_timeout:g} s, overage {report.overage:g} s",
            f"the file played in agent hosts (a limited child process per game), {jail.status()[1]}; "
            "kaggle_environments refereed",
            jail.bounds(),
            "",
            f"{'opponent':<9} {'seat':<7} {'games':>5} {'W':>4} {'D':>4} {'L':>4}  {'win rate [95% Wilson]':<22}"
            f" {'invalid':>7} {'error':>5} {'timeout':>7}"]


def _seat_rows(report: CheckReport) -> list[str]:
    return [f"{s.opponent:<9} {s.seat:<7} {s.games:>5} {s.wins:>4} {s.draws:>4} {s.losses:>4}  "
            f"{format_rate(s.wins, s.games):<22} {s.invalid:>7} {s.errors:>5} {s.timeouts:>7}"
            for s in report.seats]


def _validation(report: CheckReport) -> list[str]:
    v = report.validation
    if v is None:
        return ["validation episode (the file against itself): not played (--no-validation)"]
    if v["kind"] == "ok":
        return [f"validation episode (the file against itself): passed in {v['plies']} moves"]
    return [f"validation episode (the file against itself): {v['status']} ({v['error']})"]


def _findings(report: CheckReport) -> list[str]:
    lines = _validation(report) + [f"floor vs {f.opponent}: {f.floor:.0%}; won {f.wins}/{f.games} = {f.rate:.0%}, "
                                   f"bounds [{f.lower:.1%}, {f.upper:.1%}] (each at {1 - f.level:.2%}, 95% over "
                                   f"the test's looks): {f.verdict}" for f in report.floors]
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


def format_report(report: CheckReport) -> str:
    """The readable table ``cxforge check`` prints, ending in PASS, one FAIL line per problem, or one UNDECIDED
    line per floor neither met nor missed."""
    if report.problems:
        verdict = [f"FAIL: {p}" for p in report.problems]
    elif report.undecided:
        verdict = [f"UNDECIDED: {u}" for u in report.undecided]
    else:
        verdict = ["PASS"]
    return "\n".join(_header(report) + _seat_rows(report) + [""] + _findings(report) + verdict)
