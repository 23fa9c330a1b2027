"""File reads a submission cannot make: found statically, refused at build time, not in the first game.

On Kaggle a submission runs as one file exec'd with no ``__file__``, far from
the project folder, so a module that reads its data by path passes every local
test and fails there.  The bundler embeds only what is read through
``connectx_forge.runtime.read_data``; this module finds the other reads:

* ``__file__`` anywhere (the usual way to build a path next to a module);
* ``open(...)``, ``io.open(...)`` and ``Path(...).open/read_bytes/read_text()``;
* numpy's ``load``, ``loadtxt``, ``genfromtxt``, ``fromfile`` and ``memmap`` given a path
  rather than bytes (``np.load(io.BytesIO(read_data("w.npy")))`` is the way).

A line that really means it (a read the agent does not need on Kaggle) may say
so with a ``# cxforge: allow-read`` comment.
"""

from __future__ import annotations

import ast

from connectx_bundler.errors import BuildError
from connectx_bundler.imports import SourceModule

ALLOW = "cxforge: allow-read"
NUMPY_READERS = {"load", "loadtxt", "genfromtxt", "fromfile", "memmap"}
PATH_READERS = {"read_bytes", "read_text"}
FIX = ("put the file in the project and read it with `from connectx_forge.runtime import read_data`, "
       "read_data(\"path/relative/to/the/project\"), which the bundler embeds")


def _called(node: ast.Call) -> tuple[str | None, str | None]:
    """(object, attribute) of a call: ``open(x)`` -> (None, "open"), ``np.load(x)`` -> ("np", "load")."""
    func = node.func
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        return owner, func.attr
    return None, None


def _is_path(arg: ast.expr) -> bool:
    """Whether an argument looks like a file name (a string, a name, an f-string, a join), not bytes in memory."""
    return not isinstance(arg, (ast.Call, ast.Subscript)) or (
        isinstance(arg, ast.Call) and _called(arg)[1] in {"join", "Path", "fspath", "abspath", "dirname"})


def blind_read(node: ast.AST) -> str | None:
    """What ``node`` reads that the bundler cannot see, in a few words, or None."""
    if isinstance(node, ast.Name) and node.id == "__file__":
        return "uses __file__, which a submission does not have on Kaggle"
    if not isinstance(node, ast.Call):
        return None
    owner, name = _called(node)
    if name == "open" and owner in (None, "io", "os", "builtins", "codecs"):
        return f"opens a file ({ast.unparse(node.func)}), which is not in the submission on Kaggle"
    if name in NUMPY_READERS and owner in ("np", "numpy") and node.args and _is_path(node.args[0]):
        return f"reads a file with {owner}.{name}, which is not in the submission on Kaggle"
    if name in PATH_READERS:
        return f"reads a file with .{name}(), which is not in the submission on Kaggle"
    return None


def check_reads(module: SourceModule) -> None:
    """``BuildError`` at the first read of ``module`` that the bundle cannot serve (see the module's doc)."""
    lines = module.source.splitlines()
    found = []
    for node in ast.walk(module.tree):
        what = blind_read(node)
        line = getattr(node, "lineno", 0)
        if what is not None and not (0 < line <= len(lines) and ALLOW in lines[line - 1]):
            found.append((line, "__file__" not in what, what))  # on one line, __file__ is the root cause
    if found:
        line, _, what = min(found)
        raise BuildError(f"{module.path}:{line}: {what}; {FIX} (or mark the line '# {ALLOW}')")
