"""Safe output: every file the toolkit writes goes through here, and nothing is written through a link.

A run folder, a working folder or ``/tmp`` may be shared with someone hostile, who plants a symbolic link where
the toolkit will write (``runs/t1 -> ~/``, ``report.json -> ~/.bashrc``): a plain ``open(path, "w")`` would
then replace the user's file.  So every writer here:

- walks the path one folder at a time from ``/`` (an absolute path) or the working folder (a relative one),
  each opened with ``O_NOFOLLOW | O_DIRECTORY`` below the last, and makes a missing folder there (``mkdir`` at
  that descriptor, mode by the umask): no component the path names is followed if it is a link.  The one
  exception is a link directly in ``/`` owned by root (macOS ``/tmp -> private/tmp``, merged ``/bin``): only
  root can place it, so it is the system's layout, not an attack.  A link is refused in one line:
  ``refusing to write runs/t1/report.json: runs/t1 is a symbolic link``;
- writes a whole file to a new name in the target folder (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode by the umask)
  and renames it into place at the folder's descriptor (``os.replace``), so a reader never sees half a file and
  a link at the target is replaced, never followed (and refused beforehand all the same);
- appends (``--save --append``, progress files) only to a regular file with one name, opened ``O_NOFOLLOW``.

The user cache (``$CXFORGE_CACHE``, ``$XDG_CACHE_HOME/cxforge``, ``~/.cache/cxforge``) is the user's own
setting, so the walk starts at its parent folder; the cache folder itself is made ``0700`` and refused if it is
a link or another user's, and every folder below it is made ``0700``.

Existing files are replaced only where the caller says so (``replace``): ``-o`` replaces only with ``--force``
(``tools/connectx_forge/outputs.py``: one rule for every output), ``--save`` appends with ``--append``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol, overload

from connectx_forge import boundedread
from connectx_forge.errors import UserError
from connectx_forge.paths import user_cache

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CACHE_MODE = 0o700  # the user cache and every folder in it: the user's alone
TEMP_TRIES = 16


class UnsafeOutput(UserError):
    """A path the toolkit was to write leads through a symbolic link, or is not what a writer may replace."""


def _refuse(path: Path, part: str, why: str) -> UnsafeOutput:
    """The one line: what was to be written, and which part of its path is what."""
    return UnsafeOutput(f"refusing to write {path}: {part} {why}")


def _enter(fd: int, name: str, shown: str, target: Path, mode: int | None) -> int:
    """A descriptor of the folder ``name`` in the folder ``fd``, never through a link (``shown``: its path as
    the user gave it, for the message).  ``mode``: make it (that mode, under the umask) when missing; ``None``:
    a missing folder is ``FileNotFoundError``."""
    try:
        return os.open(name, FOLDER, dir_fd=fd)
    except FileNotFoundError:
        if mode is None:
            raise
        with contextlib.suppress(FileExistsError):  # made meanwhile by another writer: opened as it is below
            os.mkdir(name, mode, dir_fd=fd)
        return _enter(fd, name, shown, target, None)
    except OSError as exc:
        if exc.errno not in boundedread.NO_LINK_ERRORS:
            raise
    if shown == "/" + name and boundedread.system_link(name):
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
    if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
        raise _refuse(target, shown, "is a symbolic link")
    raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), shown)


def _cache_root(target: Path) -> Path | None:
    """The user cache folder, when ``target`` lies in it (by its name as given)."""
    root = user_cache()
    for candidate in (root, Path(os.path.abspath(root))):
        if target == candidate or candidate in target.parents:
            return candidate
    return None


@contextlib.contextmanager
def _opened_folder(folder: Path, target: Path) -> Iterator[int]:
    """A descriptor of ``folder`` (``target``: the path being written, for messages), walked component by
    component without following a link; missing folders made."""
    cache = _cache_root(folder)
    mode = CACHE_MODE if cache is not None else 0o777
    if cache is not None:
        start, parts, shown = cache.parent, [cache.name, *folder.relative_to(cache).parts], cache.parent
    elif folder.is_absolute():
        start, parts, shown = Path("/"), list(folder.parts[1:]), Path("/")
    else:
        start, parts, shown = Path("."), list(folder.parts), Path()
    if cache is not None:  # the cache's parent is the user's setting (``~/.cache`` may not exist yet)
        os.makedirs(start, CACHE_MODE, exist_ok=True)
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            shown = shown / part
            inner = _enter(fd, part, str(shown), target, mode)
            os.close(fd)
            fd = inner
            if cache is not None and i == 0:
                _check_cache(fd, shown, target)
        yield fd
    finally:
        os.close(fd)


def _check_cache(fd: int, folder: Path, target: Path) -> None:
    """The cache folder is the user's own: refused if another user owns it."""
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        raise _refuse(target, str(folder), f"is owned by another user (uid {st.st_uid}), not this one")


def _name_of(path: Path) -> str:
    """The file name ``path`` ends in (``UnsafeOutput`` for none: ``.``, ``..``, ``/``)."""
    if path.name in ("", ".", ".."):
        raise UnsafeOutput(f"refusing to write {path}: give a file name")
    return path.name


def _check_name(fd: int, name: str, path: Path, replace: bool) -> None:
    """``path`` (``name`` in the folder ``fd``) may be written: not a link, not a folder, and replaced only when
    ``replace``."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(path, str(path), "is a symbolic link")
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(path, str(path), "is a folder")
    if not replace:
        raise UnsafeOutput(f"refusing to write {path}: the file exists and is not replaced without --force")


def check_target(path: Path | str, folder: bool = False) -> None:
    """Before any work: ``path`` (a file, or with ``folder`` a folder) can be written without following a link;
    the folders it goes in are made, one at a time.  ``UnsafeOutput`` (one line) names the link."""
    path = Path(path)
    if folder:
        make_folder(path)
        return
    with _opened_folder(path.parent, path) as fd:
        st = _lstat(fd, _name_of(path))
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise _refuse(path, str(path), "is a symbolic link")


def _lstat(fd: int, name: str) -> os.stat_result | None:
    """``name`` in the folder ``fd`` as it is (a link itself, not what it points at); ``None`` when missing."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def make_folder(path: Path | str) -> Path:
    """The folder ``path``, made one component at a time where missing, none of them a link; ``path``."""
    path = Path(path)
    with _opened_folder(path, path):
        pass
    return path


def write_bytes(path: Path | str, data: bytes, *, replace: bool) -> None:
    """``data`` as the whole file ``path``: written to a new file beside it and renamed into place, never
    through a link.  An existing file is replaced only when ``replace``."""
    path = Path(path)
    name = _name_of(path)
    with _opened_folder(path.parent, path) as fd:
        _check_name(fd, name, path, replace)
        tmp, out = _temp(fd)
        try:
            with os.fdopen(out, "wb") as fh:
                fh.write(data)
            _check_name(fd, name, path, replace)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise


def _temp(fd: int) -> tuple[str, int]:
    """A new file in the folder ``fd``, made ``O_EXCL`` (mode 0o666 under the umask): its name and descriptor."""
    for _ in range(TEMP_TRIES):
        name = f".cxforge-{secrets.token_hex(8)}.tmp"
        try:
            return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                                 dir_fd=fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def write_text(path: Path | str, text: str, *, replace: bool) -> None:
    """``text`` (UTF-8) as the whole file ``path``, as ``write_bytes`` writes."""
    write_bytes(path, text.encode("utf-8"), replace=replace)


@overload
def open_append(path: Path | str, *, new: bool = False, binary: Literal[False] = False) -> io.TextIOWrapper:
    ...


@overload
def open_append(path: Path | str, *, new: bool = False, binary: Literal[True]) -> io.BufferedWriter:
    ...


def open_append(path: Path | str, *, new: bool = False,
                binary: bool = False) -> io.TextIOWrapper | io.BufferedWriter:
    """``path`` opened to add to its end (made when missing; with ``new``, ``FileExistsError`` if it exists),
    never through a link and only if it is a regular file with one name (a hard link would add to another file
    too).  Text (UTF-8) unless ``binary``."""
    path = Path(path)
    name = _name_of(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with _opened_folder(path.parent, path) as fd:
        try:
            out = os.open(name, flags | (os.O_EXCL if new else 0), 0o666, dir_fd=fd)
        except FileExistsError:
            st = _lstat(fd, name)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise _refuse(path, str(path), "is a symbolic link") from None
            raise
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):
                raise _refuse(path, str(path), "is a symbolic link") from None
            if exc.errno == errno.EISDIR:
                raise _refuse(path, str(path), "is a folder") from None
            raise
    try:
        st = os.fstat(out)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, str(path), "is not a regular file")
        if st.st_nlink > 1:
            raise _refuse(path, str(path), f"has {st.st_nlink} hard links")
        os.set_blocking(out, True)
    except BaseException:
        os.close(out)
        raise
    return os.fdopen(out, "ab") if binary else os.fdopen(out, "a", encoding="utf-8")


class Figure(Protocol):
    """What ``savefig`` takes of a matplotlib figure: its own ``savefig`` into a buffer."""

    def savefig(self, fname: io.BytesIO, *, format: str, **kwargs: Any) -> None:  # Any: matplotlib types each option
        ...


def savefig(fig: Figure, path: Path | str, *, replace: bool, **kwargs: object) -> None:
    """A matplotlib figure saved as ``path`` (its format from the suffix): rendered to bytes, then written as
    ``write_bytes`` writes (matplotlib itself would open the path and follow a link)."""
    path = Path(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", **kwargs)
    write_bytes(path, buf.getvalue(), replace=replace)



def check_database(path: Path | str) -> None:
    """A SQLite database may be opened at ``path``: SQLite opens it, and makes its ``-wal``, ``-shm`` and
    ``-journal`` files beside it, by name (following links), so none of the four may be a link, nor any folder
    on the way (the folders are made).  Call it right before ``sqlite3.connect``."""
    path = Path(path)
    for name in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        check_target(name)
