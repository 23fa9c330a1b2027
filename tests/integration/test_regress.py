"""``cxforge regress add/list`` and ``connectx_forge.testing``'s regression helpers, in a ``cxforge new`` project
outside the repository, on real kaggle-environments replays of games the agent lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.board import Board
from agents.simple import leftmost_agent
from agents.solver.agent import perfect_agent
from agents.solver.book import Book
from agents.solver.search import Solver
from connectx_forge import testing
from connectx_forge.cli import main
from connectx_forge.leaderboard.regress import data
from tests.fake_kaggle import played_replay
from tests.integration.test_ghosts import assert_snapshot

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "regress_list.txt"
US = "Lefty"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project made by ``cxforge new`` outside the repository, with three replays: two lost by leftmost (as
    first and second player, as US), one won by it."""
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mybot"]) == 0
    replays = tmp_path / "replays"
    replays.mkdir()
    for i, (first, second, teams) in enumerate([("leftmost", "solver", (US, "Oracle")),
                                                ("solver", "leftmost", ("Oracle", US)),
                                                ("leftmost", "leftmost", (US, "Twin"))]):
        (replays / f"episode-{700 + i}-replay.json").write_text(json.dumps(played_replay(first, second, teams)))
    return tmp_path / "mybot"


def pytest_in(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "tests/test_regressions.py", "-q", "-p", "no:cacheprovider"],
                          cwd=project, capture_output=True, text=True, timeout=300)


def set_entry(project: Path, line: str) -> None:
    (project / "mybot" / "main.py").write_text(line + "\n")


def test_a_new_project_carries_the_empty_cases_and_a_passing_test(project: Path) -> None:
    assert json.loads((project / "tests" / "regressions.json").read_text()) == []
    assert (project / "tests" / "test_regressions.py").read_text() == data.TEST
    proc = pytest_in(project)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr


def test_add_keeps_the_first_losing_move_once_and_the_test_fails_until_the_agent_avoids_it(
        project: Path, capsys) -> None:
    replays = project.parent / "replays"
    assert main(["regress", "add", str(replays), "--project", str(project), "--us", US]) == 0
    out = capsys.readouterr().out
    assert "1 case(s) added from 2 lost game(s) of 3" in out  # leftmost second is lost from the solver's opening
    [case] = data.read(project / "tests" / "regressions.json")
    # independently: the exact solver's verdict on every move of that position
    board = Board.from_moves([int(c) - 1 for c in case["moves"]])
    scores = Solver(book=Book.load()).analyze(board, weak=True)
    assert case["bad_column"] == 0 and case["moves"] == "" and case["episode_id"] == 700 and case["us"] == US
    assert case["holding_columns"] == sorted(c for c, v in enumerate(scores) if v is not None and v >= 0)
    assert case["losing_columns"] == sorted(c for c, v in enumerate(scores) if v is not None and v < 0)
    assert main(["regress", "add", str(replays), "--project", str(project), "--us", US]) == 0  # again: no duplicate
    assert "0 case(s) added" in capsys.readouterr().out
    assert len(data.read(project / "tests" / "regressions.json")) == 1

    set_entry(project, "from agents.simple import leftmost_agent as act  # the agent that lost")
    proc = pytest_in(project)
    assert proc.returncode == 1 and "plays column 0, which loses" in proc.stdout
    assert "moves that hold, columns from 0: 2, 3, 4" in proc.stdout
    set_entry(project, "from agents.solver.agent import perfect_agent as act  # the solver")
    proc = pytest_in(project)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr


def test_assert_avoids_names_the_moves_that_hold() -> None:
    case = {"moves": "", "bad_column": 0, "holding_columns": [2, 3, 4], "losing_columns": [0, 1, 5, 6]}
    testing.assert_avoids(leftmost_agent, [])
    testing.assert_avoids(perfect_agent, [case])
    lost = r"(?s)1 of 1 regression case\(s\) still lost.*hold, columns from 0: 2, 3, 4"
    with pytest.raises(AssertionError, match=lost):
        testing.assert_avoids(leftmost_agent, [case])


def test_regress_list_snapshot_and_json(project: Path, capsys) -> None:
    assert main(["regress", "list", "--project", str(project)]) == 0
    assert "no regression case yet" in capsys.readouterr().out
    assert main(["regress", "add", str(project.parent / "replays"), "--project", str(project), "--us", US]) == 0
    capsys.readouterr()
    assert main(["regress", "list", "--project", str(project)]) == 0
    assert_snapshot(SNAPSHOT, capsys.readouterr().out)
    assert main(["regress", "list", "--project", str(project), "--json"]) == 0
    assert [c["episode_id"] for c in json.loads(capsys.readouterr().out)] == [700]


def test_bad_input_is_one_line(project: Path, tmp_path: Path, capsys) -> None:
    replays = str(project.parent / "replays")
    assert main(["regress", "add", replays, "--project", str(project), "--us", "Nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cxforge regress: error: ")
    assert "no game has our name 'Nobody'" in err[0] and US in err[0]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert main(["regress", "list", "--project", str(outside)]) == 2
    assert "not inside an agent project" in capsys.readouterr().err
