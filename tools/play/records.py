"""Games on disk: one ``GameRecord`` per JSON line (what ``--save FILE`` writes in every command that plays).

A line is ``GameRecord.to_json()``; ``load_records`` reads a file back into
records that replay, tally and report like fresh ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.game import GameRecord

PathLike = str | os.PathLike[str]


def save_records(records: Iterable[GameRecord], path: PathLike) -> None:
    """Write one JSON line per game to ``path``; ``UserError`` when it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec.to_json()) + "\n")
    except OSError as exc:
        raise UserError(f"cannot write {os.fspath(path)}: {exc.strerror or exc}") from None


class GameWriter:
    """Games written to a JSONL file as they finish, each line flushed: a crash or Ctrl-C keeps them.

    ``close(records)`` rewrites the games this writer added with ``records`` in order (a finished run's games
    sorted by index); an interrupted run leaves the lines in finishing order.  A file that exists is never
    replaced: ``UserError`` unless ``append``, which adds the games after its lines and leaves those alone.
    """

    def __init__(self, path: PathLike, append: bool = False) -> None:
        self.path = os.fspath(path)
        try:
            self.fh = open(self.path, "a" if append else "x", encoding="utf-8")
            self.start = self.fh.tell()
            if self.start and not _ends_with_newline(self.path):
                self.fh.write("\n")
                self.start = self.fh.tell()
        except FileExistsError:
            raise UserError(f"--save {self.path}: the file exists and --save never replaces a file; add --append "
                            "to add the games to its end, or give another name") from None
        except OSError as exc:
            raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.count = 0

    def add(self, rec: GameRecord) -> None:
        self.fh.write(json.dumps(rec.to_json()) + "\n")
        self.fh.flush()
        self.count += 1

    def close(self, records: Iterable[GameRecord] | None = None) -> None:
        """Close the file; with ``records``, its lines from this writer are replaced by theirs, in order."""
        self.fh.close()
        if records is None:
            return
        try:
            with open(self.path, "r+", encoding="utf-8") as fh:
                fh.seek(self.start)
                fh.truncate()
                for rec in records:
                    fh.write(json.dumps(rec.to_json()) + "\n")
        except OSError as exc:
            raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def load_records(path: PathLike) -> list[GameRecord]:
    """The games of a file ``save_records`` wrote, in file order."""
    with open(path, encoding="utf-8") as fh:
        return [GameRecord.from_json(json.loads(line)) for line in fh if line.strip()]


def read_games(path: PathLike) -> list[GameRecord]:
    """``load_records`` for a file a user names: ``UserError`` (one line) when it cannot be read or is no games
    file."""
    try:
        return load_records(path)
    except OSError as exc:
        raise UserError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{os.fspath(path)}: not a games file written with --save ({exc})") from None
