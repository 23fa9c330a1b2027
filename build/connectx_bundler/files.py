"""The build reads only the project: each file it reads is a regular file whose real path is inside the project.

The build runs outside the jail, with the user's rights, on a project that may be anyone's (a teammate's
folder, a downloaded archive), and what it reads ends up in ``submission.py``.  So every project file it
reads (the settings, the modules, the data files, the C sources and headers, a committed library and its
key) is read here, and refused in one line naming it when it is:

* a link, or a path through a linked folder, whose real path lies outside the project (to
  ``~/.kaggle/kaggle.json``, to ``/proc/self/environ``); links that stay inside the project are followed;
* not a regular file: a FIFO (opening it would hang the build), a device, a socket, a folder.  The real
  path is checked with ``lstat`` before it is opened, then opened with ``O_NOFOLLOW | O_NONBLOCK`` and
  checked to be the same file, whose open path is inside the project still;
* a file with more than one hard link: a hard link to a file outside is a regular file inside, and the
  build cannot tell where its other names lie.  The toolkit's own files (the shipped agents, the runtime),
  which an installer may hard-link, are exempt;
* a file in a place where credentials are kept (``runtime.CREDENTIALS``: ``.kaggle/``, ``.ssh/``,
  ``kaggle.json``, ...), by its name in the project or its real path, wherever the project is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from connectx_bundler.errors import BuildError
from connectx_forge import boundedread
from connectx_forge.paths import agents_root, runtime_file
from connectx_forge.runtime import credential_in

KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))
COPY = "copy the file itself into the project"


def under(path: str, folder: str) -> bool:
    """Whether absolute path ``path`` is ``folder`` or lies below it (both without links)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def kind(mode: int) -> str:
    """What a non-regular file is, in a few words."""
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def toolkit(root: Path) -> bool:
    """Whether ``root`` is the toolkit's own folder (the shipped agents' or the runtime's), not a user's project."""
    real = Path(os.path.realpath(root))
    return real in (agents_root(), runtime_file().parent.parent)


def checked(root: Path, path: Path, name: str) -> tuple[str, os.stat_result]:
    """The real path of project file ``path`` and its ``lstat``, without opening it; ``BuildError`` (``name``
    first) where it leads out of ``root``, lies where credentials are kept, is not a regular file, or has other
    names; ``OSError`` where it is missing."""
    top = os.path.realpath(root)
    real = os.path.realpath(path)
    if not under(real, top):
        raise BuildError(f"{name}: a link leading out of the project (to {real}); the build reads only files "
                         f"inside the project ({top}): {COPY}")
    place = credential_in(os.path.relpath(os.path.abspath(path), os.path.abspath(root))) or credential_in(real)
    if place is not None:
        raise BuildError(f"{name}: lies in {place} (at {real}), where credentials are kept; the build never reads "
                         "one: keep credentials out of the project")
    info = os.lstat(real)
    if not stat.S_ISREG(info.st_mode):
        raise BuildError(f"{name}: {kind(info.st_mode)}, not a regular file; the build reads only regular files "
                         "of the project: replace it with one")
    if info.st_nlink > 1 and not toolkit(root):
        raise BuildError(f"{name}: has {info.st_nlink} hard links, and the build cannot tell whether another one "
                         f"lies outside the project; give it a name of its own (cp it to a new file, then mv that "
                         "over it)")
    return real, info


def read_inside(root: Path, path: Path, name: str, most: int | None = None) -> bytes:
    """The bytes of project file ``path`` (under project folder ``root``), read as the module's doc says, at most
    ``most`` of them where given; ``name`` is what an error calls it.  ``BuildError`` for a file the build must
    not read or one over ``most``, ``OSError`` for a missing or unreadable one."""
    real, info = checked(root, path, name)
    if most is not None and info.st_size > most:
        raise BuildError(str(boundedread.too_large(name, most)))
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(opened.st_mode) \
                or not under(os.readlink(f"/proc/self/fd/{fd}"), os.path.realpath(root)):
            raise BuildError(f"{name}: changed while the build read it; build again")
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read() if most is None else fh.read(most + 1)
        if most is not None and len(data) > most:
            raise BuildError(str(boundedread.too_large(name, most)))
        return data
    finally:
        os.close(fd)


def read_text_inside(root: Path, path: Path, name: str, most: int | None = None) -> str:
    """``read_inside`` as UTF-8 text with universal newlines, as ``Path.read_text`` reads it
    (``UnicodeDecodeError`` where it is not UTF-8)."""
    return read_inside(root, path, name, most).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
