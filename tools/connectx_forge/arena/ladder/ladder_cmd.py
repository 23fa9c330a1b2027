"""``cxforge ladder``: Kaggle's rating process simulated over your candidates and a reference pool; ``--fit``:
its unpublished parameters fitted to real episode lists."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge import options, outputs
from connectx_forge.arena import flags
from connectx_forge.arena.ladder.fit import fit_files, format_fit
from connectx_forge.arena.ladder.ladder_report import FILES, format_ladder, write_ladder_outputs
from connectx_forge.arena.ladder.ladder_run import simulate, stored_ladder
from connectx_forge.arena.ladder.rating import RatingSettings
from connectx_forge.arena.ladder.simulate import DEFAULT_POOL, Ladder
from connectx_forge.arena.run import RunInterrupted
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX, get

HELP = "simulate Kaggle's rating ladder (TrueSkill, mu0 600) over your agents and a pool: predicted score, " \
       "interval, days to settle; --fit its parameters to episode lists"
EXAMPLE = """\
cxforge ladder my-agent --days 10
cxforge ladder ./my_project lookahead --pool random alphabeta solver --days 20 -w 4 -o runs/ladder
cxforge ladder my-agent --store runs/ladder.sqlite --days 30 --resume
cxforge ladder --fit episodes-51234567.json episodes-51234568.json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge ladder``."""
    d = Ladder(players=())
    r = RatingSettings()
    parser.add_argument("players", metavar="PLAYER", nargs="*",
                        help="your candidate submissions, in the order submitted: registered agents, project "
                             "folders, .py or .tar.gz files (none with --resume and --store: the store's last "
                             "ladder; none with --fit)")
    parser.add_argument("--pool", nargs="*", default=list(DEFAULT_POOL), metavar="PLAYER",
                        help=f"the reference pool, each a team of its own (default: {' '.join(DEFAULT_POOL)}, less "
                             "any agent given as a candidate; another game: its built-in agents)")
    parser.add_argument("--days", type=options.positive_int, default=None, metavar="D",
                        help=f"days to simulate (default {d.days}; with --resume alone: the stored ladder's); more "
                             "days on the same store play on")
    parser.add_argument("--per-day", type=options.positive_int, default=d.per_day, metavar="N",
                        help=f"episodes a day per submission (default {d.per_day}, as reported for ConnectX)")
    parser.add_argument("--new-per-day", type=options.positive_int, default=d.new_per_day, metavar="N",
                        help=f"episodes on a submission's first day (default {d.new_per_day})")
    parser.add_argument("--window", type=options.positive_float, default=d.window, metavar="W",
                        help=f"matchmaking: an opponent d points away is drawn with weight exp(-(d/W)^2/2) "
                             f"(default {d.window:g})")
    parser.add_argument("--active", type=options.positive_int, default=None, metavar="N",
                        help="only your latest N submissions play (default: all, as ConnectX)")
    parser.add_argument("--stagger", type=options.nonnegative_int, default=d.stagger, metavar="DAYS",
                        help=f"days between your candidates' submissions (default {d.stagger}: all on day 1)")
    parser.add_argument("--sigma0", type=options.positive_float, default=r.sigma0, metavar="S",
                        help=f"a new submission's sigma (default {r.sigma0:g})")
    parser.add_argument("--beta", type=options.positive_float, default=r.beta, metavar="B",
                        help=f"TrueSkill's performance spread (default {r.beta:g})")
    parser.add_argument("--tau", type=options.nonnegative_float, default=r.tau, metavar="T",
                        help=f"TrueSkill's drift added to sigma before each episode (default {r.tau:g})")
    parser.add_argument("--draw-probability", type=options.nonnegative_float, default=r.draw_probability,
                        metavar="P", help=f"TrueSkill's draw probability between equals (default "
                                          f"{r.draw_probability:g})")
    parser.add_argument("--replicates", type=options.positive_int, default=d.replicates, metavar="R",
                        help=f"replicate ladders on the played outcomes, for the intervals (default {d.replicates})")
    parser.add_argument("--settle", type=options.positive_float, default=d.settle, metavar="POINTS",
                        help=f"settled: the median mu stays within POINTS of its final value (default {d.settle:g})")
    parser.add_argument("--fit", nargs="+", type=Path, default=None, metavar="EPISODES.json",
                        help="fit sigma0, beta, tau and the draw probability to Kaggle episode lists (ListEpisodes "
                             "JSON with initialScore and updatedScore; see docs/ladder.md) instead of simulating")
    options.add_seed(parser, "base seed: matchmaking, seats and each game's seed derive from it")
    options.add_workers(parser)
    flags.add_store_flags(parser)
    flags.add_play_flags(parser)
    options.add_json(parser, "print the report (or the fit) as one JSON object instead of the tables")
    options.add_out(parser, "write report.json and ladder.png into the folder DIR", kind="folder",
                    written=outputs.named(*FILES))
    options.add_save(parser)
    options.add_progress(parser)


def _fit(args: argparse.Namespace) -> int:
    if args.players:
        raise UserError("--fit reads episode lists: give no PLAYER with it")
    result = fit_files(args.fit, mu0=RatingSettings().mu0)
    print(json.dumps(result.to_json()) if args.json else format_fit(result))
    return 0


def run(args: argparse.Namespace) -> int:
    """Simulate (or finish, or extend) the ladder and print its report; or fit its parameters; 0."""
    if args.fit is not None:
        return _fit(args)

    if args.resume and not args.players:
        t = stored_ladder(args.store, args.days)
    else:
        if not args.players:
            raise UserError("give at least one PLAYER (your candidate), or --resume with --store FILE, or --fit")
        rating = RatingSettings(sigma0=args.sigma0, beta=args.beta, tau=args.tau,
                                draw_probability=args.draw_probability)
        game = flags.game_settings_of(args, args.players)
        pool = tuple(args.pool)
        if game.game != CONNECTX and pool == DEFAULT_POOL:  # the pool of another game: its built-in agents
            pool = tuple("kaggle:" + name for name in get(game.game).builtins)
        t = Ladder(tuple(args.players), pool, args.days or Ladder(()).days, args.per_day, args.new_per_day,
                   args.window, args.active, args.stagger, rating, args.seed, args.replicates, args.settle, game)
    writer = flags.game_writer(args)
    try:
        report = simulate(t, flags.execution_of(args, writer))
    except RunInterrupted as stop:
        return flags.interrupted(args, stop, writer)
    if writer is not None:
        writer.close()
    notes = [] if args.out is None else write_ladder_outputs(report, args.out)
    print(json.dumps(report.to_json()) if args.json else format_ladder(report))
    for note in notes:
        print(f"cxforge ladder: note: {note}", file=sys.stderr)
    return 0
