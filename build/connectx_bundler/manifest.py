"""The manifest written beside a submission: what was built, from what, and its hashes.

Each built file has its own manifest (``manifest_path``), which names its
sha256: ``cxforge check`` refuses a manifest that does not describe its file.
It is deterministic (sorted keys, no timestamps, no absolute paths), so two
builds of the same sources give the same manifest as well as the same file.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Protocol, TypedDict

from agents.registry import AgentSpec
from connectx_bundler.embed import DataFile
from connectx_bundler.errors import BuildError
from connectx_bundler.imports import SourceModule
from connectx_forge import boundedread
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX

DISTRIBUTION = "connectx-forge"


class ModuleEntry(TypedDict):
    """A module inlined into the file: its import name, its path in the sources, its source's sha256."""

    name: str
    path: str
    sha256: str


class DataEntry(TypedDict):
    """A data file embedded in the file: its name, its size in bytes, its sha256."""

    name: str
    size: int
    sha256: str


class Manifest(TypedDict, total=False):
    """The manifest, a JSON object beside the built file (what ``make_manifest`` writes).  Read back
    (``read_manifest``) it is anyone's file: only ``floors`` (an object), ``agent`` (a string) and ``sha256``
    (the file's) are checked, so a reader uses ``.get``."""

    agent: str
    module: str
    function: str
    floors: dict[str, float]
    valid: bool
    submittable: bool
    format: str
    size: int
    sha256: str
    main_py_sha256: str
    sources_sha256: str
    modules: list[ModuleEntry]
    data: list[DataEntry]
    tool_version: str
    game: str  # the game it plays, where it is not ConnectX (a ConnectX manifest has none)


def tool_version() -> str:
    """The installed connectx-forge version, or ``0+unknown`` when it is not installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def sources_sha256(modules: tuple[SourceModule, ...], data: tuple[DataFile, ...]) -> str:
    """One hash over the inlined sources and data: sha256 of lines ``module NAME SHA`` / ``data NAME SHA``."""
    lines = [f"module {m.name} {sha256(m.source.encode('utf-8'))}\n" for m in modules]
    lines += [f"data {f.name} {f.sha256}\n" for f in data]
    return sha256("".join(lines).encode("utf-8"))


def manifest_path(output: Path) -> Path:
    """The manifest beside ``output``, named after the whole file name (submission.py -> submission.py.json,
    submission.tar.gz -> submission.tar.gz.json): each built file has its own, so building one format never
    replaces the manifest of another."""
    return output.with_name(output.name + ".json")


class Described(Protocol):
    """What the manifest says of the agent built (``builder.Target``): its name, module and function, its
    registry entry (None for a project), the check's floors and the game it plays."""

    @property
    def name(self) -> str: ...
    @property
    def module(self) -> str: ...
    @property
    def function(self) -> str: ...
    @property
    def spec(self) -> AgentSpec | None: ...
    @property
    def floors(self) -> dict[str, float]: ...
    @property
    def game(self) -> str: ...


def make_manifest(target: Described, *, modules: tuple[SourceModule, ...], data: tuple[DataFile, ...],
                  content: bytes, main_py: bytes, fmt: str) -> Manifest:
    """The manifest's fields; the game is written only where it is not ConnectX (a ConnectX build's manifest
    is as it was)."""
    spec = target.spec
    out = Manifest(
        agent=target.name,
        module=target.module,
        function=target.function,
        floors=dict(target.floors),
        valid=spec.valid if spec is not None else True,
        submittable=spec.submittable if spec is not None else True,
        format=fmt,
        size=len(content),
        sha256=sha256(content),
        main_py_sha256=sha256(main_py),
        sources_sha256=sources_sha256(modules, data),
        modules=[ModuleEntry(name=m.name, path=m.path, sha256=sha256(m.source.encode("utf-8"))) for m in modules],
        data=[DataEntry(name=f.name, size=len(f.content), sha256=f.sha256) for f in data],
        tool_version=tool_version(),
    )
    if target.game != CONNECTX:
        out["game"] = target.game
    return out


def dumps(manifest: Manifest) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def read_manifest(path: Path) -> Manifest | None:
    """The manifest of the built file ``path`` (``manifest_path``), None when there is none.

    ``BuildError``, one line, for a manifest that is not a JSON object with a ``floors`` object, or whose
    sha256 is not the file's: a manifest is never silently dropped, so its floors are never skipped.
    """
    manifest = manifest_path(path)
    if not manifest.is_file():
        return None
    try:
        data = boundedread.read_json(manifest, boundedread.MAX_SETTINGS, f"{manifest}: not a readable JSON manifest")
    except UserError as exc:  # too large, too deep, not JSON
        raise BuildError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("floors") or {}, dict):
        raise BuildError(f"{manifest}: a manifest must be a JSON object with a 'floors' object")
    if not isinstance(data.get("game", CONNECTX), str):
        raise BuildError(f"{manifest}: the game must be a game's name, not {data['game']!r}")
    if not isinstance(data.get("agent", ""), str):
        raise BuildError(f"{manifest}: the agent's name must be a string, not {data['agent']!r}")
    data["floors"] = data.get("floors") or {}
    digest = sha256(path.read_bytes())
    if data.get("sha256") != digest:
        raise BuildError(f"{manifest} does not describe {path.name} (its sha256 is {str(data.get('sha256'))[:12]}"
                         f"..., the file's {digest[:12]}...): rebuild it with cxforge build (or make "
                         "submission), or delete the stale manifest")
    return Manifest(**data)
