"""Tournaments on Dask (tools/connectx_forge/arena/schedule): a real LocalCluster with worker processes gives the
process
pool's table for the same seed, and a worker killed mid-run loses no game."""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena.dask_cluster import local_client
from connectx_forge.arena.run import Execution, execute
from connectx_forge.arena.schedule import Workers, play, play_apart
from connectx_forge.arena.tournament import Tournament, jobs_of, tournament_suite
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox.limits import MIB, Limits

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install -e '.[dask]')")

PLAYERS = ("lookahead", "negamax-fast", "random")


def table(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "info"}


@pytest.fixture(scope="module")
def pool_table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("pool") / "pool.sqlite"
    return table(execute(Tournament(PLAYERS, openings=4, seed=11), Execution(workers=2, store=store,
                                progress=False)).report.to_json())


def test_a_local_cluster_gives_the_process_pools_table(tmp_path: Path, pool_table: dict[str, Any]) -> None:
    result = execute(Tournament(PLAYERS, openings=4, seed=11), Execution(workers=2, store=tmp_path / "dask.sqlite",
                            dask="local", progress=False))
    assert result.report.info.executor == "dask" and result.report.games == 24
    assert table(result.report.to_json()) == pool_table


def test_a_worker_killed_mid_run_loses_no_game(tmp_path: Path, pool_table: dict[str, Any]) -> None:
    with local_client(2) as client:  # --dask local's cluster
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]
        seen: list[GameRecord] = []

        def kill_one(record: GameRecord) -> None:
            seen.append(record)
            if len(seen) == 4:  # a third of the way in: one worker dies with games in flight
                os.kill(victim, signal.SIGKILL)

        ex = Workers(client.get_executor(pure=False), 4, "dask", play_apart)
        result = execute(Tournament(PLAYERS, openings=4, seed=11), Execution(store=tmp_path / "killed.sqlite",
                                progress=False, ex=ex, on_game=kill_one))
        assert victim not in client.run(os.getpid).values()  # the nanny started a new worker
    assert result.report.games == 24 and result.report.info.played_now == 24
    assert table(result.report.to_json()) == pool_table


HOARDER = """
def agent(obs, config):  # 200 MiB for each move, given back after it: within the default 2 GiB, beyond --memory 128
    scratch = bytearray(200 * 1024 * 1024)
    return [c for c in range(config.columns) if obs.board[c] == 0][0] + scratch[0]
"""


def test_the_host_limits_reach_the_games_played_on_dask(tmp_path: Path) -> None:
    # the job a Dask worker is sent carries the limits (and, slowed down, isolate: every player in a host)
    slowed = Tournament(PLAYERS, openings=1, game=GameSettings.of(memory=512 * MIB, slowdown=2))
    assert {(j.isolate, j.limits) for j in jobs_of(slowed, tournament_suite(slowed, progress=False))} == \
        {(True, Limits(memory=512 * MIB, slowdown=2))}
    # and the game on the worker is played under them: a file that fits in the default 2 GiB breaks at 128 MiB
    hoarder = tmp_path / "hoarder.py"
    hoarder.write_text(HOARDER)
    t = Tournament((str(hoarder), "leftmost"), openings=1, game=GameSettings.of(memory=128 * MIB))
    job = jobs_of(t, tournament_suite(t, progress=False))[0]
    assert job.limits is not None and job.limits.memory == 128 * MIB
    assert play(dataclasses.replace(job, settings=dataclasses.replace(job.settings, limits=None))).outcome \
        != "memory"  # the limit is what breaks it
    result = execute(t, Execution(workers=1, store=tmp_path / "dask.sqlite", dask="local", progress=False))
    assert result.report.info.executor == "dask" and result.report.games == 2
    assert result.report.failures["hoarder.py"] == {"memory": 2}  # the file named by its label
    assert result.report.settings.game.memory == 128 * MIB


def test_the_benchmark_plays_the_same_table_everywhere() -> None:
    from connectx_forge.bench.arena import markdown, run_bench

    rows = run_bench(("lookahead", "random"), openings=2, workers_list=[1, 2], dask_workers=1)
    assert [(r.executor, r.workers, r.games) for r in rows] == \
        [("process pool", 1, 4), ("process pool", 2, 4), ("dask LocalCluster", 1, 4)]
    assert all(r.same_table for r in rows) and all((r.games_per_s or 0) > 0 for r in rows)
    table = [[c.strip() for c in line.strip("|").split("|")] for line in
             markdown(rows, ("lookahead", "random"), 2).splitlines() if line.startswith("|")]
    assert table[-1][:3] == ["dask LocalCluster", "1", "4"]


def test_a_bad_scheduler_address_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from connectx_forge.cli import main

    assert main(["tournament", "random", "leftmost", "--openings", "1", "--dask", "no-port-here",
                 "--store", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refusing the unauthenticated Dask scheduler no-port-here" in err[0]
    assert main(["tournament", "random", "leftmost", "--openings", "1", "--dask", "no-port-here", "--insecure",
                 "--store", str(tmp_path / "x.sqlite")]) == 2
    warning, error = capsys.readouterr().err.strip().splitlines()  # --insecure: warned of, then tried
    assert "unauthenticated" in warning and "cannot reach the Dask scheduler at no-port-here" in error
