"""The install: what Kaggle runs is what we check, and the project shadows no other package.

kaggle-environments goes in with ``--no-deps`` (the lean runtime layer), so these
tests pin the ConnectX code that actually runs to the bytes of the 1.33.2 wheel,
and check that the project installs only its own import names (``agents`` and
the ``connectx_forge`` package), so that PyPA's ``build`` keeps its name.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KAGGLE_ENVIRONMENTS = "1.33.2"
# sha256 (urlsafe base64, as in a wheel's RECORD) of the files of the kaggle-environments 1.33.2 wheel
# that ConnectX runs: its rules and specification, the agent loader, the environment core.
PINNED = {
    "envs/connectx/connectx.py": "74v1XUqRNSNatskVpBauk-KGvaElfamhNiAO365GvT0",
    "envs/connectx/connectx.json": "Tt-vH-em-RKK5scAcjJ82zOvGov42OW6u9IJCPkS9Fo",
    "agent.py": "Cse68SErTOHquuPMHLtVyY7_714NBIVSKovocJfDmk8",
    "core.py": "CSLEWZobbg2MPa3wauUpf5gTjYWdaG8A2u5vNubUXQ4",
    "utils.py": "U3tiexF4TUJBR-9X67A2mwOb-DyfiR6B8QSGsfVSM0s",
}


def _digest(path: Path) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


def test_kaggle_environments_is_the_pinned_release() -> None:
    assert metadata.version("kaggle-environments") == KAGGLE_ENVIRONMENTS


def test_the_connectx_code_that_runs_is_byte_for_byte_the_release() -> None:
    from connectx_forge.kaggle_env import load

    kaggle_environments = load()
    from kaggle_environments import agent as loader
    from kaggle_environments.envs.connectx import connectx

    package = Path(kaggle_environments.__file__).parent
    # the modules in use are the files we hash, not copies elsewhere on the path
    assert Path(connectx.__file__) == package / "envs/connectx/connectx.py"
    assert Path(loader.__file__) == package / "agent.py"
    for name, digest in PINNED.items():
        assert _digest(package / name) == digest, f"kaggle_environments/{name} differs from the 1.33.2 wheel"


def test_the_lean_install_plays_judges_and_renders_connectx() -> None:
    from connectx_forge.kaggle_env import load

    load()
    from kaggle_environments import evaluate, make

    env = make("connectx", debug=True)
    steps = env.run(["random", "random"])
    assert steps[-1][0]["status"] == "DONE" and steps[-1][1]["status"] == "DONE"
    rewards = evaluate("connectx", ["negamax", "random"], num_episodes=2)
    assert len(rewards) == 2 and all(r[0] is not None for r in rewards)
    page = env.render(mode="html")
    assert "<html" in page.lower() and len(page) > 100_000


def test_importing_quietly_holds_back_the_loading_noise() -> None:
    code = "from connectx_forge.kaggle_env import load; load(); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout == "ok\n"


def _find() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]


def test_the_project_installs_only_its_own_import_names() -> None:
    """Each package sits in a folder of its name: the layout says it all, and package-dir says nothing."""
    find = _find()
    assert "package-dir" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert find["where"] == [".", "tools", "build"]
    assert {name.split(".")[0] for name in find["include"]} == {"agents", "connectx_forge", "connectx_bundler"}


def test_every_source_package_is_found_for_the_wheel() -> None:
    from setuptools import find_packages

    find = _find()
    found = {name for where in find["where"] for name in find_packages(str(ROOT / where), include=find["include"])}
    tops = {"agents": ROOT / "agents", "connectx_forge": ROOT / "tools" / "connectx_forge",
            "connectx_bundler": ROOT / "build" / "connectx_bundler"}
    expected = {".".join([name, *init.parent.relative_to(folder).parts])
                for name, folder in tops.items() for init in folder.rglob("__init__.py")}
    assert found == expected


def test_a_package_named_build_beside_the_project_keeps_its_name(tmp_path: Path) -> None:
    """With PyPA's ``build`` installed, its command ``pyproject-build`` is it, even run from the project root, and
    ``cxforge build`` still works beside it.

    The checkout's build/ is a plain folder holding the package ``connectx_bundler``: it is no package ``build``
    (a regular package found anywhere on the path wins over a folder without ``__init__.py``), and installed, the
    bundler is ``connectx_bundler`` and shadows nothing.
    """
    assert not (ROOT / "build" / "__init__.py").exists() and (ROOT / "build" / "connectx_bundler").is_dir()
    fake = tmp_path / "site" / "build"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '9.9.9-pypa'\n")
    (fake / "__main__.py").write_text("def main() -> None:\n    print('build', __import__('build').__version__)\n")
    script = tmp_path / "bin" / "pyproject-build"
    script.parent.mkdir()
    script.write_text("import sys\nfrom build.__main__ import main\nsys.exit(main())\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "build 9.9.9-pypa", out.stderr
    target = tmp_path / "r.py"
    cxforge = Path(sys.executable).with_name("cxforge")
    for where in (ROOT, tmp_path):
        out = subprocess.run([str(cxforge), "build", "random", "-o", str(target), "--force"], capture_output=True,
                             text=True, env=env, cwd=where)
        assert out.returncode == 0, out.stderr
        assert target.is_file() and "def agent(" in target.read_text()


@pytest.mark.checkout
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the source tree")
def test_building_a_wheel_writes_nothing_into_build_and_ships_only_our_names(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    before = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "build").rglob("*") if "__pycache__" not in p.parts)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "--disable-pip-version-check", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    after = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "build").rglob("*") if "__pycache__" not in p.parts)
    assert after == before
    (wheel,) = tmp_path.glob("connectx_forge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"agents", "connectx_forge", "connectx_bundler"}
    assert "connectx_bundler/builder.py" in names and "connectx_forge/cli.py" in names
    assert "connectx_forge/__init__.py" in names and "connectx_forge/api/functions.py" in names
    assert "agents/data/opening_book.bin" in names and "agents/solver/native/solver.c" in names
    assert "agents/solver/native/solver.so" in names and "agents/solver/native/solver.so.key" in names
