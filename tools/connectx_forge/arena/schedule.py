"""Games as jobs on any ``concurrent.futures.Executor``: a local process pool, or Dask.

A ``GameJob`` (``tools/connectx_forge/play/settings``, the job ``cxforge match`` makes too) is one
game of a run: a pairing, an opening, player A's colour (its mark) and the game's
own seed, with the run's ``GameSettings`` (clock, agent-host limits: ``--memory``,
``--slowdown``), so that a game replays alone with ``play(job)``, in this process,
a pool worker or a Dask worker alike (the job is what is sent).
``run_jobs`` keeps a window of jobs in flight on an executor and hands each
finished game to a callback the moment it comes back (the callback stores it,
and may stop the run, as the SPRT does).

Executors (``executor``):

* the default: a process pool of ``workers`` forked processes (1: this process,
  no pool).  Workers ignore Ctrl-C and die with this process, even by ``kill -9``
  (a parent-death signal), so an interrupted run leaves nothing behind;
* ``dask=DaskTarget("local")``: a Dask cluster of ``workers`` isolated worker
  processes on 127.0.0.1, over TLS (``dask_cluster``);
* ``dask=DaskTarget("tls://HOST:8786", tls=...)``: the Dask scheduler at that
  address, whose workers (on any machines) have this project installed.

Dask reruns the jobs of a worker that dies; a job is a seeded game, so the rerun
gives the same game and the store keeps one copy.  A Dask worker's own threads
draw from Python's global ``random`` while a task runs, and agents (Kaggle's
among them) play from that same generator, so on Dask each game is played in a
single-threaded process forked from the worker (``play_apart``): the same seed
then gives the same game there as in the process pool.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar

from connectx_forge.arena.dask_cluster import DaskTarget, dask_client, dask_target
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.game import play_job
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import as_player
from connectx_forge.play.settings import GameJob, GameSettings, from_digits
from connectx_forge.play.worker_pool import worker_pool, worker_start

P = ParamSpec("P")
T = TypeVar("T")


def play(job: GameJob) -> GameRecord:
    """Play one job's game (in a worker, or in this process): its players resolved here (a run sends their
    specs: ``reference.as_player`` builds a project from the cache), then ``game.play_job``."""
    return play_job(replace(job, a=as_player(job.a), b=as_player(job.b)))


def pair_jobs(pairing: str, a: str, b: str, opening: str, slot: int, base_seed: int, repeat: int = 0,
              settings: GameSettings | None = None) -> list[GameJob]:
    """The two games of one pair: A with each mark on ``opening`` (Pons digits), each game seeded on its own; a
    game other than ConnectX plays both on one seed (its map), seats swapped."""
    game = settings if settings is not None else GameSettings()
    shared = game.game != CONNECTX
    return [GameJob(a, b, colour, seed_of(base_seed, pairing, opening, 1 if shared else colour, repeat), slot,
                    from_digits(opening), game, pairing) for colour in (1, 2)]


def seed_of(base: int, pairing: str, opening: str, colour: int, repeat: int = 0) -> int:
    """The seed of one game: from the run's base seed and the game's key alone, whatever the order of play."""
    import numpy as np

    digest = int.from_bytes(hashlib.sha256(f"{pairing}\n{opening}".encode()).digest()[:16], "little")
    return int(np.random.SeedSequence([base, digest, colour, repeat]).generate_state(1)[0])


@dataclass(frozen=True)
class Workers:
    """An executor, how many games to keep in flight on it, and the function that plays a job there."""

    executor: Executor
    slots: int
    kind: str  # "this process", "process pool" or "dask"
    play: Callable[[GameJob], GameRecord] = play


class _Child:
    """A forked, single-threaded process that plays the jobs it is sent over a pipe, and dies with its parent.

    Forked by hand: Dask's worker processes are daemons, which multiprocessing
    does not let have children.
    """

    def __init__(self) -> None:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: play until the pipe closes
            status = 0
            try:
                os.close(jobs_w)
                os.close(results_r)
                worker_start(parent)
                with os.fdopen(jobs_r, "rb") as inbox, os.fdopen(results_w, "wb") as outbox:
                    while True:
                        try:
                            job = pickle.load(inbox)
                        except EOFError:
                            break
                        try:
                            reply: tuple[bool, GameRecord | Exception] = (True, play(job))
                        except Exception as exc:
                            reply = (False, exc)
                        pickle.dump(reply, outbox)
                        outbox.flush()
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(jobs_r)
        os.close(results_w)
        self.pid = pid
        self.inbox = os.fdopen(jobs_w, "wb")
        self.outbox = os.fdopen(results_r, "rb")

    def play(self, job: GameJob) -> GameRecord:
        """The child's game; ``ChildDied`` if it is gone."""
        try:
            pickle.dump(job, self.inbox)
            self.inbox.flush()
            reply: tuple[bool, GameRecord | Exception] = pickle.load(self.outbox)  # what the child sent
        except (EOFError, OSError) as exc:
            self.close()
            raise ChildDied(f"the game process {self.pid} died") from exc
        _, value = reply
        if isinstance(value, Exception):  # (False, exc): the game raised it
            raise value
        return value

    def close(self) -> None:
        for fh in (self.inbox, self.outbox):
            try:
                fh.close()
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class ChildDied(RuntimeError):
    """The process playing a game apart died."""


_CHILDREN = threading.local()


def play_apart(job: GameJob) -> GameRecord:
    """``play(job)`` in a single-threaded child of this thread (one each, made on first use).

    For Dask workers, whose threads would otherwise share the agents' random
    generator.  A child that died is replaced, once per job.
    """
    for attempt in range(2):
        child: _Child | None = getattr(_CHILDREN, "child", None)
        if child is None:
            child = _CHILDREN.child = _Child()
        try:
            return child.play(job)
        except ChildDied:
            _CHILDREN.child = None
            if attempt:
                raise
    raise AssertionError("unreachable")


class _InProcess(Executor):
    """An executor that runs each job at once in this process (one worker: no pool, no pickling)."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        fut: Future[T] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            fut.set_exception(exc)
        return fut


@contextmanager
def executor(workers: int, dask: DaskTarget | str | None = None) -> Iterator[Workers]:
    """The executor a run uses (see the module docstring), shut down on the way out; ``dask``: a
    ``DaskTarget``, or its address alone."""
    target = dask_target(dask)
    if target is not None:
        with _dask_executor(workers, target) as ex:
            yield ex
        return
    if workers <= 1:
        yield Workers(_InProcess(), 1, "this process")
        return
    with worker_pool(workers) as pool:
        yield Workers(pool, 2 * workers, "process pool")


@contextmanager
def _dask_executor(workers: int, target: DaskTarget) -> Iterator[Workers]:
    """Dask's executor on ``target`` (``dask_cluster``: a locked local cluster of ``workers`` processes, or a
    scheduler with its security), two games in flight per worker thread."""
    with dask_client(target, workers) as client:
        slots = 2 * max(1, sum(client.nthreads().values()))
        yield Workers(client.get_executor(pure=False), slots, "dask", play_apart)


def play_batch(play: Callable[[GameJob], GameRecord], jobs: tuple[GameJob, ...]) -> list[GameRecord]:
    """Several jobs as one task (``run_jobs(batch=...)``): the games, in order."""
    return [play(job) for job in jobs]


# a task in flight: one game's (a GameRecord), or a batch's (``play_batch``: a list of them), which ``records``
# tells apart; one type for both, since ``wait`` takes futures of one type
Task = Future[Any]


def run_jobs(jobs: Iterable[GameJob], workers: Workers, done: Callable[[GameJob, GameRecord], bool],
             may_start: Callable[[GameJob], bool] = lambda job: True, batch: int = 1) -> bool:
    """Play ``jobs`` on ``workers``, at most ``workers.slots`` tasks at a time, in order of submission.

    ``done(job, record)`` is called in this process as each game comes back; when
    it returns True the run stops (jobs in flight are cancelled or left to finish
    unseen).  Ctrl-C first hands ``done`` the games that came back but were not
    handed over yet, then re-raises (at once when it arrives inside ``done``).  A job is submitted only once
    ``may_start(job)`` says so (the SPRT keeps the games it plays close to the
    pairs it has counted); it must say yes whenever nothing is running.  Returns
    whether the run was stopped.

    ``batch``: up to that many jobs are sent as one task (``play_batch``), their
    games handed to ``done`` when the task comes back; a match of quick games
    sends batches, because one task per game costs more than the game.
    """
    todo = iter(jobs)
    held: list[GameJob] = []
    running: dict[Task, tuple[GameJob, ...]] = {}

    def fill() -> None:
        while len(running) < workers.slots:
            group: list[GameJob] = []
            while len(group) < batch:
                job = held.pop() if held else next(todo, None)
                if job is None:
                    break
                if (running or group) and not may_start(job):
                    held.append(job)
                    break
                group.append(job)
            if not group:
                return
            if batch == 1:
                running[workers.executor.submit(workers.play, group[0])] = (group[0],)
            else:
                running[workers.executor.submit(play_batch, workers.play, tuple(group))] = tuple(group)

    def records(fut: Task) -> list[GameRecord]:
        result = fut.result()
        return result if isinstance(result, list) else [result]

    def order(fut: Task) -> tuple[int, int]:
        return running[fut][0].slot, running[fut][0].colour

    handing = False  # inside ``done``: an interrupt raised there stops the handing over at once
    try:
        fill()
        while running:
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in sorted(finished, key=order):
                for job, record in zip(running.pop(fut), records(fut), strict=True):
                    handing = True
                    if done(job, record):
                        return True
                    handing = False
            fill()
        return False
    except KeyboardInterrupt:  # games that ended but were not handed over yet are handed over: Ctrl-C loses none
        if handing:
            raise
        for fut in sorted(running, key=order):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                for job, record in zip(running.pop(fut), records(fut), strict=True):
                    done(job, record)
        raise
    finally:
        for fut in running:
            fut.cancel()
