"""Static checks in the suite (so in CI): ruff (``make test``) and mypy (``make test-long``) report nothing over
agents/, build/, tools/ and tests/."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests import typecheck

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (make test installs it)")
    folders = ["agents", "build", "tools", "tests"]
    out = subprocess.run([ruff, "check", "--no-cache", *folders], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]


@pytest.mark.long  # a minute of CPU on a fresh clone (it reads torch's 1,400 modules): make test-long and make lint
def test_mypy_finds_nothing() -> None:
    pytest.importorskip("mypy")
    errors = [e for e in typecheck.run() if ": error:" in e]
    assert not errors, "\n".join(errors[:50])


MOST_ANY = 100  # lines naming ``Any`` in the package's sources: types a reader can trust, kept from growing back


def test_any_stays_rare_and_mypy_is_strict() -> None:
    """``Any`` only where a value really is untyped (raw JSON before its check, an untyped library), and mypy's
    strict options on: untyped defs, bare generics and ``Any`` returned as a typed value are errors."""
    lines = [line for folder in ("agents", "build", "tools") for path in sorted((ROOT / folder).rglob("*.py"))
             for line in path.read_text(encoding="utf-8").splitlines() if re.search(r"\bAny\b", line)]
    assert len(lines) <= MOST_ANY, f"{len(lines)} lines name Any (at most {MOST_ANY})"
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert all(mypy.get(k) is True for k in ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any"))
