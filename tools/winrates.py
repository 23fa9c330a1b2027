"""Benchmark: the README's win-rate table, every listed agent vs ``random`` and ``negamax``.

Run: ``nice .venv/bin/python -m tools.winrates [-n 400] [--agents a b ...] [--rows 10]``;
``--opponents`` takes other player specs, e.g. every classic agent.
Seats are swapped equally; each cell is a seeded ``run_match`` of the game loop.
Prints a markdown table (and ``--json`` writes the raw tallies) with 95% Wilson
intervals, invalid plays and the agent's median and max move time.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from agents.registry import REGISTRY
from tools.errors import UserError
from tools.match import MatchResult, run_match
from tools.players import resolve
from tools.stats import format_rate

OPPONENTS = ("kaggle:random", "kaggle:negamax")


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.1f}"


def table_row(agent: str, results: list[MatchResult]) -> str:
    """One markdown row: the agent's rate, losses and rule breaks vs each opponent, and its move times."""
    cells = [agent]
    times: list[float] = []
    for res in results:
        t = res.tally()
        cells.append(f"{format_rate(t.wins, t.games)} ({t.games} g, {t.losses} L, "
                     f"{t.invalid + t.errors + t.timeouts} inv)")
        times.extend(res.move_times("A"))
    times.sort()
    median = times[len(times) // 2] if times else None
    cells += [_ms(median), _ms(times[-1] if times else None)]
    return "| " + " | ".join(cells) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.winrates", description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--games", type=int, default=400, help="games per opponent (default 400)")
    parser.add_argument("--agents", nargs="+", default=None, help="registered agents (default: all submittable)")
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS),
                        help="player specs to play (default kaggle:random kaggle:negamax)")
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--inarow", type=int, default=4)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the tallies as JSON")
    args = parser.parse_args(argv)
    names = args.agents or [n for n, s in REGISTRY.items() if s.submittable]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        parser.error(f"unknown agents: {', '.join(unknown)}")
    size = (args.rows, args.columns, args.inarow)
    try:
        for spec in args.opponents:
            resolve(spec)
    except UserError as exc:
        parser.error(str(exc))
    print(f"{args.games} games per cell, seats swapped, {size[0]}x{size[1]}x{size[2]}, seed {args.seed}")
    heads = [f"vs {o.removeprefix('kaggle:')}: win % [95% CI]" for o in args.opponents]
    print("| agent | " + " | ".join(heads) + " | median move ms | max move ms |")
    print("|---" * (len(heads) + 3) + "|")
    raw = {}
    for name in names:
        results = [run_match(name, opp, args.games, workers=args.workers, seed=args.seed, size=size,
                             progress=sys.stderr.isatty()) for opp in args.opponents]
        raw[name] = [r.to_json() for r in results]
        print(table_row(name, results), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
