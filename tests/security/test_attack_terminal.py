"""Promise: no control character from an agent reaches the terminal, a report or an HTML page raw.

An agent is untrusted, and so is a games file, a replay or an episode list a
user was given.  Terminal escapes in what they say (a fake green ``PASS``, the
window title by OSC 0, the clipboard by OSC 52), a ``\\r`` that overwrites a
line, a C1 CSI or a bidi override must be shown as visible escapes
(``\\x1b[32m``, ``\\u202e``), never written raw: by ``match``, ``check`` and
``logs`` (run here as the user runs them, in a process of their own), by
``logs``, ``review`` and ``replay`` of a file someone handed over, and in the
episode list.  ``escape`` itself is checked with Hypothesis.
"""

from __future__ import annotations

import html
import json
import os
import re
import textwrap
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectx_forge.cli import main
from tests.harness import run_cxforge

# everything an attacker would like a terminal to obey: SGR colours, OSC 0 title, OSC 52 clipboard, a carriage
# return, a C1 CSI and a right-to-left override
EVIL = "over\rwrite \x1b[32mPASS\x1b[0m \x1b]0;title\x07 \x1b]52;c;ZXZpbA==\x07 \x9b2J \u202eevil\u202c"
SHOWN = "\\x1b[32mPASS\\x1b[0m"  # how the start of it must read once escaped
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")

AGENTS = {
    "raises": f"""
        def agent(obs, config):
            raise ValueError({EVIL!r})
    """,
    "prints": f"""
        import sys

        def agent(obs, config):
            print({EVIL!r})
            print({EVIL!r}, file=sys.stderr)
            return config.columns  # invalid, so that check shows its log
    """,
    "bad_repr": f"""
        class Evil:
            def __repr__(self):
                return {EVIL!r} + "\\nsecond line"

        def agent(obs, config):
            return Evil()
    """,
}


def raw_controls(text: str, keep_newlines: bool = True) -> list[str]:
    """The characters of ``text`` that must never be written raw: C0 (but ``\\n``, ``\\t`` where lines are kept),
    DEL, C1, and the bidi and format characters that disguise text."""
    kept = "\n\t" if keep_newlines else ""
    return [c for c in text if (unicodedata.category(c) == "Cc" and c not in kept) or c in BIDI]


def assert_shown_not_obeyed(text: str, shown: str = SHOWN) -> None:
    """No raw control character in ``text``, and the escaped form ``shown`` is there to read."""
    assert raw_controls(text) == [], text
    assert shown in text, text


def write_agent(folder: Path, name: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(AGENTS[name]))
    return path


# -- the agent's words, through the commands that show them ---------------------------------------------------

@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agents_words_are_escaped_by_match_logs_and_check(name: str, tmp_path: Path) -> None:
    agent = write_agent(tmp_path, name)
    games = tmp_path / "games.jsonl"
    env = dict(os.environ)
    played = run_cxforge(env, "match", str(agent), "kaggle:random", "-n", "2", "-w", "1", "--no-progress",
                         "--save", str(games), timeout=120)
    assert played.returncode == 0, played.text
    assert raw_controls(played.text) == [], played.text
    if name != "prints":  # the report names the error or the bad action; a log is not in it
        assert_shown_not_obeyed(played.text)
    saved = games.read_text()
    assert raw_controls(saved) == []  # JSON would escape them anyway; the record holds none to begin with

    logs = run_cxforge(env, "logs", str(games), timeout=60)
    assert logs.returncode == 0, logs.text
    if name == "bad_repr":  # returned an object: it printed nothing
        assert raw_controls(logs.text) == [], logs.text
    else:
        assert_shown_not_obeyed(logs.text)
        assert "over\\rwrite" in logs.text  # the carriage return, shown

    checked = run_cxforge(env, "check", str(agent), "-n", "2", "--opponents", "kaggle:random", "--no-progress",
                          timeout=180)
    assert checked.returncode == 1, checked.text
    assert_shown_not_obeyed(checked.text)
    if name == "bad_repr":  # a repr is one line: its newline is shown, not obeyed
        assert "\\nsecond line" in checked.text and "\\nsecond line" in played.text


# -- files a user was given -----------------------------------------------------------------------------------

def evil_games_file(folder: Path) -> Path:
    """A games file written by someone else: names, outcome and logs full of escapes."""
    line = {"players": [f"alice{EVIL}", "bob\x1b]0;pwned\x07"], "size": [6, 7, 4], "seed": 0,
            "moves": [3, 3, 2, 2, 1, 1, 0], "times": [0.0] * 7, "outcome": "win", "winner": 1, "culprit": None,
            "bad_action": None, "error": None, "index": 0, "a_seat": 1, "logs": {"1": EVIL + "\n" + EVIL}}
    path = folder / "given.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path


def test_logs_of_a_games_file_someone_gave_us_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = evil_games_file(tmp_path)
    assert main(["logs", str(path)]) == 0
    out = capsys.readouterr()
    assert_shown_not_obeyed(out.out + out.err)
    assert out.out.count("\n") == 5  # heading, two log lines for alice, bob's line: no line added or overwritten
    assert main(["logs", str(path), "--agent", "nobody"]) == 2  # the error lists the players' names
    out = capsys.readouterr()
    assert_shown_not_obeyed(out.out + out.err)


def test_review_of_a_games_file_someone_gave_us_is_escaped(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = evil_games_file(tmp_path)
    assert main(["review", str(path), "--no-progress", "--time-limit", "0.2"]) == 0
    out = capsys.readouterr()
    assert_shown_not_obeyed(out.out + out.err)
    assert "bob\\x1b]0;pwned\\x07" in out.out


def test_a_replays_team_names_neither_escape_nor_end_the_html_page(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A Kaggle team name is anyone's choice: on the page it is text, never markup, script or a control."""
    from connectx_forge.leaderboard.review.games import Game
    from connectx_forge.leaderboard.review.replay_page import replay_of

    replay = replay_of(Game("made", (6, 7, 4), [3, 3, 2, 2, 1, 1, 0], ("a", "b"), "win", winner=1))
    replay["info"] = {"TeamNames": [f"x</script><script>alert(1)</script>{EVIL}", "y<!--\u202e"]}
    path = tmp_path / "episode-1-replay.json"
    path.write_text(json.dumps(replay))
    page = tmp_path / "game.html"
    assert main(["replay", str(path), "-o", str(page), "--time-limit", "0.2"]) == 0
    text = page.read_text()
    assert raw_controls(text) == [] and "<script>alert(1)" not in text
    player = html.unescape(re.search(r'srcdoc="([^"]*)"', text).group(1))  # type: ignore[union-attr]
    start = player.index("window.kaggle = ") + len("window.kaggle = ")
    data, end = json.JSONDecoder().raw_decode(player, start)
    assert "<script>alert(1)" not in player and "<" not in player[start:end]  # no </script>, no <!-- in the data
    first, second = data["environment"]["info"]["TeamNames"]  # the same names, escaped, still there to read
    assert first.startswith("x</script><script>alert(1)</script>over\\rwrite " + SHOWN) and second == "y<!--\\u202e"
    out = capsys.readouterr()  # the line that says the page was written names the players
    assert_shown_not_obeyed(out.out + out.err)


def test_episode_team_names_from_kaggle_are_escaped() -> None:
    from connectx_forge.leaderboard.review.episodes import episode_row, format_rows

    episode = {"id": 7, "type": "EPISODE_TYPE_PUBLIC", "state": "EPISODE_STATE_COMPLETED",
               "agents": [{"index": 0, "submissionId": 1, "reward": 1, "teamName": "us",
                           "state": "EPISODE_AGENT_STATE_COMPLETE"},
                          {"index": 1, "submissionId": 2, "reward": -1, "teamName": f"\x1b[32mPASS\x1b[0m{EVIL}",
                           "state": "EPISODE_AGENT_STATE_COMPLETE\x1b[2J"}]}
    row = episode_row(episode, 1)
    text = format_rows([row]) + json.dumps(row.to_json(), ensure_ascii=False)
    assert_shown_not_obeyed(text)


# -- escape itself ----------------------------------------------------------------------------------------------

def test_escape_writes_each_control_as_a_visible_escape() -> None:
    from connectx_forge.sandbox.escape import escape

    assert escape("\x1b[32mPASS\x1b[0m") == "\\x1b[32mPASS\\x1b[0m"
    assert escape("\x1b]52;c;ZXZpbA==\x07") == "\\x1b]52;c;ZXZpbA==\\x07"
    assert escape("a\u202eb\x9b\x7f\x00") == "a\\u202eb\\x9b\\x7f\\x00"
    assert escape("line\r\nnext\tcell") == "line\\r\nnext\tcell"
    assert escape("line\r\nnext\tcell", keep_newlines=False) == "line\\r\\nnext\\tcell"
    assert escape("\ud800 \u2028") == "\\ud800 \\u2028"  # a lone surrogate cannot be printed; a line separator


def test_scrub_and_one_line_escape() -> None:
    from connectx_forge.sandbox.scrub import one_line, scrub

    assert scrub("a\x1b[2Jb\nc") == "a\\x1b[2Jb\nc"
    assert scrub("a\nb", keep_newlines=False) == "a\\nb"
    assert one_line("Traceback (most recent call last):\nValueError: \x1b]0;t\x07\u202e") == \
        "ValueError: \\x1b]0;t\\x07\\u202e"


# any character at all (surrogates too), with the dangerous ones drawn often
ANY_TEXT = st.text(st.one_of(st.characters(exclude_categories=()),
                             st.sampled_from(sorted(BIDI) + ["\x1b", "\x07", "\r", "\n", "\t", "\x9b", "\x7f"])))


@given(ANY_TEXT, st.booleans())
def test_escaped_text_holds_no_control_character(text: str, keep_newlines: bool) -> None:
    from connectx_forge.sandbox.escape import escape

    out = escape(text, keep_newlines)
    assert raw_controls(out, keep_newlines) == []
    assert escape(out, keep_newlines) == out  # escaping twice changes nothing
    out.encode("utf-8")  # no lone surrogate: it can be printed


@given(st.text(st.characters(categories=("L", "M", "N", "P", "S", "Zs"))))
def test_printable_text_is_unchanged(text: str) -> None:
    from connectx_forge.sandbox.escape import escape

    assert escape(text) == text and escape(text, keep_newlines=False) == text
    assert escape(f"{text}\n\t{text}") == f"{text}\n\t{text}"
