"""The one worker pool (tools/connectx_forge/play/worker_pool.py): results in job order, and a clean stop when a job
fails.

Process workers run module-level functions of this file (they cross by pickle).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from connectx_forge.play.worker_pool import Progress, in_processes


def square_after(job: tuple[int, float]) -> tuple[int, int]:
    """``i * i`` after ``delay`` seconds, and the id of the process that computed it."""
    i, delay = job
    time.sleep(delay)
    return i * i, os.getpid()


def fail_first(job: tuple[int, str]) -> int:
    """Job 0 raises at once; the others mark that they started, take a long time, then mark that they finished."""
    i, folder = job
    if i == 0:
        raise ValueError("job 0 failed")
    Path(folder, f"started-{i}").touch()
    return slow_square((i, folder))


def slow_square(job: tuple[int, str]) -> int:
    """``i * i`` after 10 seconds (0 at once), then a mark in ``folder`` that the job finished."""
    i, folder = job
    time.sleep(10 if i else 0)
    Path(folder, f"finished-{i}").touch()
    return i * i


def sigint_ignored(job: int) -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


# jobs whose completion order is the reverse of their order
REVERSED = [(i, 0.05 * (5 - i)) for i in range(6)]


@pytest.mark.parametrize("workers", [1, 2])
def test_process_results_come_in_job_order(workers: int) -> None:
    results = in_processes(square_after, REVERSED, workers)
    assert [r[0] for r in results] == [i * i for i, _ in REVERSED]
    pids = {pid for _, pid in results}
    if workers == 1:
        assert pids == {os.getpid()}  # one worker: in this process
    else:
        assert os.getpid() not in pids and len(pids) == 2
    assert multiprocessing.active_children() == []


def test_the_bar_counts_what_count_says() -> None:
    seen: list[int] = []

    def count(result: tuple[int, int]) -> int:
        seen.append(result[0])
        return 3

    progress = Progress("t", total=18, enabled=False, count=count)
    assert len(in_processes(square_after, REVERSED, 2, progress=progress)) == 6
    assert sorted(seen) == sorted(i * i for i, _ in REVERSED)


def test_forked_workers_leave_ctrl_c_to_this_process() -> None:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever an earlier test left
    try:
        assert in_processes(sigint_ignored, [0, 1], 2) == [True, True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_job_stops_the_processes_and_raises(workers: int, tmp_path: Path) -> None:
    jobs = [(i, str(tmp_path)) for i in range(8)]
    with pytest.raises(ValueError, match="job 0 failed"):
        in_processes(fail_first, jobs, workers)
    assert multiprocessing.active_children() == []
    assert not list(tmp_path.glob("finished-*"))  # the long jobs under way were stopped, not waited for
    started = len(list(tmp_path.glob("started-*")))
    assert started < len(jobs) - 1  # the jobs not started were cancelled
    assert multiprocessing.active_children() == []


def test_ctrl_c_while_collecting_stops_the_processes(tmp_path: Path) -> None:
    def interrupt(result: object) -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        in_processes(slow_square, [(i, str(tmp_path)) for i in range(6)], 2,
                     progress=Progress("t", enabled=False, count=interrupt))
    assert multiprocessing.active_children() == []
    assert [p.name for p in tmp_path.glob("finished-*")] == ["finished-0"]  # the long jobs were stopped


def test_no_jobs_no_work() -> None:
    assert in_processes(square_after, [], 2) == []
