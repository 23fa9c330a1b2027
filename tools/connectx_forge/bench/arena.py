"""Benchmark: tournament games per second on the process pool and on a Dask LocalCluster, in one run.

Run: ``nice cxforge bench arena`` (``--json`` for machine output).

The same seeded tournament is played from scratch into a fresh store on each
executor: the process pool at each ``-w`` count, then a ``LocalCluster`` of
``--dask-workers`` worker processes (skipped, with a note, when Dask's
distributed package is missing).  Times cover playing and committing every game;
the cluster's start-up is timed apart and left out of its rate.  Each row also
says whether its table equals the first row's, which it must for these agents
(their moves do not depend on the clock).  The agents keep nothing from one
game to the next (``negamax-fast``'s memo would make forked workers, which
inherit a warm one, look faster than Dask's fresh processes).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from connectx_forge.arena.dask_cluster import local_client
from connectx_forge.arena.run import Execution, RunInfo, execute
from connectx_forge.arena.schedule import Workers, play_apart
from connectx_forge.arena.tournament import Tournament, TournamentReport
from connectx_forge.table import GAMES, render

PLAYERS = ("alphabeta", "minimax", "lookahead", "random")  # no caches across games: every row starts equal


@dataclass(frozen=True)
class ExecutorRow:
    """One executor's row: its games, seconds and games per second (None: not measured), whether its table
    equals the first row's (None: nothing to compare), and a note.  ``to_json`` is a row of ``--json``."""

    executor: str
    workers: int
    games: int
    seconds: float | None
    games_per_s: float | None
    same_table: bool | None
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


NO_INFO = RunInfo("", 0.0, 0, "", None)


def _table_of(report: TournamentReport) -> TournamentReport:
    """A tournament report less its ``info`` (the run's store, times and executor): what two executors must
    agree on."""
    return replace(report, info=NO_INFO)


def _row(kind: str, workers: int, report: TournamentReport, seconds: float, first: TournamentReport | None,
         note: str = "") -> ExecutorRow:
    return ExecutorRow(kind, workers, report.games, round(seconds, 2), round(report.games / seconds, 1),
                       True if first is None else _table_of(report) == first, note)


def run_bench(players: tuple[str, ...] = PLAYERS, openings: int = 30, workers_list: list[int] | None = None,
              dask_workers: int = 2) -> list[ExecutorRow]:
    """One row per executor: games, seconds, games per second, and whether the table matched the first row's."""
    t = Tournament(players, openings=openings, seed=0)
    folder = Path(tempfile.mkdtemp(prefix="cxforge-bench-arena-"))
    rows: list[ExecutorRow] = []
    first: TournamentReport | None = None
    try:
        for w in workers_list or [1, 2]:
            start = time.perf_counter()
            report = execute(t, Execution(workers=w, store=folder / f"pool{w}.sqlite", progress=False)).report
            rows.append(_row("process pool", w, report, time.perf_counter() - start, first))
            first = first if first is not None else _table_of(report)
            print(f"  process pool, {w} worker(s): {rows[-1].games_per_s:.1f} games/s", file=sys.stderr)
        rows.append(_dask_row(t, folder, dask_workers, first))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def _dask_row(t: Tournament, folder: Path, n: int, first: TournamentReport | None) -> ExecutorRow:
    if importlib.util.find_spec("distributed") is None:
        return ExecutorRow("dask LocalCluster", n, 0, None, None, None,
                           "skipped: distributed is not installed (pip install -e '.[dask]')")

    begin = time.perf_counter()
    with local_client(n) as client:  # the cluster --dask local starts: TLS on 127.0.0.1, isolated workers
        startup = time.perf_counter() - begin
        ex = Workers(client.get_executor(pure=False), 2 * n, "dask", play_apart)
        start = time.perf_counter()
        report = execute(t, Execution(ex=ex, store=folder / "dask.sqlite", progress=False)).report
        seconds = time.perf_counter() - start
    row = _row("dask LocalCluster", n, report, seconds, first, f"cluster start-up {startup:.1f} s, not counted")
    print(f"  dask LocalCluster, {n} worker(s): {row.games_per_s:.1f} games/s", file=sys.stderr)
    return row


def markdown(rows: list[ExecutorRow], players: tuple[str, ...], openings: int) -> str:
    """``run_bench``'s rows as a markdown table."""
    lines = [f"Round robin of {', '.join(players)} on the first {openings} openings of the 4-ply suite "
             f"(each twice per pairing), seed 0, a fresh store for each row.", ""]
    cells = []
    for r in rows:
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        rate = "" if r.games_per_s is None else f"{r.games_per_s:.1f}"
        same = {True: "yes", False: "NO", None: ""}[r.same_table]
        cells.append([r.executor, r.workers, r.games, secs, rate, same, r.note])
    headers = ["executor", "workers", GAMES, "seconds", "games/s", "same table as row 1", "note"]
    lines.append(render(headers, cells, "markdown", align="lrrrrll"))
    return "\n".join(lines)
