"""The build pipeline: agent -> import graph -> data -> one file (or .tar.gz) + manifest.

``target_of`` turns a player (a project folder, a ``.py`` file, a registered
agent: ``connectx_forge.play.resolve`` decides which) into a ``Target``, ``target_for_module``
a module; ``build`` makes the submission in memory; ``write`` puts it and its
manifest on disk.  Nothing here imports agent code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from agents.registry import AgentSpec, get
from connectx_bundler import native_libs
from connectx_bundler import project as projects
from connectx_bundler.bundle import RESOURCES_MODULE, BundleInfo, pack_tar_gz, render
from connectx_bundler.embed import DataFile, data_names, load_data
from connectx_bundler.errors import BuildError
from connectx_bundler.imports import (
    PROJECT_PACKAGE,
    RUNTIME_MODULES,
    SourceModule,
    check_defines,
    collect,
    positional_arity,
    top_level_names,
)
from connectx_bundler.manifest import (
    Manifest,
    dumps,
    make_manifest,
    manifest_path,
    read_manifest,
    sources_sha256,
    tool_version,
)
from connectx_bundler.reads import check_reads
from connectx_forge import archive, boundedread
from connectx_forge.paths import agents_root
from connectx_forge.players.player import PROJECT, REGISTERED, Player
from connectx_forge.safe_write import write_bytes, write_text

DEFAULT_SIZE_LIMIT = 5_000_000
FORMATS = ("py", "tar.gz")


@dataclass(frozen=True)
class Target:
    """What to build: the agent's name, its module and function, where it lives, and its floors.

    ``root`` is the folder its modules are imported from (default: the
    toolkit's own, for the shipped agents); ``tops`` limits which of the root's
    top-level names are the project's (the shipped agents: ``agents`` alone).
    """

    name: str
    module: str
    function: str = "agent"
    path: Path | None = None  # the entry file, for a file whose module name is not its path
    spec: AgentSpec | None = None  # a shipped agent's registry entry (None for a project)
    root: Path | None = None
    tops: frozenset[str] | None = None
    floors: dict[str, float] = field(default_factory=dict)
    settings: Path | None = None  # the project's settings file, if any
    native: dict[str, list[str]] = field(default_factory=dict)  # C library name -> sources (native_libs.py)
    origin: Path | None = None  # a lone .py as given, built from its private copy (``path``: project.alone)
    game: str = projects.catalog.CONNECTX  # the game it plays (the manifest names any but ConnectX)


@dataclass(frozen=True)
class Built:
    """A built submission: its source, the bytes to write (py or tar.gz) and its manifest."""

    source: str
    content: bytes
    manifest: Manifest


def default_root() -> Path:
    """The folder the shipped agents are imported from (this checkout, or site-packages)."""
    return agents_root()


SHIPPED_TOPS = frozenset({PROJECT_PACKAGE})


def target_for_project(project: projects.Project) -> Target:
    """The target that builds a user's agent project."""
    return Target(name=project.name, module=project.module, function=project.function, path=project.entry_path,
                  root=project.root, floors=dict(project.floors), settings=project.settings,
                  native=dict(project.native), origin=project.origin, game=project.game)


def target_for_file(path: Path, root: Path, function: str | None = None) -> Target:
    """The target for a ``.py`` file: a module of the shipped agents, else the project it belongs to."""
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
        return Target(name=parts[-1], module=".".join(parts), function=function or "agent", root=root,
                      tops=SHIPPED_TOPS)
    stem = path.stem
    if stem == PROJECT_PACKAGE or stem in RUNTIME_MODULES:
        raise BuildError(f"{path}: cannot be built as a module named {stem!r}; rename the file")
    return target_for_project(projects.load(path, function))


def target_of(player: Player, root: Path | None = None, function: str | None = None) -> Target:
    """The target that builds a player (``connectx_forge.play.resolve.reference``): a project, a ``.py`` file
    (under ``root``, default the shipped agents' folder, a module of the shipped agents) or a registered agent."""
    shipped = default_root() if root is None else root
    if player.kind == PROJECT and player.path is not None:
        return target_for_project(projects.load(player.path, function))
    if player.kind == REGISTERED:
        spec = get(str(player.name))
        return Target(name=spec.name, module=spec.module, function=function or spec.function, spec=spec,
                      root=shipped, tops=SHIPPED_TOPS, floors=dict(spec.floors))
    if player.path is None:
        raise BuildError(f"{player.spec}: a {player.kind} player cannot be built")
    return target_for_file(player.path, shipped, function)


def target_for_module(module: str, root: Path, function: str | None) -> Target:
    """``--module``: ``agents.MODULE`` (or ``MODULE``, meaning the same) of the shipped agents, or a project's."""
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        raise BuildError(f"--module {module!r} is not a dotted module name")
    if (root / PROJECT_PACKAGE).is_dir() and parts[0] != PROJECT_PACKAGE \
            and projects.module_file(root, f"{PROJECT_PACKAGE}.{module}") is not None:
        module = f"{PROJECT_PACKAGE}.{module}"
    if projects.module_file(root, module) is None:
        raise BuildError(f"--module {module}: no {module.replace('.', '/')}.py under {root}")
    tops = SHIPPED_TOPS if module.partition(".")[0] == PROJECT_PACKAGE else None
    return Target(name=module.rpartition(".")[2], module=module, function=function or "agent", root=root, tops=tops)


ALONE = ("a lone .py is built alone, from a folder holding only it: to bundle the files beside it, make its "
         "folder a project (a main.py, or cxforge.toml: cxforge new)")


def build(target: Target, root: Path | None = None, fmt: str = "py",
          size_limit: int = DEFAULT_SIZE_LIMIT) -> Built:
    """The submission for ``target``, built statically from its sources (under ``root``, when given; a lone
    file's always from its private folder, ``project.alone``).

    A root other than the toolkit's that may not be a project's (``project.refuse_root``: ``/``, a home folder,
    a folder holding credentials) is refused; a lone file's errors name it as given, not its private copy.
    """
    if root is None or target.origin is not None:
        root = target.root if target.root is not None else default_root()
    if Path(os.path.realpath(root)) != default_root():
        projects.refuse_root(root)
    try:
        return _build(target, root, fmt, size_limit)
    except BuildError as exc:
        if target.origin is None or target.path is None:
            raise
        said = str(exc).replace(str(target.path), str(target.origin)).replace(str(root), "its own folder")
        raise BuildError(f"{target.origin}: {said}; {ALONE}") from None


def _build(target: Target, root: Path, fmt: str, size_limit: int) -> Built:
    """``build``'s work, from ``root``."""
    if fmt not in FORMATS:
        raise BuildError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if target.settings is not None and target.path is None and projects.module_file(root, target.module) is None:
        stem = target.module.replace(".", "/")
        raise BuildError(f"{target.settings}: entry {target.module}:{target.function}: no {stem}.py or "
                         f"{stem}/__init__.py in the project ({root}); fix entry")
    graph = collect(root, target.module, target.path, target.tops)
    try:
        check_defines(graph, target.function, target.name)
    except BuildError as exc:
        if target.settings is None:
            raise
        raise BuildError(f"{exc}; fix entry in {target.settings}") from None
    for module in graph.modules:
        if not module.library:
            check_reads(module)
    data = load_data(graph.modules) + native_libraries(target, root, graph.modules)
    if data:
        resources = next((m for m in graph.modules if m.name == RESOURCES_MODULE), None)
        reader = next((m for m in graph.modules if data_names(m)), graph.entry)
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
    manifest = make_manifest(target, modules=graph.modules, data=data, content=content, main_py=main_py, fmt=fmt)
    return Built(source, content, manifest)


def native_libraries(target: Target, root: Path, modules: tuple[SourceModule, ...]) -> tuple[DataFile, ...]:
    """The C libraries the modules load (``load_native("NAME")``), compiled and ready to embed as data files.

    A shipped agent's module names the shipped libraries (``native_libs.SHIPPED``), the project's its settings'.
    """
    wanted: dict[str, tuple[str, str]] = {}
    for module in modules:
        if module.library and not native_libs.is_shipped(module.name):
            continue
        for name, line in native_libs.native_names(module).items():
            wanted.setdefault(name, (f"{module.path}:{line}", module.name))
    out = []
    for name, (where, module_name) in sorted(wanted.items()):
        base, declared = native_libs.declared_for(module_name, root, target.native)
        if name not in declared:
            listed = ", ".join(sorted(declared)) or "none"
            raise BuildError(f"{where}: load_native({name!r}), but the project's settings declare no such library "
                             f"(declared: {listed}); add [native] {name} = [\"native/{name}.c\"] to cxforge.toml")
        content = native_libs.compile_library(base, name, declared[name], where)
        out.append(DataFile(native_libs.data_name(name), content))
    return tuple(out)


def repack(path: Path, fmt: str) -> Built:
    """A built submission (``.py`` or ``.tar.gz``) in format ``fmt``, its manifest carried over
    (``read_manifest``: a stale one is refused, never dropped with its floors).

    Only ``main.py`` of a ``.tar.gz`` is kept: files beside it are not the bundler's and are refused.
    """
    import hashlib

    # the archive read by the rules and bounds that check and match read it by (tools/connectx_forge/archive.py)
    main = archive.main_alone(path) if path.name.endswith(".tar.gz") else \
        boundedread.read_bytes(path, archive.MAX_UNPACKED_BYTES)
    source = boundedread.decode(main, str(path))
    out = source.encode("utf-8") if fmt == "py" else pack_tar_gz(source)
    old = read_manifest(path) or Manifest(agent=path.name.split(".")[0], floors={}, valid=True, submittable=True)
    manifest: Manifest = {**old, "format": fmt, "size": len(out), "sha256": hashlib.sha256(out).hexdigest(),
                          "main_py_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest()}
    return Built(source, out, manifest)


def write(built: Built, output: Path) -> Path:
    """Write the submission to ``output`` and its manifest beside it; returns the manifest's path."""
    manifest = manifest_path(output)
    if output.suffix == ".json":
        raise BuildError(f"{output}: the output must not be a .json file (the manifest goes there)")
    try:  # the --force rule (tools/connectx_forge/outputs.py) was applied before the build, to -o and the default alike
        write_bytes(output, built.content, replace=True)
        write_text(manifest, dumps(built.manifest), replace=True)
    except OSError as exc:
        raise BuildError(f"{exc.filename}: cannot write ({exc.strerror})") from None
    return manifest
