"""``cxforge match``: the flags parsed into a ``Match`` and an ``Execution``, the run played by ``execute``
(as the notebook's ``match`` plays it), the report printed.

The shared flags come from ``tools/connectx_forge/options`` (-n, -w, --seed, the board size, --json, --save,
--no-progress); Kaggle's time rule (--act-timeout, --overage), --seats, --openings, --isolate and --memory (the
agent hosts of ``tools/connectx_forge/sandbox``) are this command's own; --store, --resume, --new-run and
--mix-versions are the arena's (``tools/connectx_forge/arena/flags.add_store_flags``).  With --store the games
are committed to the results store as they end, and Ctrl-C names the store to resume from; without, they are
kept in memory (``match_run.in_memory``), and Ctrl-C prints the finished games' table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping

from connectx_forge import options
from connectx_forge.arena import flags
from connectx_forge.arena.match import SEATS, MatchInterrupted, PlayedMatch
from connectx_forge.arena.match_report import format_match
from connectx_forge.arena.match_run import Match, in_memory
from connectx_forge.arena.run import NEW_RUN, RunInterrupted, execute, version_lines
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play import why_lost
from connectx_forge.play.records import GameWriter
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.sandbox import jail

HELP = "play games between two agents with Kaggle's rules and report win rates"
EXAMPLE = """\
cxforge match lookahead kaggle:negamax -n 200
cxforge match net improved -n 400 -w 2 --seed 7 --save games.jsonl
cxforge match submissions/submission.py kaggle:random --seats first --json
cxforge match lookahead kaggle:negamax --isolate --memory 512
cxforge match solver net-search --openings 30 -n 60 -w 2 --json
cxforge match lookahead kaggle:negamax -n 200 --store runs/m.sqlite
cxforge match --resume --store runs/m.sqlite"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge match``."""
    parser.add_argument("a", metavar="A", nargs="?",
                        help="player A: a registered agent, kaggle:random, kaggle:negamax, negamax-fast, a project "
                             "folder, or a .py or .tar.gz file (none with --resume and --store: the store's last "
                             "match)")
    parser.add_argument("b", metavar="B", nargs="?", help="player B (same forms)")
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
    options.add_ghosts(parser)
    options.add_game(parser)
    flags.add_store_flags(parser, "default: none, the games are kept only in memory and --save's FILE; run again "
                                  "with the same store to play on to a larger -n")
    options.add_json(parser, "print the summary as JSON instead of the table")
    options.add_save(parser)
    options.add_progress(parser)


def _settings(args: argparse.Namespace) -> Match:
    """The match asked for: the flags', or with ``--resume`` and no players the store's last match's."""
    if args.store is None and (args.resume or args.on_change is not None):
        flag = "--resume" if args.resume else "--new-run" if args.on_change == NEW_RUN else "--mix-versions"
        raise UserError(f"{flag} needs --store FILE: cxforge match keeps its games in a results store only when "
                        "asked (--store FILE)")
    old = flags.resumed_settings(args, "match")
    if old is not None:
        return old.run_of(Match)
    if args.a is None or args.b is None:
        raise UserError("give players A and B (or --resume with --store FILE)")
    game = flags.game_settings_of(args, (args.a, args.b))
    return Match(args.a, args.b, args.games, args.seed, args.seats, args.openings, game)


def run(args: argparse.Namespace) -> int:
    """Play the match (with --store: the games the store lacks; without, in memory), save its games if asked,
    print the report; 0."""
    s = _settings(args)
    writer = flags.writer_of(args)
    how = flags.execution_of(args, writer)
    if args.store is None:
        s, how = in_memory(s, how)
    try:
        stored = execute(s, how)
    except RunInterrupted as stop:
        return flags.interrupted(args, stop, writer)
    except MatchInterrupted as stop:
        if writer is not None:
            writer.close()
        result = stop.result
        print(json.dumps(result.to_json(), indent=2) if args.json else format_match(result))
        kept = f"; {args.save} holds them" if writer is not None else ""
        print(f"cxforge match: interrupted: the table counts the {len(result.records)} finished game(s) of "
              f"{s.games}{kept} (with --store FILE a match resumes where it stopped)", file=sys.stderr)
        return 130
    if args.store is None:
        _report(args, s, stored.result, writer, stored.result.to_json())
        return 0
    notes = version_lines(stored.chosen.mixed, stored.chosen.note)
    _report(args, s, stored.result, writer, stored.to_json())
    for note in notes:
        print(f"cxforge match: {note}", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace, s: Match, result: PlayedMatch, writer: GameWriter | None,
            summary: Mapping[str, object]) -> None:
    """Save the games in order (--save), print the table or the JSON ``summary``."""
    if writer is not None:
        writer.close(result.records)
    print(json.dumps(summary, indent=2) if args.json else format_match(result))
    if s.game.slowdown > 1 and not args.json:
        print(jail.slowdown_line(s.game.slowdown, jail.slowed_games(r.slowed for r in result.records)))
    games = {r.game for r in result.records if r.game}
    why_lost.print_hint("match", result.a, args.save, args.store is not None, result.tally().losses,
                        games.pop() if games else CONNECTX)
