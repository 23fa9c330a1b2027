"""The build pipeline: agent -> import graph -> data -> one file (or .tar.gz) + manifest.

``resolve_target`` turns what the user named (a registered agent, a module, a
``.py`` path) into a ``Target``; ``build`` makes the submission in memory;
``write`` puts it and its manifest on disk.  Nothing here imports agent code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectx_forge.build.bundle import RESOURCES_MODULE, BundleInfo, pack_tar_gz, render
from connectx_forge.build.embed import data_names, load_data
from connectx_forge.build.errors import BuildError
from connectx_forge.build.imports import (
    PROJECT_PACKAGE,
    RUNTIME_MODULES,
    check_defines,
    collect,
    positional_arity,
    top_level_names,
)
from connectx_forge.build.manifest import dumps, make_manifest, manifest_path, sources_sha256, tool_version

DEFAULT_SIZE_LIMIT = 5_000_000
FORMATS = ("py", "tar.gz")


@dataclass(frozen=True)
class Target:
    """What to build: the agent's name, its module and function, and its registry entry if any."""

    name: str
    module: str
    function: str = "agent"
    path: Path | None = None  # the entry file, for a file outside the agents package
    spec: Any = None  # agents.registry.AgentSpec


@dataclass(frozen=True)
class Built:
    """A built submission: its source, the bytes to write (py or tar.gz) and its manifest."""

    source: str
    content: bytes
    manifest: dict[str, Any]


def default_root() -> Path:
    """The project root of this checkout (the folder holding agents/ and build/)."""
    return Path(__file__).resolve().parent.parent


def target_for_file(path: Path, root: Path, function: str = "agent") -> Target:
    """The target for a ``.py`` file: a module of the agents package, or a standalone entry file."""
    path = path.resolve()
    if not path.is_file():
        raise BuildError(f"{path}: no such file")
    try:
        parts = list(path.relative_to(root.resolve()).with_suffix("").parts)
    except ValueError:
        parts = []
    if parts and parts[0] == PROJECT_PACKAGE:
        if parts[-1] == "__init__":
            parts.pop()
        return Target(name=parts[-1], module=".".join(parts), function=function)
    stem = path.stem
    if not stem.isidentifier() or stem == PROJECT_PACKAGE or stem in RUNTIME_MODULES:
        raise BuildError(f"{path}: cannot be built as a module named {stem!r}; rename the file")
    return Target(name=stem, module=stem, function=function, path=path)


def resolve_target(name: str | None, root: Path, module: str | None = None, function: str | None = None) -> Target:
    """The target for a registered name (default: the strongest agent), a ``.py`` path or a module."""
    if module is not None:
        return Target(name=module.rpartition(".")[2], module=module, function=function or "agent")
    if name is not None and name.endswith(".py"):
        return target_for_file(Path(name), root, function or "agent")
    from agents.registry import UnknownAgent, get, strongest

    try:
        spec = strongest() if name is None else get(name)
    except UnknownAgent as exc:
        raise BuildError(str(exc)) from None
    return Target(name=spec.name, module=spec.module, function=function or spec.function, spec=spec)


def build(target: Target, root: Path | None = None, fmt: str = "py",
          size_limit: int = DEFAULT_SIZE_LIMIT) -> Built:
    """The submission for ``target``, built statically from the sources under ``root``."""
    root = default_root() if root is None else root
    if fmt not in FORMATS:
        raise BuildError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    graph = collect(root, target.module, target.path)
    check_defines(graph, target.function, target.name)
    data = load_data(root, graph.modules)
    if data:
        resources = next((m for m in graph.modules if m.name == RESOURCES_MODULE), None)
        reader = next(m for m in graph.modules if data_names(m))
        if resources is None:
            raise BuildError(f"{reader.path}: reads data files but does not import {RESOURCES_MODULE}.read_data")
        if "EMBEDDED" not in top_level_names(resources.tree)[0]:
            raise BuildError(f"{resources.path}: defines no EMBEDDED dict for the embedded data files")
    info = BundleInfo(target.name, target.module, target.function, tool_version(),
                      sources_sha256(graph.modules, data), positional_arity(graph, target.function))
    source = render(graph.modules, data, info)
    compile(source, "submission.py", "exec", dont_inherit=True)  # a bundler bug would show here, not on Kaggle
    main_py = source.encode("utf-8")
    content = main_py if fmt == "py" else pack_tar_gz(source)
    if len(content) > size_limit:
        raise BuildError(f"the submission would be {len(content):,} bytes, above the size limit of "
                         f"{size_limit:,} bytes (raise it with --size-limit)")
    manifest = make_manifest(name=target.name, module=target.module, function=target.function, spec=target.spec,
                             modules=graph.modules, data=data, content=content, main_py=main_py, fmt=fmt)
    return Built(source, content, manifest)


def write(built: Built, output: Path) -> Path:
    """Write the submission to ``output`` and its manifest beside it; returns the manifest's path."""
    manifest = manifest_path(output)
    if manifest == output:
        raise BuildError(f"{output}: the output must not be a .json file (the manifest goes there)")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(built.content)
        manifest.write_text(dumps(built.manifest), encoding="utf-8")
    except OSError as exc:
        raise BuildError(f"{exc.filename}: cannot write ({exc.strerror})") from None
    return manifest
