"""The teams the replays show (``cxforge ghosts``' table and ``--json`` rows), and one team's ghost written to a
file as a Kaggle agent (tools/connectx_forge/leaderboard/ghosts/agent_file.py makes it)."""

from __future__ import annotations

from pathlib import Path

from connectx_forge import outputs, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.agent_file import ghost_file
from connectx_forge.leaderboard.ghosts.observed_moves import Books, TeamBook
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render as render_table

HEADERS = ("team", "games", "episodes", "positions", "several moves")


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
    outputs.check_output(write, force, "--write", forcing=forcing)


def write_ghost(books: Books, team: str, fallback: str | None, write: Path, replace: bool = False) -> TeamBook:
    """Write ``team``'s ghost (its book, ``fallback`` off it) to ``write`` as a Kaggle agent file (an existing
    file only with ``replace``); its book."""
    book = books.team(team)
    path = ghost_file(book, fallback)
    safe_write.write_text(write, path.read_text(encoding="utf-8"), replace=replace)
    return book


def table_text(books: Books) -> str:
    """The teams as the command prints them: the table, then how many files."""
    return f"{render_table(HEADERS, rows_of(books))}\n{books.files} replay file(s); play one as ghost:TEAM"


def written_line(book: TeamBook, write: Path, fallback: str | None) -> str:
    """What the command says of a ghost it wrote."""
    return (f"{write}: ghost of {escape(book.team)!r} ({book.positions} positions from {book.games} game(s)), "
            f"fallback {fallback or 'default'}")
