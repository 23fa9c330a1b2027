"""The manifest written beside a submission: what was built, from what, and its hashes.

It is deterministic (sorted keys, no timestamps, no absolute paths), so two
builds of the same sources give the same manifest as well as the same file.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from connectx_forge.build.embed import DataFile
from connectx_forge.build.imports import SourceModule

DISTRIBUTION = "connectx-forge"


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
    """The manifest beside ``output``: same stem, ``.json`` (submission.tar.gz -> submission.json)."""
    name = output.name
    stem = name[: -len(".tar.gz")] if name.endswith(".tar.gz") else output.stem
    return output.with_name(stem + ".json")


def make_manifest(*, name: str, module: str, function: str, spec: Any, floors: dict[str, float],
                  modules: tuple[SourceModule, ...], data: tuple[DataFile, ...], content: bytes, main_py: bytes,
                  fmt: str) -> dict[str, Any]:
    """The manifest's fields; ``spec`` is the registry entry (None for a project), ``floors`` the check's."""
    return {
        "agent": name,
        "module": module,
        "function": function,
        "floors": dict(floors),
        "valid": spec.valid if spec is not None else True,
        "submittable": spec.submittable if spec is not None else True,
        "format": fmt,
        "size": len(content),
        "sha256": sha256(content),
        "main_py_sha256": sha256(main_py),
        "sources_sha256": sources_sha256(modules, data),
        "modules": [{"name": m.name, "path": m.path, "sha256": sha256(m.source.encode("utf-8"))} for m in modules],
        "data": [{"name": f.name, "size": len(f.content), "sha256": f.sha256} for f in data],
        "tool_version": tool_version(),
    }


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"
