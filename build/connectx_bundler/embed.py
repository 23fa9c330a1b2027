"""Data files in a submission: which ones a module reads, and how they are embedded.

An agent reads its data with ``read_data("path")`` (``connectx_forge.runtime``),
the path relative to its project root.  The bundler finds those calls
statically, so the argument must be a string literal.
Each file is embedded zlib-compressed and base64-encoded with its sha256; the
bundle decodes it once at load time and refuses to start on a mismatch.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from connectx_bundler.errors import BuildError
from connectx_bundler.files import read_inside
from connectx_bundler.imports import SourceModule

READER = "read_data"
LINE_WIDTH = 96


@dataclass(frozen=True)
class DataFile:
    """One embedded data file: its path relative to the project root, its bytes and their sha256."""

    name: str
    content: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def called_name(node: ast.Call) -> str | None:
    """The name a call calls: ``f`` for ``f(...)`` and ``x.f(...)``; None for anything else."""
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def calls(module: SourceModule, function: str) -> list[ast.Call]:
    """Every call of ``function`` in ``module`` (``f(...)`` or ``x.f(...)``), in source order."""
    found = [node for node in ast.walk(module.tree) if isinstance(node, ast.Call) and called_name(node) == function]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def data_names(module: SourceModule) -> dict[str, int]:
    """The data files ``module`` reads (name -> first line), from its ``read_data("...")`` calls."""
    found: dict[str, int] = {}
    for node in calls(module, READER):
        where = f"{module.path}:{node.lineno}"
        if len(node.args) != 1 or node.keywords:
            raise BuildError(f"{where}: {READER}() takes exactly one argument, a string literal naming the file")
        arg = node.args[0]
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            raise BuildError(f"{where}: {READER}({ast.unparse(arg)}) needs a string literal, so the bundler "
                             "can find the file without running the code")
        name = arg.value
        parts = PurePosixPath(name).parts
        if not name or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name:
            raise BuildError(f"{where}: data file name {name!r} must be a path relative to the project root, "
                             "inside the project (no '..', no leading '/', forward slashes)")
        found.setdefault(name, node.lineno)
    return found


def load_data(modules: tuple[SourceModule, ...]) -> tuple[DataFile, ...]:
    """The data files the modules read (each relative to its root), sorted by name.

    A missing file, or one the build must not read (``files.py``: a link leading out of the project, a FIFO,
    a device), is a ``BuildError``.
    """
    files: dict[str, DataFile] = {}
    for module in modules:
        for name, line in data_names(module).items():
            if name in files:
                continue
            path = module.root.joinpath(*PurePosixPath(name).parts)
            try:
                content = read_inside(module.root, path, f"{module.path}:{line}: data file {name}")
                files[name] = DataFile(name, content)
            except OSError as exc:
                raise BuildError(f"{module.path}:{line}: data file {name} cannot be read from {module.root} "
                                 f"({exc.strerror}); paths are relative to the project root") from None
    return tuple(files[n] for n in sorted(files))


def encode(content: bytes) -> str:
    """``content`` compressed (zlib, level 9) and base64-encoded."""
    return base64.b64encode(zlib.compress(content, 9)).decode("ascii")


def decode(blob: str) -> bytes:
    """The inverse of ``encode`` (the bundle's loader does the same)."""
    return zlib.decompress(base64.b64decode(blob))


def wrapped_literal(blob: str, indent: str) -> str:
    """A parenthesised, line-wrapped Python literal for a long base64 string."""
    lines = [blob[i:i + LINE_WIDTH] for i in range(0, len(blob), LINE_WIDTH)] or [""]
    return "(\n" + "".join(f"{indent}    {line!r}\n" for line in lines) + f"{indent})"
