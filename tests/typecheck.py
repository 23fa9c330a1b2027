"""mypy over agents/, build/ and tools/, under the import names the project installs.

Each package sits in a folder of its name (agents/, tools/connectx_forge/, build/connectx_bundler/); this hands
mypy each file with its module name.  Run it with ``make lint`` or ``python -m tests.typecheck``; the test suite
runs it too (tests/unit/test_static.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


PACKAGES = {"agents": "agents", "connectx_forge": "tools/connectx_forge", "connectx_bundler": "build/connectx_bundler"}


def module_sources() -> list[tuple[str, str]]:
    """``(path, module)`` for every source file of the installed packages."""
    out = []
    for package, folder in sorted(PACKAGES.items()):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.append((str(path.relative_to(ROOT)), ".".join([package, *parts])))
    return out


def run() -> list[str]:
    """mypy's error lines (empty when clean)."""
    from mypy import build
    from mypy.main import process_options
    from mypy.modulefinder import BuildSource

    sources = [BuildSource(path, module) for path, module in module_sources()]
    _, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), "agents"])
    options.cache_dir = str(ROOT / ".cache" / "mypy")
    result = build.build(sources, options)
    return list(result.errors)


def main() -> int:
    errors = run()
    for line in errors:
        print(line)
    print(f"mypy: {sum(': error:' in e for e in errors)} error(s) in {len(module_sources())} files")
    return 1 if any(": error:" in e for e in errors) else 0


if __name__ == "__main__":
    sys.exit(main())
