"""The bundle-safe runtime that agents import: ``read_data`` for the data files an agent ships, and
``load_native`` for its C libraries.

``from connectx_forge.runtime import read_data``, then ``read_data("data/weights.npy")``
with a path relative to the project root: the folder your modules are imported
from (the one holding ``cxforge.toml``).  In the source tree the file is read
from there; in a built submission the bundler has embedded it (compressed,
base64, sha256-checked) and fills ``EMBEDDED`` before any agent code runs, so
the same call works in both places.  Call it with a string literal: the
bundler finds the files a module needs by reading those calls, without
running the module.  A path that is not relative and inside the root (``..``,
a leading ``/``, a backslash), or that passes through a place where
credentials are kept (``CREDENTIALS``: ``.kaggle/``, ``.ssh/``, ... wherever
they are, followed links included), is refused with ``RefusedData``, as the
bundler refuses it.

``load_native("engine")`` returns the project's C library ``engine`` (declared
in its settings, ``[native] engine = ["native/engine.c"]``) as a ``ctypes.CDLL``,
or None: the agent then runs its pure-Python twin of the same functions.  In a
submission the library is embedded (compiled for Kaggle's runtime by
``cxforge build``) and loaded from memory (``memfd_create``, then
``/proc/self/fd/N``) where the kernel allows it, else from a temporary file in
the first writable place (the working folder, ``/kaggle_simulations/agent``,
the temporary folder); in the project folder it is compiled first, with the
pinned toolchain.  Which one runs, and why, is said once per process on stderr
(the agent's log on Kaggle).  ``CXFORGE_NATIVE=off``, read once, makes every
``load_native`` return None; ``CXFORGE_NATIVE=file`` skips the in-memory load
(tests use it).

This module is bundled into submissions: standard library only.
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile

EMBEDDED: dict[str, bytes] = {}
NATIVE_MODE = os.environ.get("CXFORGE_NATIVE", "on").strip().lower()  # on, off, or file (read once)
PLACES = (".", "/kaggle_simulations/agent")  # where a library may be written when memory will not do
ANNOUNCE = True  # say on stderr which library runs (the toolkit's own commands turn it off)
_loaded: dict[str, object] = {}
_notes: dict[str, str] = {}
# Where credentials are kept (as tools keep them in a home folder), by their path's last parts.  No project may
# hold one at its root (build/connectx_bundler/project.py), the build reads no file through one
# (build/connectx_bundler/files.py: modules, data, C)
# and read_data reads none, wherever the project is (docs/security.md).  Compared case-insensitively.
CREDENTIALS = (".kaggle", "kaggle.json", ".config/kaggle", ".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh",
               ".gnupg", ".password-store", ".docker", ".kube", ".git-credentials", ".netrc", ".pypirc", ".npmrc")


class MissingData(FileNotFoundError):
    """A data file that is neither embedded nor in the project."""


class RefusedData(PermissionError):
    """A data file name that is outside the project or where credentials are kept: never read."""


def credential_in(path: str) -> str | None:
    """The entry of ``CREDENTIALS`` that ``path`` (relative or absolute, either slash) passes through, or None."""
    parts = [part.casefold() for part in path.replace("\\", "/").split("/") if part]
    for place in CREDENTIALS:
        want = place.split("/")
        if any(parts[i:i + len(want)] == want for i in range(len(parts) - len(want) + 1)):
            return place
    return None


def refused(path: str) -> str | None:
    """Why ``read_data`` refuses data file name ``path`` (as the bundler does), or None."""
    if not path or path.startswith("/") or "\\" in path or ".." in path.split("/"):
        return "must be a path relative to the project root, inside the project (no '..', no leading '/', " \
               "forward slashes)"
    place = credential_in(path)
    return None if place is None else f"lies in {place}, where credentials are kept; read_data never reads one"


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
    """The bytes of data file ``path`` (relative to the project root): embedded in a bundle, else from disk;
    ``RefusedData`` for a name outside the project or where credentials are kept (``refused``), or whose file
    on disk is reached through such a place by a link."""
    why = refused(path) if isinstance(path, str) else "must be a string"
    if why is not None:
        raise RefusedData(f"data file {path!r} {why}")
    if path in EMBEDDED:
        return EMBEDDED[path]
    caller = sys._getframe(1).f_globals
    file = caller.get("__file__")
    if not file:
        raise MissingData(f"data file {path!r} is not embedded in this submission (rebuild it with cxforge build)")
    full = data_path(path, str(caller.get("__name__", "__main__")), str(file))
    place = credential_in(os.path.realpath(full))
    if place is not None:
        raise RefusedData(f"data file {path!r} leads to {os.path.realpath(full)}, in {place}, where credentials "
                          "are kept; read_data never reads one")
    try:
        with open(full, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise MissingData(f"data file {path!r} not found at {full} ({exc.strerror})") from None


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"cxforge: {text}\n")
    except Exception:
        pass


ELF_MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}


def foreign(content: bytes) -> str | None:
    """Why ``content`` cannot be this machine's shared object (not ELF, another machine), or None."""
    import platform

    if content[:4] != b"\x7fELF" or len(content) < 20:
        return "not an ELF shared object"
    built = ELF_MACHINES.get(int.from_bytes(content[18:20], "little"), "another machine")
    here = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    return None if built == here else f"built for {built}, and this machine is {here}"


def _from_bytes(name: str, content: bytes) -> tuple[object, str]:
    """``(library, how)`` for a shared object's bytes: from memory, else a temporary file; ``(None, why)``."""
    wrong = foreign(content)
    if wrong is not None:
        return None, wrong
    reasons = []
    if NATIVE_MODE != "file" and hasattr(os, "memfd_create"):
        try:
            fd = os.memfd_create(f"cxforge-{name}", 0)
            os.write(fd, content)
            return ctypes.CDLL(f"/proc/self/fd/{fd}"), "loaded from memory (memfd)"
        except Exception as exc:  # no memfd, or the kernel refuses to map it
            reasons.append(f"memory: {type(exc).__name__}: {exc}")
    for place in (*PLACES, tempfile.gettempdir()):
        path = None
        try:
            fd, path = tempfile.mkstemp(prefix=f"cxforge-{name}-", suffix=".so", dir=place)
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
            library = ctypes.CDLL(path)
            return library, f"loaded from a temporary file in {os.path.abspath(place)}"
        except Exception as exc:
            reasons.append(f"{place}: {type(exc).__name__}: {exc}")
        finally:
            if path is not None:
                try:
                    os.unlink(path)  # a loaded library stays mapped; nothing is left on disk
                except OSError:
                    pass
    return None, "; ".join(reasons)[:500]


def _compiled(name: str, module: str, file: str) -> bytes:
    """In a source tree (not a submission): the library as the toolkit builds it, which a submission does not
    hold (so the import is dynamic: the bundler must not follow it)."""
    import importlib

    native = importlib.import_module("connectx_bundler.native_libs")
    content: bytes = native.library_for(name, module, file)
    return content


def load_native(name: str) -> object:
    """The project's C library ``name`` as a ``ctypes.CDLL``, or None (then run the pure-Python twin)."""
    if name in _loaded:
        return _loaded[name]
    library: object = None
    if NATIVE_MODE == "off":
        how = "off (CXFORGE_NATIVE=off)"
    else:
        content = EMBEDDED.get(f"native/{name}.so")
        how = ""
        if content is None:
            caller = sys._getframe(1).f_globals
            try:
                content = _compiled(name, str(caller.get("__name__", "__main__")), str(caller.get("__file__", "")))
            except Exception as exc:
                how = f"not built ({exc})".splitlines()[0][:300]
        if content is not None:
            library, how = _from_bytes(name, content)
            if library is None:
                how = f"cannot be loaded ({how})"
    if ANNOUNCE:
        _say(f"native library {name!r}: {how}" + ("" if library is not None else "; running the pure-Python code"))
    _loaded[name] = library
    _notes[name] = how
    return library


def native_note(name: str) -> str:
    """How library ``name`` was loaded, or why not (after ``load_native(name)``)."""
    return _notes.get(name, "not asked for yet")
