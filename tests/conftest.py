"""Test setup: Hypothesis profiles, picked by CXFORGE_HYPOTHESIS_PROFILE (dev by default, ci on CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("CXFORGE_HYPOTHESIS_PROFILE", "dev"))

ROOT = Path(__file__).resolve().parent.parent
PONS_DIR = ROOT.parent / "shared" / "data" / "pons"


@pytest.fixture(scope="session")
def pons_dir() -> Path:
    """Pascal Pons' benchmark sets at ../shared/data/pons; skips the test where they are absent."""
    if not (PONS_DIR / "Test_L3_R1").is_file():
        pytest.skip(f"Pons benchmark sets not found at {PONS_DIR} (they live in ../shared, outside the repo)")
    return PONS_DIR


@pytest.fixture
def empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty working folder, checked to be empty still at the end."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder
    assert sorted(p.name for p in folder.iterdir()) == []
