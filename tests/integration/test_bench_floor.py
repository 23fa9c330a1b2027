"""The floor beside ``cxforge bench loop --isolated`` (tools/connectx_forge/bench/floor.py): bare games with a fresh
process per
player per game play to the end, leave nothing running, and their rate is shown beside the agent hosts'."""

from __future__ import annotations

import subprocess
import sys

import pytest

from connectx_forge.bench.loop import GameCounts, IsolatedRates, LoopRow, markdown

# a subreaper of its own, so hosts orphaned by their template's end stay countable below it
SCRIPT = """
import os, sys, time
from connectx_forge.sandbox import limits
limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)
from connectx_forge.bench.floor import floor_rate
rate = floor_rate(9, 5, int(sys.argv[1]))
def left():
    me, n = str(os.getpid()), 0
    for pid in os.listdir("/proc"):
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            if fields[0] == "Z":
                os.waitpid(int(pid), 0)
            else:
                n += 1
    return n
deadline = time.monotonic() + 10
while left() and time.monotonic() < deadline:
    time.sleep(0.05)
print(rate, left())
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_floor_games_run_and_leave_nothing(workers: int) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(workers)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    rate, left = out.stdout.split()
    assert float(rate) > 0 and int(left) == 0


def test_the_table_shows_the_floor_beside_the_hosts() -> None:
    row = LoopRow("a vs b", 1, 100.0, 10.0, 10.0, counts=GameCounts(isolated_files="a.py vs b.py"),
                  isolated=IsolatedRates(40.0, 8.0, 5.0, 90.0, 11.2))
    table = markdown([row])
    header, _, cells = ([c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[:3])
    assert header[-2:] == ["floor (games/s)", "floor / evaluate"]
    assert cells[-6:] == ["a.py vs b.py", "40", "8.0", "5.0x", "90", "11.2x"]
