"""Agent hosts (tools/connectx_forge/sandbox): every way an agent file can break is named, and the harness survives it.

Each broken agent in tests/broken_agents/ (its first line names the kind) is
played through the library (``run_match``) and through ``cxforge match`` in a
subprocess, with a fake ``KAGGLE_KEY`` and a fake ``kaggle.json`` planted for
the harness.  Every run must report the kind, print its report and exit 0,
print no traceback and no credential, and leave no process behind.  How soon a
run ends (wall clock, which a loaded machine stretches) is checked under ``-m slow``.
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

from connectx_forge.arena.match import run_match
from connectx_forge.play.game import play_game
from connectx_forge.play.records import load_records
from connectx_forge.play.resolve import as_player
from connectx_forge.play.rules import is_timeout
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox import scrub
from connectx_forge.sandbox.limits import MIB, Limits, parse_memory
from connectx_forge.sandbox.seat import MARGIN
from tests.harness import (
    BROKEN,
    FAKE_KEY,
    FAKE_USER,
    ROOT,
    Run,
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
LIMITS = Limits(memory=512 * MIB)

# file -> (the kind A's game ends with; "ok" when A breaks no rule, opponent)
CASES: dict[str, tuple[str, str]] = {
    "raises.py": ("error", "kaggle:random"),
    "hangs.py": ("timeout", "kaggle:random"),
    "sleeps.py": ("timeout", "kaggle:random"),
    "returns_none.py": ("invalid", "leftmost"),  # column 0 until it is full
    "returns_str.py": ("invalid", "kaggle:random"),
    "returns_float.py": ("invalid", "kaggle:random"),
    "returns_bool.py": ("invalid", "kaggle:random"),
    "returns_numpy_int.py": ("invalid", "kaggle:random"),
    "out_of_range.py": ("invalid", "kaggle:random"),
    "full_column.py": ("invalid", "middle"),  # both play column 3: A fills it first
    "prints_10mb.py": ("ok", "kaggle:random"),
    "sys_exit.py": ("error", "kaggle:random"),
    "os_exit.py": ("crash", "kaggle:random"),
    "segfault.py": ("crash", "kaggle:random"),
    "eats_memory.py": ("memory", "kaggle:random"),
    "mutates_obs.py": ("ok", "kaggle:random"),
    "spawns_children.py": ("ok", "kaggle:random"),
    "burns_thread.py": ("ok", "kaggle:random"),
    "reads_secrets.py": ("error", "kaggle:random"),
    "fake_json.py": ("ok", "kaggle:random"),
    "writes_channel.py": ("protocol", "kaggle:random"),
    "missing_import.py": ("load", "kaggle:random"),
    "syntax_error.py": ("load", "kaggle:random"),
    "no_callable.py": ("load", "kaggle:random"),
    "fills_disk.py": ("error", "kaggle:random"),
    "checks_its_world.py": ("ok", "kaggle:random"),
    "imports_project.py": ("load", "kaggle:random"),
    "wrong_id.py": ("protocol", "kaggle:random"),
}
DETAILS = {"raises.py": "ValueError: this agent always fails", "sys_exit.py": "SystemExit", "os_exit.py": "status 3",
           "segfault.py": "SIGSEGV", "missing_import.py": "no_such_module_cxforge", "syntax_error.py": "SyntaxError",
           "fills_disk.py": "File too large", "no_callable.py": "IndexError",
           "imports_project.py": "Invalid raw Python", "wrong_id.py": "id '999'"}


def check_record(name: str, rec: object) -> None:
    from connectx_forge.play.game_record import GameRecord

    assert isinstance(rec, GameRecord)
    kind = CASES[name][0]
    assert rec.a_seat == 1
    if kind == "ok":
        assert rec.culprit != 1, (rec.outcome, rec.detail, rec.error)
        return
    assert (rec.outcome, rec.culprit) == (kind, 1), (rec.outcome, rec.culprit, rec.detail, rec.error, rec.bad_action)
    assert rec.kaggle_result()[0][0] == {"invalid": "INVALID", "timeout": "TIMEOUT"}.get(kind, "ERROR")
    if name in DETAILS:
        assert DETAILS[name] in (rec.detail or ""), rec.detail
    if kind == "timeout":  # never before actTimeout + the remaining overage (how soon after: -m slow)
        assert is_timeout(rec.times[-1], ACT, OVERAGE), rec.times


# -- the library -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_library_names_every_way_of_breaking(name: str, tmp_path: Path) -> None:
    assert expected_kind(name) == CASES[name][0]
    before = set(live_descendants(os.getpid()))
    result = run_match(str(agent_file(name, tmp_path)), CASES[name][1], games=1, workers=1, seats="first",
                       settings=GameSettings(act_timeout=ACT, overage=OVERAGE, limits=LIMITS), progress=False)
    check_record(name, result.records[0])
    assert result.isolated == (True, False)
    left = wait_gone(lambda: new_descendants(before, warden_processes()))
    assert not left, f"processes left behind: {left}"


def test_a_hung_move_is_a_timeout_when_its_budget_runs_out(tmp_path: Path) -> None:
    """The move is cut once actTimeout + overage have run out, measured from its start (how soon: -m slow)."""
    rec = play_game(as_player(str(BROKEN / "hangs.py")), "random", 0,
                    settings=GameSettings(act_timeout=ACT, overage=OVERAGE))
    assert rec.outcome == "timeout" and rec.culprit == 1 and len(rec.times) == 1
    assert ACT + OVERAGE <= rec.times[0]


@pytest.mark.slow
def test_a_hung_move_is_cut_within_the_margin() -> None:
    """Wall clock, on an idle machine: the cut comes at actTimeout + overage + the margin, and the game ends
    a second after it at most (the host's start)."""
    start = time.monotonic()
    rec = play_game(as_player(str(BROKEN / "hangs.py")), "random", 0,
                    settings=GameSettings(act_timeout=ACT, overage=OVERAGE))
    assert rec.outcome == "timeout"
    assert ACT + OVERAGE <= rec.times[0] <= ACT + OVERAGE + MARGIN + 0.3
    assert time.monotonic() - start < ACT + OVERAGE + 1.0 + 1.0  # + the host's start


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_way_of_breaking_ends_in_bounded_time(name: str, tmp_path: Path) -> None:
    """Wall clock, on an idle machine: a game with a broken agent ends within 15 s, a hung move within
    actTimeout + the remaining overage + 1 s of its start."""
    start = time.monotonic()
    result = run_match(str(agent_file(name, tmp_path)), CASES[name][1], games=1, workers=1, seats="first",
                       settings=GameSettings(act_timeout=ACT, overage=OVERAGE, limits=LIMITS), progress=False)
    assert time.monotonic() - start < 15
    rec = result.records[0]
    if CASES[name][0] == "timeout":
        assert rec.times[-1] <= ACT + OVERAGE + 1.0


def test_details_are_scrubbed_of_the_referees_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KEY", FAKE_KEY)
    scrub.secrets.cache_clear()
    try:
        sub = tmp_path / "leaks.py"
        sub.write_text(f"def agent(obs, config):\n    raise RuntimeError('my key is {FAKE_KEY}')\n")
        rec = play_game(as_player(str(sub)), "random")
        assert rec.outcome == "error" and rec.detail == f"RuntimeError: my key is *** ({sub}:2)"
        assert FAKE_KEY not in json.dumps(rec.to_json())
        ret = tmp_path / "returns_key.py"
        ret.write_text(f"def agent(obs, config):\n    return '{FAKE_KEY}'\n")
        rec = play_game(as_player(str(ret)), "random")
        assert rec.outcome == "invalid" and rec.bad_action == "'***'"
    finally:
        monkeypatch.delenv("KAGGLE_KEY")
        scrub.secrets.cache_clear()


def test_a_file_plays_the_same_games_as_the_registered_agent(tmp_path: Path) -> None:
    built = tmp_path / "r.py"
    out = subprocess.run([sys.executable, "-m", "connectx_forge.cli", "build", "random", "-o", str(built)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    hosted = run_match(str(built), "kaggle:random", games=10, workers=1, seed=3, progress=False)
    local = run_match("random", "kaggle:random", games=10, workers=1, seed=3, progress=False)
    assert [(r.moves, r.outcome) for r in hosted.records] == [(r.moves, r.outcome) for r in local.records]
    isolated = run_match("random", "kaggle:random", games=10, workers=1, seed=3, progress=False,
                         settings=GameSettings(isolate=True))
    assert isolated.isolated == (True, True)
    assert [(r.moves, r.outcome) for r in isolated.records] == [(r.moves, r.outcome) for r in local.records]


def test_parse_memory() -> None:
    assert parse_memory("512") == 512 * MIB and parse_memory("1.5G") == 1536 * MIB
    assert parse_memory("300m") == 300 * MIB
    from connectx_forge.errors import UserError

    for bad in ("lots", "12", "-5"):
        with pytest.raises(UserError):
            parse_memory(bad)


# -- the command line --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return planted_world(tmp_path_factory.mktemp("home"))


def cxforge(env: dict[str, str], *args: str, timeout: float = 60) -> Run:
    return run_cxforge(env, "match", *args, timeout=timeout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_names_every_way_of_breaking(name: str, world: dict[str, str], tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    out = cxforge(world, str(agent_file(name, tmp_path)), CASES[name][1], "-n", "1", "-w", "1",
                  "--seats", "first", "--act-timeout", str(ACT), "--overage", str(OVERAGE),
                  "--memory", "512", "--no-progress", "--save", str(games))
    assert out.returncode == 0, out.stderr  # within run_cxforge's 60 s: a hung harness fails
    assert "overall" in out.stdout and "isolated (agent hosts" in out.stdout
    text = out.stdout + out.stderr + games.read_text()
    assert "Traceback" not in out.stdout + out.stderr  # the harness never crashed ...
    records = [json.loads(line) for line in games.read_text().splitlines()]
    assert "Traceback" not in json.dumps([{k: v for k, v in r.items() if k != "logs"} for r in records])
    assert FAKE_KEY not in text and FAKE_USER not in text  # ... and no secret is kept, the agent's log included
    check_record(name, load_records(games)[0])
    marker = world["CXFORGE_TEST_MARKER"]
    assert not wait_gone(lambda: marked(marker)), "processes left behind"
    assert not wait_gone(lambda: in_group(out.pgid)), "processes left in the run's process group"


def test_cli_json_says_who_was_isolated(world: dict[str, str]) -> None:
    out = cxforge(world, "random", "kaggle:random", "-n", "2", "-w", "1", "--isolate", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["isolated"] == {"a": True, "b": True}
    out = cxforge(world, "random", "kaggle:random", "-n", "2", "-w", "1", "--json")
    assert json.loads(out.stdout)["isolated"] == {"a": False, "b": False}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_kill_9_of_the_harness_leaves_nothing_behind(workers: str, world: dict[str, str], tmp_path: Path) -> None:
    env = dict(world, CXFORGE_TEST_MARKER=uuid.uuid4().hex, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "connectx_forge.cli", "match", str(BROKEN / "hangs.py"),
                             "kaggle:random", "-n", "4", "-w", workers, "--act-timeout", "60", "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for_hosts(proc.pid, tmp_path, int(workers))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not wait_gone(lambda: marked(env["CXFORGE_TEST_MARKER"])), "processes outlived the harness"
    assert not wait_gone(lambda: in_group(proc.pid)), "processes left in the harness's process group"
    assert not wait_gone(lambda: left_folders(tmp_path)), "game folders left behind"


@pytest.mark.slow
def test_an_honest_agent_taking_1_8_s_a_move_is_not_timed_out(world: dict[str, str]) -> None:
    out = cxforge(world, str(BROKEN / "slow_honest.py"), "leftmost", "-n", "1", "-w", "1",
                  "--seats", "first", "--rows", "4", "--columns", "4", "--inarow", "3", "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["overall"]["timeouts"] == 0 and summary["overall"]["wins"] + summary["overall"]["losses"] == 1
    rec = play_game(as_player(str(BROKEN / "slow_honest.py")), "leftmost", 0, settings=GameSettings((4, 4, 3)))
    assert rec.culprit is None and all(t < 2 for t in rec.times[0::2])


def test_the_cpu_time_limit_ends_a_spinning_agent(tmp_path: Path) -> None:
    """RLIMIT_CPU: an agent that spins past its CPU seconds is killed by SIGXCPU, named as such."""
    spin = tmp_path / "spins.py"
    spin.write_text("def agent(obs, config):\n    while True:\n        pass\n")
    rec = play_game(as_player(str(spin)), "random",
                    settings=GameSettings(act_timeout=20, overage=0, limits=Limits(cpu_seconds=1)))
    # a crash, not a timeout: the CPU limit ended it before its 20 s move budget ran out
    assert rec.outcome == "crash" and rec.culprit == 1, (rec.outcome, rec.detail)
    assert "killed by SIGXCPU (its CPU-time limit)" in (rec.detail or "")


NPROC_PROBE = """
import os, sys
from connectx_forge.sandbox import limits
if os.getuid() == 0:  # root ignores RLIMIT_NPROC: probe it as nobody
    os.setgid(65534)
    os.setuid(65534)
limits.apply(limits.Limits(), 60, limits.user_processes() + 3)
children, refused = [], 0
for _ in range(8):
    try:
        pid = os.fork()
    except BlockingIOError:
        refused += 1
        continue
    if pid == 0:
        import time
        time.sleep(2)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(len(children), refused)
"""


def test_the_process_limit_refuses_more_children() -> None:
    """RLIMIT_NPROC as a host sets it: a few children start, the rest are refused (EAGAIN)."""
    out = subprocess.run([sys.executable, "-c", NPROC_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    started, refused = map(int, out.stdout.split())
    assert 1 <= started <= 3 and refused == 8 - started


def test_a_threads_warden_is_closed_and_reaped_when_the_thread_ends() -> None:
    """A thread's warden goes with the thread (and any left at exit are closed then): its channel is closed,
    not left to the garbage collector's ResourceWarning, and its process is reaped, not left a zombie."""
    import gc
    import threading
    import warnings

    from connectx_forge.sandbox import warden

    pids: list[int] = []
    thread = threading.Thread(target=lambda: pids.append(warden.get().pid))
    thread.start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thread.join()
        del thread
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # reaped already
    assert not Path(f"/proc/{pids[0]}").exists()
