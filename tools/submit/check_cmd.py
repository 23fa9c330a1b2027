"""``cxforge check``: the command-line face of ``check_file`` (flags in, report and exit status out)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge.tools import options
from connectx_forge.tools.submit import check
from connectx_forge.tools.submit.check_report import format_report

DEFAULT_FILE = Path("submissions/submission.py")
HELP = "play a submission file against Kaggle's random and negamax, loaded as Kaggle loads it"
EXAMPLE = """\
cxforge check                                   # in a project folder: that project; else submissions/submission.py
cxforge check submissions/submission.py
cxforge check ~/bots/mybot                      # a project folder, built on the fly
cxforge check submissions/submission.py -n 40 -w 2 --opponents kaggle:negamax --json"""
DESCRIPTION = HELP + "\n\n" + (
    "The file is copied alone into an empty temporary folder and loaded by kaggle_environments'\n"
    "loader afresh for each game, in agent hosts: limited child processes that cannot see this\n"
    "project or your credentials, refereed by kaggle_environments' own interpreter.  As on Kaggle\n"
    "it first plays itself once (the validation episode; a failure there fails the check at\n"
    "once), then Kaggle's built-in random and negamax in both seats.  Exit status 1 when it\n"
    "makes any invalid move, raises, crashes or times out, or is significantly below a win-rate\n"
    "floor of the manifest beside it (submission.json beside submission.py; a project's floors\n"
    "come from its cxforge.toml): over both seats, it fails when the upper end of the 95% Wilson\n"
    "interval of its win rate is below the floor.  Without a manifest, or with one whose sha256\n"
    "is not the file's, only validity is checked.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge check``."""
    parser.description = DESCRIPTION
    parser.add_argument("path", nargs="?", metavar="AGENT",
                        help="a built .py or .tar.gz (main.py at its top), a project folder or source .py (built "
                        "on the fly), or a registered agent (default: the project in the working folder, else "
                        "submissions/submission.py)")
    options.add_games(parser, check.DEFAULT_GAMES, "games per opponent, split evenly across seats")
    options.add_workers(parser, what=check.CHECK_WORKERS)
    options.add_seed(parser, "base seed; each game seeds Python's random from it, so a seed replays a check")
    options.add_json(parser, "print one JSON object instead of the table")
    options.add_names(parser, "--opponents", [f"kaggle:{o}" for o in check.OPPONENTS], "Kaggle's built-in agents "
                      "to play", metavar="PLAYER")
    parser.add_argument("--act-timeout", type=options.positive_float, default=check.KAGGLE_ACT_TIMEOUT, metavar="S",
                        help="seconds per move before overage is used (Kaggle: 2; change only to test)")
    parser.add_argument("--overage", type=float, default=check.KAGGLE_OVERAGE, metavar="S",
                        help="overage bank in seconds per game (Kaggle: 60; change only to test)")
    parser.add_argument("--no-validation", dest="validation", action="store_false",
                        help="skip the validation episode (the file against itself, played first as on Kaggle)")
    options.add_size(parser)
    options.add_memory(parser)
    options.add_slowdown(parser)
    options.add_progress(parser)


def default_agent(spec: str | None) -> str:
    """What a command checks when it is given nothing: the project in the working folder, else the default file."""
    from connectx_forge.build.project import settings_file

    if spec is not None:
        return spec
    return "." if settings_file(Path.cwd()) is not None else str(DEFAULT_FILE)


def run(args: argparse.Namespace) -> int:
    """Check the file and print the report; 0 when it passes, 1 when it fails."""
    opponents = [check.builtin_opponent(o) for o in args.opponents]
    file = check.submission_of(default_agent(args.path))
    if file.built_here:
        print(f"built {file.label!r} on the fly: {file.path}", file=sys.stderr)
    report = check.check_file(file.path, args.games, args.workers, opponents=opponents,
                              act_timeout=args.act_timeout, overage=args.overage, seed=args.seed,
                              progress=options.progress_of(args), validation=args.validation,
                              limits=options.limits_of(args), size=options.size_of(args))
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    if args.slowdown > 1 and not args.json:
        print(options.slowdown_line(args.slowdown, report.slowed))
    return 0 if report.passed else 1
