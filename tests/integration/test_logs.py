"""Agent logs like Kaggle's: each game keeps what each agent printed (cut at 10,000 characters) and, for an
exception, its traceback with the source module's file and line, in the agent host and in this process."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.play.game import play_game
from connectx_forge.players.player import from_callable


def project(root: Path) -> Path:
    files = {
        "cxforge.toml": 'name = "boom"\nentry = "boom.main:act"\n',
        "boom/__init__.py": "",
        "boom/main.py": """
            from .helper import pick

            def act(obs, config):
                print("thinking about step", obs.step)
                print("x" * 30000)
                return pick(obs.board)
        """,
        "boom/helper.py": "def pick(board):\n    empty = []\n    return empty[3]\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_a_hosted_agents_prints_and_traceback_are_in_the_saved_game(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bot = project(tmp_path / "boom")
    save = tmp_path / "games.jsonl"
    assert main(["match", str(bot), "random", "-n", "2", "-w", "1", "--no-progress", "--save", str(save)]) == 0
    out = capsys.readouterr().out
    assert "IndexError: list index out of range (boom/helper.py:3)" in out
    game = json.loads(save.read_text().splitlines()[0])
    assert game["error"] == "IndexError: list index out of range (boom/helper.py:3)"
    log = game["logs"]["1"]
    assert log.startswith("thinking about step 0\n") and "x" * 9000 in log
    own = log[:log.index("Traceback")]
    assert len(own) == 10_000  # its prints are cut where Kaggle cuts them; the traceback is kept past the cut
    assert 'File "boom/main.py", line 7, in act' in log and 'File "boom/helper.py", line 3, in pick' in log
    assert "return empty[3]" in log and "2" not in game["logs"]  # random printed nothing

    assert main(["logs", str(save), "--index", "2"]) == 0  # the 2nd game of the file, as --index counts everywhere
    shown = capsys.readouterr().out
    assert shown.startswith("== game 2: random (first) vs boom (second): boom lost by error after 1 moves")
    assert "-- random (mark 1): printed nothing" in shown and 'File "boom/helper.py", line 3' in shown
    assert main(["logs", str(save), "--index", "7"]) == 2
    assert "holds 2 game(s), not 7" in capsys.readouterr().err


def test_check_prints_the_last_lines_of_a_failing_agents_log(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bot = project(tmp_path / "boom")
    assert main(["check", str(bot), "-n", "2", "-w", "1"]) == 1
    out = capsys.readouterr().out
    assert "the agent's log in the validation episode, last lines:" in out
    assert '  |   File "boom/helper.py", line 3, in pick' in out and "  | IndexError: list index out of range" in out


def test_an_in_process_agents_prints_and_traceback_are_kept() -> None:
    def chatty(obs, config):
        print("hello from", obs.mark)
        if obs.step > 2:
            raise ValueError("enough")
        return 0

    rec = play_game(from_callable(chatty, "chatty"), from_callable(lambda obs, config: 1, "quiet"))
    assert rec.outcome == "error" and rec.error is not None and rec.error.startswith("ValueError: enough (")
    assert rec.logs is not None and set(rec.logs) == {"1"}
    assert rec.logs["1"].startswith("hello from 1\nhello from 1\nhello from 1\nTraceback")
    assert "ValueError: enough" in rec.logs["1"] and "test_logs.py" in rec.logs["1"]


def test_logs_json_is_one_object_per_game_with_its_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = project(tmp_path / "boom")
    save = tmp_path / "games.jsonl"
    assert main(["match", str(bot), "random", "-n", "2", "-w", "1", "--no-progress", "--save", str(save)]) == 0
    capsys.readouterr()
    assert main(["logs", str(save), "--json"]) == 0
    games = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [g["game"] for g in games] == [1, 2]
    first = games[0]
    assert list(first) == ["game", "players", "outcome", "winner", "culprit", "moves", "logs"]
    assert first["players"] == ["boom", "random"] and first["outcome"] == "error" and first["culprit"] == 1
    assert [entry["mark"] for entry in first["logs"]] == [1, 2] and first["logs"][1]["log"] == ""
    assert first["logs"][0]["log"].startswith("thinking about step 0\n")
    assert main(["logs", str(save), "--json", "--agent", "random", "--index", "1"]) == 0
    [only] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert only["game"] == 1 and only["logs"] == [{"mark": 2, "player": "random", "log": ""}]
