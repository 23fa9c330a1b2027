"""Folder trees that someone else shaped, walked and removed without recursion and without following a link.

An agent writes what it likes in its game folder, its HOME and (in namespaces of its own) its ``/tmp``: a
folder 3,000 deep, a link to the user's files, a folder it made unreadable.  ``shutil.rmtree`` and
``os.walk``/``os.fwalk`` recurse once per level on Python 3.11, and ``RecursionError`` is no ``OSError``, so
``ignore_errors=True`` does not catch it: a deep tree crashed the referee with a traceback and left its
folders behind.  Here every walk keeps its own stack:

* ``remove(path)``: ``path`` and all it holds, best effort (never raises).  Each folder is opened with
  ``O_DIRECTORY|O_NOFOLLOW`` at its parent's descriptor, each entry removed at its folder's descriptor, so
  a link is removed, never followed; the way back up is ``..``, checked to be the very folder it came from
  (device and inode), so a folder moved meanwhile ends the removal instead of leading it elsewhere.  One
  descriptor is open at a time, whatever the depth.  A folder the agent made unreadable is made ours
  (``0700``) first; a mount point inside is left alone (another file system is never entered).
* ``walk(dir_fd, deepest)``: every entry under a folder, top-down, links not followed, one descriptor per
  level; ``TooDeep`` past ``deepest`` levels (the caller says what that means: a bound, not a crash).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
Ident = tuple[int, int]  # a folder's device and inode
DEEPEST = 128  # the levels a walk enters, by default: it holds one descriptor per level


class TooDeep(Exception):
    """A walk went past the levels it was given."""


def _ident(st: os.stat_result) -> Ident:
    return st.st_dev, st.st_ino


@dataclass
class _Level:
    """One folder on a walk's stack: its name in its parent, which folder it is, the subfolders still to go."""

    name: str
    ident: Ident
    pending: list[str] | None = None  # None: not read yet
    path: str = ""  # a walk's: its path from the top
    fd: int = -1  # a walk's: its open descriptor


def remove(path: str | os.PathLike[str]) -> bool:
    """Remove ``path`` (a folder and all it holds, or a file or link) without recursion, following no link and
    entering no other file system; what cannot be removed is left (never an error).  Whether it is gone."""
    parent_path, name = os.path.split(os.path.abspath(os.fspath(path)))
    try:
        parent = os.open(parent_path or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return not os.path.lexists(path)
    try:
        return _remove_at(parent, name)
    finally:
        os.close(parent)


def _remove_at(parent: int, name: str) -> bool:
    """Remove the entry ``name`` of the folder ``parent`` and, if it is a folder, all it holds."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if stat.S_ISDIR(st.st_mode):
            _empty(parent, name, st)
            os.rmdir(name, dir_fd=parent)
        else:
            os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _enter(parent: int, name: str, device: int) -> tuple[int, Ident] | None:
    """Open the folder ``name`` of ``parent`` (never through a link; made readable and writable by us first
    where its owner, the agent, took that away); None where it is not a folder of ``device`` or cannot be
    opened."""
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except PermissionError:
        if not _make_ours(parent, name):
            return None
        try:
            fd = os.open(name, _DIR, dir_fd=parent)
        except OSError:
            return None
    except OSError:
        return None
    st = os.fstat(fd)
    if st.st_dev != device:
        os.close(fd)
        return None
    if st.st_mode & 0o700 != 0o700:  # its entries cannot be removed otherwise (a plain user's own folder)
        try:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
        except OSError:
            pass
    return fd, _ident(st)


def _make_ours(parent: int, name: str) -> bool:
    """``chmod 0700`` the folder ``name`` of ``parent``, reached without following a link (an ``O_PATH``
    descriptor, changed through ``/proc``); whether that worked."""
    try:
        fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return False
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _clear(fd: int, device: int) -> list[str]:
    """Remove every entry of the folder ``fd`` that is not a folder (links included); its subfolders on
    ``device`` (a mount point is left alone)."""
    folders: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                    if not stat.S_ISDIR(st.st_mode):
                        os.unlink(entry.name, dir_fd=fd)
                    elif st.st_dev == device:
                        folders.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return folders


def _empty(parent: int, name: str, st: os.stat_result) -> None:
    """Remove all that the folder ``name`` of ``parent`` (whose ``lstat`` is ``st``) holds, one level at a time,
    with one descriptor open: down into each subfolder, back up through ``..`` once it is empty."""
    entered = _enter(parent, name, st.st_dev)
    if entered is None or entered[1] != _ident(st):
        if entered is not None:
            os.close(entered[0])
        return
    fd, ident = entered
    levels = [_Level(name, ident)]
    try:
        while True:
            level = levels[-1]
            if level.pending is None:
                level.pending = _clear(fd, st.st_dev)
            if level.pending:
                child = level.pending.pop()
                inner = _enter(fd, child, st.st_dev)
                if inner is not None:
                    os.close(fd)
                    fd = inner[0]
                    levels.append(_Level(child, inner[1]))
                continue
            if len(levels) == 1:
                return
            up = os.open("..", _DIR, dir_fd=fd)
            if _ident(os.fstat(up)) != levels[-2].ident:  # moved meanwhile: nothing outside is touched
                os.close(up)
                return
            os.close(fd)
            fd = up
            done = levels.pop()
            try:
                os.rmdir(done.name, dir_fd=fd)
            except OSError:
                pass
    except OSError:
        return
    finally:
        os.close(fd)


def walk(dir_fd: int, deepest: int, skip: Callable[[str], bool] = lambda path: False
         ) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """``(folder, folder_fd, name, lstat)`` for every entry under the folder ``dir_fd`` (which stays open and
    the caller's), top-down, ``folder`` as ``.``, ``./a``, ``./a/b``; links are listed, never followed; a
    subfolder whose path ``skip`` names is neither listed nor entered; one that cannot be read is listed but
    not entered.  ``TooDeep`` past ``deepest`` levels below ``dir_fd``."""
    levels = [_Level(".", (0, 0), path=".", fd=os.open(".", _DIR, dir_fd=dir_fd))]
    try:
        while levels:
            level = levels[-1]
            if level.pending is None:
                level.pending = []
                yield from _read(level, skip)
            if not level.pending:
                os.close(levels.pop().fd)
                continue
            if len(levels) > deepest:
                raise TooDeep(f"{level.path}: deeper than {deepest} folders")
            name = level.pending.pop()
            try:
                fd = os.open(name, _DIR, dir_fd=level.fd)
            except OSError:
                continue
            levels.append(_Level(name, (0, 0), path=f"{level.path}/{name}", fd=fd))
    finally:
        for level in levels:
            os.close(level.fd)


def _read(level: _Level, skip: Callable[[str], bool]) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """The entries of one folder of a walk, its subfolders noted in ``level.pending``."""
    assert level.pending is not None
    try:
        with os.scandir(level.fd) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return
    for name in names:
        try:
            st = os.stat(name, dir_fd=level.fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if skip(f"{level.path}/{name}"):
                continue
            level.pending.append(name)
        yield level.path, level.fd, name, st
