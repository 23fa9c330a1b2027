"""How the toolkit starts a child: never with code or programs from the folder the user stands in.

A child Python started with ``-c`` or ``-m`` puts the working folder first on
its import path, so a ``kaggle.py``, ``requests.py`` or ``ziglang/`` in that
folder (a downloaded project, a shared run folder) would run in it as the user,
with the Kaggle credentials in reach.  Every Python child the toolkit starts
(the Kaggle API calls, the compiler's toolchain, the jailed warden and its
probe) is started by ``isolated_python``: ``-I``, isolated mode (no working
folder or script folder on the import path, no user site, no ``PYTHON*``
variable; the interpreter's own site-packages, the editable install's ``.pth``
included, still load).  A program the toolkit runs by name (``kaggle``,
``bwrap``, ``setpriv``, ``sleep``) is found by ``program``, on the absolute
folders of ``PATH`` only: an empty or relative entry would mean the working
folder.  A package whose files the toolkit runs as a program (the toolchain's
``zig``) is found by ``find_library``, in the interpreter's library folders
only: in a notebook, or under ``python -m``, the working folder is on this
process's own import path too.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import sys

ISOLATED = "-I"  # isolated mode: implies -E (no PYTHON* variable), -s (no user site) and -P (no unsafe path)


def isolated_python(executable: str | None = None) -> list[str]:
    """The start of a child Python's command line (``executable``, default this interpreter, then ``-I``):
    its imports come from the interpreter's own libraries only, never from the working folder, the user's
    site or ``PYTHONPATH``."""
    return [executable or sys.executable, ISOLATED]


def program(name: str, path: str | None = None) -> str | None:
    """The executable ``name`` on ``path`` (default ``$PATH``), searching its absolute folders only (an empty
    or relative entry names the working folder); None when there is none."""
    folders = (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep)
    return shutil.which(name, path=os.pathsep.join(f for f in folders if os.path.isabs(f)))


def is_library(entry: str) -> bool:
    """Whether import path ``entry`` is a library folder of this interpreter (in its prefixes, a
    ``site-packages`` or ``dist-packages``, or a zip of them), not a user's folder that happens to be on
    ``sys.path`` (the working folder: ``""`` or its path)."""
    if not entry or not os.path.isabs(entry):
        return False
    real = os.path.realpath(entry)
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(real == p or real.startswith(p + os.sep) for p in prefixes) \
        or os.path.basename(real.rstrip(os.sep)) in ("site-packages", "dist-packages")


def find_library(name: str) -> importlib.machinery.ModuleSpec | None:
    """Top-level package or module ``name`` as found in this interpreter's library folders (``is_library``),
    never in the working folder; None where it is not installed."""
    return importlib.machinery.PathFinder.find_spec(name, [p for p in sys.path if is_library(p)])
