"""An SQLite file that anyone may have written, opened as data and queried under a deadline.

A results store is a file a teammate, a shared run folder or a download may
hand over.  SQLite runs code from a file's schema: a trigger on a write, a
view or a generated column on a read, a CHECK or a default, an index on an
expression; and a damaged or crafted b-tree can make a read long.  So a file
opened here (``SqliteFile``) is:

* refused in one line, naming the file, when it is not a regular file, is
  larger than ``MAX_BYTES``, or does not begin with SQLite's header;
* opened with ``trusted_schema=OFF`` (no function or virtual table runs from
  the schema), ``cell_size_check=ON`` (a damaged page is an error, not a
  wild read), no memory map, and a value at most ``MAX_VALUE`` bytes;
* compared, before any statement reads or writes a row, with the schema its
  caller makes (``schema``): every table and index must be one of those, with
  the same SQL, or SQLite's own index of a primary key; a trigger, a view, a
  virtual table or any other table or index is refused in one line naming it;
* queried under a deadline (``seconds``, per statement): a progress handler
  stops a statement past it, one line; Ctrl-C stops a statement at once (the
  handler's KeyboardInterrupt aborts it, and it is raised again here); a lock
  held by another process is waited for in short steps, so Ctrl-C and the
  deadline hold then too.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from connectx_forge import boundedread
from connectx_forge.errors import UserError

HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
MAX_BYTES = 8 << 30  # a store of a million games with their logs is a few GB
MAX_VALUE = 4 * boundedread.MAX_LINE + 4096  # bytes of one value or row: a stored game of MAX_LINE characters
QUERY_SECONDS = 120.0  # one statement's deadline
STEPS = 20_000  # SQLite virtual-machine steps between two looks at the deadline and Ctrl-C (about a millisecond)
LOCK_WAIT = 0.05  # seconds SQLite itself waits for a lock before this module waits again (interruptibly)
BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
T = TypeVar("T")


class SqliteFile:
    """The SQLite database at ``path`` (created when it does not exist), checked against ``schema`` (SQL of
    ``CREATE TABLE IF NOT EXISTS`` and ``CREATE INDEX IF NOT EXISTS`` statements, which are run to make what is
    missing); ``UserError`` in one line naming the file for a file that is not such a database."""

    def __init__(self, path: Path | None, schema: str, seconds: float = QUERY_SECONDS) -> None:
        self.path, self.seconds = path if path is not None else Path(":memory:"), seconds
        self.deadline, self.timed_out = 0.0, False
        if path is not None:
            _check_file(path)
        try:
            uri = "file::memory:" if path is None else "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=rwc"
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=LOCK_WAIT)
        except sqlite3.Error as exc:
            raise UserError(f"store {path}: cannot open it: {boundedread.one_line(exc)}") from None
        try:
            self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE)
            self.db.set_progress_handler(self._progress, STEPS)
            for pragma in ("trusted_schema=OFF", "cell_size_check=ON", "mmap_size=0"):
                self.run(f"PRAGMA {pragma}")
            self._check_schema(schema)
            self.run("PRAGMA journal_mode=WAL")
            self.run("PRAGMA synchronous=NORMAL")
            self._guarded(lambda: self.db.executescript(schema))
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def rows(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        """The rows of one statement, read under the deadline (each a tuple of whatever the file holds: its
        readers check every column)."""
        return self._guarded(lambda: self.db.execute(sql, params).fetchall())

    def run(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """Run one statement under the deadline; the rows it changed."""
        return self._guarded(lambda: self.db.execute(sql, params).rowcount)

    def _check_schema(self, schema: str) -> None:
        """Refuse, in one line, an object of the file's schema that ``schema`` does not make as it is."""
        expected = made_by(schema)
        for kind, name, sql in self.rows("SELECT type, name, sql FROM sqlite_master"):
            if (kind, name) not in expected:
                raise UserError(f"store {self.path} holds a {kind} {name!r}: not one the toolkit makes; refusing it")
            if expected[(kind, name)] != sql:
                raise UserError(f"store {self.path}: its {kind} {name!r} is not the one this version of cxforge "
                                "makes (a store of an earlier version, or one changed by hand); refusing it")

    def _progress(self) -> int:
        """SQLite's progress handler: nonzero (stop the statement) once the deadline has passed."""
        if time.monotonic() > self.deadline:
            self.timed_out = True
            return 1
        return 0

    def _guarded(self, action: Callable[[], T]) -> T:
        """``action`` (one statement) under the deadline, a lock waited for in short steps; ``UserError`` in
        one line for any SQLite error, ``KeyboardInterrupt`` for Ctrl-C."""
        self.deadline, self.timed_out = time.monotonic() + self.seconds, False
        while True:
            try:
                return action()
            except sqlite3.Error as exc:
                code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
                if code in BUSY and time.monotonic() < self.deadline:
                    time.sleep(LOCK_WAIT)
                    continue
                if code == sqlite3.SQLITE_INTERRUPT and not self.timed_out:
                    raise KeyboardInterrupt from None  # the handler's KeyboardInterrupt, which sqlite3 swallows
                raise self._error(exc) from None

    def _error(self, exc: sqlite3.Error) -> UserError:
        if self.timed_out:
            return UserError(f"store {self.path}: a query ran past its deadline of {self.seconds:g} s (a store too "
                             "large or damaged); refusing it")
        return UserError(f"store {self.path}: not a readable results store ({boundedread.one_line(exc)})")


def made_by(schema: str) -> dict[tuple[str, str], str | None]:
    """What ``schema`` makes, as ``sqlite_master`` lists it: (type, name) -> its SQL (None for the indexes
    SQLite makes itself for a primary key or a UNIQUE constraint)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        return {(kind, name): sql for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master")}
    finally:
        db.close()


def _check_file(path: Path) -> None:
    """Refuse in one line a ``path`` that is there but is not a regular file of SQLite's format within
    ``MAX_BYTES`` (an empty file is an empty database)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"store {path}: cannot read it: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"store {path}: not a regular file; refusing it")
        if info.st_size > MAX_BYTES:
            raise UserError(f"store {path}: {info.st_size:,} bytes, more than a results store may hold "
                            f"({MAX_BYTES:,}); refusing it")
        head = os.read(fd, len(HEADER))
    finally:
        os.close(fd)
    if head and head != HEADER:
        raise UserError(f"store {path}: not an SQLite database (it does not begin with SQLite's header); "
                        "refusing it")
