"""``cxforge match``: the command-line face of ``run_match`` (flags in, report out, nothing else).

The shared flags come from ``tools/options`` (-n, -w, --seed, the board size,
--json, -o/--out with the old ``--save`` hidden, --no-progress); the flags of
Kaggle's time rule (--act-timeout, --overage), --seats, --openings, --isolate and --memory
(the agent hosts of ``tools/sandbox``) are this command's own.
"""

from __future__ import annotations

import argparse
import json
import sys

from connectx_forge.tools import options
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.match import SEATS, MatchInterrupted, run_match
from connectx_forge.tools.play.players import distinct, resolve
from connectx_forge.tools.play.report import format_match
from connectx_forge.tools.play.rules import ACT_TIMEOUT, OVERAGE, Size, kaggle_number

HELP = "play games between two agents with Kaggle's rules and report win rates"
EXAMPLE = """\
cxforge match lookahead kaggle:negamax -n 200
cxforge match net improved -n 400 -w 2 --seed 7 --save games.jsonl
cxforge match submissions/submission.py kaggle:random --seats first --json
cxforge match lookahead kaggle:negamax --isolate --memory 512
cxforge match solver net-search --openings 30 -n 60 -w 2 --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge match``."""
    parser.add_argument("a", metavar="A", help="player A: a registered agent, kaggle:random, kaggle:negamax, "
                                               "negamax-fast, a project folder, or a .py or .tar.gz file")
    parser.add_argument("b", metavar="B", help="player B (same forms)")
    options.add_games(parser, 100, "games to play; seats alternate")
    options.add_workers(parser)
    options.add_seed(parser, "base seed; the same seed replays the same games")
    options.add_size(parser)
    parser.add_argument("--act-timeout", type=options.positive_float, default=ACT_TIMEOUT, metavar="S",
                        help=f"seconds per move before overage is used (Kaggle: {ACT_TIMEOUT})")
    parser.add_argument("--overage", type=float, default=OVERAGE, metavar="S",
                        help=f"overage seconds per player per game (Kaggle: {OVERAGE})")
    parser.add_argument("--seats", choices=SEATS, default="both",
                        help="A's seat: alternate (both, default), or always first or always second")
    parser.add_argument("--isolate", action="store_true",
                        help="play registered and Kaggle agents in agent hosts too (submission files always are: "
                             "a child process per game, Kaggle's clock enforced from outside, resource limits)")
    parser.add_argument("--openings", type=options.positive_int, default=None, metavar="M",
                        help="start from the 4-ply suite's first M openings (cxforge openings), each played once "
                             "from each seat (with --seats both) and cycled; default: the empty board")
    options.add_memory(parser)
    options.add_slowdown(parser)
    options.add_json(parser, "print the summary as JSON instead of the table")
    options.add_save(parser, old=("-o", "--out"))
    options.add_progress(parser)


def _openings(m: int | None, size: Size, progress: bool) -> tuple[tuple[int, ...], ...]:
    """The suite's first ``m`` openings as columns (a larger suite is labelled once, and cached, when asked)."""
    if m is None:
        return ()
    from agents.board import STANDARD
    from connectx_forge.tools.arena import openings as suites

    if tuple(size) != tuple(STANDARD):
        raise UserError("--openings plays the 6x7 four-in-a-row suite; it cannot be used with another board size")
    suite = suites.load_suite(size=max(suites.DEFAULT_SIZE, m), progress=progress)
    return tuple(tuple(o.columns) for o in suite[:m])


def run(args: argparse.Namespace) -> int:
    """Play the match, save its games if asked, print the report; 0."""
    if args.overage < 0:
        raise UserError(f"--overage must not be negative, got {args.overage:g}")
    a, b = distinct([resolve(args.a), resolve(args.b)])
    openings = _openings(args.openings, options.size_of(args), options.progress_of(args))
    writer = options.writer_of(args)
    try:
        result = run_match(a, b, args.games, args.workers, args.seed, options.size_of(args),
                           act_timeout=kaggle_number(args.act_timeout), overage=kaggle_number(args.overage),
                           progress=options.progress_of(args), seats=args.seats,
                           isolate=args.isolate or args.slowdown > 1,  # only a host can be slowed down
                           limits=options.limits_of(args), openings=openings,
                           on_game=writer.add if writer is not None else None)
    except MatchInterrupted as stop:
        if writer is not None:
            writer.close()
        result = stop.result
        print(json.dumps(result.to_json(), indent=2) if args.json else format_match(result))
        kept = f"; {args.save} holds them" if writer is not None else ""
        print(f"cxforge match: interrupted: the table counts the {len(result.records)} finished game(s) of "
              f"{args.games}{kept}", file=sys.stderr)
        return 130
    if writer is not None:
        writer.close(result.records)
    print(json.dumps(result.to_json(), indent=2) if args.json else format_match(result))
    if args.slowdown > 1 and not args.json:
        print(options.slowdown_line(args.slowdown, options.slowed_games(r.slowed for r in result.records)))
    return 0
