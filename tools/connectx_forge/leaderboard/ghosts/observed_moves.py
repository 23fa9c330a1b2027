"""A team's observed book: every position a replay shows it to move in, and the moves it played there.

Replays are Kaggle's ``env.toJSON()`` files (``cxforge episodes --download DIR``); ``info.TeamNames`` names
the seats.  Where they come from, in order: the paths given (``--replays``, files or folders of ``*.json``);
else the folders or files of ``CXFORGE_REPLAYS`` (separated by ``os.pathsep``); else ``./replays`` (the
folder the docs' ``cxforge episodes ID --download replays/`` fills).  A position is keyed by its board (the
42 cells as digits, row 0 at the top, as ``obs.board``): that is all a player sees, whatever move order led
there.  Only standard 6x7 four-in-a-row games count: a ghost plays Kaggle's board.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agents.board import STANDARD, Board
from agents.registry import did_you_mean
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.games import Game, read_file

ENV = "CXFORGE_REPLAYS"
DEFAULT_FOLDER = Path("replays")


def position_key(board: Board) -> str:
    """A position's key: ``obs.board`` as a string of digits."""
    return "".join(str(c) for c in board.to_grid())


@dataclass
class TeamBook:
    """What one team played: ``moves[key][column] = count``; the games and episodes it was seen in."""

    team: str
    moves: dict[str, Counter[int]] = field(default_factory=dict)
    games: int = 0
    episodes: set[int] = field(default_factory=set)

    @property
    def positions(self) -> int:
        return len(self.moves)

    @property
    def choices(self) -> int:
        """Positions where the team was seen playing more than one move."""
        return sum(1 for c in self.moves.values() if len(c) > 1)

    def to_data(self) -> dict[str, dict[str, int]]:
        """The book as JSON data: key -> {column: count}, sorted (the same replays give the same text)."""
        return {k: {str(c): n for c, n in sorted(v.items())} for k, v in sorted(self.moves.items())}


@dataclass
class Books:
    """Every team's book, and the replay files read."""

    teams: dict[str, TeamBook] = field(default_factory=dict)
    files: int = 0
    skipped: list[str] = field(default_factory=list)  # files that were not standard replays, one line each

    def add(self, game: Game) -> None:
        board = Board(*game.size)
        for mark in (1, 2):
            book = self.teams.setdefault(game.names[mark - 1], TeamBook(game.names[mark - 1]))
            book.games += 1
            if game.episode_id is not None:
                book.episodes.add(game.episode_id)
        for col in game.moves:
            book = self.teams[game.names[board.mark - 1]]
            book.moves.setdefault(position_key(board), Counter())[col] += 1
            board = board.play(col)

    def team(self, name: str) -> TeamBook:
        """The book of team ``name``; one ``UserError`` (with a did-you-mean) when no replay shows it."""
        if name in self.teams:
            return self.teams[name]
        known = sorted(self.teams)
        shown = ", ".join(repr(t) for t in known[:8]) + (" ..." if len(known) > 8 else "")
        raise UserError(f"unknown ghost team {name!r}{did_you_mean(name, known)}; the replays ({self.files} "
                        f"file(s)) show: {shown or 'no team'}")


def replay_paths(given: list[str] | None = None) -> list[Path]:
    """The replay files: ``given`` (files, folders), else ``$CXFORGE_REPLAYS``, else ``./replays``."""
    if given:
        specs = list(given)
    elif os.environ.get(ENV):
        specs = [s for s in os.environ[ENV].split(os.pathsep) if s]
    elif DEFAULT_FOLDER.is_dir():
        specs = [str(DEFAULT_FOLDER)]
    else:
        raise UserError(f"no replays: give them (files or folders of Kaggle replay JSON), set {ENV}, or download "
                        f"them into ./{DEFAULT_FOLDER} with cxforge episodes SUBMISSION_ID --download "
                        f"{DEFAULT_FOLDER}/")
    files: list[Path] = []
    for where in specs:
        path = Path(where).expanduser()
        if path.is_dir():
            files += sorted(p for p in path.glob("*.json") if p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(f"replays {where}: no such file or folder")
    if not files:
        raise UserError(f"no replay files (*.json) in {', '.join(specs)}")
    return files


def load_books(given: list[str] | None = None) -> Books:
    """Every team's book from the replays (see ``replay_paths``); a file that is not a standard ConnectX
    replay is skipped with one line in ``skipped`` (logs and other JSON often sit beside the replays)."""
    books = Books()
    for path in replay_paths(given):
        try:
            games = read_file(path)
        except UserError as exc:
            books.skipped.append(str(exc))
            continue
        replays = [g for g in games if g.replay is not None and g.size == STANDARD]
        if not replays:
            books.skipped.append(f"{path}: no 6x7 ConnectX replay")
            continue
        books.files += 1
        for game in replays:
            books.add(game)
    return books
