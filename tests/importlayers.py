"""import-linter's contracts (pyproject.toml's ``[tool.importlinter]``) over the packages the project installs.

import-linter reads a package from its folder, but ``connectx_forge.build`` is build/ beside the folder of
``connectx_forge`` (tools/; pyproject.toml's ``package-dir``), which it cannot see from the editable install.  So this
lays out the installed tree as links in a temporary folder
(what a wheel holds, without copying a file) and runs ``lint-imports`` against it in a fresh interpreter, whose
import path finds that tree first.  Run it with ``make lint`` or
``python -m tests.importlayers``; the test suite runs it too (tests/unit/test_layers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_dirs() -> dict[str, str]:
    """pyproject.toml's ``package-dir``: import name -> folder of the checkout."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"]["package-dir"])


def lay_out(tree: Path) -> Path:
    """The installed layout under ``tree``, as links into the checkout: a package is a link to its folder, and
    ``connectx_forge`` (a folder holding other folders' packages) and a namespace package a folder of links."""
    mapping = package_dirs()
    tree.mkdir(parents=True, exist_ok=True)
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        target, source = tree.joinpath(*package.split(".")), ROOT / folder
        namespace = not (source / "__init__.py").exists()
        if namespace or any(other.startswith(package + ".") for other in mapping):
            target.mkdir(parents=True)
            for entry in source.iterdir():
                if entry.name != "__pycache__":
                    target.joinpath(entry.name).symlink_to(entry)
            if namespace:  # a namespace package (build/) is laid out as a package, so that a contract can name it
                target.joinpath("__init__.py").touch()
        else:
            target.symlink_to(source, target_is_directory=True)
    return tree


def run(config: Path = ROOT / "pyproject.toml") -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of ``config`` over the laid-out tree: its exit status and report."""
    with tempfile.TemporaryDirectory(prefix="cxforge-layers-") as folder:
        tree = lay_out(Path(folder))
        path = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
        code = ("import sys; from importlinter.cli import lint_imports; "
                f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True))")
        return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": path, "COLUMNS": "160"})


_CYCLES = """
import json, sys
import grimp
graph = grimp.build_graph("connectx_forge", "agents", cache_dir=None)
order, low, stack, on, found = {}, {}, [], set(), []
def visit(module):
    order[module] = low[module] = len(order)
    stack.append(module)
    on.add(module)
    for imported in graph.find_modules_directly_imported_by(module):
        if imported not in order:
            visit(imported)
            low[module] = min(low[module], low[imported])
        elif imported in on:
            low[module] = min(low[module], order[imported])
    if low[module] == order[module]:
        part = []
        while not part or part[-1] != module:
            part.append(stack.pop())
            on.discard(part[-1])
        if len(part) > 1:
            found.append(sorted(part))
for module in sorted(graph.modules):
    if module not in order:
        visit(module)
print(json.dumps(sorted(found)))
"""


def cycles() -> list[list[str]]:
    """The import cycles of the installed packages, counting every import (at module level or in a function):
    each a strongly connected set of modules (Tarjan's algorithm over grimp's graph, import-linter's own)."""
    with tempfile.TemporaryDirectory(prefix="cxforge-layers-") as folder:
        tree = lay_out(Path(folder))
        done = subprocess.run([sys.executable, "-c", _CYCLES], cwd=ROOT, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(tree)})
    found: list[list[str]] = json.loads(done.stdout)
    return found


if __name__ == "__main__":
    result = run()
    print(result.stdout + result.stderr, end="")
    sys.exit(result.returncode)
