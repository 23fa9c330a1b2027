"""``cxforge sprt``: the command-line face of ``sprt_run.Sprt`` (played by ``run.execute``)."""

from __future__ import annotations

import argparse

from connectx_forge import options
from connectx_forge.arena import flags, plots
from connectx_forge.arena.run import RunInterrupted, execute
from connectx_forge.arena.sprt import MODELS
from connectx_forge.arena.sprt_run import BAND, DEFAULT_MAX_GAMES, FILES, PLIES, Sprt, format_sprt
from connectx_forge.arena.tournament_report import make_report_folder, write_json
from connectx_forge.errors import EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED, UserError

EXIT_STATUS = {"H1": EXIT_OK, "H0": EXIT_FAIL, "none": EXIT_UNDECIDED}  # the table of tools/connectx_forge/errors.py
MIN_GAMES = 2  # one pair of games: the least an SPRT counts

HELP = "is NEW stronger than BASE? a sequential test (GSPRT) on paired openings, stopped when it decides"
EXAMPLE = """\
cxforge sprt net-search net --elo0 0 --elo1 10
cxforge sprt lookahead kaggle:negamax -n 200 --save games.jsonl
cxforge sprt lookahead kaggle:negamax --elo0 0 --elo1 20 --alpha 0.05 --beta 0.05 -w 2 -o runs/sprt
cxforge sprt --store runs/arena/sprt.sqlite --resume --json"""


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def pair_count(text: str) -> int:
    """An argparse type: games to play at most, at least ``MIN_GAMES`` (the same line for ``-n 0`` and ``-n 1``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < MIN_GAMES:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_GAMES} (one pair of games), got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge sprt``."""
    parser.add_argument("new", metavar="NEW", nargs="?", help="the candidate: any player spec (see cxforge match)")
    parser.add_argument("base", metavar="BASE", nargs="?", help="the baseline (may be NEW itself)")
    parser.add_argument("--elo0", type=_number, default=0.0, metavar="E0", help="Elo of H0 (default 0)")
    parser.add_argument("--elo1", type=_number, default=10.0, metavar="E1", help="Elo of H1 (default 10)")
    parser.add_argument("--alpha", type=_number, default=0.05, metavar="A",
                        help="false positive rate: accepting H1 when H0 holds (default 0.05)")
    parser.add_argument("--beta", type=_number, default=0.05, metavar="B",
                        help="false negative rate: accepting H0 when H1 holds (default 0.05)")
    parser.add_argument("--model", choices=MODELS, default="normalized",
                        help="what elo0 and elo1 measure: normalized Elo (default, as fastchess and fishtest) or "
                             "logistic Elo")
    parser.add_argument("-n", "--games", type=pair_count, default=DEFAULT_MAX_GAMES, metavar="N",
                        help=f"games to play at most: the test stops undecided after N (default {DEFAULT_MAX_GAMES})")
    parser.add_argument("--openings", type=options.positive_int, default=None, metavar="M",
                        help=f"play the suite's first M openings (default: every opening of the band, "
                             f"{PLIES} plies in {BAND[0]}:{BAND[1]}: labelled by the opening book in under a "
                             "second; give M with --plies 7 or more, whose positions take the solver hours)")
    flags.add_run_flags(parser, "write report.json and llr.png into the folder DIR", FILES, PLIES, BAND)


def run(args: argparse.Namespace) -> int:
    """Run (or finish) the test; print the report, write the files asked for; exit status 0 for H1, 1 for H0, 3
    for no decision within the games allowed or on the suite's distinct games (``EXIT_STATUS``)."""
    flags.standard_board(args)
    old = flags.resumed_settings(args, "sprt")
    if old is not None:
        s = old.run_of(Sprt)
    else:
        if args.new is None or args.base is None:
            raise UserError("give NEW and BASE (or --resume with --store FILE)")
        s = Sprt(args.new, args.base, args.elo0, args.elo1, args.alpha, args.beta, args.model, plies=args.plies,
                 band=args.band, openings=args.openings, seed=args.seed, max_games=args.games,
                 game=flags.game_settings_of(args, (args.new, args.base)))
    writer = flags.game_writer(args)
    try:
        result = execute(s, flags.execution_of(args, writer))
    except RunInterrupted as stop:
        return flags.interrupted(args, stop, writer)
    report = result.report.to_json()
    notes: list[str] = []
    if args.out is not None:
        make_report_folder(args.out)
        write_json(report, args.out / FILES[0])
        skipped = plots.draw(plots.llr_png, report, args.out / FILES[1])
        notes = [skipped] if skipped else []
    flags.finish(args, report, result.records(), format_sprt(result.report), notes, writer)
    return EXIT_STATUS[result.report.result]
