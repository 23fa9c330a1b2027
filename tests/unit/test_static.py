"""Static checks in the suite (so in CI): ruff (``make test``) and mypy (``make test-long``) report nothing over
agents/, build/, tools/ and tests/."""

from __future__ import annotations

import shutil
import subprocess
import sys
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
