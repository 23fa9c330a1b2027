"""An honest gate: PASS means every floor of the file's own manifest was decided as met; one exit-status table.

Through the real CLI on a ``cxforge new`` project (``mybot``): each built file has its own manifest, a
manifest that does not describe its file is an error in ``check`` and in a repack (never a silent drop of
floors), a floor that ``--opponents`` leaves out is an error and one not played is UNDECIDED.  Every command
exits by the table of ``tools/connectx_forge/errors.py`` (0 success, 1 FAIL/H0, 2 an error, 3 UNDECIDED/no decision);
the
notebook API says PASS/FAIL/UNDECIDED as the CLI does, and raises only ``cf.UserError``.  The checks that
would play many games stop before the first one (a usage error), so each test takes seconds.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import connectx_forge as cf
from connectx_bundler import manifest as manifests
from connectx_bundler.errors import BuildError
from connectx_forge import errors
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.submit.check import Gate, check_file
from connectx_forge.submit.check_report import format_report
from connectx_forge.submit.kaggle_game import GameResult
from connectx_forge.submit.verdict import Checked, summarize

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {"negamax": 0.5, "random": 0.85}  # cxforge new's floors, as the manifest names them
LEFTMOST = "def agent(obs, config):\n    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n"


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A new project ``mybot`` in tmp_path (the working folder is not changed)."""
    assert main(["new", str(tmp_path / "mybot")]) == 0
    capsys.readouterr()
    return tmp_path / "mybot"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def exit_status(argv: list[str]) -> int:
    """``cxforge ARGV``'s exit status, whether it returns it or argparse exits with it (a bad flag)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def one_error_line(err: str, command: str) -> str:
    """The one line a command prints for an error (no traceback)."""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"cxforge {command}: error: "), err
    return err


def build_both(project: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """``cxforge build`` then ``cxforge build --format tar.gz`` into the same folder, as the issue did."""
    py, tar = out / "submission.py", out / "submission.tar.gz"
    assert run(["build", str(project), "-o", str(py)], capsys)[0] == 0
    assert run(["build", str(project), "--format", "tar.gz", "-o", str(tar)], capsys)[0] == 0
    return py, tar


# -- PASS means every floor decided as met ---------------------------------------------------------


def test_each_built_file_keeps_its_own_manifest(project: Path, tmp_path: Path, capsys) -> None:
    """The issue's case: a .tar.gz build no longer replaces the manifest of the .py built before it."""
    py, tar = build_both(project, tmp_path / "out", capsys)
    assert manifests.manifest_path(py) == tmp_path / "out" / "submission.py.json"
    assert manifests.manifest_path(tar) == tmp_path / "out" / "submission.tar.gz.json"
    for built in (py, tar):
        data = manifests.read_manifest(built)
        assert data is not None and data["floors"] == FLOORS and data["agent"] == "mybot"
    code, out, err = run(["check", str(py), "--opponents", "random"], capsys)  # stops before any game
    line = one_error_line(err, "check")
    assert code == 2 and "mybot has a win-rate floor vs negamax (50%, in " in line and "submission.py.json)" in line


def test_a_projects_floor_left_out_by_opponents_is_an_error_not_a_pass(project: Path, capsys) -> None:
    """The issue's case: ``check --opponents random`` of a project with a negamax floor said PASS, exit 0."""
    for command in (["check"], ["upload", "-m", "x", "--dry-run"]):
        code, out, err = run([command[0], str(project), *command[1:], "--opponents", "random", "-n", "1"], capsys)
        line = err.splitlines()[-1]  # after the line that says the project was built on the fly
        assert code == 2 and "PASS" not in out and "Traceback" not in err
        assert line.startswith(f"cxforge {command[0]}: error: mybot has a win-rate floor vs negamax (50%, in ")
        assert line.endswith("but --opponents leaves kaggle:negamax out: play it too, or check validity alone with "
                             "--no-floors")


def test_a_manifest_that_does_not_describe_its_file_is_an_error(project: Path, tmp_path: Path, capsys) -> None:
    py, tar = build_both(project, tmp_path / "out", capsys)
    py.write_text(py.read_text() + "# edited after the build\n")
    code, out, err = run(["check", str(py), "-n", "1"], capsys)
    line = one_error_line(err, "check")
    assert code == 2 and out == "" and "submission.py.json does not describe submission.py" in line
    assert "rebuild it with cxforge build" in line
    code, out, err = run(["upload", str(py), "-m", "x", "--dry-run", "-n", "1"], capsys)
    assert code == 2 and "does not describe" in one_error_line(err, "upload")
    code, out, err = run(["build", str(py), "--format", "tar.gz", "-o", str(tmp_path / "re.tar.gz")], capsys)
    assert code == 2 and "does not describe" in one_error_line(err, "build")  # a repack keeps floors or stops
    assert not (tmp_path / "re.tar.gz").exists()


def test_a_repack_carries_the_floors_into_the_new_files_manifest(project: Path, tmp_path: Path, capsys) -> None:
    py, _ = build_both(project, tmp_path / "out", capsys)
    again = tmp_path / "again.tar.gz"
    assert run(["build", str(py), "--format", "tar.gz", "-o", str(again)], capsys)[0] == 0
    data = manifests.read_manifest(again)
    assert data is not None and data["floors"] == FLOORS and data["format"] == "tar.gz"


@pytest.mark.parametrize("floors, parts", [
    ({"negamax": 0.5}, ("the file has a win-rate floor vs negamax (50%, in ", "bot.py.json), but --opponents leaves "
                        "kaggle:negamax out")),
    ({"kaggle:negamax": 0.5}, ("--opponents leaves kaggle:negamax out",)),
    ({"random": 1.5}, ("the floor vs random must be a win rate from 0 to 1, not 1.5",)),
    ({"random": "high"}, ("the floor vs random must be a win rate from 0 to 1, not 'high'",)),
    ({"minimax": 0.5}, ("unknown opponent 'minimax'",)),
])
def test_a_floor_the_check_cannot_decide_is_refused_before_any_game(tmp_path: Path, floors: dict,
                                                                    parts: tuple[str, ...]) -> None:
    """A hostile or careless manifest: its floors are decided as written, or the check stops."""
    path = tmp_path / "bot.py"
    path.write_text(LEFTMOST)
    manifests.manifest_path(path).write_text(json.dumps({"floors": floors,
                                                         "sha256": manifests.sha256(path.read_bytes())}))
    seen: list[dict] = []
    with pytest.raises(UserError) as raised:
        check_file(path, Gate(1, opponents=("random",), workers=1), on_game=seen.append)
    assert all(part in str(raised.value) for part in parts), str(raised.value)
    assert seen == []


def test_a_manifests_agent_name_cannot_act_on_the_terminal(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bot.py"
    path.write_text(LEFTMOST)
    manifest = manifests.manifest_path(path)
    digest = manifests.sha256(path.read_bytes())
    manifest.write_text(json.dumps({"agent": "\x1b[2J\x1b]0;owned\x07red", "floors": {}, "sha256": digest}))
    code, out, err = run(["check", str(path), "-n", "1", "-w", "1", "--opponents", "random", "--no-validation",
                          "--no-progress"], capsys)
    assert code == 0 and "\x1b" not in out + err and "\x07" not in out + err
    assert "(agent \\x1b[2J\\x1b]0;owned\\x07red)" in out.splitlines()[0]
    manifest.write_text(json.dumps({"agent": ["not", "a", "name"], "floors": {}, "sha256": digest}))
    code, out, err = run(["check", str(path), "-n", "1"], capsys)
    assert code == 2 and "the agent's name must be a string" in one_error_line(err, "check")


def test_a_floor_not_played_is_undecided_never_pass() -> None:
    results = [GameResult("DONE", 1, i % 2, "win", "ok", durations=(0.01,), opponent="random", seat=i % 2)
               for i in range(40)]
    report = summarize(Checked("x.py", 40, 2.0, 60.0, ("random",)), results, Path("x.py.json"),
                       {"floors": {"random": 0.5, "negamax": 0.5}})
    assert (report.verdict, report.exit_code, report.passed) == ("UNDECIDED", 3, False)
    assert {f.opponent: f.verdict for f in report.floors} == {"negamax": "UNDECIDED", "random": "PASS"}
    assert report.undecided == ["floor vs negamax 50% not decided: no games against it were played"]
    assert format_report(report).splitlines()[-1].startswith("UNDECIDED: floor vs negamax")


def test_no_floors_reads_no_manifest_not_even_a_stale_one(tmp_path: Path) -> None:
    from connectx_forge.submit.check import manifest_and_floors_text

    path = tmp_path / "bot.py"
    path.write_text(LEFTMOST)
    manifests.manifest_path(path).write_text(json.dumps({"floors": {"negamax": 0.9}, "sha256": "0" * 64}))
    with pytest.raises(BuildError, match="does not describe bot.py"):
        manifest_and_floors_text(path)
    manifest, data, note = manifest_and_floors_text(path, floors=False)
    assert (manifest, data) == (None, {}) and note is not None and "--no-floors" in note


# -- upload takes the check's flags ----------------------------------------------------------------


def _options(command: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return {word.strip(",[]") for word in capsys.readouterr().out.split() if word.startswith(("-", "[-"))}


def test_upload_takes_the_checks_flags(capsys) -> None:
    upload = _options("upload", capsys)
    assert {"-n", "--games", "--max-games", "--opponents", "--seed", "-w", "--workers"} <= upload
    assert "--no-floors" not in upload and "--no-validation" not in upload  # nothing that weakens the check


def test_make_upload_passes_games_and_max_games() -> None:
    done = subprocess.run(["make", "-n", "upload", "MSG=v2", "GAMES=16", "MAX_GAMES=1024"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    line = next(ln for ln in done.stdout.splitlines() if "cxforge upload" in ln)
    assert "--games 16" in line and "--max-games 1024" in line


def test_upload_refuses_an_undecided_check_with_exit_3_and_the_flag_it_advises_exists(tmp_path: Path,
                                                                                    capsys) -> None:
    path = tmp_path / "bot.py"
    path.write_text(LEFTMOST)
    manifests.manifest_path(path).write_text(json.dumps({"floors": {"random": 0.5},
                                                         "sha256": manifests.sha256(path.read_bytes())}))
    code, out, err = run(["upload", str(path), "-m", "x", "--dry-run", "-n", "2", "--max-games", "2", "-w", "1",
                          "--opponents", "random", "--no-progress"], capsys)
    assert code == 3 and "UNDECIDED: floor vs random 50%" in out and "raise --max-games" in out
    assert "refusing to upload" in one_error_line(err, "upload") and "UNDECIDED" in err


# -- one vocabulary, one exit-status table ---------------------------------------------------------


def test_the_exit_status_table_is_under_cxforge_help(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit status (every command):" in out
    for code, what in errors.EXIT_STATUSES:
        assert re.search(rf"^  {code} +{re.escape(what)}$", out, re.MULTILINE), (code, what)
    assert [code for code, _ in errors.EXIT_STATUSES] == [0, 1, 2, 3, 130]


@pytest.mark.parametrize("argv", [
    ["check", "no-such-agent"],  # an unknown player
    ["match", "leftmost", "no-such-agent", "-n", "1"],
    ["check", "absent.py"],  # a missing file
    ["upload", "absent.py", "-m", "x", "--dry-run"],
    ["check", "--games", "0"],  # a bad flag value
    ["sprt", "leftmost", "random", "--alpha", "x"],
    ["check", "-n", "4", "--max-games", "2"],  # a bad combination
])
def test_every_error_exits_2(argv: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert exit_status(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_sprt_says_the_same_for_every_count_below_a_pair(capsys) -> None:
    lines = []
    for n in ("0", "1"):
        assert exit_status(["sprt", "leftmost", "random", "-n", n]) == 2
        lines.append(capsys.readouterr().err.replace(f"got {n}", "got N"))
    assert lines[0] == lines[1] and "must be at least 2 (one pair of games)" in lines[0]


def test_sprt_exits_by_its_decision() -> None:
    from connectx_forge.arena.sprt_cmd import EXIT_STATUS

    assert EXIT_STATUS == {"H1": 0, "H0": 1, "none": 3}


def test_sprt_without_a_decision_exits_3(tmp_path: Path, capsys) -> None:
    code = main(["sprt", "leftmost", "leftmost", "-n", "2", "-w", "1", "--no-progress", "--json",
                 "--store", str(tmp_path / "s.sqlite")])
    report = json.loads(capsys.readouterr().out)
    assert (code, report["result"]) == (3, "none")


def test_a_projects_build_error_is_a_cf_user_error(project: Path) -> None:
    main_py = project / "mybot" / "main.py"
    main_py.write_text(main_py.read_text() + "\ndef broken(:\n")
    with pytest.raises(cf.UserError, match="main.py"):
        cf.check(project, games=1)


@pytest.mark.parametrize("call", [
    lambda: cf.match("leftmost", "random", games=1, size=(0, 7, 4)),  # the game core's BoardError
    lambda: cf.check("leftmost", games=1, size=(0, 7, 4)),  # kaggle_environments' schema error
    lambda: cf.check("leftmost", games=1, size=(4, 4, 9)),
])
def test_every_bad_input_to_cf_is_a_cf_user_error(call, empty_cwd: Path) -> None:
    with pytest.raises(cf.UserError) as raised:
        call()
    assert type(raised.value) is cf.UserError and "\n" not in str(raised.value)


def test_the_notebook_says_undecided_as_the_cli_does(project: Path, monkeypatch) -> None:
    """The issue's case (games=2, max_games=2): UNDECIDED, exit status 3, named by the project's name."""
    monkeypatch.chdir(project)
    c = cf.check(".", games=2, max_games=2, workers=2, opponents=("random", "negamax"))
    assert (c.verdict, c.exit_code, c.passed) == ("UNDECIDED", 3, False) == (
        c.report["verdict"], c.report["exit_code"], c.report["passed"])
    assert c.text.splitlines()[-1].startswith("UNDECIDED: ") and c.undecided
    assert c.agent == "mybot" and repr(c).startswith("<CheckResult mybot: UNDECIDED")
    assert "mybot" in c._repr_html_() and c.path not in c._repr_html_() and "UNDECIDED" in c._repr_html_()


# -- the project's name everywhere -----------------------------------------------------------------


def test_mistakes_names_a_project_by_its_name(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(project)
    code, out, err = run(["mistakes", "--agents", ".,leftmost", "--sets", "Centre-Early", "--sample", "1",
                          "--json", "--no-progress", "--no-cache"], capsys)
    assert code == 0, err
    assert sorted(row["agent"] for row in json.loads(out)) == ["leftmost", "mybot"]
    assert main(["mistakes", "--agents", ".,mybot", "--sets", "Centre-Early"]) == 2
    assert "--agents names mybot twice" in capsys.readouterr().err
