"""``cxforge regress add REPLAYS...`` and ``cxforge regress list``: a project's regression cases from lost games.

``add`` reads Kaggle replays (or episode ids, or games saved with ``--save``), finds our games by team name
(``--us``, repeatable; default the project's name, as ``cxforge review --us`` names us), and for each one we
lost keeps the position of our first losing move in the project's ``tests/regressions.json`` (no duplicates),
and writes ``tests/test_regressions.py`` once: a pytest test, through ``connectx_forge.testing``, that fails
while the project's agent still plays a losing move in any of them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge import options
from connectx_forge.leaderboard.regress import data
from connectx_forge.leaderboard.regress.cases import add_cases, added_text, expand, list_text, project_root
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.review_cmd import add_game_options, load_all
from connectx_forge.sandbox.escape import escape

HELP = ("turn the first losing move of each lost replay into a regression test of your project (add), and list "
        "them (list)")
EXAMPLE = """\
cxforge episodes 51234567 --download replays/
cxforge regress add replays/*.json --us "My Team"
cxforge regress list --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands ``add`` and ``list`` and their flags."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="keep the first losing move of each game we lost",
                         description="keep the first losing move of each game we lost in tests/regressions.json, "
                                     "and write tests/test_regressions.py once",
                         epilog='example:\n  cxforge regress add replays/*.json --us "My Team"')
    add.add_argument("games", nargs="+", metavar="REPLAYS",
                     help="Kaggle replay JSON files or folders of them, episode ids (downloaded), or games saved "
                          "with --save")
    _project(add)
    add.add_argument("--us", action="append", default=None, metavar="NAME",
                     help="our team or player name in the games; repeat for several (default: the project's name)")

    add_game_options(add)
    options.add_json(add, "print the cases added as JSON instead of the summary")
    options.add_progress(add)
    show = sub.add_parser("list", help="show the project's regression cases",
                          description="show the project's regression cases", epilog="example:\n  cxforge regress list")
    _project(show)
    options.add_json(show, "print the cases as JSON instead of the table")


def _project(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", type=Path, default=Path("."), metavar="DIR",
                        help="the agent project (default: the one this folder is in)")


def add(args: argparse.Namespace) -> int:
    """Find the lost games' first losing moves and keep the new ones; 0."""
    root = project_root(args.project)
    games = load_all(expand(args.games), args.episodes)

    def note(line: str) -> None:
        print(f"cxforge: {escape(line)}", file=sys.stderr)

    report, wrote_test = add_cases(root, games, args.us, Labeller(args.engine, args.time_limit), note,
                                   options.progress_of(args))
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0
    print(added_text(root, report, wrote_test))
    return 0


def show(args: argparse.Namespace) -> int:
    """Print the project's cases; 0."""
    root = project_root(args.project)
    cases = data.read(root / data.DATA_FILE)
    if args.json:
        print(json.dumps(cases, indent=2))
        return 0
    print(list_text(root, cases))
    return 0


def run(args: argparse.Namespace) -> int:
    return add(args) if args.action == "add" else show(args)
