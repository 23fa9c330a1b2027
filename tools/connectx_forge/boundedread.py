"""Files a user names, read within bounds before anything parses them.

Every file cxforge is given may come from anyone: a replay, a games file saved
with ``--save``, an episode list, a regressions file, a build manifest,
``cxforge.toml``, ``kaggle.json``.  Read here, such a file is refused with one
line (a ``UserError``) naming the file and the bound it broke when it is:

* not a regular file (a FIFO would hang the read, ``/dev/zero`` never ends);
* larger than its bound, checked by ``fstat`` and again by reading at most one
  byte more than the bound (a file that grows as it is read);
* not UTF-8;
* JSON nested deeper than ``MAX_DEPTH`` levels, or TOML deeper than
  ``MAX_TOML_DEPTH`` (brackets, and the parts of a dotted key): found by a
  linear scan of the text before ``json`` or ``tomllib`` parse it, as both
  recurse once per level (a 200,000-deep list is a ``RecursionError``, a
  100,000-part dotted key makes ``tomllib`` eat gigabytes);
* JSON with an integer of more than 20 digits, NaN, Infinity or a float that
  overflows (``loads``, which also reads an agent host's messages: sandbox/protocol.py);
* a games file of more than ``MAX_GAMES`` lines, or a line longer than
  ``MAX_LINE`` bytes.

What the parsed value holds is checked by its reader; ``board_size`` bounds a
board (``kaggle_environments``' connectx.json sets rows, columns and inarow at
1 or more with no maximum; cxforge reads boards of at most ``MAX_SIDE`` a side,
and an ``inarow`` that fits them), before anything is sized by it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any, TypeGuard

from agents.board import Board, BoardError, Size
from connectx_forge.errors import UserError

PathLike = str | os.PathLike[str]

MIB = 1 << 20
MAX_DOCUMENT = 64 * MIB  # one JSON document: a replay, a list of games, an episode list
MAX_GAMES_FILE = 256 * MIB  # a JSON-lines games file read line by line (--save of match, tournament, sprt)
MAX_SETTINGS = 1 * MIB  # cxforge.toml, pyproject.toml, a build manifest, kaggle.json, tests/regressions.json
MAX_LINE = 1 * MIB  # one line of a games file (a game with its agents' logs is tens of KB)
MAX_GAMES = 1_000_000  # lines of a games file
MAX_DEPTH = 64  # JSON nesting (a Kaggle replay nests 7 deep)
MAX_TOML_DEPTH = 32  # TOML nesting: brackets, and separately the parts of one line's dotted keys
MAX_SIDE = 20  # rows and columns of a board (the leaderboard plays 6x7)
MAX_DIGITS = 20  # the most digits an integer in JSON may have (a 64-bit one has at most 20)
MAX_FLOAT_CHARS = 32  # the longest float literal (a float's repr has at most 24 characters)

# What the TOML scan skips (strings, comments, floats) or counts (brackets, dots of dotted keys, line ends).
# Every string's closing quote is optional, so an unterminated one ends the scan in one match.
_TOML = re.compile(r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"{3,5}|\Z)|\'\'\'[\s\S]*?(?:\'{3,5}|\Z)'
                   r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|\'[^\'\n]*\'?|#[^\n]*'
                   r"|[+-]?\d[\d_]*\.\d[\d_]*(?:[eE][+-]?\d[\d_]*)?|[\[\]{}.\n]")


# a JSON string, its closing quote optional: an unterminated one runs to the end in one match (a required quote
# would make the regex retry from every escaped quote inside it, quadratic in the text's length)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def too_deep(text: str, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` in ``text``, found by counting brackets outside
    strings (a loop, so nothing recurses; linear in the text's length); an unterminated string's brackets do
    not count (json refuses it, having gone no deeper than the brackets before it)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False


def loads(text: str) -> object:
    """``text`` parsed by json with integers of at most ``MAX_DIGITS`` digits, finite floats and no NaN or
    Infinity (``ValueError`` otherwise); call it on text ``too_deep`` passed, as json recurses per level."""
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)


def one_line(exc: BaseException) -> str:
    """An exception's message, on one line and short (it may quote what the agent sent)."""
    return " ".join(str(exc).split())[:100]


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of more than {MAX_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text) if len(text) <= MAX_FLOAT_CHARS else math.inf
    if not math.isfinite(value):
        raise ValueError(f"a number out of range ({text[:20]})")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name}, which JSON does not allow")


def read_bytes(path: PathLike, max_bytes: int, name: str | None = None) -> bytes:
    """The bytes of regular file ``path`` (``name`` in errors, default the path), at most ``max_bytes``."""
    name = name or os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    with open(fd, "rb") as fh:
        mode, size = (info := os.fstat(fd)).st_mode, info.st_size
        if not stat.S_ISREG(mode):
            raise UserError(f"{name}: not a regular file; give a file")
        if size > max_bytes:
            raise too_large(name, max_bytes)
        try:  # what fstat says, and on to one byte past the bound if it grows meanwhile (never a buffer of the bound)
            data = fh.read(size + 1)
            if len(data) > size:
                data += fh.read(max_bytes + 1 - len(data))
        except OSError as exc:
            raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise too_large(name, max_bytes)
    return data


NO_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # what O_NOFOLLOW says of a link


def open_unlinked(path: PathLike) -> int:
    """A read-only descriptor of the file ``path``, opened one component at a time with ``O_NOFOLLOW`` (the
    file with ``O_NONBLOCK``: a FIFO never hangs the open): the rule for a submission file that ``match``,
    ``check``, ``upload`` and ``build`` are given, so that all of them judge the one file the path names.
    ``UserError``, one line, when the file or a folder on the path as given is a symbolic link (but a
    root-owned one directly in ``/``, the system's layout), or it cannot be opened."""
    path = Path(path)
    parts = path.parts
    names = parts[1:] if path.is_absolute() else parts
    if not names:
        raise UserError(f"{path}: not a file")
    folder_flags = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    here = os.open(parts[0] if path.is_absolute() else ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(names):
            last = i == len(names) - 1
            flags = (os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC) if last else folder_flags
            if i == 0 and path.is_absolute() and not last and system_link(name):
                flags &= ~os.O_NOFOLLOW
            try:
                fd = os.open(name, flags, dir_fd=here)
            except OSError as exc:
                raise _open_error(path, names, i, exc) from None
            os.close(here)
            here = fd
        fd, here = here, -1
        return fd
    finally:
        if here >= 0:
            os.close(here)


def system_link(name: str) -> bool:
    """Whether ``/name`` is a link only root could have made directly in ``/`` (``/tmp -> private/tmp``,
    ``/bin -> usr/bin``): the system's layout, followed (as ``safe_write`` does)."""
    try:
        st = os.lstat(os.path.join("/", name))
    except OSError:
        return False
    return stat.S_ISLNK(st.st_mode) and st.st_uid == 0


def _open_error(path: Path, names: tuple[str, ...], i: int, exc: OSError) -> UserError:
    """The one line for a failed open of ``path`` at its component ``names[i]``."""
    where = Path(path.anchor, *names[:i + 1])
    if exc.errno in NO_LINK_ERRORS and where.is_symlink():
        what = "the file" if i == len(names) - 1 else f"the folder {where}"
        return UserError(f"{path}: {what} is a symbolic link; cxforge plays, checks, builds and uploads a "
                         "submission file only where no link leads to it (give the real path)")
    if exc.errno == errno.ENOENT:
        return UserError(f"{path}: no such file")
    return UserError(f"{path}: cannot read it ({exc.strerror or exc})")


def too_large(name: str, max_bytes: int) -> UserError:
    """The one-line error for file ``name`` over its bound of ``max_bytes``."""
    return UserError(f"{name}: larger than {_size(max_bytes)}, the most cxforge reads from such a file")


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n:,} bytes"


def decode(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text; ``UserError`` naming ``name`` when it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{name}: not UTF-8 text (a bad byte at offset {exc.start})") from None


def read_text(path: PathLike, max_bytes: int, name: str | None = None) -> str:
    """``read_bytes`` as UTF-8 text."""
    name = name or os.fspath(path)
    return decode(read_bytes(path, max_bytes, name), name)


def read_positions(path: PathLike) -> list[tuple[str, int]]:
    """The ``(moves, score)`` pairs of a file in Pascal Pons' format (``<moves> <score>`` lines: his benchmark
    sets, ``cxforge bench solver``'s files), read within ``MAX_DOCUMENT``; ``UserError`` names a bad line."""
    name = os.fspath(path)
    out = []
    for no, line in enumerate(read_text(path, MAX_DOCUMENT, name).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise UserError(f"{name}:{no}: expected '<moves> <score>', got {line[:80]!r}")
        try:
            Board.from_pons(parts[0])
            out.append((parts[0], int(parts[1])))
        except (ValueError, BoardError) as exc:
            raise UserError(f"{name}:{no}: {exc}") from None
    return out


def check_depth(text: str, name: str, max_depth: int = MAX_DEPTH) -> None:
    """``UserError`` when JSON ``text`` nests arrays and objects deeper than ``max_depth`` (a scan, no parse)."""
    if too_deep(text, max_depth):
        raise UserError(f"{name}: JSON nested deeper than {max_depth} levels, the most cxforge reads")


def parse_json(text: str, name: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON ``text`` parsed within the bounds (see the module); ``UserError`` naming ``name`` otherwise."""
    check_depth(text, name, max_depth)
    try:
        return loads(text)
    except ValueError as exc:
        raise UserError(f"{name}: not JSON within bounds ({one_line(exc)})") from None


def read_json(path: PathLike, max_bytes: int = MAX_DOCUMENT, name: str | None = None) -> Any:
    """The JSON document in file ``path``, read and parsed within the bounds (see the module)."""
    name = name or os.fspath(path)
    return parse_json(read_text(path, max_bytes, name), name)


def read_lines(path: PathLike, max_bytes: int = MAX_GAMES_FILE, name: str | None = None) -> list[tuple[int, str]]:
    """The non-blank lines of JSON-lines file ``path`` with their numbers (from 1), read one at a time: each at
    most ``MAX_LINE`` bytes, at most ``MAX_GAMES`` of them, ``max_bytes`` in all; not parsed (``parse_json``)."""
    name = name or os.fspath(path)
    data = read_bytes(path, max_bytes, name)
    lines: list[tuple[int, str]] = []
    start = number = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        number += 1
        if end - start > MAX_LINE:
            raise UserError(f"{name}: line {number} is longer than {_size(MAX_LINE)}, the most cxforge reads")
        line = data[start:end]
        start = end + 1
        if line.strip():
            if len(lines) == MAX_GAMES:
                raise UserError(f"{name}: more than {MAX_GAMES:,} lines, the most cxforge reads from one file")
            lines.append((number, decode(line, f"{name}: line {number}")))
    return lines


def read_toml(path: PathLike, max_bytes: int = MAX_SETTINGS, name: str | None = None) -> dict[str, Any]:
    """The TOML document in file ``path``, read and parsed within the bounds (see the module); ``UserError``,
    naming the file, when it breaks one or is not valid TOML."""
    name = name or os.fspath(path)
    return parse_toml(read_text(path, max_bytes, name), name)


def parse_toml(text: str, name: str, max_depth: int = MAX_TOML_DEPTH) -> dict[str, Any]:
    """TOML ``text`` parsed after ``toml_too_deep`` passed it; ``UserError`` naming ``name`` otherwise."""
    if toml_too_deep(text, max_depth):
        raise UserError(f"{name}: TOML nested deeper than {max_depth} levels (arrays and tables, or the parts "
                        "of a dotted key), the most cxforge reads")
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise UserError(f"{name}: not valid TOML ({one_line(exc)}); fix the file's syntax") from None


def toml_too_deep(text: str, limit: int) -> bool:
    """Whether TOML ``text`` nests brackets deeper than ``limit``, or one line's keys have more than ``limit``
    dots: a linear scan that skips strings, comments and floats (so a value's dots do not count)."""
    depth = dots = 0
    for token in _TOML.findall(text):
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
        elif token == ".":
            dots += 1
        elif token == "\n":
            dots = 0
        if depth > limit or dots > limit:
            return True
    return False


def _whole(value: object) -> TypeGuard[int]:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def board_size(rows: object, columns: object, inarow: object, name: str) -> Size:
    """``(rows, columns, inarow)`` when they are ints (not bools) with rows and columns in ``1..MAX_SIDE`` and
    inarow in ``1..max(rows, columns)``; else ``UserError`` naming ``name`` and the bound."""
    values = (rows, columns, inarow)
    if not (_whole(rows) and _whole(columns) and _whole(inarow)):
        raise UserError(f"{name}: the board size is not three integers ({one_line(ValueError(values))})")
    if not (1 <= rows <= MAX_SIDE and 1 <= columns <= MAX_SIDE and 1 <= inarow <= max(rows, columns)):
        raise UserError(f"{name}: a {_short(rows)}x{_short(columns)} board with inarow {_short(inarow)} is beyond "
                        f"what cxforge reads (rows and columns 1 to {MAX_SIDE}, inarow 1 to the longer side)")
    return rows, columns, inarow


def _short(n: int) -> str:
    text = str(n)
    return text if len(text) <= 12 else f"{text[:6]}...({len(text)} digits)"
