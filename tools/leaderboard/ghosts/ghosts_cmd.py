"""``cxforge ghosts [REPLAYS...]``: the teams the replays show, to play as ``ghost:TEAM``; ``--team`` writes one."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from connectx_forge import options, outputs, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.agent_file import DEFAULT_FALLBACK, FALLBACK_ENV, ghost_file
from connectx_forge.leaderboard.ghosts.observed_moves import DEFAULT_FOLDER, ENV, Books, TeamBook, load_books
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render as render_table

HELP = ("list the Kaggle teams your replays show, to play as ghost:TEAM (their recorded moves, else a fallback "
        "agent)")
EXAMPLE = """\
cxforge episodes 51234567 --download replays/
cxforge ghosts                         # the teams of ./replays
cxforge match ghost:"Some Team" my-project -n 20
cxforge ghosts replays/ --team "Some Team" --fallback net-search --write ghost.py"""

HEADERS = ("team", "games", "episodes", "positions", "several moves")


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


def rows_of(books: Books) -> list[list[object]]:
    """One row a team, by games played then name."""
    teams = sorted(books.teams.values(), key=lambda b: (-b.games, b.team))
    return [[escape(b.team), b.games, len(b.episodes), b.positions, b.choices] for b in teams]


def teams_of(books: Books) -> list[dict[str, object]]:
    """The teams as ``--json`` prints them: one dict a row of ``rows_of``, keyed by ``HEADERS``."""
    keys = [h.replace(" ", "_") for h in HEADERS]
    return [dict(zip(keys, r, strict=True)) for r in rows_of(books)]


def check_write(team: str | None, write: Path | None, force: bool = False, forcing: str = "--force") -> None:
    """``UserError`` unless ``--team`` and ``--write`` come together, to a file that does not exist yet (or
    ``force``: ``--force`` replaces it; ``forcing``: how the caller says it)."""
    if (team is None) != (write is None):
        raise UserError("--team TEAM and --write FILE go together: the team's ghost, written to FILE")
    outputs.check_file(write, force, "--write", forcing=forcing)


def write_ghost(books: Books, team: str, fallback: str | None, write: Path, replace: bool = False) -> TeamBook:
    """Write ``team``'s ghost (its book, ``fallback`` off it) to ``write`` as a Kaggle agent file (an existing
    file only with ``replace``); its book."""
    book = books.team(team)
    path = ghost_file(book, fallback)
    safe_write.write_text(write, path.read_text(encoding="utf-8"), replace=replace)
    return book


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


def table_text(books: Books) -> str:
    """The teams as the command prints them: the table, then how many files."""
    return f"{render_table(HEADERS, rows_of(books))}\n{books.files} replay file(s); play one as ghost:TEAM"


def written_line(book: TeamBook, write: Path, fallback: str | None) -> str:
    """What the command says of a ghost it wrote."""
    return (f"{write}: ghost of {escape(book.team)!r} ({book.positions} positions from {book.games} game(s)), "
            f"fallback {fallback or 'default'}")
