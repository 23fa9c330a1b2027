"""The one worker pool (tools/play/pool.py): results in job order, and a clean stop when a job fails.

Process workers run module-level functions of this file (they cross by pickle);
thread workers hold a ``Held`` resource that records how it was used and closed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from connectx_forge.tools.play import pool


def square_after(job: tuple[int, float]) -> tuple[int, int]:
    """``i * i`` after ``delay`` seconds, and the id of the process that computed it."""
    i, delay = job
    time.sleep(delay)
    return i * i, os.getpid()


def fail_first(job: tuple[int, str]) -> int:
    """Job 0 raises at once; the others mark that they started, then take a long time."""
    i, folder = job
    if i == 0:
        raise ValueError("job 0 failed")
    Path(folder, f"started-{i}").touch()
    time.sleep(5)
    return i


def sigint_ignored(job: int) -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


# jobs whose completion order is the reverse of their order
REVERSED = [(i, 0.05 * (5 - i)) for i in range(6)]


@pytest.mark.parametrize("workers", [1, 2])
def test_process_results_come_in_job_order(workers: int) -> None:
    results = pool.in_processes(square_after, REVERSED, workers)
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

    progress = pool.Progress("t", total=18, enabled=False, count=count)
    assert len(pool.in_processes(square_after, REVERSED, 2, progress=progress)) == 6
    assert sorted(seen) == sorted(i * i for i, _ in REVERSED)


def test_forked_workers_leave_ctrl_c_to_this_process() -> None:
    assert pool.in_processes(sigint_ignored, [0, 1], 2) == [True, True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_job_stops_the_processes_and_raises(workers: int, tmp_path: Path) -> None:
    jobs = [(i, str(tmp_path)) for i in range(8)]
    start = time.perf_counter()
    with pytest.raises(ValueError, match="job 0 failed"):
        pool.in_processes(fail_first, jobs, workers)
    assert time.perf_counter() - start < 4  # the 5-second jobs under way were stopped, not waited for
    started = len(list(tmp_path.glob("started-*")))
    assert started < len(jobs) - 1  # the jobs not started were cancelled
    assert multiprocessing.active_children() == []


def test_ctrl_c_while_collecting_stops_the_processes() -> None:
    def interrupt(result: object) -> int:
        raise KeyboardInterrupt

    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        pool.in_processes(square_after, [(0, 0.0)] + [(i, 5.0) for i in range(1, 6)], 2,
                          progress=pool.Progress("t", enabled=False, count=interrupt))
    assert time.perf_counter() - start < 4  # the 5-second jobs were stopped, not waited for
    assert multiprocessing.active_children() == []


class Held:
    """A thread worker's resource: which threads used it, how it was closed; ``wait`` blocks until closed."""

    made: list[Held] = []

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.closed: list[bool] = []  # the abort flag of each close
        self.gone = threading.Event()
        Held.made.append(self)

    def close(self, abort: bool = False) -> None:
        self.closed.append(abort)
        self.gone.set()


@pytest.fixture(autouse=True)
def fresh_resources() -> None:
    Held.made = []


def use(res: Held, job: tuple[int, float]) -> int:
    res.threads.add(threading.get_ident())
    time.sleep(job[1])
    return job[0] * 10


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_thread_results_come_in_job_order_one_resource_per_thread(workers: int) -> None:
    before = threading.active_count()
    assert pool.in_threads(use, REVERSED, workers, Held) == [i * 10 for i, _ in REVERSED]
    assert 1 <= len(Held.made) <= workers
    if workers > 1:
        assert len(Held.made) > 1
    for res in Held.made:
        assert len(res.threads) == 1 and res.closed == [False]  # kept by one thread, closed once, gently
    assert threading.active_count() == before


def test_a_failing_thread_job_aborts_the_resources_and_raises() -> None:
    ran: list[int] = []

    def work(res: Held, job: int) -> int:
        if job == 0:
            time.sleep(0.1)  # let the other thread start its job first
            raise RuntimeError("lost the loader")
        ran.append(job)
        res.gone.wait(10)  # like a game in an isolated process: ends when the resource is aborted
        return job

    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="lost the loader"):
        pool.in_threads(work, range(10), 2, Held)
    assert time.perf_counter() - start < 5  # the blocked job was released by the abort
    assert len(ran) < 9  # the jobs not started were cancelled
    assert Held.made and all(res.closed and res.closed[0] is True for res in Held.made)


def test_ctrl_c_while_collecting_aborts_the_thread_resources() -> None:
    def interrupt(result: object) -> int:
        raise KeyboardInterrupt

    def work(res: Held, job: int) -> int:
        if job:
            res.gone.wait(10)
        return job

    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        pool.in_threads(work, range(6), 2, Held, progress=pool.Progress("t", enabled=False, count=interrupt))
    assert time.perf_counter() - start < 5
    assert all(res.closed[0] is True for res in Held.made)


def test_a_resource_asked_for_after_the_stop_is_refused() -> None:
    resources = pool._PerThread(Held)
    first = resources.get()
    assert resources.get() is first  # one per thread
    resources.close_all(abort=True)
    refused: list[Exception] = []

    def ask() -> None:  # a thread that has none yet
        try:
            resources.get()
        except pool.PoolStopped as exc:
            refused.append(exc)

    late = threading.Thread(target=ask)
    late.start()
    late.join()
    assert len(refused) == 1 and len(Held.made) == 1 and first.closed == [True]
    assert pool.in_threads(use, [], 2, Held) == [] and pool.in_processes(square_after, [], 2) == []
