"""One table renderer (``tools/connectx_forge/table``): three styles, the same header words, colour only on a terminal.

The tables' text is snapshot-tested (``tests/snapshots/tables.txt``): after an intended change, rewrite it with
``CXFORGE_UPDATE_SNAPSHOTS=1 pytest tests/unit/test_table.py`` and review its diff."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from connectx_forge import table
from connectx_forge.arena import match_report, winrates
from connectx_forge.arena.tournament import Tournament, TournamentReport
from connectx_forge.arena.tournament_report import format_tournament
from connectx_forge.bench.arena import ExecutorRow
from connectx_forge.bench.arena import markdown as arena_markdown
from connectx_forge.leaderboard.review import submissions_cmd
from connectx_forge.leaderboard.review.summary import Summary, format_summary
from connectx_forge.play.tally import Tally
from connectx_forge.solver.mistakes import Mistakes
from connectx_forge.solver.mistakes import mistakes_table as mistakes_table
from connectx_forge.submit.check_report import _seat_rows
from connectx_forge.submit.verdict import SeatResult

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "tables.txt"
ANSI = "\x1b["
HEADERS = [table.PLAYER, table.GAMES, table.W, table.D, table.L, table.WIN_RATE]
ROWS = [["lookahead", 40, 30, 2, 8, "75.0% [59.8, 85.8]"], ["net [v2]", 400, 399, 0, 1, "99.8% [98.6, 100.0]"]]


def _tournament_report() -> TournamentReport:
    wdl = {"wins": 3, "draws": 0, "losses": 1}
    settings = Tournament(("lookahead", "random"), plies=4, openings=2, band=(-1, 1), games=4)
    return TournamentReport.from_json({
        "run": "tournament-0123456789ab", "settings": settings.to_json(), "players": ["lookahead", "random"],
        "gauntlet": None, "openings": 2, "games": 4, "scheduled": 8,
        "ratings": [{"player": "lookahead", "elo": 190.8, "elo_lo": 20.1, "elo_hi": "+inf", "games": 4,
                     "score": 0.75, "los_next": 0.981},
                    {"player": "random", "elo": -190.8, "elo_lo": "-inf", "elo_hi": -20.1, "games": 4,
                     "score": 0.25, "los_next": None}],
        "rating_method": "Bradley-Terry", "pair_method": "pentanomial",
        "pairs": [{"a": "lookahead", "b": "random", "games": 4, **wdl,
                   "a_first": {"wins": 2, "draws": 0, "losses": 0}, "a_second": {"wins": 1, "draws": 0, "losses": 1},
                   "pentanomial": {"LL": 0, "LD": 0, "WL": 1, "DD": 0, "WD": 0, "WW": 1},
                   "elo": {"pairs": 2, "score": 0.75, "elo": 190.8, "elo_lo": -10.5, "elo_hi": 400.2, "nelo": 150.0,
                           "nelo_error": 300.0, "los": 0.9}}],
        "seats": {"lookahead": {"first": {"wins": 2, "draws": 0, "losses": 0},
                                "second": {"wins": 1, "draws": 0, "losses": 1}},
                  "random": {"first": {"wins": 1, "draws": 0, "losses": 1},
                             "second": {"wins": 0, "draws": 0, "losses": 2}}},
        "failures": {"lookahead": {}, "random": {}}, "slowed": {},
        "info": {"store": "runs/arena/t.sqlite", "played_now": 4, "seconds": 1.25, "executor": "processes",
                 "workers": 2},
        "mixed_versions": [], "run_note": None, "distinct_games": 4,
    })


def every_table() -> str:
    """Each style of a fixed table, and the tables of match, winrates and tournament on fixed results."""
    parts = [f"== {style}\n{table.render(HEADERS, ROWS, style, color=False)}" for style in table.STYLES]
    first = Tally(games=20, wins=16, draws=1, losses=3)
    second = Tally(games=20, wins=12, draws=2, losses=5, invalid=1, opponent_timeouts=1)
    overall = Tally(games=40, wins=28, draws=3, losses=8, invalid=1, opponent_timeouts=1)
    rows = [match_report._row(label, t) for label, t in (("first", first), ("second", second), ("overall", overall))]
    parts.append(f"== match\n{table.render(match_report.HEADERS, rows, 'rule', color=False)}")
    cells = [["lookahead", "75.0% [59.8, 85.8] (40 g, 8 L, 0 inv)", "0.1", "0.5"]]
    parts.append(f"== winrates\n{winrates.winrates_table(cells, ['kaggle:random'], color=False)}")
    parts.append(f"== tournament\n{format_tournament(_tournament_report(), color=False)}")
    submissions = [{"ref": 51234567, "date": "2026-01-02T03:04:05Z", "status": "COMPLETE", "publicScore": "1012.5",
                    "description": "solver v2"}, {"ref": 51234568, "date": "2026-01-03T03:04:05Z", "status": "ERROR",
                                                  "fileName": "submission.py"}]
    parts.append(f"== submissions\n{submissions_cmd.submissions_table(submissions)}")
    seats = [SeatResult(games=10, wins=9, draws=0, losses=1, opponent="random", seat="first"),
             SeatResult(games=10, wins=6, draws=1, losses=3, invalid=1, timeouts=2, opponent="negamax", seat="second")]
    parts.append("== check\n" + "\n".join(_seat_rows(SimpleNamespace(seats=seats), color=False)))  # type: ignore[arg-type]
    mistakes = [Mistakes("net", "Random-Early", judged=200, skipped=3, mistakes=["x"] * 12, think_s=[0.01, 0.03]),
                Mistakes("solver", "Centre-Middle", judged=200, think_s=[0.5, 1.25])]
    parts.append(f"== mistakes\n{mistakes_table(mistakes, color=False)}")
    summary = Summary(["us"], games=5, blunders=1)
    summary.by_seat["first"].update(games=3, win=2, draw=0, loss=1)
    summary.by_seat["second"].update(games=2, win=1, draw=1, loss=0)
    parts.append(f"== review summary\n{format_summary(summary, color=False)}")
    bench = [ExecutorRow("process pool", 2, 4, 1.5, 2.7, True),
             ExecutorRow("dask LocalCluster", 1, 4, None, None, None, "not installed")]
    parts.append(f"== bench arena\n{arena_markdown(bench, ('lookahead', 'random'), 2)}")
    return "\n\n".join(parts) + "\n"


def test_every_table_matches_its_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")  # the same bytes under pytest -s on a terminal
    text = every_table()
    if os.environ.get("CXFORGE_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.is_file(), f"no snapshot yet: run CXFORGE_UPDATE_SNAPSHOTS=1 pytest {__file__}"
    expected = SNAPSHOT.read_text(encoding="utf-8")
    assert text == expected, (f"a table changed; if it was meant to, run CXFORGE_UPDATE_SNAPSHOTS=1 pytest {__file__} "
                              "and review the snapshot's diff")
    assert ANSI not in text and all(line == line.rstrip() for line in text.splitlines())


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert table.use_color(Tty()) and not table.use_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not table.use_color(Tty())
    monkeypatch.setenv("NO_COLOR", "")  # empty: as if unset (no-color.org)
    assert table.use_color(Tty())
    coloured = table.render(HEADERS, ROWS, "rule", color=True)
    assert ANSI in coloured and ANSI not in table.render(HEADERS, ROWS, "rule", color=False)
    monkeypatch.setattr(sys, "stdout", Tty())
    assert ANSI in table.render(HEADERS, ROWS)  # the default: stdout is a terminal here
    monkeypatch.setenv("NO_COLOR", "1")
    assert ANSI not in table.render(HEADERS, ROWS)


def test_a_cell_is_text_never_markup() -> None:
    text = table.render(["name"], [["[bold]x[/bold]"], ["\\[red]"]], "plain", color=True)
    assert "[bold]x[/bold]" in text and "\\[red]" in text


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown table style"):
        table.render(["a"], [[1]], "fancy")
    with pytest.raises(ValueError, match="one cell per header"):
        table.render(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="align"):
        table.render(["a"], [[1]], align="c")


def test_a_piped_match_prints_its_table_without_ansi_codes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color", "FORCE_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "connectx_forge.cli", "match", "leftmost", "random", "-n", "2",
                           "-w", "1", "--no-progress"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert ANSI not in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("A plays"))
    assert header.split()[:5] == ["A", "plays", table.GAMES, table.W, table.D]


# -- no table made by hand outside tools/connectx_forge/table.py ---------------------------------------------
TOOLS = Path(__file__).resolve().parents[2] / "tools" / "connectx_forge"
HAND_MADE = {
    "ljust/rjust/center": re.compile(r"\.(ljust|rjust|center)\("),
    "a padded field": re.compile(r"\{[^{}'\"]*:(?:.?[<>^])?[1-9]\d*[,._]?\d*[a-z%]?\}"),  # not {i:03d}, {x:.2f}
    "a %-padded field": re.compile(r"%-?[1-9]\d*[sd]"),
    "a Markdown row": re.compile(r"""["']\|[ :-]|\|---|["'] \| ["']|["']\|["']\.join|\|\s*\{[^{}]*\}\s*\|"""),
    "a rule line": re.compile(r"""["'][-=]+["']\s*\*"""),
}
# (file under tools/, text on the line) -> why it is no table; every entry says why, and each must still be found
NOT_TABLES = {
    ("leaderboard/review/replay_page.py", "font-weight:"): "CSS of the replay page ({font-weight:600}), no format "
                                                           "field",
    ("leaderboard/review/replay_page.py", "line-height:1}"): "CSS of the replay page ({...;line-height:1}), no format "
                                                             "field",
    ("sandbox/namespace.py", '"meminfo":'): "the kernel's /proc/meminfo format, which an agent's reader parses, "
                                            "no table",
    ("leaderboard/review/board_player.py", "min-width:30px"): "CSS of the board player ({min-width:30px;...}), no "
                                                              "format field",
}


def _hand_made(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        code = line.split("  # ", 1)[0]
        for what, pattern in HAND_MADE.items():
            if pattern.search(code):
                found.append((what, line.strip()))
    return found


def test_no_module_under_tools_makes_a_table_by_hand() -> None:
    """Every table goes through tools/connectx_forge/table.render; a padded field, an ljust or a Markdown row
    elsewhere is a
    table made by hand (or needs a reason in ``NOT_TABLES``)."""
    bad, used = [], set()
    for path in sorted(TOOLS.rglob("*.py")):
        rel = path.relative_to(TOOLS).as_posix()
        if rel == "table.py":
            continue
        for what, line in _hand_made(path):
            allowed = [key for key in NOT_TABLES if key[0] == rel and key[1] in line]
            used.update(allowed)
            if not allowed:
                bad.append(f"tools/{rel}: {what}: {line}")
    assert not bad, "tables made by hand (use tools/connectx_forge/table.render):\n" + "\n".join(bad)
    assert used == set(NOT_TABLES), f"allowed but no longer found (drop them): {set(NOT_TABLES) - used}"


@pytest.mark.parametrize("line", ['print(f"{name:<12} {spec.description}")', "x.ljust(9)", "f'{n:>5,}'",
                                  'lines.append(f"| {a} | {b} |")', '"|---|---:|"', '"%-10s" % name'])
def test_the_static_check_sees_a_table_made_by_hand(tmp_path: Path, line: str) -> None:
    path = tmp_path / "m.py"
    path.write_text(line + "\n", encoding="utf-8")
    assert _hand_made(path)
