"""``--slowdown X`` (tools/connectx_forge/sandbox/throttle.py): each agent host gets 1/X of a CPU while Kaggle's clock
stays wall
time, so a move that fits at full speed can time out on a slower machine; the report says the method."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.sandbox import cgroup, jail, warden

BURN = """
import time
_first = [True]

def agent(obs, config):
    if _first[0]:  # the first move burns CPU_S seconds of CPU and says what share of a CPU it had
        _first[0] = False
        c0, w0 = time.process_time(), time.perf_counter()
        while time.process_time() - c0 < CPU_S:
            pass
        print(f"SHARE {(time.process_time() - c0) / (time.perf_counter() - w0):.4f}")
        lines = open("/proc/self/cgroup").read().splitlines()
        print("CGROUP " + [ln for ln in lines if "cpu" in ln.split(":")[1].split(",") or ln.startswith("0::")][0])
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def burner(folder: Path, cpu_s: float) -> Path:
    path = folder / f"burn_{str(cpu_s).replace('.', '_')}.py"
    path.write_text(textwrap.dedent(BURN).replace("CPU_S", repr(cpu_s)))
    return path


def first_move(agent: Path, folder: Path, slowdown: float, act_timeout: float) -> tuple[str, float | None]:
    """The outcome of one game of ``agent`` (first) against leftmost, and the CPU share its first move had."""
    games = folder / f"games_{slowdown:g}.jsonl"
    assert main(["match", str(agent), "leftmost", "-n", "1", "-w", "1", "--seats", "first", "--act-timeout",
                 str(act_timeout), "--overage", "0", "--slowdown", str(slowdown), "--save", str(games),
                 "--no-progress"]) == 0
    record = json.loads(games.read_text().splitlines()[0])
    log = (record.get("logs") or {}).get("1", "")
    shares = [float(line.split()[1]) for line in log.splitlines() if line.startswith("SHARE ")]
    return record["outcome"], shares[0] if shares else None


@pytest.fixture(params=["cgroup", "duty cycle"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each way of slowing a host: a cgroup's CPU quota where this machine allows one, and the duty cycle."""
    if request.param == "duty cycle":
        monkeypatch.setenv("CXFORGE_CGROUP", "off")
    cgroup.available.cache_clear()
    warden.reset()
    if request.param == "cgroup" and cgroup.holding(cgroup.available(), "cpu") is None:
        pytest.skip("no cgroup with the CPU controller is writable here")
    yield request.param
    monkeypatch.undo()
    cgroup.available.cache_clear()
    warden.reset()


def test_a_slowed_host_gets_its_share_of_a_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               method: str) -> None:
    agent = burner(tmp_path, 0.5)
    _, full = first_move(agent, tmp_path, 1, 10)
    _, quarter = first_move(agent, tmp_path, 4, 10)
    assert full and quarter  # how close each share comes to 1/X (CPU over wall seconds): under -m slow
    out = capsys.readouterr().out
    said = {"cgroup": "a CPU quota on the host's own cgroup", "duty cycle": "a duty cycle of SIGSTOP/SIGCONT"}
    assert f"slowdown 4x: each agent host ran on 1/4 of a CPU ({said[method]}" in out
    groups = [line for game in (tmp_path / "games_4.jsonl", tmp_path / "games_1.jsonl")
              for line in json.loads(game.read_text().splitlines()[0])["logs"]["1"].splitlines()
              if line.startswith("CGROUP ")]
    slowed, full_speed = groups
    # where cgroups are used every host has its own (its memory and processes held together), slowed or not
    assert ("/host-" in slowed) == ("/host-" in full_speed) == (method == "cgroup"), groups
    # each game records how its hosts were held, which is what a report of stored games says
    records = [json.loads((tmp_path / f"games_{x}.jsonl").read_text().splitlines()[0]) for x in (4, 1)]
    assert records[0]["slowed"].startswith(said[method]) and "slowed" not in records[1], records[0].get("slowed")


@pytest.mark.slow
def test_a_slowed_host_runs_at_its_share_of_a_cpu(tmp_path: Path, method: str) -> None:
    """CPU seconds over wall seconds, on an idle machine: 1/2 and 1/4 of the share a host has at full speed."""
    agent = burner(tmp_path, 0.5)
    full, half, quarter = (first_move(agent, tmp_path, x, 10)[1] for x in (1, 2, 4))
    assert full and half and quarter
    # measured against the same run's full speed (a loaded machine gives less than a whole CPU to anyone)
    assert abs(half / full - 0.5) <= 0.05 and abs(quarter / full - 0.25) <= 0.025, (full, half, quarter)


def test_a_move_that_fits_at_full_speed_times_out_on_a_slower_machine(tmp_path: Path) -> None:
    agent = burner(tmp_path, 0.4)
    assert first_move(agent, tmp_path, 1, 1.5)[0] != "timeout"
    assert first_move(agent, tmp_path, 5, 1.5)[0] == "timeout"  # 2 s of wall time for 0.4 s of CPU


def test_check_says_how_it_slowed_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "random", "-n", "1", "--no-validation", "--no-floors", "--slowdown", "3", "--opponents",
                 "kaggle:random"]) in (0, 1)
    assert "slowdown 3x: each agent host ran on 1/3 of a CPU" in capsys.readouterr().out
    assert main(["check", "random", "-n", "1", "--no-validation", "--no-floors", "--slowdown", "3", "--opponents",
                 "kaggle:random", "--json"]) in (0, 1)
    slowed = json.loads(capsys.readouterr().out)["slowed"]
    assert list(slowed.values()) == [1], slowed  # its one game, held one way


def test_a_report_names_the_ways_its_games_recorded() -> None:
    """A report of stored games says how they were slowed, wherever it is printed (a tournament on Dask
    workers, a store read on another machine); a store from before games recorded it says this machine's."""
    from connectx_forge.arena.tournament_report import slowdown_lines

    assert slowdown_lines(2, {"a recorded way": 4}) == [
        "slowdown 2x: each agent host ran on 1/2 of a CPU (a recorded way); Kaggle's clock in wall time"]
    assert "(3 games: way A; 1 game: way B)" in jail.slowdown_line(2, {"way A": 3, "way B": 1})
    assert slowdown_lines(1, {"way": 1}) == []
    cgroup.available.cache_clear()
    here = jail.slowdown_line(2, {})
    assert ("a CPU quota" in here) == (cgroup.holding(cgroup.available(), "cpu") is not None), here


@pytest.mark.parametrize("bad", ["0.5", "x", "1000"])
def test_a_bad_slowdown_is_one_line(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["match", "random", "leftmost", "-n", "1", "--slowdown", bad])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--slowdown takes a factor from 1 to 100" in err[-1]


@pytest.mark.slow
def test_forty_cpu_seconds_pass_check_at_full_speed_and_time_out_at_half(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: 40 s of CPU on the first move fits Kaggle's 2 s + 60 s of overage, 80 s does not."""
    agent = burner(tmp_path, 40.0)
    base = ["check", str(agent), "-n", "1", "-w", "1", "--no-validation", "--opponents", "kaggle:random", "--json"]
    assert main([*base, "--slowdown", "1"]) == 0
    capsys.readouterr()
    assert main([*base, "--slowdown", "2"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["breaks"].get("timeout"), report["breaks"]


def test_a_gone_referees_cgroups_are_removed_by_the_next() -> None:
    """A ``kill -9`` of a whole process group leaves its wardens' cgroups; the next referee removes them, and
    never a running referee's."""
    parents = cgroup.available()
    if not parents:
        pytest.skip("no cgroup is writable here")
    parent = parents[0]
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # a pid that no longer runs
    gone = Path(parent.folder) / f"{cgroup.PREFIX}{pid}-test"
    gone.mkdir()
    (gone / "host-1").mkdir()
    mine = cgroup.make()
    try:
        assert len(mine) == len(parents)  # one in each hierarchy
        assert all(Path(m.folder).name.startswith(f"{cgroup.PREFIX}{os.getpid()}-") for m in mine)
        assert not gone.exists()
        assert cgroup.make() and all(Path(m.folder).exists() for m in mine)  # a running referee's stay
    finally:
        for each in parents:
            for group in Path(each.folder).glob(f"{cgroup.PREFIX}{os.getpid()}-*"):
                cgroup.remove(cgroup.Group(str(group), each.version))
        if gone.exists():
            cgroup.remove(cgroup.Group(str(gone), parent.version))
