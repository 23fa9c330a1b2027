"""One table renderer (``tools/table``): three styles, the same header words, colour only on a terminal.

The tables' text is snapshot-tested (``tests/snapshots/tables.txt``): after an intended change, rewrite it with
``CXFORGE_UPDATE_SNAPSHOTS=1 pytest tests/test_table.py`` and review its diff."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from connectx_forge.tools import table
from connectx_forge.tools.arena.report import format_tournament
from connectx_forge.tools.play import report as match_report
from connectx_forge.tools.play import winrates
from connectx_forge.tools.play.tally import Tally
from connectx_forge.tools.review import submissions_cmd

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "tables.txt"
ANSI = "\x1b["
HEADERS = [table.PLAYER, table.GAMES, table.W, table.D, table.L, table.WIN_RATE]
ROWS = [["lookahead", 40, 30, 2, 8, "75.0% [59.8, 85.8]"], ["net [v2]", 400, 399, 0, 1, "99.8% [98.6, 100.0]"]]


def _tournament_report() -> dict:
    wdl = {"wins": 3, "draws": 0, "losses": 1}
    return {
        "run": "tournament-0123456789ab", "settings": {"players": ["lookahead", "random"], "gauntlet": None,
                                                       "slowdown": 1.0},
        "band": [-1, 1], "openings": 2, "plies": 4, "games": 4, "scheduled": 8, "max_games": 4,
        "ratings": [{"player": "lookahead", "elo": 190.8, "elo_lo": 20.1, "elo_hi": "+inf", "games": 4,
                     "score": 0.75, "los_next": 0.981},
                    {"player": "random", "elo": -190.8, "elo_lo": "-inf", "elo_hi": -20.1, "games": 4,
                     "score": 0.25, "los_next": None}],
        "rating_method": "Bradley-Terry", "pair_method": "pentanomial",
        "pairs": [{"a": "lookahead", "b": "random", "games": 4, **wdl,
                   "a_first": {"wins": 2, "draws": 0, "losses": 0}, "a_second": {"wins": 1, "draws": 0, "losses": 1},
                   "pentanomial": {"LL": 0, "LD": 0, "WL": 1, "DD": 0, "WD": 0, "WW": 1},
                   "elo": {"elo": 190.8, "elo_lo": -10.5, "elo_hi": 400.2}}],
        "seats": {"lookahead": {"first": {"wins": 2, "draws": 0, "losses": 0},
                                "second": {"wins": 1, "draws": 0, "losses": 1}},
                  "random": {"first": {"wins": 1, "draws": 0, "losses": 1},
                             "second": {"wins": 0, "draws": 0, "losses": 2}}},
        "failures": {"lookahead": {}, "random": {}},
        "info": {"store": "runs/arena/t.sqlite", "played_now": 4, "seconds": 1.25, "executor": "processes"},
    }


def every_table() -> str:
    """Each style of a fixed table, and the tables of match, winrates and tournament on fixed results."""
    parts = [f"== {style}\n{table.render(HEADERS, ROWS, style, color=False)}" for style in table.STYLES]
    first = Tally(games=20, wins=16, draws=1, losses=3)
    second = Tally(games=20, wins=12, draws=2, losses=5, invalid=1, opponent_timeouts=1)
    overall = Tally(games=40, wins=28, draws=3, losses=8, invalid=1, opponent_timeouts=1)
    rows = [match_report._row(label, t) for label, t in (("first", first), ("second", second), ("overall", overall))]
    parts.append(f"== match\n{table.render(match_report.HEADERS, rows, 'rule', color=False)}")
    cells = [["lookahead", "75.0% [59.8, 85.8] (40 g, 8 L, 0 inv)", "0.1", "0.5"]]
    parts.append(f"== winrates\n{winrates.format_table(cells, ['kaggle:random'], color=False)}")
    parts.append(f"== tournament\n{format_tournament(_tournament_report(), color=False)}")
    submissions = [{"ref": 51234567, "date": "2026-01-02T03:04:05Z", "status": "COMPLETE", "publicScore": "1012.5",
                    "description": "solver v2"}, {"ref": 51234568, "date": "2026-01-03T03:04:05Z", "status": "ERROR",
                                                  "fileName": "submission.py"}]
    parts.append(f"== submissions\n{submissions_cmd.format_table(submissions)}")
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
    done = subprocess.run([sys.executable, "-m", "connectx_forge.tools.cli", "match", "leftmost", "random", "-n", "2",
                           "-w", "1", "--no-progress"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert ANSI not in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("A plays"))
    assert header.split()[:5] == ["A", "plays", table.GAMES, table.W, table.D]
