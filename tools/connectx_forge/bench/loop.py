"""Benchmark: games per second of our game loop against kaggle_environments.evaluate.

Run: ``nice cxforge bench loop`` (``--json`` for machine output; ``--isolated`` adds the same matchups
between built submission files: played in agent hosts, a child process per player per game
(``tools/connectx_forge/sandbox``), and by ``evaluate`` given the files' paths, which loads them in its own process).

Both harnesses play the same agent functions, so the ratio measures the loops:
Kaggle's built-in ``random`` against itself, and our ``lookahead`` against
Kaggle's ``random``.  Each is timed at 1 worker and at all cores.  ``evaluate``
has no parallelism of its own; at W workers it runs in W processes, each
evaluating its share of the episodes (the fairest parallel Kaggle baseline).
With files, ``evaluate`` loads each file afresh in every game; we load it once
per worker in a template and fork each game's host from it, charging the load to
move 1 (``tools/connectx_forge/sandbox/template.py``; ``CXFORGE_TEMPLATE=off`` loads afresh too).  Beside them, the
floor (``floor.py``): bare games of the matchup's mean length with a fresh process per player per game and
nothing else, the most any such harness gets from this machine.  Every
measurement first calibrates on a few games, then plays about ``--seconds`` worth of games; pool start-up
is included in the parallel figures.  ``--rounds N`` measures every figure N times, one of each per round,
and keeps the medians: on a shared machine a slow spell then falls on every harness alike.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from connectx_bundler.builder import build, default_root, write
from connectx_forge.arena.match import run_match
from connectx_forge.bench.floor import floor_rate
from connectx_forge.kaggle_env import load
from connectx_forge.play.resolve import reference, resolve, resolve_target
from connectx_forge.play.worker_pool import fork_pool
from connectx_forge.players.player import KAGGLE
from connectx_forge.table import render

MATCHUPS = [("kaggle:random", "kaggle:random"), ("lookahead", "kaggle:random")]


@dataclass(frozen=True)
class GameCounts:
    """How many games each measurement of a row played; the ``isolated`` ones (None: not measured) are the
    built files' (``isolated_files``, "a.py vs b.py") in agent hosts and under ``evaluate``, and the floor's
    games of ``floor_plies`` moves."""

    ours_games: int = 0
    evaluate_games: int = 0
    isolated_files: str | None = None
    isolated_games: int | None = None
    evaluate_files_games: int | None = None
    floor_plies: int | None = None
    floor_games: int | None = None


@dataclass(frozen=True)
class IsolatedRates:
    """The games per second of a row's built files in agent hosts, under ``evaluate``, and of the floor, with
    the first and the floor as ratios to ``evaluate``'s."""

    isolated_games_per_s: float
    evaluate_files_games_per_s: float
    isolated_ratio: float
    floor_games_per_s: float
    floor_ratio: float


@dataclass(frozen=True)
class LoopRow:
    """One matchup at one worker count: ours and ``evaluate``'s games per second (medians over ``rounds``) and
    their ratio, the games played (``counts``), the isolated figures (None: not measured), and each figure's
    ``[min, max]`` by harness where there were several rounds.  ``to_json`` is a row of ``--json``."""

    matchup: str
    workers: int
    ours_games_per_s: float
    evaluate_games_per_s: float
    ratio: float
    note: str = ""
    counts: GameCounts = GameCounts()
    isolated: IsolatedRates | None = None
    rounds: int = 1
    ranges: dict[str, list[float]] | None = None

    def to_json(self) -> dict[str, object]:
        """The flat object of ``--json``: the figures, the counts measured, the rounds and their ranges."""
        out: dict[str, object] = {"matchup": self.matchup, "workers": self.workers,
                               "ours_games_per_s": self.ours_games_per_s,
                               "evaluate_games_per_s": self.evaluate_games_per_s, "ratio": self.ratio,
                               "note": self.note}
        out.update((k, v) for k, v in dataclasses.asdict(self.counts).items() if v is not None)
        if self.isolated is not None:
            out.update(dataclasses.asdict(self.isolated))
        out["rounds"] = self.rounds
        if self.ranges is not None:
            out["ranges"] = self.ranges
        return out


def _evaluate_share(job: tuple[str, str, int]) -> int:
    """Run ``n`` episodes of ``evaluate`` (in a worker process); returns how many ran."""
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


def calibrate(rate: Callable[[str, str, int, int], float], a: str, b: str, workers: int, seconds: float,
              probe: int) -> int:
    """How many games take about ``seconds`` at ``workers``: timed on ``probe`` games in one process."""
    single = rate(a, b, probe, 1)
    return max(probe, workers, math.ceil(single * workers * seconds))


def alternate(timers: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each timer's figure ``rounds`` times, one of each per round: a slow spell of a shared machine falls on
    every harness alike instead of on whichever ran in it."""
    out: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(rounds):
        for name, timer in timers.items():
            out[name].append(timer())
    return out


def built_file(name: str, folder: str) -> str:
    """Agent ``name`` bundled into a submission file in ``folder`` (what ``cxforge build`` writes)."""
    from pathlib import Path

    path = Path(folder) / f"{name}.py"
    write(build(resolve_target(name, default_root())), path)
    return str(path)


def mean_plies(a: str, b: str, games: int = 200) -> float:
    """The mean length in moves of ``a``'s games against ``b`` (played in-process, seeded)."""
    records = run_match(a, b, games, workers=1, seed=0, progress=False).records
    return sum(len(r.moves) for r in records) / len(records)


def _timers(a: str, b: str, w: int, seconds: float,
            folder: str | None) -> tuple[dict[str, Callable[[], float]], GameCounts]:
    """The timers of one row (name -> a call that gives games per second) and the games each plays (and the
    files): ours and ``evaluate`` on the matchup; with ``folder``, also the
    files built there (our ``random`` for ``kaggle:random``) in agent hosts and loaded by ``evaluate``, and
    the floor (``floor.py``) for games of the matchup's mean length."""
    ours_n, theirs_n = calibrate(ours_rate, a, b, w, seconds, 20), calibrate(evaluate_rate, a, b, w, seconds, 5)
    timers: dict[str, Callable[[], float]] = {"ours": lambda: ours_rate(a, b, ours_n, w),
                                              "evaluate": lambda: evaluate_rate(a, b, theirs_n, w)}
    if folder is None:
        return timers, GameCounts(ours_n, theirs_n)
    files = [built_file("random" if reference(x).kind == KAGGLE else x, folder) for x in (a, b)]
    plies = round(mean_plies(a, b))
    iso_n = calibrate(ours_rate, files[0], files[1], w, seconds, 5)
    eval_n = calibrate(evaluate_rate, files[0], files[1], w, seconds, 3)
    floor_n = calibrate(lambda _a, _b, n, k: floor_rate(plies, n, k), "", "", w, seconds, 20)
    timers.update(isolated=lambda: ours_rate(files[0], files[1], iso_n, w),
                  evaluate_files=lambda: evaluate_rate(files[0], files[1], eval_n, w),
                  floor=lambda: floor_rate(plies, floor_n, w))
    return timers, GameCounts(ours_n, theirs_n, " vs ".join(os.path.basename(f) for f in files), iso_n, eval_n,
                              plies, floor_n)


def row_of(a: str, b: str, w: int, figures: dict[str, list[float]], counts: GameCounts,
           note: str = "") -> LoopRow:
    """A table row from each harness's figures (their median; their range where there are several)."""
    med = {name: statistics.median(values) for name, values in figures.items()}
    isolated = None
    if "isolated" in med:
        isolated = IsolatedRates(round(med["isolated"], 1), round(med["evaluate_files"], 1),
                                 round(med["isolated"] / med["evaluate_files"], 1), round(med["floor"], 1),
                                 round(med["floor"] / med["evaluate_files"], 1))
    rounds = len(figures["ours"])
    ranges = ({name: [round(min(v), 1), round(max(v), 1)] for name, v in figures.items()} if rounds > 1
              else None)
    return LoopRow(f"{a} vs {b}", w, round(med["ours"], 1), round(med["evaluate"], 1),
                   round(med["ours"] / med["evaluate"], 1), note, counts, isolated, rounds, ranges)


def run_bench(seconds: float = 3.0, workers_list: list[int] | None = None,
              isolated: bool = False, rounds: int = 1) -> list[LoopRow]:
    """Each matchup's games per second, ours and ``evaluate``'s, at each worker count (progress on stderr).

    ``isolated``: also A as a built submission file, played in agent hosts (``tools/connectx_forge/sandbox``): a child
    process per game, forked from the file's template (its state right after the load, as on Kaggle).
    ``rounds``: each figure measured that many times, the harnesses alternated, and the median kept.
    """
    import tempfile

    rows: list[LoopRow] = []
    cores = os.cpu_count() or 1
    folder = tempfile.mkdtemp(prefix="cxforge-bench-")
    for a, b in MATCHUPS:
        note = ""
        try:
            if reference(a).kind != KAGGLE:
                resolve(a)
        except Exception as exc:  # an agent not written yet
            note = f"{a} is not available ({exc}); measured our random agent instead"
            a = "random"
        for w in workers_list or sorted({1, cores}):
            timers, counts = _timers(a, b, w, seconds, folder if isolated else None)
            row = row_of(a, b, w, alternate(timers, rounds), counts, note)
            rows.append(row)
            iso = row.isolated
            print(f"  {a} vs {b}, {w} worker(s): ours {row.ours_games_per_s:.0f}/s, "
                  f"evaluate {row.evaluate_games_per_s:.1f}/s"
                  + (f", isolated {iso.isolated_games_per_s:.0f}/s (floor {iso.floor_games_per_s:.0f}/s)"
                     if iso is not None else ""), file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def markdown(rows: list[LoopRow]) -> str:
    """``run_bench``'s rows as a markdown table, with the notes under it."""
    iso = any(r.isolated is not None for r in rows)
    headers = ["matchup", "workers", "ours (games/s)", "evaluate (games/s)", "ours / evaluate"]
    if iso:
        headers += ["files", "isolated files (games/s)", "evaluate on the files (games/s)", "isolated / evaluate",
                    "floor (games/s)", "floor / evaluate"]
    cells = []
    for r in rows:
        i = r.isolated
        more = ([r.counts.isolated_files, f"{i.isolated_games_per_s:.0f}", f"{i.evaluate_files_games_per_s:.1f}",
                 f"{i.isolated_ratio:.1f}x", f"{i.floor_games_per_s:.0f}", f"{i.floor_ratio:.1f}x"]
                if i is not None else [""] * 6 if iso else [])
        cells.append([r.matchup, r.workers, f"{r.ours_games_per_s:.0f}", f"{r.evaluate_games_per_s:.1f}",
                      f"{r.ratio:.1f}x", *more])
    lines = [render(headers, cells, "markdown", align="l" + "r" * (len(headers) - 1))]
    notes = sorted({r.note for r in rows if r.note})
    rounds = max((r.rounds for r in rows), default=1)
    if rounds > 1:
        notes.append(f"each figure is the median of {rounds} rounds, the harnesses alternated in each "
                     "(the ranges: --json)")
    return "\n".join(lines + [f"\nNote: {n}" for n in notes])
