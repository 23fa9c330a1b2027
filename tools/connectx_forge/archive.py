"""A ``.tar.gz`` submission, read by our own rules: ``main.py`` at its top, only plain files and folders.

The archive comes from anyone (``cxforge check``/``play`` are given files from the
internet), so nothing in it is trusted and tarfile's extraction (even with
``filter="data"``, which a crafted archive defeats on some Python versions, as in
CVE-2025-4517) is never used.  Reading is two passes over one open file:

1. ``members``: every header is read and judged before anything is written (a
   member on its own as its header is read, so a bomb stops at its header; name
   clashes once all names are known); a member that breaks a rule is refused
   with ONE ``UserError`` line that names the archive, the member and what to do;
2. ``unpack`` only: the accepted files are written by this module, one folder
   at a time under the destination (never through a link), each file created
   anew (``O_EXCL|O_NOFOLLOW``) and filled with exactly its declared size.

The rules: a member is a regular file or a folder, nothing else (no symbolic or
hard link, device, fifo, sparse or other type).  Its name is relative and
normalised: not empty, no control character, no leading ``/``, no empty, ``.``
or ``..`` component (``a//b``, ``a/./b``, ``a/../b`` are refused) -- except that
ONE leading ``./`` is stripped, as ``tar -C folder .`` writes it, and the member
``./`` itself (the top folder) is skipped.  No two members share a name, no
file's name is used as a folder by another member, and no name passes through a
place where credentials are kept (``runtime.CREDENTIALS``).  The bounds (module
constants) keep the work finite: the archive's size, the member count, the sum
of the files' sizes, a name's depth (``MAX_DEPTH`` names: nothing walks a
10,000-deep tree), the decompressed bytes read per pass (a gzip bomb stops
there) and the largest single header (tarfile reads a pax or long-name header
whole, in memory).  Files are written 0o644 (0o755 with an execute bit),
folders 0o755; owners, times and setuid bits are never kept.

``copy_tree`` copies an unpacked submission (``check``'s stage, into each
game's folder) by the same rules and bounds, walking it without recursion, and
refuses a folder that shows a home folder or credentials
(``credentials.exposes``).  ``main_alone`` reads the ``main.py`` of an archive
that holds nothing else (``cxforge build`` repacking a built one).  So
``check``, ``match`` and ``build`` accept the same archives.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from connectx_forge.credentials import exposes
from connectx_forge.errors import UserError
from connectx_forge.runtime import credential_in

NO_MAIN = "no main.py at the top of the archive (Kaggle runs main.py)"
REBUILD = "rebuild it with `cxforge build --format tar.gz`"
ONLY_PLAIN = "a submission archive may hold only regular files and folders, under plain relative names, each once"

MIB = 1 << 20
MAX_ARCHIVE_BYTES = 512 * MIB  # the .tar.gz file itself (Kaggle takes a submission of at most 100 MB)
MAX_MEMBERS = 10_000  # members of any kind
MAX_UNPACKED_BYTES = 512 * MIB  # the sum of the files' declared sizes
MAX_TAR_BYTES = MAX_UNPACKED_BYTES + 64 * MIB  # decompressed bytes read per pass: files, headers, padding
MAX_HEADER_BYTES = MIB  # the largest single read tarfile may ask for (a pax or GNU long-name header)
MAX_NAME_BYTES = 1024  # a member's whole name, encoded
MAX_DEPTH = 32  # the names in a member's path: its folders and itself
MAX_PART_BYTES = 255  # one component of a name (NAME_MAX)
CHUNK = 1 << 16
FILE_MODE, EXEC_MODE, DIR_MODE = 0o644, 0o755, 0o755

PLAIN_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)
TYPE_WORDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a device node",
              tarfile.BLKTYPE: "a device node", tarfile.FIFOTYPE: "a fifo", tarfile.CONTTYPE: "a contiguous file",
              tarfile.GNUTYPE_SPARSE: "a sparse file"}


@dataclass(frozen=True)
class Member:
    """An accepted member: its normalised name, whether it is a folder, its size, where its bytes start, its mode."""

    name: str
    is_dir: bool
    size: int
    offset: int
    mode: int


class _Exhausted(Exception):
    """The decompressed stream asked for more work than a bound allows."""


class _Budget:
    """The decompressed tar stream as tarfile sees it (read, seek, tell), counting the bytes each pass costs.

    A forward seek costs its distance (gzip decompresses what it skips), a
    backward one its target (gzip starts again from the top).  A read larger
    than ``MAX_HEADER_BYTES`` is refused before it is made, so a forged header
    cannot make tarfile hold gigabytes.
    """

    def __init__(self, stream: gzip.GzipFile, limit: int) -> None:
        self._stream, self._limit, self._pos, self.spent = stream, limit, 0, 0

    def _spend(self, amount: int) -> None:
        if self.spent + amount > self._limit:
            raise _Exhausted(f"reading it would decompress more than {self._limit} bytes (a gzip bomb?)")
        self.spent += amount

    def read(self, size: int = -1, /) -> bytes:
        if size < 0 or size > MAX_HEADER_BYTES:
            raise _Exhausted(f"it holds a header or read larger than {MAX_HEADER_BYTES} bytes")
        self._spend(size)
        data = self._stream.read(size)
        self._pos += len(data)
        return data

    def seek(self, pos: int, whence: int = os.SEEK_SET, /) -> int:
        if whence != os.SEEK_SET or pos < 0:
            raise _Exhausted("tarfile asked for an unexpected seek")
        self._spend(pos - self._pos if pos >= self._pos else pos)
        self._pos = self._stream.seek(pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def write(self, data: bytes, /) -> int:
        raise OSError("a submission archive is read only")

    def close(self) -> None:
        """The stream belongs to ``_opened``, which closes it."""


def shown(name: str) -> str:
    """A member's name for a one-line message: quoted, control characters escaped, long names cut."""
    text = repr(name)
    return text if len(text) <= 120 else text[:117] + "..."


def refusal(source: Path, name: str, problem: str) -> UserError:
    """The one line that refuses ``source`` because of its member ``name``."""
    return UserError(f"{source}: member {shown(name)} {problem}; {ONLY_PLAIN}: {REBUILD}")


def unreadable(source: Path, why: object) -> UserError:
    return UserError(f"{source}: not a readable .tar.gz ({why})")


def type_problem(member: tarfile.TarInfo) -> str | None:
    """Why ``member`` is not a plain file or folder; ``None`` when it is one."""
    if member.type == tarfile.DIRTYPE:
        return None
    if member.type in PLAIN_FILE_TYPES:
        return "is a sparse file" if member.sparse is not None else None
    return f"is {TYPE_WORDS.get(member.type, f'of tar type {member.type!r}')}"


def normal_name(raw: str) -> str:
    """``raw`` without ONE leading ``./`` (how ``tar -C folder .`` names members); the top folder is ``.``."""
    return raw[2:] if raw.startswith("./") and raw != "./" else raw


def name_problem(name: str) -> str | None:
    """Why the (already ``normal_name``d) ``name`` is not a relative, normalised path; ``None`` when it is one."""
    if not name:
        return "has an empty name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "has a control character in its name"
    if name.startswith("/"):
        return "has an absolute name"
    parts = name.split("/")
    if len(parts) > MAX_DEPTH:
        return f"lies {len(parts)} names deep (at most {MAX_DEPTH})"
    if len(os.fsencode(name)) > MAX_NAME_BYTES:
        return f"has a name longer than {MAX_NAME_BYTES} bytes"
    if ".." in parts:
        return "has a '..' component in its name"
    if "" in parts or "." in parts:
        return "has a name that is not normalised (an empty or '.' component)"
    if any(len(os.fsencode(part)) > MAX_PART_BYTES for part in parts):
        return f"has a name component longer than {MAX_PART_BYTES} bytes"
    place = credential_in(name)
    return None if place is None else f"lies in {place}, where credentials are kept (never in a submission)"


def clash(entries: list[Member]) -> tuple[str, str] | None:
    """The first two members whose names collide, as ``(member, problem)``; ``None`` when none do.

    Sorted by components, a name is followed at once by a duplicate, or else by
    a name inside it if there is one, so one sorted pass finds every clash.
    """
    ordered = sorted(entries, key=lambda e: e.name.split("/"))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.name == before.name:
            return after.name, "has the same name as another member"
        if not before.is_dir and after.name.startswith(before.name + "/"):
            return after.name, f"lies inside {shown(before.name)}, which another member is as a file"
    return None


def file_mode(member: tarfile.TarInfo) -> int:
    """0o755 for a file with an execute bit, else 0o644: owners and setuid bits are never kept."""
    return EXEC_MODE if member.mode & 0o111 else FILE_MODE


def _headers(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members, one header at a time; tarfile's own list (and the pax headers it keeps) is dropped as it goes."""
    while (member := tar.next()) is not None:
        tar.members.clear()  # type: ignore[attr-defined]  # undocumented: the members read so far
        yield member


def _entry(source: Path, member: tarfile.TarInfo, total: int) -> Member | None:
    """The accepted ``member`` (``None`` for the top folder ``./``); ``UserError`` when it is refused.

    ``total`` is the size of the files before it.
    """
    name = normal_name(member.name)
    if name == "." and member.isdir():
        return None
    problem = type_problem(member) or name_problem(name)
    if problem is None and not member.isdir():
        if member.size < 0:
            problem = "has a negative size"
        elif total + member.size > MAX_UNPACKED_BYTES:
            problem = f"takes the files past {MAX_UNPACKED_BYTES} bytes unpacked (a gzip bomb?)"
    if problem is not None:
        raise refusal(source, member.name, problem)
    if member.isdir():
        return Member(name, True, 0, member.offset_data, DIR_MODE)
    return Member(name, False, member.size, member.offset_data, file_mode(member))


def members(tar: tarfile.TarFile, source: Path) -> list[Member]:
    """Every member of ``tar`` judged by the rules, in order; ``UserError`` at the first one refused.

    A member on its own is judged as its header is read, so a bomb stops at
    its header; name clashes are judged once all names are known.
    """
    entries: list[Member] = []
    total, previous = 0, None
    try:
        for count, member in enumerate(_headers(tar), 1):
            if count > MAX_MEMBERS:
                raise refusal(source, member.name, f"is one member too many (at most {MAX_MEMBERS})")
            entry = _entry(source, member, total)
            if entry is not None:
                entries.append(entry)
                total += entry.size
            previous = member.name
    except _Exhausted as exc:
        where = f"after member {shown(previous)}" if previous is not None else "at its first member"
        raise UserError(f"{source}: refused {where}: {exc}; {REBUILD}") from None
    collision = clash(entries)
    if collision is not None:
        raise refusal(source, *collision)
    return entries


def file_problem(info: os.stat_result) -> str | None:
    """Why a file with status ``info`` cannot be a submission archive; ``None`` when it can be one."""
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > MAX_ARCHIVE_BYTES:
        return f"larger than {MAX_ARCHIVE_BYTES} bytes; Kaggle takes at most 100 MB"
    return None


@contextmanager
def _opened(source: Path) -> Iterator[tuple[tarfile.TarFile, _Budget]]:
    """``source`` open as a tar over a counted gzip stream; every way of failing to read it is one ``UserError``."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a fifo must not block
        problem = file_problem(os.fstat(fd))
        if problem is not None:
            os.close(fd)
            raise unreadable(source, problem)
        with open(fd, "rb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                budget = _Budget(stream, MAX_TAR_BYTES)
                with tarfile.open(fileobj=budget, mode="r:") as tar:
                    yield tar, budget
    except _Exhausted as exc:
        raise UserError(f"{source}: refused: {exc}; {REBUILD}") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError) as exc:
        raise unreadable(source, exc) from None


def _require_main(source: Path, entries: list[Member]) -> None:
    if not any(e.name == "main.py" and not e.is_dir for e in entries):
        raise UserError(f"{source}: {NO_MAIN}")


def check(source: Path) -> None:
    """``UserError`` unless ``source`` is a readable ``.tar.gz`` that keeps the rules, ``main.py`` at its top.

    Nothing is unpacked; the rules are ``unpack``'s, so what passes here unpacks.
    """
    with _opened(source) as (tar, _):
        entries = members(tar, source)
    _require_main(source, entries)


def _enter(parent: int, name: str) -> int:
    """A descriptor of the folder ``name`` in the folder ``parent``, made (0o755) when missing; never via a link."""
    try:
        os.mkdir(name, DIR_MODE, dir_fd=parent)
        made = True
    except FileExistsError:
        made = False
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    if made:
        os.fchmod(fd, DIR_MODE)  # the umask does not decide
    return fd


def _folder(root: int, parts: list[str]) -> int:
    """A descriptor of the folder ``parts`` under ``root`` (``root`` itself when empty), made as needed."""
    fd = root
    for part in parts:
        inner = _enter(fd, part)
        if fd != root:
            os.close(fd)
        fd = inner
    return fd


def _chunks(budget: _Budget, entry: Member) -> Iterator[bytes]:
    """Exactly ``entry.size`` bytes of the stream, a chunk at a time; a short stream is a read error."""
    budget.seek(entry.offset)
    left = entry.size
    while left:
        data = budget.read(min(CHUNK, left))
        if not data:
            raise tarfile.ReadError(f"unexpected end of data in {entry.name!r}")
        yield data
        left -= len(data)


def _copy(budget: _Budget, entry: Member, out: int) -> None:
    """Exactly ``entry.size`` bytes of the stream into ``out``."""
    with open(out, "wb", closefd=False) as fh:
        for data in _chunks(budget, entry):
            fh.write(data)


def inside(root: str, path: str) -> bool:
    """Whether ``path`` resolves to a place strictly under the resolved folder ``root``."""
    real = os.path.realpath(path)
    return os.path.commonpath([root, real]) == root and real != root


def _write(budget: _Budget, entry: Member, root: int, top: str) -> None:
    """One accepted entry, written under the folder ``root`` (the path ``top``).

    The descriptors never follow a link; the path is checked once more all the same.
    """
    parts = entry.name.split("/")
    fd = _folder(root, parts if entry.is_dir else parts[:-1])
    try:
        if not inside(top, os.path.join(top, entry.name)):
            raise OSError(f"{entry.name!r} resolves outside the destination")
        if entry.is_dir:
            return
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE,
                      dir_fd=fd)
        try:
            os.fchmod(out, entry.mode)
            _copy(budget, entry, out)
        finally:
            os.close(out)
    finally:
        if fd != root:
            os.close(fd)


def _write_all(source: Path, budget: _Budget, entries: list[Member], folder: Path) -> None:
    """Every accepted entry under ``folder``; a failure to write is one ``UserError`` naming the member."""
    try:
        os.makedirs(folder, exist_ok=True)
        top = os.path.realpath(folder)
        root = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise UserError(f"{source}: cannot unpack into {folder}: {exc.strerror or exc}") from None
    try:
        for entry in entries:
            try:
                _write(budget, entry, root, top)
            except OSError as exc:
                raise UserError(f"{source}: cannot unpack member {shown(entry.name)} into {folder}: "
                                f"{exc.strerror or exc}") from None
    finally:
        os.close(root)


def unpack(source: Path, folder: Path) -> Path:
    """Unpack the ``.tar.gz`` submission ``source`` into ``folder`` by the rules; its ``main.py``.

    The whole member list is judged before the first byte is written.
    """
    with _opened(source) as (tar, budget):
        entries = members(tar, source)
        _require_main(source, entries)
        budget.spent = 0  # the second pass has a budget of its own
        _write_all(source, budget, entries, folder)
    return folder / "main.py"


def main_alone(source: Path) -> bytes:
    """The bytes of ``main.py`` of the archive ``source``, which keeps the rules and holds nothing else (as the
    bundler writes it); one ``UserError`` line otherwise."""
    with _opened(source) as (tar, budget):
        entries = members(tar, source)
        _require_main(source, entries)
        others = [shown(e.name) for e in entries if e.name != "main.py"]
        if others:
            raise UserError(f"{source}: holds {', '.join(others[:5])} beside main.py; only a .tar.gz the bundler "
                            "wrote (main.py alone) can be repacked")
        budget.spent = 0
        return b"".join(_chunks(budget, next(e for e in entries if e.name == "main.py")))


def _judged(name: str, info: os.stat_result, count: int, total: int) -> str | None:
    """Why the entry ``name`` (status ``info``) of an unpacked folder breaks the rules or bounds, after ``count``
    entries and ``total`` bytes of files; None when it keeps them."""
    if count >= MAX_MEMBERS:
        return f"is one entry too many (at most {MAX_MEMBERS})"
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return "is not a regular file or a folder"
    if stat.S_ISREG(info.st_mode) and total + info.st_size > MAX_UNPACKED_BYTES:
        return f"takes the files past {MAX_UNPACKED_BYTES} bytes"
    return name_problem(name)


def listing(source: Path) -> list[tuple[str, os.stat_result]]:
    """Every entry under the folder ``source``, folders before what they hold: ``(relative name, lstat)``, judged
    by the archive's rules and bounds (``_judged``) with a stack, never recursion; one ``UserError`` line naming
    the entry and the bound it breaks."""
    found: list[tuple[str, os.stat_result]] = []
    stack, total = [""], 0
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(source, rel)) as listed:
                entries = sorted((entry.name, entry.stat(follow_symlinks=False)) for entry in listed)
        except OSError as exc:
            raise UserError(f"{source}: cannot read {shown(rel or '.')} ({exc.strerror or exc})") from None
        for name, info in entries:
            full = f"{rel}/{name}" if rel else name
            problem = _judged(full, info, len(found), total)
            if problem is not None:
                raise UserError(f"{source}: {shown(full)} {problem}; a submission's folder may hold only regular "
                                "files and folders, within an archive's bounds")
            found.append((full, info))
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
            if stat.S_ISDIR(info.st_mode):
                stack.append(full)
    return found


def _copy_file(source: Path, name: str, info: os.stat_result, folder: int) -> None:
    """The regular file ``name`` of ``source`` (as ``listing`` saw it: ``info``) into the folder ``folder``."""
    src = os.open(os.path.join(source, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        now = os.fstat(src)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(now.st_mode):
            raise OSError(f"{name!r} changed while it was copied")
        out = os.open(name.rpartition("/")[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      FILE_MODE, dir_fd=folder)
        try:
            os.fchmod(out, EXEC_MODE if info.st_mode & 0o111 else FILE_MODE)
            left = info.st_size
            while left and (data := os.read(src, min(CHUNK, left))):
                os.write(out, data)
                left -= len(data)
        finally:
            os.close(out)
    finally:
        os.close(src)


def copy_tree(source: Path, dest: Path) -> None:
    """Copy the unpacked submission folder ``source`` into the new folder ``dest`` by this module's rules and
    bounds (``listing``, judged whole before anything is written), never through a link; a folder that shows a
    home folder or credentials (``credentials.exposes``) is refused.  One ``UserError`` line for each."""
    problem = exposes(source)
    if problem is not None:
        raise UserError(f"{source}: {problem}; only a submission's own folder is copied into a game's folder")
    entries = listing(source)
    try:
        os.mkdir(dest, DIR_MODE)
        root = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise UserError(f"{source}: cannot copy into {dest}: {exc.strerror or exc}") from None
    try:
        for name, info in entries:
            parts = name.split("/")
            try:
                fd = _folder(root, parts if stat.S_ISDIR(info.st_mode) else parts[:-1])
                try:
                    if stat.S_ISREG(info.st_mode):
                        _copy_file(source, name, info, fd)
                finally:
                    if fd != root:
                        os.close(fd)
            except OSError as exc:
                raise UserError(f"{source}: cannot copy {shown(name)} into {dest}: {exc.strerror or exc}") from None
    finally:
        os.close(root)
