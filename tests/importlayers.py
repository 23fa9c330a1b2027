"""import-linter's contracts (pyproject.toml's ``[tool.importlinter]``) over the checkout as it is.

Each package sits in a folder of its name (``agents/``, ``tools/connectx_forge/``, ``build/connectx_bundler/``),
so import-linter finds them where the editable install points.  Run it with ``make lint`` or
``python -m tests.importlayers``; the test suite runs it too (tests/unit/test_layers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def root_packages() -> list[str]:
    """The packages the contracts cover: pyproject.toml's ``root_packages``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["root_packages"])


def run(config: Path = ROOT / "pyproject.toml") -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of ``config``: its exit status and report."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "160"})


_CYCLES = """
import json, sys
import grimp
graph = grimp.build_graph(*sys.argv[1:], cache_dir=None)
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
    """The import cycles of the packages, counting every import (at module level or in a function): each a
    strongly connected set of modules (Tarjan's algorithm over grimp's graph, import-linter's own)."""
    done = subprocess.run([sys.executable, "-c", _CYCLES, *root_packages()], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    found: list[list[str]] = json.loads(done.stdout)
    return found


if __name__ == "__main__":
    result = run()
    print(result.stdout + result.stderr, end="")
    sys.exit(result.returncode)
