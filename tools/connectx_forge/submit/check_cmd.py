"""``cxforge check``: the command-line face of ``check_file`` (flags in, report and exit status out)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO

from agents.board import Size
from connectx_forge import options, safe_write
from connectx_forge.arena import flags
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox import jail
from connectx_forge.submit import check
from connectx_forge.submit.check import default_agent
from connectx_forge.submit.check_report import format_report
from connectx_forge.submit.kaggle_game import GameResult
from connectx_forge.submit.verdict import FloorResult

HELP = "play a submission file against Kaggle's random and negamax, loaded as Kaggle loads it"
EXAMPLE = """\
cxforge check                                   # in a project folder: that project; else submissions/submission.py
cxforge check submissions/submission.py
cxforge check ~/bots/mybot                      # a project folder, built on the fly
cxforge check submissions/submission.py -n 40 --max-games 512 --json
cxforge check submissions/submission.py --opponents kaggle:negamax --no-floors   # validity against negamax alone
cxforge check submissions/submission.py --save check-games.jsonl   # then: cxforge logs check-games.jsonl
cxforge check fleet.py --game planet_wars       # another game: its validation episode, then its built-in agents"""
DESCRIPTION = HELP + "\n\n" + (
    "The file is copied alone into an empty temporary folder and loaded by kaggle_environments'\n"
    "loader afresh for each game, in agent hosts: limited child processes that cannot see this\n"
    "project or your credentials, refereed by kaggle_environments' own interpreter.  As on Kaggle\n"
    "it first plays itself once (the validation episode; a failure there fails the check at\n"
    "once), then Kaggle's built-in random and negamax in both seats, -n games each.\n\n"
    "Win-rate floors come from the file's own manifest (submission.py.json beside\n"
    "submission.py; a project's from its cxforge.toml).  Each is decided by a sequential test:\n"
    "while a floor is neither met nor missed, the games against that opponent double (8, 16,\n"
    "32, ...) up to --max-games; a floor is met when the exact (Clopper-Pearson) lower bound of\n"
    "the win rate is at or above it, missed when the upper bound is below it, both at 95%\n"
    "confidence over all the looks (each look spends 5%/K; K looks).  A floor against an\n"
    "opponent that --opponents leaves out is an error: PASS means every floor was met.  Without\n"
    "a manifest, or with --no-floors, only validity is checked; a manifest whose sha256 is not\n"
    "the file's is an error (rebuild).\n\n"
    "Another game (--game, the project's game, or the one the file's manifest names) is checked\n"
    "as Kaggle's competition for it runs it: the validation episode, then the game's built-in\n"
    "agents (the floors', else its first), each game seeded alone; a game that repeats an earlier\n"
    "one against the same agent in the same seat, action for action, is no new evidence for a\n"
    "floor.  The board size, --act-timeout and --overage are ConnectX's.\n\n"
    "Exit status: 0 PASS (no rule broken, every floor met); 1 FAIL (an invalid move, an error,\n"
    "a crash or a timeout, a failed validation episode, or a floor missed); 2 an error (a bad\n"
    "flag, an unknown player, a missing file, a stale manifest); 3 UNDECIDED (no rule broken,\n"
    "no floor missed, but a floor neither met nor missed within --max-games).")


def add_gate_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of the check that ``cxforge upload`` takes too, with the same meaning (``gate_of``)."""
    options.add_games(parser, check.DEFAULT_GAMES, "games per opponent, split evenly across seats: the first batch "
                      "of the floor test, and every game against an opponent without a floor")
    parser.add_argument("--max-games", type=options.positive_int, default=None, metavar="N",
                        help="at most N games per opponent while its floor is undecided (default "
                             f"{check.DEFAULT_MAX_GAMES}, or -n when that is more)")
    options.add_names(parser, "--opponents", None, "Kaggle's built-in agents to play (each with a floor among "
                      "them), written as in a floor (kaggle:random or random); default: ConnectX's "
                      + ",".join(f"kaggle:{o}" for o in check.OPPONENTS) + ", another game's those its floors "
                      "name, else its first built-in agent", metavar="PLAYER")
    options.add_workers(parser, what=check.CHECK_WORKERS)
    options.add_seed(parser, "base seed; each game seeds Python's random from it, so a seed replays a check")
    options.add_progress(parser)


def gate_of(args: argparse.Namespace) -> check.Gate:
    """The check's flags (``add_gate_flags``) as a ``check.Gate``; ``UserError`` for a bad combination."""
    if args.max_games is not None and args.max_games < args.games:
        raise UserError(f"--max-games {args.max_games} is less than --games {args.games}: the cap must be at "
                        "least the first batch")
    return check.Gate(args.games, args.max_games, tuple(args.opponents or ()), args.seed, args.workers)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge check``."""
    parser.description = DESCRIPTION
    parser.add_argument("path", nargs="?", metavar="AGENT",
                        help="a built .py or .tar.gz (main.py at its top), a project folder or source .py (built "
                        "on the fly), or a registered agent (default: the project in the working folder, else "
                        "submissions/submission.py)")
    add_gate_flags(parser)
    parser.add_argument("--no-floors", dest="floors", action="store_false",
                        help="validity only: play -n games per opponent and judge no win-rate floor")
    options.add_json(parser, "print one JSON object instead of the table")
    options.add_save(parser, what="every game (the validation episode first)")
    parser.add_argument("--act-timeout", type=options.positive_float, default=check.KAGGLE_ACT_TIMEOUT, metavar="S",
                        help="seconds per move before overage is used (Kaggle: 2; change only to test)")
    parser.add_argument("--overage", type=float, default=check.KAGGLE_OVERAGE, metavar="S",
                        help="overage bank in seconds per game (Kaggle: 60; change only to test)")
    parser.add_argument("--no-validation", dest="validation", action="store_false",
                        help="skip the validation episode (the file against itself, played first as on Kaggle)")
    options.add_game(parser)
    options.add_size(parser)
    options.add_memory(parser)
    options.add_slowdown(parser)


class GameSaver:
    """``--save``: each check game, as it finishes, one flushed line of a games file (``check.game_record``).
    The file is opened at the first game, so a check that stops before any game leaves no file behind (nor
    empties the file ``--force`` replaces)."""

    def __init__(self, path: Path, append: bool, label: str, size: Size, replace: bool = False) -> None:
        self.path, self.append, self.label, self.size = path, append, label, size
        self.replace = replace and not append
        self.fh: IO[str] | None = None

    def __call__(self, result: GameResult) -> None:
        if self.fh is None:
            try:
                self.fh = safe_write.open_append(self.path, new=not self.append and not self.replace)
                if self.replace:
                    self.fh.truncate(0)
                    self.fh.seek(0)
            except OSError as exc:
                raise UserError(f"--save {self.path}: cannot write it ({exc.strerror or exc})") from None
        self.fh.write(json.dumps(check.game_record(result, self.label, self.size).to_json()) + "\n")
        self.fh.flush()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def run(args: argparse.Namespace) -> int:
    """Check the file and print the report; the exit status of its verdict (0 PASS, 1 FAIL, 3 UNDECIDED)."""
    gate = gate_of(args)
    game = args.game  # None: the game the file was built for (a project's game, in its build's manifest)
    if game is not None:
        catalog.get(game)  # one line, before anything is built
    file = check.submission_of(default_agent(args.path))
    if file.built_here:
        print(f"built {file.label!r} on the fly: {file.file}", file=sys.stderr)
    size = options.size_of(args)
    talk = options.progress_of(args)
    saver = GameSaver(args.save, args.append, file.label, size, args.force) if args.save is not None else None
    try:
        report = check.check_file(file.file, gate,
                                  settings=GameSettings(size, args.act_timeout, args.overage, flags.limits_of(args)),
                                  progress=talk, validation=args.validation, floors=args.floors,
                                  on_look=floor_talk(talk), on_game=saver, game=game)
    finally:
        if saver is not None:
            saver.close()
    print(json.dumps(report.to_json(), indent=2) if args.json else format_report(report))
    if args.slowdown > 1 and not args.json:
        print(jail.slowdown_line(args.slowdown, report.slowed))
    return report.exit_code


def floor_talk(talk: bool) -> check.Look | None:
    """What the check says on stderr after each look at its floors (with progress on): each floor's bounds and
    what comes next."""
    if not talk:
        return None

    def look(floor: FloorResult, action: str) -> None:
        print(f"floor vs {floor.opponent} {floor.floor:.0%}: won {floor.wins}/{floor.games}, bounds "
              f"[{floor.lower:.1%}, {floor.upper:.1%}]: {action}", file=sys.stderr, flush=True)

    return look
