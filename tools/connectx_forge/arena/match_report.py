"""The text report of a match (what ``cxforge match`` prints), and how durations read in it.

A header line, which players ran isolated in agent hosts, then a table (``tools/connectx_forge/table``, its ``rule``
style):
one row per seat of A and one overall (W/D/L, A's own rule breaks, A's win rate with its 95% Wilson
interval, B's rule breaks; "crashes/other" counts crash, memory, protocol and
load), one line per kind of rule break with the first game's detail (games are
numbered from 1, as ``cxforge logs --index N`` and ``review --index N`` take them), then each
side's move times.  A detail is what an agent said, printed with its control
characters escaped (``sandbox/escape.py``; a hosted agent's already are, an
in-process agent's are not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectx_forge import table
from connectx_forge.play.tally import Tally
from connectx_forge.sandbox.escape import escape
from connectx_forge.stats import format_rate

if TYPE_CHECKING:
    from connectx_forge.arena.match import PlayedMatch
    from connectx_forge.play.game_record import GameRecord


def duration(seconds: float | None) -> str:
    """``"35 us"``, ``"2.50 ms"`` or ``"1.20 s"``; ``"n/a"`` for None."""
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _header(result: PlayedMatch) -> list[str]:
    rows, columns, inarow = result.size
    games = {r.game for r in result.records} - {None}
    where = ", ".join(sorted(g for g in games if g)) if games else f"{rows}x{columns}x{inarow}"
    return [f"A = {result.a}  vs  B = {result.b}: {len(result.records)} games on {where}, "
            f"seed {result.seed}, {result.workers} worker(s), {result.seconds:.2f} s",
            _isolation(result)]


HEADERS = ["A plays", table.GAMES, table.W, table.D, table.L, table.INVALID, table.ERRORS, table.TIMEOUTS,
           table.OTHER, f"A {table.WIN_RATE}", "B invalid/errors/timeouts/other"]


def _isolation(result: PlayedMatch) -> str:
    hosted = [f"{side} ({name})" for side, name, on in (("A", result.a, result.isolated[0]),
                                                        ("B", result.b, result.isolated[1])) if on]
    if not hosted:
        return "isolated: none (both players ran in the referee's processes)"
    return "isolated (agent hosts, one child process per game): " + ", ".join(hosted)


def _row(label: str, t: Tally) -> list[object]:
    return [label, t.games, t.wins, t.draws, t.losses, t.invalid, t.errors, t.timeouts, t.crashes,
            format_rate(t.wins, t.games),
            f"{t.opponent_invalid}/{t.opponent_errors}/{t.opponent_timeouts}/{t.opponent_crashes}"]


def _breaks(result: PlayedMatch) -> list[str]:
    """One line per side and kind of rule break: how many, and the first game's detail."""
    counts: dict[tuple[str, str], int] = {}
    firsts: dict[tuple[str, str], GameRecord] = {}
    for rec in result.records:
        if rec.culprit is None:
            continue
        side = "A" if rec.culprit == rec.a_seat else "B"
        firsts.setdefault((side, rec.outcome), rec)
        counts[(side, rec.outcome)] = counts.get((side, rec.outcome), 0) + 1
    lines = []
    for (side, kind), count in sorted(counts.items()):
        rec = firsts[(side, kind)]
        why = rec.detail or rec.error or (f"returned {rec.bad_action}" if rec.bad_action else "")
        first = f"; game {rec.index + 1}: {escape(why, False)}" if why else ""  # numbered from 1, as logs --index
        lines.append(f"{side} {kind}: {count} game(s){first}")
    return lines


def _move_times(result: PlayedMatch) -> list[str]:
    lines = []
    for side, name in (("A", result.a), ("B", result.b)):
        s = result.time_stats(side)
        if s["moves"]:
            lines.append(f"move time {side} ({name}): median {duration(s['median_s'])}, "
                         f"max {duration(s['max_s'])} over {s['moves']} moves; "
                         f"most overage in one game {s['max_overage_s']:.2f} s")
    return lines


def format_match(result: PlayedMatch, color: bool | None = None) -> str:
    """The text report of ``result``: its seats' table in the ``rule`` style of ``tools/connectx_forge/table``
    (``color``: a
    coloured header; by default where stdout is a terminal)."""
    rows = [_row(label, t) for label, t in
            (("first", result.tally(1)), ("second", result.tally(2)), ("overall", result.tally()))]
    return "\n".join(_header(result) + [table.render(HEADERS, rows, "rule", color=color)] + _breaks(result)
                     + _move_times(result))
