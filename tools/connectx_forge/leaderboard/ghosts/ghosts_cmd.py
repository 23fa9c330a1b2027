"""``cxforge ghosts [REPLAYS...]``: the teams the replays show, to play as ``ghost:TEAM``; ``--team`` writes one."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from connectx_forge import options
from connectx_forge.leaderboard.ghosts.agent_file import DEFAULT_FALLBACK, FALLBACK_ENV
from connectx_forge.leaderboard.ghosts.observed_moves import DEFAULT_FOLDER, ENV, load_books
from connectx_forge.leaderboard.ghosts.teams import check_write, table_text, teams_of, write_ghost, written_line
from connectx_forge.sandbox.escape import escape

HELP = ("list the Kaggle teams your replays show, to play as ghost:TEAM (their recorded moves, else a fallback "
        "agent)")
EXAMPLE = """\
cxforge episodes 51234567 --download replays/
cxforge ghosts                         # the teams of ./replays
cxforge match ghost:"Some Team" my-project -n 20
cxforge ghosts replays/ --team "Some Team" --fallback net-search --write ghost.py"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge ghosts``."""
    parser.description = (HELP + f". Replays: the files or folders given; else ${ENV} (paths separated by "
                          f"{os.pathsep!r}); else ./{DEFAULT_FOLDER}. ghost:TEAM in match, tournament, sprt and "
                          f"the other commands reads the same places, with the fallback of ${FALLBACK_ENV} (default "
                          f"{DEFAULT_FALLBACK}).")
    parser.add_argument("replays", nargs="*", metavar="REPLAYS",
                        help=f"Kaggle replay JSON files or folders of them (default: ${ENV}, else ./{DEFAULT_FOLDER})")
    options.add_json(parser, "print the teams as JSON instead of the table")
    parser.add_argument("--team", default=None, metavar="TEAM", help="with --write: the team to write a ghost of")
    parser.add_argument("--fallback", default=None, metavar="NAME",
                        help=f"the agent a ghost plays off its record: a registered agent, a project or a .py "
                             f"(default ${FALLBACK_ENV}, else {DEFAULT_FALLBACK})")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help="write TEAM's ghost as a Kaggle agent file to FILE (an existing FILE is refused "
                             "unless --force), a player of its own for any command")
    options.register_output(parser, "write", "file")


def run(args: argparse.Namespace) -> int:
    """Print the teams, or write one team's ghost; 0."""
    check_write(args.team, args.write, args.force)
    books = load_books(args.replays)
    for line in books.skipped:
        print(f"cxforge: skipped {escape(line)}", file=sys.stderr)
    if args.write is not None:
        book = write_ghost(books, args.team, args.fallback, args.write, args.force)
        print(written_line(book, args.write, args.fallback))
        return 0
    if args.json:
        print(json.dumps({"files": books.files, "teams": teams_of(books)}, indent=2))
        return 0
    print(table_text(books))
    return 0
