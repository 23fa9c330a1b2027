"""The review's labels kept between runs: each position's values, keyed by the position, in the user cache.

A review gives the solver up to ``--time-limit`` seconds a position, so reviewing
the same games again with another output (``--summary``, then ``--html DIR``)
would solve every position again.  Instead every position the solver was asked
about is kept, once labelled, as one JSON line in ``<user cache>/review/labels.jsonl``
(appended through ``safe_write``, in the cache's ``0700`` folder), and the next
review reads it back and solves nothing it holds.

A kept position is used when it is exact (every value known: an exact value
never changes, whatever engine or limit found it), or when it was labelled by
the same engine with at least the time limit asked for now (a longer limit may
label more, so it solves again).

The file is read as any file cxforge is given (``boundedread``: a regular file
within ``MAX_BYTES``, lines within ``MAX_LINE``, JSON within bounds), and each
line is checked before it is used: a value out of range, a column the position
lacks, a torn last line from a stopped run, is skipped.  A file past its bound is
started afresh, with one note.  Never pickle: a line is data, nothing runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TypedDict, TypeGuard

from agents.board import Board
from connectx_forge import boundedread, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.labeller import PositionValues, Value
from connectx_forge.paths import user_cache

MAX_BYTES = 64 * boundedread.MIB  # about 300,000 positions
SOURCES = ("", "rules", "book", "solver")
MAX_SCORE = boundedread.MAX_SIDE * boundedread.MAX_SIDE  # no score is larger than the cells of a board


class CachedLabel(TypedDict):
    """One line of the file: the position's key (``label_key``), the engine (``e``) and time limit (``t``, seconds)
    it was labelled with, its value before the move (``b``) and after each move (``m``, by column), each as
    ``[wdl, score, source]``, the book's move (``bm``) and whether a solve timed out (``to``)."""

    k: str
    e: str
    t: float
    b: list[object]
    m: dict[str, list[object]]
    bm: int | None
    to: bool


def default_path() -> Path:
    """Where the labels are kept: ``<user cache>/review/labels.jsonl``."""
    return user_cache() / "review" / "labels.jsonl"


def label_key(board: Board) -> str:
    """The position's key: its size and Pons' unique ``current + mask``, in hex."""
    return f"{board.rows}x{board.columns}x{board.inarow}:{board.key():x}"


class LabelCache:
    """Positions labelled before, by ``label_key``: read from ``path`` (None: kept in memory only), new ones
    added with ``keep`` and written by ``save``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.entries: dict[str, CachedLabel] = {}
        self.pending: list[str] = []  # lines kept since the last save
        self.hits = 0
        if path is not None and path.exists():
            self._load(path)

    def _load(self, path: Path) -> None:
        """The file's good lines; a file past its bounds is started afresh (one note on stderr)."""
        try:
            lines = boundedread.read_lines(path, MAX_BYTES, str(path))
        except UserError as exc:
            print(f"cxforge review: note: the label cache is not readable ({exc}); starting it afresh",
                  file=sys.stderr)
            safe_write.write_text(path, "", replace=True)
            return
        for _, line in lines:
            try:
                entry = boundedread.parse_json(line, str(path))
            except UserError:
                continue  # a torn line (a run stopped mid-write)
            if _valid(entry):
                self.entries[str(entry["k"])] = entry

    def get(self, board: Board, engine: str, time_limit: float) -> PositionValues | None:
        """The kept values of ``board`` where they may stand for a solve now (see the module), else None."""
        entry = self.entries.get(label_key(board))
        if entry is None:
            return None
        position = _position(entry)
        if sorted(position.moves) != board.legal_moves():
            return None
        exact = position.before.score is not None and all(v.score is not None for v in position.moves.values())
        if not exact and (entry["e"] != engine or entry["t"] < time_limit):
            return None
        self.hits += 1
        return position

    def keep(self, board: Board, position: PositionValues, engine: str, time_limit: float) -> None:
        """Keep ``position``, the values of ``board``, labelled by ``engine`` within ``time_limit`` s."""
        key = label_key(board)
        entry: CachedLabel = {"k": key, "e": engine, "t": time_limit, "b": _value(position.before),
                        "m": {str(c): _value(v) for c, v in position.moves.items()}, "bm": position.book_move,
                        "to": position.timed_out}
        self.entries[key] = entry
        self.pending.append(json.dumps(entry))

    def take(self) -> list[str]:
        """The lines kept since the last ``take`` or ``save`` (a worker hands them to the parent)."""
        lines, self.pending = self.pending, []
        return lines

    def add_lines(self, lines: list[str]) -> None:
        """Lines a worker kept: into memory and to be saved."""
        for line in lines:
            entry = json.loads(line)
            self.entries[str(entry["k"])] = entry
        self.pending.extend(lines)

    def save(self) -> None:
        """Append the lines kept since the last save to the file (none without a path)."""
        lines = self.take()
        if self.path is None or not lines:
            return
        with safe_write.open_append(self.path) as fh:
            fh.write("".join(line + "\n" for line in lines))


def _value(v: Value) -> list[object]:
    return [v.wdl, v.score, v.source]


def _position(entry: CachedLabel) -> PositionValues:
    def value(v: list[object]) -> Value:  # a value _valid_value passed, or _value wrote
        wdl, score, source = v
        return Value(wdl if isinstance(wdl, int) else None, score if isinstance(score, int) else None, str(source))

    return PositionValues(value(entry["b"]), {int(c): value(v) for c, v in entry["m"].items()}, entry["bm"],
                    timed_out=entry["to"])


def _valid_value(v: object) -> bool:
    if not isinstance(v, list) or len(v) != 3:
        return False
    wdl, score, source = v
    return (wdl is None or (type(wdl) is int and wdl in (-1, 0, 1))) and source in SOURCES and \
        (score is None or (type(score) is int and abs(score) <= MAX_SCORE))


def _valid(entry: object) -> TypeGuard[CachedLabel]:
    """Whether a parsed line is an entry ``keep`` writes, every value in range."""
    if not isinstance(entry, dict) or set(entry) != {"k", "e", "t", "b", "m", "bm", "to"}:
        return False
    moves = entry["m"]
    return (isinstance(entry["k"], str) and len(entry["k"]) <= 200 and isinstance(entry["e"], str)
            and type(entry["t"]) in (int, float) and entry["t"] > 0 and _valid_value(entry["b"])
            and isinstance(moves, dict) and len(moves) <= boundedread.MAX_SIDE
            and all(_column(c) is not None and _valid_value(v) for c, v in moves.items())
            and (entry["bm"] is None or (type(entry["bm"]) is int and 0 <= entry["bm"] < boundedread.MAX_SIDE))
            and type(entry["to"]) is bool)


def _column(text: str) -> int | None:
    """A column's number written as a JSON key (ASCII digits, on a board of ``MAX_SIDE`` columns), else None."""
    if not (text.isascii() and text.isdigit() and len(text) <= 2) or int(text) >= boundedread.MAX_SIDE:
        return None
    return int(text)
