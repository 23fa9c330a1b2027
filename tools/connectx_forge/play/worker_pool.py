"""THE worker pool of the game tools: run a list of jobs over W forked worker processes, with one progress bar.

``in_processes(work, jobs, workers)`` runs ``cxforge check``'s games and
``cxforge review``'s; ``worker_pool`` is the same pool for a caller that submits
its own tasks: the arena's scheduler (``tools/connectx_forge/arena/schedule``: ``match``,
``tournament``, ``sprt``) and the book builders (``tools/connectx_forge/solver/book_builder.py``, ``book_fill.py``).
``work`` (a module-level function) and each job cross to the workers by
pickle, results come back by pickle.  One worker runs the jobs in this process,
without a pool; pass ``executor`` to run them on an executor of your own (it is
left running).

It returns one result per job, IN JOB ORDER, whatever order they finished in,
and counts finished work on a bar (``tools/connectx_forge/progress``: stderr, terminals only).
When a job raises, or KeyboardInterrupt arrives, the pool cancels the jobs not
started, terminates its workers and re-raises.  Forked workers ignore SIGINT,
so Ctrl-C is handled once, here, and die with this process (a parent-death
signal), so a ``kill -9`` of the tool leaves no worker behind.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from connectx_forge import progress as progress_bars
from connectx_forge.sandbox.limits import die_with_parent

J = TypeVar("J")
R = TypeVar("R")


def _one(result: object) -> int:
    return 1


@dataclass(frozen=True)
class Progress:
    """How the bar counts: ``count(result)`` units per finished job, out of ``total`` (default: jobs); ``plan``:
    the command's first line (``progress.Bar``), measured once ``sample`` units are done."""

    desc: str
    unit: str = "game"
    total: int | None = None
    enabled: bool = True
    count: Callable[[Any], int] = _one  # a job's result: each caller's own type
    plan: str | None = None
    sample: int = 1


def worker_start(parent: int) -> None:
    """A worker's start: Ctrl-C is the parent's to handle, and the worker dies with ``parent`` (Linux),
    exiting at once if that parent is already gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    die_with_parent(signal.SIGKILL, parent)


def fork_pool(workers: int, initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A process pool that forks (workers start with this process's imports and caches) where it can."""
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=initializer)


def worker_processes(workers: int) -> ProcessPoolExecutor:
    """A ``fork_pool`` whose workers ignore Ctrl-C and die with this process; stop it with ``terminate`` on an
    exception or Ctrl-C (``worker_pool`` does), since its workers do not stop by themselves."""
    return fork_pool(workers, initializer=functools.partial(worker_start, os.getpid()))


@contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """``workers`` forked processes that ignore Ctrl-C and die with this one (``worker_start``); on the way out
    shut down, and on an exception or Ctrl-C their tasks cancelled and the workers terminated first, mid-task."""
    pool = worker_processes(workers)
    try:
        yield pool
    except BaseException:
        terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _bar(progress: Progress | None, jobs: int) -> progress_bars.Bar:
    p = progress or Progress("", enabled=False)
    return progress_bars.bar(p.total if p.total is not None else jobs, p.desc, p.unit, p.enabled, p.plan, p.sample)


def _count(progress: Progress | None, result: object) -> int:
    return progress.count(result) if progress is not None else 1


OnResult = Callable[[int, R], None]  # a job's index and its result


def _sequential(work: Callable[[J], R], jobs: Sequence[J], progress: Progress | None,
                on_result: OnResult[R] | None = None) -> list[R]:
    """Every job in this thread, in order."""
    results = []
    with _bar(progress, len(jobs)) as bar:
        for i, job in enumerate(jobs):
            result = work(job)
            results.append(result)
            if on_result is not None:
                on_result(i, result)
            bar.update(_count(progress, result))
    return results


def _collect(futures: list[Future[R]], progress: Progress | None, on_result: OnResult[R] | None = None) -> list[R]:
    """The futures' results in submission order, counting each on the bar (and passing it to ``on_result``)
    as it finishes."""
    where = {fut: i for i, fut in enumerate(futures)}
    results: dict[int, R] = {}
    with _bar(progress, len(futures)) as bar:
        for fut in as_completed(futures):
            result = fut.result()
            results[where[fut]] = result
            if on_result is not None:
                on_result(where[fut], result)
            bar.update(_count(progress, result))
    return [results[i] for i in range(len(futures))]


def terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a process pool's workers now, mid-job (the executor offers no public way before 3.14)."""
    processes = getattr(pool, "_processes", None) or {}
    for proc in list(processes.values()):
        if proc.is_alive():
            proc.terminate()


def in_processes(work: Callable[[J], R], jobs: Iterable[J], workers: int = 1, *,
                 progress: Progress | None = None, executor: Executor | None = None,
                 on_result: OnResult[R] | None = None) -> list[R]:
    """``[work(job) for job in jobs]`` over ``workers`` forked processes (1: in this process).

    ``on_result(i, result)`` sees each job's result as it finishes (job ``i``, in
    finishing order), so a caller keeps what is done when Ctrl-C stops the rest.
    """
    todo = list(jobs)
    if not todo:
        return []
    if executor is None and workers <= 1:
        return _sequential(work, todo, progress, on_result)
    pool = executor or fork_pool(min(workers, len(todo)), initializer=functools.partial(worker_start, os.getpid()))
    futures: list[Future[R]] = []
    try:
        futures = [pool.submit(work, job) for job in todo]  # fork before the bar starts a thread
        return _collect(futures, progress, on_result)
    except BaseException:
        for fut in futures:
            fut.cancel()
        if executor is None and isinstance(pool, ProcessPoolExecutor):
            terminate(pool)
        raise
    finally:
        if executor is None:
            pool.shutdown(wait=True, cancel_futures=True)
