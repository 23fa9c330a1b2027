"""Native code in a submission: C sources compiled for Kaggle's runtime with a pinned toolchain, then embedded.

A project declares its libraries in its settings (``[native] engine =
["native/engine.c"]``) and loads one with ``connectx_forge.runtime.load_native
("engine")``, which returns a ``ctypes`` library or None, so that the agent runs
its pure-Python twin instead.  The bundler finds those calls statically (the
name must be a string literal, as ``read_data``'s), compiles each library once
with the ``ziglang`` package (a hermetic clang and libc from PyPI, pinned in
the ``native`` extra) for ``x86_64-linux-gnu.2.17`` (Kaggle's machines are
x86_64 Linux; an old glibc baseline loads on any newer one; no
``-march=native``), and embeds the shared object as the data file
``native/NAME.so`` (compressed, base64, sha256-checked).  The same sources and
toolchain give the same bytes; the result is cached in the user cache by their
sha256.

A library may also be committed prebuilt beside its first source
(``NAME.so`` with ``NAME.so.key``, the cache key it was built under, written by
``write_prebuilt``; ``make native`` refreshes the shipped agents' own): a build
uses it while the key matches the sources, so that building needs no
toolchain; tests/test_native.py rebuilds it and finds the same bytes.  The
shipped agents declare their libraries here (``SHIPPED``), as a project does in
its settings.
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from connectx_forge.build.embed import calls
from connectx_forge.build.errors import BuildError
from connectx_forge.build.imports import SourceModule

LOADER = "load_native"
TOOLCHAIN = "ziglang"
TOOLCHAIN_VERSION = "0.17.1"
TARGET = "x86_64-linux-gnu.2.17"
FLAGS = ("-O2", "-shared", "-fPIC", "-s", "-fno-sanitize=all", "-fno-stack-protector", "-Wall",
         "-Wno-unused-function")  # -s: stripped, so no path of the build machine is left in it
INSTALL = f"pip install '{TOOLCHAIN}=={TOOLCHAIN_VERSION}' (the native extra: pip install -e '.[native]')"
ERROR_LINES = 20  # of the compiler's output, in the error
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
    """The command that runs the pinned C compiler; ``BuildError`` naming how to install it."""
    try:
        from importlib import metadata

        version = metadata.version(TOOLCHAIN)
    except Exception:
        raise BuildError(f"this agent has native code (C): compiling it needs the pinned toolchain; {INSTALL}") \
            from None
    if version != TOOLCHAIN_VERSION:
        raise BuildError(f"the C toolchain is {TOOLCHAIN} {version}, not the pinned {TOOLCHAIN_VERSION}: the "
                         f"build would not be reproducible; {INSTALL}")
    return [sys.executable, "-m", TOOLCHAIN, "cc"]


def cache_key(sources: list[tuple[str, bytes]]) -> str:
    """The sha256 of the sources (names and bytes), the flags, the target and the toolchain's version."""
    h = hashlib.sha256()
    for part in (TOOLCHAIN, TOOLCHAIN_VERSION, TARGET, *FLAGS):
        h.update(part.encode() + b"\0")
    for name, content in sources:
        h.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return h.hexdigest()


def is_shipped(module: str) -> bool:
    """Whether module ``module`` is one of the shipped agents' (its libraries are ``SHIPPED``'s)."""
    from connectx_forge.build.imports import PROJECT_PACKAGE

    return module.split(".")[0] == PROJECT_PACKAGE


def declared_for(module: str, root: Path, project: dict[str, list[str]]) -> tuple[Path, dict[str, list[str]]]:
    """``(root, libraries)`` that module ``module`` names with ``load_native``: the shipped agents' (``SHIPPED``,
    from their root) for one of theirs, else its project's (``project``, from ``root``)."""
    from connectx_forge.build.imports import agents_root

    return (agents_root(), SHIPPED) if is_shipped(module) else (root, project)


def prebuilt_path(root: Path, name: str, sources: list[str]) -> Path:
    """Where library ``name`` may be committed prebuilt: ``NAME.so`` beside its first source."""
    return (root / sources[0]).parent / f"{name}.so"


def read_sources(root: Path, name: str, sources: list[str], where: str) -> list[tuple[str, bytes]]:
    read: list[tuple[str, bytes]] = []
    for rel in sources:
        try:
            read.append((rel, (root / rel).read_bytes()))
        except OSError as exc:
            raise BuildError(f"{where}: native library {name!r}: cannot read {rel} ({exc.strerror})") from None
    return read


def compile_library(root: Path, name: str, sources: list[str], where: str, prebuilt: bool = True) -> bytes:
    """The shared object of library ``name`` (its C ``sources``, relative to the project ``root``): from the
    user cache, else the committed prebuilt file while its key matches (``prebuilt``), else compiled with the
    pinned toolchain; ``BuildError`` with the compiler's lines."""
    read = read_sources(root, name, sources, where)
    from connectx_forge.tools.paths import user_cache

    key = cache_key(read)
    cache = user_cache() / "native"
    out = cache / f"{name}-{key[:24]}.so"
    if out.is_file():
        return out.read_bytes()
    committed = prebuilt_path(root, name, sources)
    key_file = committed.with_name(committed.name + ".key")
    if prebuilt and committed.is_file() and key_file.is_file() and key_file.read_text().strip() == key:
        return committed.read_bytes()
    command = toolchain()
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cxforge-cc-") as folder:
        work = Path(folder)
        for rel, content in read:  # compiled from a copy, so that no path of this machine enters the object
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(content)
        env = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(cache / "zig"), "ZIG_LOCAL_CACHE_DIR": str(work / ".zig")}
        target = work / "out.so"
        proc = subprocess.run([*command, "-target", TARGET, *FLAGS, "-o", str(target), *(rel for rel, _ in read)],
                              cwd=work, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not target.is_file():
            lines = (proc.stderr or proc.stdout).strip().splitlines()[:ERROR_LINES]
            raise BuildError(f"{where}: native library {name!r} does not compile:\n" + "\n".join(lines))
        content = target.read_bytes()
    from connectx_forge.build.cache import atomic_write

    atomic_write(out, content)
    return content


def write_prebuilt(root: Path, name: str, sources: list[str]) -> Path:
    """Compile library ``name`` with the pinned toolchain and commit-ready write it beside its first source
    (``NAME.so`` and ``NAME.so.key``); returns the library's path."""
    from connectx_forge.build.cache import atomic_write

    content = compile_library(root, name, sources, "write_prebuilt", prebuilt=False)
    path = prebuilt_path(root, name, sources)
    atomic_write(path, content)
    atomic_write(path.with_name(path.name + ".key"), (cache_key(read_sources(root, name, sources, "")) + "\n").encode())
    return path


def library_for(name: str, module: str, file: str) -> bytes:
    """Library ``name`` as module ``module`` (at ``file``) declares it: a shipped agent's from ``SHIPPED``, a
    project's from its settings; compiled (or prebuilt) as a build would embed it.  For ``load_native`` in a
    source tree."""
    from connectx_forge.build import project as projects
    from connectx_forge.runtime import import_root

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
    """``python -m connectx_forge.build.native``: refresh the shipped agents' prebuilt libraries."""
    from connectx_forge.build.imports import agents_root

    for name, sources in SHIPPED.items():
        print(write_prebuilt(agents_root(), name, sources))


if __name__ == "__main__":
    main()
