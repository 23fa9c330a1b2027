"""``cxforge check`` on agent hosts: every way a file can break is named, and the checker survives it.

Each broken agent in tests/broken_agents/ is checked through the library
(``check_file``) and through ``cxforge check`` in a subprocess, with a fake
``KAGGLE_KEY`` and a fake ``kaggle.json`` planted for the checker.  As on
Kaggle, the file first plays itself (the validation episode): a broken file
fails there, and the check says how, in Kaggle's status and in our kind.  Every
run must exit 0 (passed) or 1 (failed) with its report printed, print no
traceback and no credential, and leave no process behind; a hung move is a
timeout once actTimeout + the remaining overage have run out.  How soon a check
ends, and a hung move is cut (wall clock, which a loaded machine stretches), is
checked under ``-m slow``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from connectx_forge.play.rules import is_timeout
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox.limits import MIB, Limits
from connectx_forge.submit.check import Gate, check_file
from tests.harness import (
    BROKEN,
    FAKE_KEY,
    FAKE_USER,
    ROOT,
    agent_file,
    expected_kind,
    in_group,
    left_folders,
    live_descendants,
    marked,
    new_descendants,
    planted_world,
    run_cxforge,
    wait_for_hosts,
    wait_gone,
    warden_processes,
)

ACT, OVERAGE = 0.5, 1.0
KAGGLE_STATUS = {"invalid": "INVALID", "timeout": "TIMEOUT"}  # every other kind is an ERROR on Kaggle
# files whose kind differs in a check: a float passes Kaggle's schema and crashes its interpreter (an ERROR)
STATUS_EXCEPTIONS = {"returns_float.py": "ERROR"}
CASES = sorted(p.name for p in BROKEN.glob("*.py") if p.name != "slow_honest.py") + ["syntax_error.py"]
DETAILS = {"raises.py": "ValueError: this agent always fails", "sys_exit.py": "SystemExit", "os_exit.py": "status 3",
           "segfault.py": "SIGSEGV", "missing_import.py": "no_such_module_cxforge", "syntax_error.py": "SyntaxError",
           "fills_disk.py": "File too large", "no_callable.py": "IndexError", "returns_numpy_int.py": "int64",
           "returns_float.py": "3.0", "returns_str.py": "'3'", "out_of_range.py": "column 9",
           "wrong_id.py": "id '999'"}


def judge(name: str, report: dict[str, object]) -> None:
    """The check's verdict on corpus file ``name`` is the one its first line promises."""
    kind = expected_kind(name)
    validation = report["validation"]
    assert isinstance(validation, dict)
    if kind == "ok":
        assert report["passed"] is True, report["problems"]
        assert validation["kind"] == "ok"
        return
    assert report["passed"] is False
    assert validation["kind"] == kind, f"{validation['kind']}: {validation.get('error')}"  # the host's own words
    status = STATUS_EXCEPTIONS.get(name, KAGGLE_STATUS.get(kind, "ERROR"))
    assert validation["status"] == status, validation
    assert validation["error"].startswith(f"{kind}:" if kind not in ("invalid", "timeout") else kind[:5]), validation
    if name in DETAILS:
        assert DETAILS[name] in validation["error"], validation["error"]
    if kind == "timeout":  # never before actTimeout + the remaining overage (how soon after: -m slow)
        assert is_timeout(validation["durations"][-1], ACT, OVERAGE), validation
    assert any("validation episode" in p for p in report["problems"])  # type: ignore[union-attr]


@pytest.mark.parametrize("name", CASES)
def test_library_check_names_every_way_of_breaking(name: str, tmp_path: Path) -> None:
    before = set(live_descendants(os.getpid()))
    report = check_file(agent_file(name, tmp_path), Gate(1, opponents=("random",), workers=1),
                        settings=GameSettings(act_timeout=ACT, overage=OVERAGE, limits=Limits(memory=512 * MIB)))
    judge(name, report.to_json())
    left = wait_gone(lambda: new_descendants(before, warden_processes()))
    assert not left, f"processes left behind: {left}"


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_every_check_ends_in_bounded_time(name: str, tmp_path: Path) -> None:
    """Wall clock, on an idle machine: a check of a broken file ends within 15 s, a hung move is judged
    within actTimeout + the remaining overage + 1 s of its start."""
    start = time.monotonic()
    game = GameSettings(act_timeout=ACT, overage=OVERAGE, limits=Limits(memory=512 * MIB))
    report = check_file(agent_file(name, tmp_path), Gate(1, opponents=("random",), workers=1), settings=game).to_json()
    assert time.monotonic() - start < 15
    validation = report["validation"]
    assert isinstance(validation, dict)
    if expected_kind(name) == "timeout":
        assert validation["durations"][-1] <= ACT + OVERAGE + 1.0


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return planted_world(tmp_path_factory.mktemp("home"))


@pytest.mark.parametrize("name", CASES)
def test_cli_check_names_every_way_of_breaking(name: str, world: dict[str, str], tmp_path: Path) -> None:
    out = run_cxforge(world, "check", str(agent_file(name, tmp_path)), "-n", "2", "-w", "2",
                      "--opponents", "kaggle:random", "--act-timeout", str(ACT), "--overage", str(OVERAGE),
                      "--memory", "512", "--no-progress", "--json")
    assert out.returncode == (0 if expected_kind(name) == "ok" else 1), out.stderr
    report = json.loads(out.stdout)
    logs = [r.pop("log", "") for r in [report.get("validation") or {}]] + report.pop("log_tail", [])
    assert "Traceback" not in out.stderr + json.dumps(report)  # the harness never crashed: only agents' logs say it
    assert FAKE_KEY not in out.text and FAKE_USER not in out.text  # no secret, the agent's logs included
    assert all(FAKE_KEY not in str(x) for x in logs)
    judge(name, json.loads(out.stdout))
    assert not wait_gone(lambda: marked(world["CXFORGE_TEST_MARKER"])), "processes left behind"
    assert not wait_gone(lambda: in_group(out.pgid)), "processes left in the run's process group"


def test_the_text_report_names_the_validation_episode_and_the_kinds(world: dict[str, str]) -> None:
    out = run_cxforge(world, "check", str(BROKEN / "segfault.py"), "--no-progress")
    assert out.returncode == 1
    assert "validation episode (the file against itself): ERROR (crash: killed by SIGSEGV)" in out.stdout
    assert "FAIL: the validation episode" in out.stdout
    out = run_cxforge(world, "check", str(BROKEN / "segfault.py"), "-n", "2", "--opponents", "kaggle:random",
                      "--no-validation", "--no-progress")
    assert out.returncode == 1
    assert "not played (--no-validation)" in out.stdout and "games lost by: crash 2" in out.stdout


def test_kill_9_of_the_checker_leaves_nothing_behind(world: dict[str, str], tmp_path: Path) -> None:
    env = dict(world, CXFORGE_TEST_MARKER=uuid.uuid4().hex, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "connectx_forge.cli", "check", str(BROKEN / "hangs.py"),
                             "-n", "4", "-w", "2", "--no-validation", "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for_hosts(proc.pid, tmp_path, 2)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not wait_gone(lambda: marked(env["CXFORGE_TEST_MARKER"])), "processes outlived the checker"
    assert not wait_gone(lambda: in_group(proc.pid)), "processes left in the checker's process group"
    assert not wait_gone(lambda: left_folders(tmp_path)), "game folders left behind"
