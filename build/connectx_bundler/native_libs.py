"""Native code in a submission: C sources compiled for Kaggle's runtime with a pinned toolchain, then embedded.

A project declares its libraries in its settings (``[native] engine =
["native/engine.c"]``) and loads one with ``connectx_forge.runtime.load_native
("engine")``, which returns a ``ctypes`` library or None, so that the agent runs
its pure-Python twin instead.  The bundler finds those calls statically (the
name must be a string literal, as ``read_data``'s), compiles each library once
with the ``ziglang`` package (a hermetic clang and libc from PyPI, pinned in
the ``native`` extra) for ``x86_64-linux-gnu.2.17`` (Kaggle's machines are
x86_64 Linux; an old glibc baseline loads on any newer one; no
``-march=native``), in the jail with only the library's files in sight
(``cc.py``), and embeds the shared object as the data file
``native/NAME.so`` (compressed, base64, sha256-checked).  The same files and
toolchain give the same bytes; the result is cached in the user cache by the
sha256 of every project file the compiler read (the sources, then the files
they include: the cache records which, by the sources' own key).

A library may also be committed prebuilt beside its first source
(``NAME.so`` with ``NAME.so.key``, the key it was built under, then the files
its sources include, one a line, written by ``write_prebuilt``; ``make native``
refreshes the shipped agents' own): a build uses it while the key matches those
files, so that building needs no toolchain; tests/integration/test_native.py rebuilds it and finds the same bytes.  The
shipped agents declare their libraries here (``SHIPPED``), as a project does in
its settings.
"""

from __future__ import annotations

import ast
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from connectx_bundler import cc
from connectx_bundler import project as projects
from connectx_bundler.embed import calls
from connectx_bundler.errors import BuildError
from connectx_bundler.files import read_inside
from connectx_bundler.imports import PROJECT_PACKAGE, SourceModule
from connectx_forge.children import isolated_python
from connectx_forge.paths import agents_root, user_cache
from connectx_forge.runtime import import_root
from connectx_forge.safe_write import write_bytes

LOADER = "load_native"
TOOLCHAIN = "ziglang"
TOOLCHAIN_VERSION = "0.17.1"
TARGET = "x86_64-linux-gnu.2.17"
FLAGS = ("-O2", "-shared", "-fPIC", "-s", "-fno-sanitize=all", "-fno-stack-protector", "-Wall",
         "-Wno-unused-function")  # -s: stripped, so no path of the build machine is left in it
INSTALL = f"pip install '{TOOLCHAIN}=={TOOLCHAIN_VERSION}' (the native extra: pip install -e '.[native]')"
SHIPPED = {"solver": ["agents/solver/native/solver.c"]}  # the shipped agents' libraries (root: agents_root())


def data_name(name: str) -> str:
    """The embedded data file that holds library ``name``."""
    return f"native/{name}.so"


def native_names(module: SourceModule) -> dict[str, int]:
    """The libraries ``module`` loads (name -> first line), from its ``load_native("...")`` calls."""
    found: dict[str, int] = {}
    for node in calls(module, LOADER):
        where = f"{module.path}:{node.lineno}"
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.isidentifier()):
            raise BuildError(f"{where}: {LOADER}() takes one argument, a string literal naming a library of the "
                             "project's [native] settings (a Python name, e.g. \"engine\")")
        found.setdefault(arg.value, node.lineno)
    return found


def toolchain() -> list[str]:
    """The command that runs the pinned C compiler (isolated: a ``ziglang/`` in the working folder is not the
    toolchain); ``BuildError`` naming how to install it."""
    try:
        from importlib import metadata

        version = metadata.version(TOOLCHAIN)
    except Exception:
        raise BuildError(f"this agent has native code (C): compiling it needs the pinned toolchain; {INSTALL}") \
            from None
    if version != TOOLCHAIN_VERSION:
        raise BuildError(f"the C toolchain is {TOOLCHAIN} {version}, not the pinned {TOOLCHAIN_VERSION}: the "
                         f"build would not be reproducible; {INSTALL}")
    return [*isolated_python(), "-m", TOOLCHAIN, "cc"]


def cache_key(files: list[tuple[str, bytes]]) -> str:
    """The sha256 of the project files the compiler reads (names and bytes: the sources, then the files they
    include), the flags, the target and the toolchain's version."""
    h = hashlib.sha256()
    for part in (TOOLCHAIN, TOOLCHAIN_VERSION, TARGET, *FLAGS):
        h.update(part.encode() + b"\0")
    for name, content in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return h.hexdigest()


def is_shipped(module: str) -> bool:
    """Whether module ``module`` is one of the shipped agents' (its libraries are ``SHIPPED``'s)."""
    return module.split(".")[0] == PROJECT_PACKAGE


def declared_for(module: str, root: Path, project: dict[str, list[str]]) -> tuple[Path, dict[str, list[str]]]:
    """``(root, libraries)`` that module ``module`` names with ``load_native``: the shipped agents' (``SHIPPED``,
    from their root) for one of theirs, else its project's (``project``, from ``root``)."""
    return (agents_root(), SHIPPED) if is_shipped(module) else (root, project)


def prebuilt_path(root: Path, name: str, sources: list[str]) -> Path:
    """Where library ``name`` may be committed prebuilt: ``NAME.so`` beside its first source."""
    return (root / sources[0]).parent / f"{name}.so"


def read_sources(root: Path, name: str, sources: list[str], where: str) -> list[tuple[str, bytes]]:
    """The project files ``sources`` of library ``name``, read as ``files.read_inside`` reads a project file."""
    read: list[tuple[str, bytes]] = []
    for rel in sources:
        try:
            read.append((rel, read_inside(root, root / rel, f"{where}: native library {name!r}: {rel}")))
        except OSError as exc:
            raise BuildError(f"{where}: native library {name!r}: cannot read {rel} ({exc.strerror})") from None
    return read


@dataclass(frozen=True)
class Library:
    """A compiled library: its shared object and the project files it was compiled from (the sources, then the
    files they include), whose ``cache_key`` is its key."""

    content: bytes
    files: tuple[tuple[str, bytes], ...]
    extra: tuple[str, ...] = ()  # of ``files``, those beyond the sources

    @property
    def key(self) -> str:
        return cache_key(list(self.files))



def reads_record(cache: Path, name: str, sources: list[tuple[str, bytes]]) -> Path:
    """The cache's record of the files that ``sources`` (by their own key) included when last compiled: as a
    prebuilt key file, the library's key, then those files, one a line."""
    return cache / f"{name}-{cache_key(sources)[:24]}.reads"


def lines_of(content: bytes | None) -> list[str] | None:
    """The lines of a record or a prebuilt key file (the key, then the included files, one a line), or None."""
    try:
        return None if content is None else content.decode("utf-8").splitlines() or None
    except UnicodeDecodeError:
        return None


def cached(path: Path) -> bytes | None:
    """A file of the user cache, or None where it is not there."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def committed(root: Path, path: Path, where: str) -> bytes | None:
    """A file committed in the project beside a library's sources, read as ``files.read_inside`` reads a
    project file; None where there is none."""
    if not os.path.lexists(path):
        return None
    try:
        return read_inside(root, path, f"{where}: {path.relative_to(root).as_posix()}")
    except OSError:
        return None


def with_included(root: Path, name: str, sources: list[tuple[str, bytes]], extra: list[str],
                  where: str) -> Library | None:
    """The files of library ``name``: ``sources`` and the project files ``extra`` read again; None where one of
    those is gone or is no relative project path (then the library compiles afresh)."""
    files = list(sources)
    for rel in extra:
        if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
            return None
        try:
            files.append((rel, read_inside(root, root / rel, f"{where}: native library {name!r}: {rel}")))
        except OSError:
            return None
    return Library(b"", tuple(files), tuple(extra))


def compile_library(root: Path, name: str, sources: list[str], where: str, prebuilt: bool = True) -> bytes:
    """The shared object of library ``name`` (its C ``sources``, relative to the project ``root``)."""
    return library(root, name, sources, where, prebuilt).content


def library(root: Path, name: str, sources: list[str], where: str, prebuilt: bool = True) -> Library:
    """Library ``name`` (its C ``sources``, relative to the project ``root``): from the user cache, else the
    committed prebuilt file while its key matches (``prebuilt``), else compiled with the pinned toolchain in
    the jail (``cc.py``); ``BuildError`` with the compiler's lines.  The key covers the files the sources
    include: the cache records which (``reads_record``), and so does a prebuilt key file (its other lines)."""
    read = read_sources(root, name, sources, where)
    cache = user_cache() / "native"
    record = reads_record(cache, name, read)
    library_file = prebuilt_path(root, name, sources)
    key_file = library_file.with_name(library_file.name + ".key")
    key_lines = lines_of(committed(root, key_file, where)) if prebuilt else None
    for lines in (lines_of(cached(record)), key_lines):
        known = None if lines is None else with_included(root, name, read, lines[1:], where)
        if known is None:
            continue
        out = cache / f"{name}-{known.key[:24]}.so"
        if out.is_file():
            return Library(out.read_bytes(), known.files, known.extra)
        content = committed(root, library_file, where) if key_lines and key_lines[0].strip() == known.key else None
        if content is not None:
            return Library(content, known.files, known.extra)
    toolchain()

    files, content = cc.compile_c(root, sources, ("-target", TARGET, *FLAGS), cache / "zig",
                                  f"{where}: native library {name!r}")
    built = Library(content, tuple(files.items()), tuple(list(files)[len(sources):]))
    write_bytes(cache / f"{name}-{built.key[:24]}.so", content, replace=True)
    write_bytes(record, ("\n".join([built.key, *built.extra]) + "\n").encode(), replace=True)
    return built


def write_prebuilt(root: Path, name: str, sources: list[str]) -> Path:
    """Compile library ``name`` with the pinned toolchain and commit-ready write it beside its first source
    (``NAME.so``, and ``NAME.so.key``: its key, then the project files its sources include, one a line);
    returns the library's path."""
    built = library(root, name, sources, "write_prebuilt", prebuilt=False)
    path = prebuilt_path(root, name, sources)
    write_bytes(path, built.content, replace=True)
    key = ("\n".join([built.key, *built.extra]) + "\n").encode()
    write_bytes(path.with_name(path.name + ".key"), key, replace=True)
    return path


def library_for(name: str, module: str, file: str) -> bytes:
    """Library ``name`` as module ``module`` (at ``file``) declares it: a shipped agent's from ``SHIPPED``, a
    project's from its settings; compiled (or prebuilt) as a build would embed it.  For ``load_native`` in a
    source tree."""
    root, libraries = Path(), {}
    if not is_shipped(module):  # its project's settings, found from its file
        if not file:
            raise BuildError("the module that asks for it has no source file")
        found = projects.find_root(Path(import_root(module, file)))
        if found is None:
            raise BuildError("no cxforge.toml above the module that asks for it")
        project = projects.load(found)
        root, libraries = project.root, project.native
    root, declared = declared_for(module, root, libraries)
    if name not in declared:
        raise BuildError(f"the settings declare no native library {name!r}")
    return compile_library(root, name, declared[name], f"load_native({name!r})")


def main() -> None:
    """``python -m connectx_bundler.native_libs``: refresh the shipped agents' prebuilt libraries."""
    for name, sources in SHIPPED.items():
        print(write_prebuilt(agents_root(), name, sources))


if __name__ == "__main__":
    main()
