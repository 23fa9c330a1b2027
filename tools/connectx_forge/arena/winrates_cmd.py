"""``cxforge winrates``: the command-line face of the win-rate table (tools/connectx_forge/arena/winrates.py).

Prints BENCHMARKS.md's markdown table; ``--json`` prints the raw match summaries
as JSON instead, ``-o PATH`` also writes them to a file.
"""

from __future__ import annotations

import argparse
import json

from connectx_forge import options, safe_write
from connectx_forge.arena import flags
from connectx_forge.arena.winrates import OPPONENTS, default_agents, summaries, win_rates

HELP = "a win-rate table: agents against Kaggle's random and negamax (or others), seats swapped"
EXAMPLE = """\
nice cxforge winrates --agents net lookahead -n 400
cxforge winrates --agents solver --opponents kaggle:negamax negamax-fast -n 100 -w 2 -o solver.json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge winrates``."""
    options.add_games(parser, 400, "games per opponent")
    options.add_names(parser, "--agents", None, "the table's rows: registered agents, project folders or files "
                      "(default: every submittable registered agent)")
    options.add_names(parser, "--opponents", list(OPPONENTS), "its columns: any players", metavar="PLAYER")
    options.add_size(parser)
    options.add_workers(parser)
    options.add_seed(parser, "base seed of every match")
    options.add_json(parser, "print the match summaries as JSON instead of the table")
    options.add_out(parser, "also write the match summaries as JSON to PATH")
    options.add_save(parser)
    options.add_progress(parser)


def run(args: argparse.Namespace) -> int:
    """Play the table's matches; print the table (or JSON), write the file if asked."""
    to_stdout, out = args.json, args.out
    writer = flags.writer_of(args)
    try:
        matches = win_rates(args.agents or default_agents(), args.opponents, args.games, args.workers, args.seed,
                        options.size_of(args), options.progress_of(args), table=not to_stdout,
                        on_game=writer.add if writer is not None else None)
    finally:
        if writer is not None:
            writer.close()
    raw = summaries(matches)
    if to_stdout:
        print(json.dumps(raw, indent=1))
    if out is not None:
        safe_write.write_text(out, json.dumps(raw, indent=1), replace=True)  # --force: options.prepare
    return 0
