"""Assemble one self-contained submission file from the modules and data an agent uses.

The file embeds each module's source and runs it, at load time, into its own
module object, the way Python would import it (parent packages first, relative
imports, imports inside functions), through a private ``__import__`` that serves
the embedded modules.  It never reads the project, and it leaves the host's
``sys.modules`` as it found it.  Data files are decoded once and checked by
sha256 before any agent code runs.

Kaggle ``exec``'s the file in an empty dict and takes the LAST callable in it,
so the file defines, in this order, only ``_cxforge_agent`` (the loaded entry
function) and ``agent``; the loader function is deleted after use.  Whatever
the embedded sources define or import stays inside their own module objects.
"""

from __future__ import annotations

import ast
import gzip
import io
import re
import tarfile
from dataclasses import dataclass

from connectx_bundler.embed import DataFile, encode, wrapped_literal
from connectx_bundler.imports import SourceModule

RESOURCES_MODULE = "connectx_forge.runtime"

HEADER = """\
# ConnectX submission for Kaggle, built by connectx-forge {version}.
# Agent {name!r}: {module}.{function}; {n_modules} embedded module(s), {n_data} embedded data file(s).
# Sources sha256: {sources_sha256}
# Self-contained: it needs only the Python standard library and numpy.  Kaggle takes the
# last callable in this file, `agent`, defined at the end.  Do not edit: rebuild with `cxforge build`.
"""

LOADER = '''\


def _cxforge_load():
    """Run the embedded modules as Python would import them; return the agent function."""
    import base64
    import builtins
    import hashlib
    import linecache
    import sys
    import types
    import zlib

    sources = {
@SOURCES@
    }
    order = @ORDER@
    data = {
@DATA@
    }
    files = {}
    for name, (digest, blob) in data.items():
        content = zlib.decompress(base64.b64decode(blob))
        if hashlib.sha256(content).hexdigest() != digest:
            raise ImportError(f"this submission is corrupted: embedded data file {name!r} fails its sha256 check")
        files[name] = content
    tops = {name.partition(".")[0] for name in sources}
    modules = {}
    missing = object()
    host_import = builtins.__import__
    scope = dict(builtins.__dict__)

    def load(name):
        if name in modules:
            return modules[name]
        if name not in sources:
            raise ModuleNotFoundError(f"No module named {name!r} in this submission", name=name)
        parent, _, child = name.rpartition(".")
        if parent:
            load(parent)
            if name in modules:  # the parent package imported it
                return modules[name]
        filename, is_package, source = sources[name]
        module = types.ModuleType(name)
        module.__dict__.update(__builtins__=scope, __package__=name if is_package else parent)
        if is_package:
            module.__path__ = []
        modules[name] = module
        previous = sys.modules.get(name, missing)
        sys.modules[name] = module  # while it runs: dataclasses and typing look classes' modules up there
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
        try:
            exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
        except BaseException:
            del modules[name]
            raise
        finally:
            if previous is missing:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        if name == @RESOURCES@:
            module.EMBEDDED.update(files)
        if parent:
            setattr(modules[parent], child, module)
        return module

    def bundled_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            base = ((globals or {}).get("__package__") or "").rsplit(".", level - 1)
            if len(base) < level or not base[0]:
                raise ImportError("attempted relative import beyond top-level package")
            name = f"{base[0]}.{name}" if name else base[0]
        if name.partition(".")[0] not in tops:
            return host_import(name, globals, locals, fromlist, 0)
        module = load(name)
        for item in fromlist or ():
            if item != "*" and not hasattr(module, item) and f"{name}.{item}" in sources:
                load(f"{name}.{item}")
        return module if fromlist else modules[name.partition(".")[0]]

    scope["__import__"] = bundled_import
    for name in order:
        load(name)
    return getattr(modules[@ENTRY_MODULE@], @ENTRY_FUNCTION@)


_cxforge_agent = _cxforge_load()
del _cxforge_load


def agent(obs, config):
    """Kaggle's entry point: agent @NAME@ (@QUALNAME@)."""
    return _cxforge_agent(@CALL@)
'''


@dataclass(frozen=True)
class BundleInfo:
    """What the header and the agent wrapper say about the bundle."""

    name: str
    module: str
    function: str
    version: str
    sources_sha256: str
    arity: int | None  # positional parameters of the entry function, when known


def source_literal(text: str) -> str:
    """A Python string literal for ``text`` that keeps it readable: raw triple-quoted where possible."""
    candidates = []
    if "'''" not in text and not text.endswith(("'", "\\")) and "\r" not in text:
        candidates.append(f"r'''{text}'''")
    escaped = text.replace("\\", "\\\\").replace("'''", "\\'\\'\\'").replace("\r", "\\r")
    if escaped.endswith("'"):
        escaped = escaped[:-1] + "\\'"
    candidates.append(f"'''{escaped}'''")
    for literal in candidates:
        try:
            if ast.literal_eval(literal) == text:
                return literal
        except (SyntaxError, ValueError):
            continue
    return repr(text)


def render(modules: tuple[SourceModule, ...], data: tuple[DataFile, ...], info: BundleInfo) -> str:
    """The submission's source text: deterministic for the same inputs."""
    indent = " " * 8
    sources = "".join(
        f"{indent}{m.name!r}: ({m.path!r}, {m.is_package!r}, {source_literal(m.source)}),\n" for m in modules
    ).rstrip("\n")
    blobs = "".join(
        f"{indent}{f.name!r}: ({f.sha256!r}, {wrapped_literal(encode(f.content), indent)}),\n" for f in data
    ).rstrip("\n")
    call = "obs" if info.arity == 1 else "obs, config"
    values = {"@SOURCES@": sources, "@DATA@": blobs, "@ORDER@": repr(tuple(m.name for m in modules)),
              "@RESOURCES@": repr(RESOURCES_MODULE), "@ENTRY_MODULE@": repr(info.module),
              "@ENTRY_FUNCTION@": repr(info.function), "@NAME@": repr(info.name),
              "@QUALNAME@": f"{info.module}.{info.function}", "@CALL@": call}
    text = re.sub(r"@[A-Z_]+@", lambda m: values[m.group(0)], LOADER)  # one pass: sources are not rescanned
    header = HEADER.format(version=info.version, name=info.name, module=info.module, function=info.function,
                           n_modules=len(modules), n_data=len(data), sources_sha256=info.sources_sha256)
    return header + text


def pack_tar_gz(source: str) -> bytes:
    """A deterministic .tar.gz holding ``source`` as main.py (fixed mtime, owner and mode)."""
    content = source.encode("utf-8")
    info = tarfile.TarInfo("main.py")
    info.size, info.mtime, info.mode = len(content), 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(content))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(tar_bytes.getvalue())
    return out.getvalue()
