"""Benchmark: games per second of our game loop against kaggle_environments.evaluate.

Run: ``nice cxforge bench loop`` (``--json`` for machine output; ``--isolated`` adds the same matchups
between built submission files: played in agent hosts, a child process per player per game
(``tools/sandbox``), and by ``evaluate`` given the files' paths, which loads them in its own process).

Both harnesses play the same agent functions, so the ratio measures the loops:
Kaggle's built-in ``random`` against itself, and our ``lookahead`` against
Kaggle's ``random``.  Each is timed at 1 worker and at all cores.  ``evaluate``
has no parallelism of its own; at W workers it runs in W processes, each
evaluating its share of the episodes (the fairest parallel Kaggle baseline).
With files, ``evaluate`` loads each file afresh in every game; we load it once
per worker in a template and fork each game's host from it, charging the load to
move 1 (``tools/sandbox/template.py``; ``CXFORGE_TEMPLATE=off`` loads afresh too).  Beside them, the
floor (``floor.py``): bare games of the matchup's mean length with a fresh process per player per game and
nothing else, the most any such harness gets from this machine.  Every
measurement first calibrates on a few games, then plays about ``--seconds`` worth of games; pool start-up
is included in the parallel figures.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any

from connectx_forge.tools.bench.floor import floor_rate
from connectx_forge.tools.play.match import run_match
from connectx_forge.tools.play.players import resolve
from connectx_forge.tools.play.pool import fork_pool

MATCHUPS = [("kaggle:random", "kaggle:random"), ("lookahead", "kaggle:random")]


def _evaluate_share(job: tuple[str, str, int]) -> int:
    """Run ``n`` episodes of ``evaluate`` (in a worker process); returns how many ran."""
    from connectx_forge.tools.kaggle_env import load

    evaluate = load().evaluate
    a, b, n = job
    players = [p if p.endswith(".py") else resolve(p).new_agent() for p in (a, b)]  # a path: loaded per episode
    rewards = evaluate("connectx", players, num_episodes=n)
    return len(rewards)


def evaluate_rate(a: str, b: str, games: int, workers: int) -> float:
    """Games per second of ``kaggle_environments.evaluate`` over ``workers`` processes."""
    start = time.perf_counter()
    if workers == 1:
        done = _evaluate_share((a, b, games))
    else:
        shares = [games // workers + (i < games % workers) for i in range(workers)]
        with fork_pool(workers) as pool:
            done = sum(pool.map(_evaluate_share, [(a, b, n) for n in shares if n]))
    return done / (time.perf_counter() - start)


def ours_rate(a: str, b: str, games: int, workers: int) -> float:
    """Games per second of ``run_match``."""
    result = run_match(a, b, games, workers=workers, seed=0, progress=False)
    return len(result.records) / result.seconds


def measure(rate: Callable[[str, str, int, int], float], a: str, b: str, workers: int, seconds: float,
            probe: int) -> tuple[float, int]:
    """Calibrate on ``probe`` games in one process, then time about ``seconds`` of games."""
    single = rate(a, b, probe, 1)
    games = max(probe, workers, math.ceil(single * workers * seconds))
    return rate(a, b, games, workers), games


def built_file(name: str, folder: str) -> str:
    """Agent ``name`` bundled into a submission file in ``folder`` (what ``cxforge build`` writes)."""
    from pathlib import Path

    from connectx_forge.build.builder import build, default_root, resolve_target, write

    path = Path(folder) / f"{name}.py"
    write(build(resolve_target(name, default_root())), path)
    return str(path)


def mean_plies(a: str, b: str, games: int = 200) -> float:
    """The mean length in moves of ``a``'s games against ``b`` (played in-process, seeded)."""
    records = run_match(a, b, games, workers=1, seed=0, progress=False).records
    return sum(len(r.moves) for r in records) / len(records)


def _isolated(a: str, b: str, w: int, seconds: float, folder: str) -> dict[str, Any]:
    """The matchup between built files (our ``random`` for ``kaggle:random``): both in agent hosts, both
    loaded by ``evaluate``, and the floor (``floor.py``) for games of the matchup's mean length."""
    files = [built_file("random" if x.startswith("kaggle:") else x, folder) for x in (a, b)]
    rate, games = measure(ours_rate, files[0], files[1], w, seconds, probe=5)
    theirs, n_theirs = measure(evaluate_rate, files[0], files[1], w, seconds, probe=3)
    plies = round(mean_plies(a, b))
    bound, n_bound = measure(lambda _a, _b, n, k: floor_rate(plies, n, k), "", "", w, seconds, probe=20)
    return {"isolated_files": " vs ".join(os.path.basename(f) for f in files), "isolated_games_per_s": round(rate, 1),
            "isolated_games": games, "evaluate_files_games_per_s": round(theirs, 1), "evaluate_files_games": n_theirs,
            "isolated_ratio": round(rate / theirs, 1), "floor_plies": plies, "floor_games_per_s": round(bound, 1),
            "floor_games": n_bound, "floor_ratio": round(bound / theirs, 1)}


def run_bench(seconds: float = 3.0, workers_list: list[int] | None = None,
              isolated: bool = False) -> list[dict[str, Any]]:
    """Each matchup's games per second, ours and ``evaluate``'s, at each worker count (progress on stderr).

    ``isolated``: also A as a built submission file, played in agent hosts (``tools/sandbox``): a child
    process per game, forked from the file's template (its state right after the load, as on Kaggle).
    """
    import tempfile

    rows: list[dict[str, Any]] = []
    cores = os.cpu_count() or 1
    folder = tempfile.mkdtemp(prefix="cxforge-bench-")
    for a, b in MATCHUPS:
        note = ""
        if not a.startswith("kaggle:"):
            try:
                resolve(a)
            except Exception as exc:  # an agent not written yet
                note = f"{a} is not available ({exc}); measured our random agent instead"
                a = "random"
        for w in workers_list or sorted({1, cores}):
            ours, n_ours = measure(ours_rate, a, b, w, seconds, probe=20)
            theirs, n_theirs = measure(evaluate_rate, a, b, w, seconds, probe=5)
            row: dict[str, Any] = {"matchup": f"{a} vs {b}", "workers": w, "ours_games_per_s": round(ours, 1),
                   "ours_games": n_ours, "evaluate_games_per_s": round(theirs, 1),
                   "evaluate_games": n_theirs, "ratio": round(ours / theirs, 1), "note": note}
            if isolated:
                row.update(_isolated(a, b, w, seconds, folder))
            rows.append(row)
            print(f"  {a} vs {b}, {w} worker(s): ours {ours:.0f}/s, evaluate {theirs:.1f}/s"
                  + (f", isolated {row['isolated_games_per_s']:.0f}/s (floor {row['floor_games_per_s']:.0f}/s)"
                     if isolated else ""), file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """``run_bench``'s rows as a markdown table, with the notes under it."""
    iso = any("isolated_games_per_s" in r for r in rows)
    extra = ((" files | isolated files (games/s) | evaluate on the files (games/s) | isolated / evaluate |"
              " floor (games/s) | floor / evaluate |", "---|---:|---:|---:|---:|---:|") if iso else ("", ""))
    lines = ["| matchup | workers | ours (games/s) | evaluate (games/s) | ours / evaluate |" + extra[0],
             "|---|---:|---:|---:|---:|" + extra[1]]
    for r in rows:
        more = (f" {r['isolated_files']} | {r['isolated_games_per_s']:.0f} | {r['evaluate_files_games_per_s']:.1f} | "
                f"{r['isolated_ratio']:.1f}x | {r['floor_games_per_s']:.0f} | {r['floor_ratio']:.1f}x |" if iso else "")
        lines.append(f"| {r['matchup']} | {r['workers']} | {r['ours_games_per_s']:.0f} | "
                     f"{r['evaluate_games_per_s']:.1f} | {r['ratio']:.1f}x |" + more)
    notes = sorted({r["note"] for r in rows if r["note"]})
    return "\n".join(lines + [f"\nNote: {n}" for n in notes])
