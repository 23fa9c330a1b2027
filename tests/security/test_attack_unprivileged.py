"""The attack suite (``tests/security/test_attack_*.py``) again, as an unprivileged user: the promises of
docs/security.md hold whether cxforge runs as root (as CI, containers and hosted notebooks often do) or as a
plain user, whose jail is a user namespace.  Run from a root run of the suite; a plain user's run is already
the unprivileged one.  ``make test`` makes the user and lets it reach the checkout and interpreter
(``tests/grant_test_user.sh``)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import ROOT

USER = "cxforge-test"
ATTACKS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "security").glob("test_attack_*.py")
                 if p.name != Path(__file__).name)


def _as_user(tmp_path: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "CXFORGE_HYPOTHESIS_PROFILE": os.environ.get("CXFORGE_HYPOTHESIS_PROFILE", "default")}
    return subprocess.run(["runuser", "-u", USER, "--", "env", *(f"{k}={v}" for k, v in env.items()),
                           sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder the user may write (pytest's own are its runner's alone), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="cxforge-unprivileged-"))
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.long
def test_the_attacks_hold_for_an_unprivileged_user(shared_tmp: Path) -> None:
    tmp_path = shared_tmp
    if os.geteuid() != 0:
        pytest.skip("this run is unprivileged: the attack suite runs as this user here")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        pytest.skip(f"no user {USER}: make test makes it (tests/grant_test_user.sh)")
    reach = _as_user(tmp_path, "-c", "import connectx_forge.sandbox.jail", timeout=60)
    if reach.returncode != 0:
        pytest.skip(f"{USER} cannot run this interpreter and checkout: make test lets it "
                    f"(tests/grant_test_user.sh): {reach.stderr.strip()[-200:]}")
    assert ATTACKS
    run = _as_user(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t"),
                   *ATTACKS, timeout=900)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    assert " passed" in run.stdout, run.stdout[-2000:]
