"""The bundle-safe runtime that agents import: ``read_data`` for the data files an agent ships.

``from connectx_forge.runtime import read_data``, then ``read_data("data/weights.npy")``
with a path relative to the project root: the folder your modules are imported
from (the one holding ``cxforge.toml``).  In the source tree the file is read
from there; in a built submission the bundler has embedded it (compressed,
base64, sha256-checked) and fills ``EMBEDDED`` before any agent code runs, so
the same call works in both places.  Call it with a string literal: the
bundler finds the files a module needs by reading those calls, without
running the module.

This module is bundled into submissions: standard library only.
"""

from __future__ import annotations

import os
import sys

EMBEDDED: dict[str, bytes] = {}


class MissingData(FileNotFoundError):
    """A data file that is neither embedded nor in the project."""


def import_root(module: str, file: str) -> str:
    """The folder module ``module`` (at ``file``) was imported from: its project root.

    ``mybot.main`` at ``/p/mybot/main.py`` gives ``/p``; a package's
    ``__init__.py`` counts as its package; a script (``__main__``) gives its folder.
    """
    folder = os.path.dirname(os.path.abspath(file))
    depth = 0 if module == "__main__" else module.count(".")
    if os.path.basename(file) == "__init__.py" and module != "__main__":
        depth += 1
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return folder


def data_path(path: str, module: str, file: str) -> str:
    """Where data file ``path`` of module ``module`` (at ``file``) lives in the source tree."""
    return os.path.join(import_root(module, file), *path.split("/"))


def read_data(path: str) -> bytes:
    """The bytes of data file ``path`` (relative to the project root): embedded in a bundle, else from disk."""
    if path in EMBEDDED:
        return EMBEDDED[path]
    caller = sys._getframe(1).f_globals
    file = caller.get("__file__")
    if not file:
        raise MissingData(f"data file {path!r} is not embedded in this submission (rebuild it with cxforge build)")
    full = data_path(path, str(caller.get("__name__", "__main__")), str(file))
    try:
        with open(full, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise MissingData(f"data file {path!r} not found at {full} ({exc.strerror})") from None
