"""``cxforge tournament``: the command-line face of ``tournament.Tournament`` (played by ``run.execute``)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from connectx_forge import options
from connectx_forge.arena import flags
from connectx_forge.arena.openings import DEFAULT_SIZE
from connectx_forge.arena.run import RunInterrupted, execute
from connectx_forge.arena.tournament import Tournament
from connectx_forge.arena.tournament_report import FILES, format_tournament, write_tournament_outputs
from connectx_forge.errors import UserError
from connectx_forge.play import why_lost

HELP = "a round robin or gauntlet on paired openings: W/D/L, pentanomial pairs, Elo with intervals, crash-safe"
EXAMPLE = """\
cxforge tournament lookahead alphabeta kaggle:negamax random --openings 20
cxforge tournament solver net-search net --gauntlet solver --openings 10 -w 2 -o runs/gauntlet
cxforge tournament lookahead random --openings 5 --store runs/t.sqlite --json
cxforge tournament lookahead alphabeta random --openings 20 -n 30 --save games.jsonl
cxforge tournament --store runs/t.sqlite --resume
cxforge tournament lookahead random --openings 20 --dask local -w 2
cxforge tournament lookahead negamax-fast --openings 5 --slowdown 2 --memory 512"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge tournament``."""
    parser.add_argument("players", metavar="PLAYER", nargs="*",
                        help="registered agents, kaggle:random, kaggle:negamax, negamax-fast, project folders, "
                             "or .py or .tar.gz files "
                             "(at least two; none with --resume and --store: the store's last tournament)")
    parser.add_argument("--gauntlet", default=None, metavar="NAME",
                        help="play NAME against each other player only (ratings measured from NAME)")
    parser.add_argument("--openings", type=options.positive_int, default=None, metavar="M",
                        help="play the suite's first M openings, each twice per pairing (default: all "
                             f"{DEFAULT_SIZE} of the default suite; beyond, more positions are labelled by the "
                             "solver, up to minutes each)")
    options.add_games(parser, None, "games to play at most: the schedule's first N, opening by opening (default: "
                                    "all); run again with a larger N to play on")
    flags.add_run_flags(parser, "write report.json, ratings.csv, pairs.csv and ratings.png into the folder DIR",
                        FILES)


def run(args: argparse.Namespace) -> int:
    """Play (or finish) the tournament; print the report, write the files asked for; 0."""
    flags.standard_board(args)
    old = flags.resumed_settings(args, "tournament")
    if old is not None:
        t = replace(old.run_of(Tournament), games=args.games)
    else:
        if len(args.players) < 2:
            raise UserError("give at least two players (or --resume with --store FILE)")
        t = Tournament(tuple(args.players), args.gauntlet, args.plies, args.openings, args.seed, args.band,
                       args.games, flags.game_settings_of(args, args.players))
    writer = flags.game_writer(args)
    try:
        result = execute(t, flags.execution_of(args, writer))
    except RunInterrupted as stop:
        return flags.interrupted(args, stop, writer)
    notes = write_tournament_outputs(result.report, args.out) if args.out is not None else []
    flags.finish(args, result.report.to_json(), result.records(), format_tournament(result.report), notes, writer)
    us = result.report.gauntlet or result.report.players[0]
    lost = sum(p.overall.losses if p.a == us else p.overall.wins for p in result.report.pairs if us in (p.a, p.b))
    why_lost.print_hint("tournament", us, args.save, True, lost, t.game.game)
    return 0
