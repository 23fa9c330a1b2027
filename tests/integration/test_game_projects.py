"""A project for a game other than ConnectX, as a user makes it: ``cxforge new --game G``, build, check, pytest.

Each project lives in a temporary folder; the commands are the ones a user types (``cli.main``).  rps episodes
take about 1.3 s jailed and planet_wars' about 0.4 s, so the counts here are small.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.submit.check import Gate, check_agent, check_file

ROOT = Path(__file__).resolve().parents[2]


def new(tmp_path: Path, game: str, capsys: pytest.CaptureFixture[str], name: str = "bot") -> Path:
    assert main(["new", str(tmp_path / name), "--game", game]) == 0
    said = capsys.readouterr().out
    assert f"--game {game}" in said
    return tmp_path / name


def checked(project: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, dict[str, object]]:
    code = main(["check", str(project), "-w", "2", "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


def test_a_planet_wars_project_builds_checks_and_passes_its_tests(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = new(tmp_path, "planet_wars", capsys)
    assert 'game = "planet_wars"' in (project / "cxforge.toml").read_text()
    assert main(["build", str(project), "-o", str(tmp_path / "out.py")]) == 0
    assert "game planet_wars" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "out.py.json").read_text())
    assert manifest["game"] == "planet_wars" and manifest["floors"] == {"do_nothing": 0.5}
    code, report = checked(tmp_path / "out.py", capsys, "-n", "8", "--max-games", "8")
    assert (code, report["verdict"], report["game"]) == (0, "PASS", "planet_wars")
    assert report["validation"]["kind"] == "ok"  # the file against itself, as Kaggle's validation episode
    floor = report["floors"][0]
    assert (floor["opponent"], floor["games"], floor["verdict"]) == ("do_nothing", 8, "PASS")
    assert {s["opponent"] for s in report["seats"]} == {"do_nothing"}
    assert {s["seat"] for s in report["seats"]} == {"first", "second"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")])}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                            "tests"], cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout


def test_an_rps_project_checks_pass_against_its_first_built_in(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    project = new(tmp_path, "rps", capsys)
    code, report = checked(project, capsys, "-n", "6", "--max-games", "6", "--no-validation")
    assert (code, report["verdict"]) == (0, "PASS"), report
    assert [(f["opponent"], f["wins"], f["games"]) for f in report["floors"]] == [("rock", 6, 6)]
    assert report["repeats"] == {}  # its agent draws at random: every game is new evidence


@pytest.mark.slow
def test_an_rps_project_s_own_tests_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = new(tmp_path, "rps", capsys)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")])}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                            "tests"], cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr


def test_games_that_repeat_are_no_new_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An agent that always shows paper plays kaggle:rock the same game every time in each seat (rps has no
    map to seed): two distinct games, however many are played, so its floor is not decided, and the check
    stops playing rock after the batch that shows it."""
    project = new(tmp_path, "rps", capsys)
    (project / "bot" / "main.py").write_text("def act(obs, config):\n    return 1\n")
    code, report = checked(project, capsys, "-n", "4", "--max-games", "8", "--no-validation")
    assert (code, report["verdict"]) == (3, "UNDECIDED"), report
    assert sum(s["games"] for s in report["seats"]) == 4  # no second batch
    assert sum(s["wins"] for s in report["seats"]) == 4
    assert report["repeats"] == {"rock": 2}
    assert [(f["wins"], f["games"]) for f in report["floors"]] == [(2, 2)]
    assert "only 2 distinct game(s)" in report["undecided"][0]


def test_a_file_checked_for_another_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lone = tmp_path / "lone.py"
    lone.write_text("def agent(obs, config):\n    return 5\n")  # no sign of rps' three: INVALID
    report = check_file(lone, Gate(1, opponents=("kaggle:paper",), workers=1), game="rps")
    assert report.verdict == "FAIL" and report.game == "rps"
    assert report.validation is not None and report.validation.status == "INVALID"
    assert "validation episode" in report.problems[0]
    assert main(["check", str(lone), "--game", "rps", "--opponents", "negamax"]) == 2
    assert "rps's built-in agents are" in capsys.readouterr().err


def test_connectx_only_settings_and_a_game_other_than_the_build_s_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = new(tmp_path, "planet_wars", capsys)
    assert main(["build", str(project), "-o", str(tmp_path / "out.py")]) == 0
    capsys.readouterr()
    for flags, said in ((["--game", "rps"], "was built for planet_wars"), (["--rows", "5"], "ConnectX's alone"),
                        (["--act-timeout", "5"], "plays its own clock"), (["--game", "nope"], "no game 'nope'")):
        assert main(["check", str(tmp_path / "out.py"), *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert said in err and err.count("\n") == 0, err
    with pytest.raises(UserError, match="was built for planet_wars"):
        check_agent(str(tmp_path / "out.py"), Gate(1, workers=1), game="connectx")


def test_an_unknown_game_in_the_settings_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = new(tmp_path, "rps", capsys)
    toml = project / "cxforge.toml"
    toml.write_text(toml.read_text().replace('game = "rps"', 'game = "rsp"'))
    assert main(["build", str(project), "-o", str(tmp_path / "out.py")]) != 0
    err = capsys.readouterr().err.strip()
    assert "no game 'rsp'" in err and err.count("\n") == 0


def test_a_connectx_project_is_as_it_was(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(tmp_path / "cx")]) == 0
    assert "kaggle:negamax" in capsys.readouterr().out
    assert "game =" not in (tmp_path / "cx" / "cxforge.toml").read_text()
    assert main(["build", str(tmp_path / "cx"), "-o", str(tmp_path / "cx.py")]) == 0
    assert "game" not in json.loads((tmp_path / "cx.py.json").read_text())
    report = check_file(tmp_path / "cx.py", Gate(1, opponents=("random",), workers=1), validation=False,
                        floors=False)
    assert report.game == "connectx" and "game" not in report.to_json()
