"""End to end, as a competitor works: the toolkit installed from its wheel into a fresh virtualenv, and an agent
project of their own in a temporary folder far from this checkout.

The wheel is built from this checkout (``pip wheel --no-deps``) and installed
with ``--no-deps --no-index`` into a new virtualenv; the packages it depends on
are lent from the running environment through a ``.pth`` line (a ``.pth`` line
adds a folder to ``sys.path`` without running the ``.pth`` files in it, so this
checkout's editable install does not leak in).  Then, in the temporary folder:
``cxforge new``, a second helper module reached by a relative import and a
second data file, ``build``, ``check`` (the floors of ``cxforge.toml``),
``match``, ``tournament``, ``review --us`` and ``upload`` against the local
fake Kaggle server (``tests/fake_kaggle.py``; nothing reaches kaggle.com).  The
checkout's ``git status`` and the virtualenv's site-packages are the same
afterwards: caches go to the user cache, outputs to the working folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from tests.fake_kaggle import FakeKaggleServer

ROOT = Path(__file__).resolve().parents[2]
FAKE_KEY = "0123456789abcdef-fake-kaggle-key"


def git_status() -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return ""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with connectx-forge installed from its wheel; its bin folder."""
    base = tmp_path_factory.mktemp("e2e")
    wheels = base / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"cannot build the wheel here (pip needs its build backend): {proc.stderr[-500:]}")
    wheel = next(wheels.glob("connectx_forge-*.whl"))
    env = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "lent-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300, capture_output=True)
    return env / "bin"


@pytest.mark.long
@pytest.mark.checkout
def test_a_project_of_ones_own_from_new_to_upload(venv: Path, tmp_path: Path) -> None:
    before = git_status()
    site = next((venv.parent / "lib").glob("python3*/site-packages"))
    installed = tree(site)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAGGLE", "CXFORGE", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{venv}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
               f"{env.get('PATH', '')}", KAGGLE_CONFIG_DIR=str(tmp_path / "kaggle-config"))

    def cxforge(*args: str, cwd: Path = work, check: bool = True, extra: dict[str, str] | None = None) -> str:
        proc = subprocess.run([str(venv / "cxforge"), *args], cwd=cwd, env={**env, **(extra or {})},
                              capture_output=True, text=True, timeout=600)
        assert "Traceback" not in proc.stderr, proc.stderr
        if check:
            assert proc.returncode == 0, f"cxforge {' '.join(args)}: {proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        return proc.stdout

    where = subprocess.run([str(venv / "python"), "-c", "import agents, connectx_forge as t; "
                            "print(agents.__file__); print(t.__file__)"], env=env, capture_output=True, text=True,
                           cwd=work)
    assert str(site) in where.stdout and str(ROOT) not in where.stdout, where.stdout + where.stderr
    assert cxforge("--version").startswith("cxforge ")

    cxforge("new", "mybot")
    project = work / "mybot"
    main_py = project / "mybot" / "main.py"
    main_py.write_text(main_py.read_text().replace(
        "from .tactics import Position\n", "from .tactics import Position\nfrom .extra import MOTTO\n"))
    (project / "mybot" / "extra.py").write_text(textwrap.dedent("""
        from connectx_forge.runtime import read_data

        MOTTO = read_data("data/notes/motto.txt").decode().strip()
        assert MOTTO == "centre first", MOTTO
    """))
    (project / "data" / "notes").mkdir()
    (project / "data" / "notes" / "motto.txt").write_text("centre first\n")

    out = cxforge("build", cwd=project)
    assert "built agent 'mybot' (mybot.main.act)" in out and "2 data file(s)" in out
    assert "check floors: negamax 0.5, random 0.85" in out
    first = (project / "submissions" / "submission.py").read_bytes()
    cxforge("build", cwd=project, check=False)  # the file is kept (one rule for every output)...
    cxforge("build", "--force", cwd=project)  # ...and rebuilt with --force, byte for byte
    assert (project / "submissions" / "submission.py").read_bytes() == first

    out = cxforge("check", "-w", "2", cwd=project)
    assert "floor vs random: 85%" in out and "floor vs negamax: 50%" in out and out.rstrip().endswith("PASS")

    out = cxforge("match", "mybot", "kaggle:negamax", "-n", "4", "-w", "2", "--save", "games.jsonl")
    assert out.startswith("A = mybot  vs  B = kaggle:negamax: 4 games")
    games = (work / "games.jsonl").read_text().splitlines()
    assert len(games) == 4
    (work / "one.jsonl").write_text(games[0] + "\n")

    out = cxforge("tournament", "mybot", "lookahead", "random", "--openings", "4", "-w", "2", "--no-progress")
    assert "mybot vs lookahead" in out and "no player lost a game by an invalid move" in out
    assert any((work / "runs" / "arena").glob("*.sqlite"))

    out = cxforge("review", "one.jsonl", "--us", "mybot", "--time-limit", "0.2", "--json", "--summary")
    assert json.loads(out.strip().splitlines()[-1])["games"] == 1

    # mistakes from a pip install: the held-out sets ship with the wheel; Pons' sets are a download
    out = cxforge("mistakes", "--agents", "mybot", "--sample", "2", "--no-cache", "--json", "--no-progress")
    assert [r["set"] for r in json.loads(out)] == ["Random-Early", "Centre-Early", "Random-Middle", "Centre-Middle"]
    proc = subprocess.run([str(venv / "cxforge"), "mistakes", "--agents", "mybot", "--sets", "pons"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "02-test-protocol" in proc.stderr

    with FakeKaggleServer() as fake:
        out = cxforge("upload", "mybot", "-m", "mybot v1", "-n", "2", "-w", "2",
                      extra={"KAGGLE_API_ENVIRONMENT": "LOCALHOST", "HTTP_PROXY": fake.proxy_url,
                             "http_proxy": fake.proxy_url, "NO_PROXY": "", "no_proxy": "",
                             "KAGGLE_USERNAME": "forge-tester", "KAGGLE_KEY": FAKE_KEY})
        assert FAKE_KEY not in out
        assert fake.methods()[:3] == ["StartSubmissionUpload", "PUT", "CreateSubmission"]
        assert [s["submissionDescription"] for s in fake.submissions] == ["mybot v1"]
        [sent] = fake.uploads.values()
    assert "Successfully submitted to ConnectX" in out
    assert sent.startswith(b"# ConnectX submission") and b"'mybot.extra'" in sent

    assert any((home / ".cache" / "cxforge" / "builds").glob("mybot-*.py"))
    assert tree(site) == installed, "a command wrote into site-packages"
    assert git_status() == before, "a command wrote into the checkout"
