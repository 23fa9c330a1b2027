"""Test setup: Hypothesis profiles, picked by CXFORGE_HYPOTHESIS_PROFILE (dev by default, ci on CI), and the one
pytest-xdist group of the tests that share the machine or the checkout."""

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
SECURITY = ROOT / "tests" / "security"
MACHINE = "machine"


def shares_the_machine(path: Path, checkout: bool) -> bool:
    """Whether a test runs in the one serial xdist group: an attack file of tests/security/ (its checks count
    processes on the whole machine, the unprivileged re-run repeats them all, and some plant files in the checkout),
    or a test marked ``checkout`` (it builds a wheel from the checkout or checks that the checkout is unchanged)."""
    return (path.parent == SECURITY and path.name.startswith("test_attack_")) or checkout


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that share the machine with one xdist group: ``make test`` runs the suite on every core
    (``-n auto --dist loadgroup``), and a group runs on one worker, one test after another."""
    for item in items:
        if shares_the_machine(item.path, item.get_closest_marker("checkout") is not None):
            item.add_marker(pytest.mark.xdist_group(MACHINE))


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
