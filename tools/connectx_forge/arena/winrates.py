"""Benchmark: the win-rate table of BENCHMARKS.md, every listed agent vs ``random`` and ``negamax``.

Run: ``nice cxforge winrates [-n 400] [--agents a b ...] [--rows 10]``;
``--opponents`` takes other player specs, e.g. every classic agent.
Seats are swapped equally; each cell is a seeded ``run_match`` of the game loop.
Prints a markdown table (``-o PATH`` also writes the raw tallies, ``--json``
prints them instead) with 95% Wilson intervals, invalid plays and the agent's
median and max move time.  The command line is tools/connectx_forge/arena/winrates_cmd.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from agents.board import STANDARD, Size
from agents.registry import REGISTRY
from connectx_forge import progress as bars
from connectx_forge import table as tables
from connectx_forge.arena.match import MatchJson, PlayedMatch, run_match
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.resolve import resolve
from connectx_forge.play.settings import GameSettings
from connectx_forge.stats import format_rate

OPPONENTS = ("kaggle:random", "kaggle:negamax")


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.1f}"


def winrates_row(agent: str, results: list[PlayedMatch]) -> list[str]:
    """One row's cells: the agent's rate, losses and rule breaks vs each opponent, and its move times."""
    cells = [agent]
    times: list[float] = []
    for res in results:
        t = res.tally()
        cells.append(f"{format_rate(t.wins, t.games)} ({t.games} g, {t.losses} L, "
                     f"{t.invalid + t.errors + t.timeouts + t.crashes} inv)")
        times.extend(res.move_times("A"))
    times.sort()
    median = times[len(times) // 2] if times else None
    cells += [_ms(median), _ms(times[-1] if times else None)]
    return cells


def headers(opponents: Sequence[str]) -> list[str]:
    """The table's header: the agent, its win rate against each opponent, its move times."""
    return ["agent", *(f"vs {resolve(o).label}: {tables.WIN_RATE}" for o in opponents), "median move ms",
            "max move ms"]


def winrates_table(rows: Sequence[Sequence[str]], opponents: Sequence[str], color: bool | None = None) -> str:
    """The rows (``winrates_row``) as the Markdown table of ``tools/connectx_forge/table``."""
    return tables.render(headers(opponents), rows, "markdown", align="l" * (len(opponents) + 1) + "rr", color=color)


def default_agents() -> list[str]:
    """The registered agents meant for submission: the table's rows unless others are named."""
    return [n for n, s in REGISTRY.items() if s.submittable]


def win_rates(names: Sequence[str], opponents: Sequence[str] = OPPONENTS, games: int = 400,
              workers: int | None = None, seed: int = 0, size: Size = STANDARD,
              progress: bool = True, table: bool = True,
              on_game: Callable[[GameRecord], None] | None = None) -> dict[str, list[PlayedMatch]]:
    """Play every agent against every opponent; print the Markdown table when done (unless ``table`` is False).

    Returns each agent's matches, in opponent order (``summaries``: as ``--json`` prints them).
    """
    for spec in [*names, *opponents]:
        resolve(spec)  # a bad spec: one clear line before any game
    if table:
        print(f"{games} games per cell, seats swapped, {size[0]}x{size[1]}x{size[2]}, seed {seed}", flush=True)
    raw: dict[str, list[PlayedMatch]] = {}
    rows = []
    cells = len(names) * len(opponents)
    if progress:
        print(f"cxforge winrates: {bars.count(cells * games, 'game')}, {bars.count(cells, 'match', 'matches')} of "
              f"{games:,} ({', '.join(names)} against {', '.join(opponents)}); each match's line says how long",
              file=sys.stderr, flush=True)
    for name in names:
        results = []
        for opp in opponents:
            results.append(run_match(name, opp, games, workers=workers, seed=seed, settings=GameSettings(size),
                                     progress=progress, on_game=on_game))
            if progress and name == names[0] and len(results) == 1 and cells > 1:
                took = results[0].seconds
                print(f"cxforge winrates: the first match took {took:.1f} s: {bars.about(took * cells)} for all "
                      f"{cells}", file=sys.stderr, flush=True)
        raw[name] = results
        rows.append(winrates_row(resolve(name).label, results))
    if table:
        print(winrates_table(rows, opponents))
    return raw


def summaries(matches: dict[str, list[PlayedMatch]]) -> dict[str, list[MatchJson]]:
    """Each agent's match summaries (``PlayedMatch.to_json``), as ``cxforge winrates --json`` prints them."""
    return {name: [m.to_json() for m in results] for name, results in matches.items()}
