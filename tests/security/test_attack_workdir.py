"""The folder the user stands in is data: no module or program in it runs in any child the toolkit starts.

A Python child started with ``-c`` or ``-m`` puts its working folder first on its import path; a ``kaggle/``,
``requests.py`` or ``ziglang/`` in a downloaded project or a shared run folder would then run as the user, with
the Kaggle credentials in reach.  Each test here runs ``cxforge`` from a folder full of modules that shadow what
its children import (each writes a marker file and fails its import) and asserts that the command succeeds and
no marker is written: the Kaggle API calls (against the local fake server), a native build, and a match of a
submission file (the warden, its templates and hosts), jailed and not.  ``connectx_forge.children`` is the one
place a child's command line starts; the last tests check that every caller uses it.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectx_forge import children, kaggle_cli
from connectx_forge.sandbox import jail
from tests.fake_kaggle import FakeKaggle, FakeKaggleServer, isolate_cli
from tests.harness import ROOT

CXFORGE = str(Path(sys.executable).parent / "cxforge")  # the console script, as a user runs it
# what the toolkit's children import (the kaggle CLI and its API, the toolchain, the toolkit, the warden and
# hosts' libraries, standard modules they load late) and what Python imports at start-up from its path
SHADOWS = ("kaggle", "kagglesdk", "requests", "urllib3", "certifi", "idna", "charset_normalizer", "tqdm",
           "dateutil", "six", "packaging", "google", "ziglang", "connectx_forge", "agents", "numpy",
           "kaggle_environments", "jsonschema", "json", "base64", "typing", "dataclasses", "ctypes", "socket",
           "subprocess", "sitecustomize", "usercustomize")
USER, KEY = "workdir-tester", "workdir-fake-key-0123456789abcdef"
AGENT = "def agent(obs, config):\n    return next(c for c in range(config.columns) if obs.board[c] == 0)\n"


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """``(folder, markers)``: a working folder where each name of ``SHADOWS`` is a package (and a ``-m``
    entry point) that writes ``markers/NAME`` and fails its import; ``markers`` is where they would land."""
    folder, markers = tmp_path / "work", tmp_path / "markers"
    markers.mkdir()
    os.chmod(markers, 0o777)  # a marker from any uid of the jail would land
    for name in SHADOWS:
        body = (f"import os\ntry:\n    open(os.path.join({str(markers)!r}, {name!r}), 'w').close()\n"
                f"except OSError:\n    pass\nraise ImportError('imported from the working folder: {name}')\n")
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(body)
        (package / "__main__.py").write_text(body)
    (folder / "kaggle.py").write_text((folder / "kaggle" / "__init__.py").read_text())
    yield folder, markers


def run(folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) \
        -> subprocess.CompletedProcess[str]:
    """``cxforge ARGS`` run from ``folder``."""
    return subprocess.run([CXFORGE, *args], cwd=folder, env=env if env is not None else dict(os.environ),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_clean(done: subprocess.CompletedProcess[str], markers: Path) -> None:
    """The command succeeded and no module of the working folder was imported."""
    assert sorted(p.name for p in markers.iterdir()) == [], done.stdout + done.stderr
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "imported from the working folder" not in done.stdout + done.stderr


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeKaggle]:
    """The local fake Kaggle (tests/fake_kaggle.py), reached by the real kaggle CLI and its API."""
    if not Path(CXFORGE).is_file():
        pytest.skip("no cxforge console script beside this interpreter")
    try:
        kaggle_cli.kaggle_executable()
    except Exception as exc:
        pytest.skip(f"no kaggle CLI: {exc}")
    isolate_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("KAGGLE_USERNAME", USER)
    monkeypatch.setenv("KAGGLE_KEY", KEY)
    with FakeKaggleServer() as server:
        monkeypatch.setenv("HTTP_PROXY", server.proxy_url)
        monkeypatch.setenv("http_proxy", server.proxy_url)
        server.require_auth = (USER, KEY, "")
        server.listed = [{"ref": 51000001, "date": "2026-01-02T03:04:05Z", "description": "v1",
                          "fileName": "submission.py", "publicScore": "1000.0", "status": "COMPLETE",
                          "teamName": "Forge"}]
        server.episodes[51000001] = []
        yield server


def test_the_kaggle_cli_and_its_api_import_nothing_from_the_working_folder(
        hostile: tuple[Path, Path], fake: FakeKaggle) -> None:
    folder, markers = hostile
    for args in (["submissions", "--json"], ["episodes", "51000001", "--json"]):
        done = run(folder, *args)
        assert_clean(done, markers)
        assert KEY not in done.stdout + done.stderr
    assert "ListSubmissionEpisodes" in fake.methods()  # the API child ran, and reached the server


@pytest.mark.parametrize("jailed", [True, False], ids=["jailed", "not-jailed"])
def test_a_match_imports_nothing_from_the_working_folder(hostile: tuple[Path, Path], tmp_path: Path,
                                                         jailed: bool) -> None:
    """The warden, its probe, templates and hosts (a submission file against ``kaggle:random``)."""
    folder, markers = hostile
    player = tmp_path / "player" / "mover.py"
    player.parent.mkdir()
    player.write_text(AGENT)
    env = {**os.environ, "CXFORGE_JAIL": "on" if jailed else "off"}
    done = run(folder, "match", str(player), "kaggle:random", "-n", "2", "-w", "1", "--no-progress", "--json",
               env=env)
    assert_clean(done, markers)
    overall = json.loads(done.stdout)["overall"]
    assert (overall["games"], overall["errors"], overall["crashes"]) == (2, 0, 0), overall


def test_a_native_build_imports_nothing_from_the_working_folder(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    """A project that holds a ``ziglang/`` (the toolchain's package) and start-up modules, built from a working
    folder full of shadows, compiles with the real toolchain."""
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    folder, markers = hostile
    project = folder / "proj"
    for name in ("ziglang", "sitecustomize", "usercustomize"):
        shutil.copytree(folder / name, project / name)
    (project / "native").mkdir()
    # a fresh key: compiled, not taken from the cache
    (project / "native" / "fast.c").write_text(f"/* {uuid.uuid4().hex} */\nint add(int a, int b) {{ return a + b; }}\n")
    (project / "main.py").write_text(textwrap.dedent("""\
        from connectx_forge.runtime import load_native

        LIB = load_native("fast")


        def agent(obs, config):
            return 3
        """))
    (project / "cxforge.toml").write_text('name = "fast"\n[native]\nfast = ["native/fast.c"]\n')
    out = tmp_path / "out" / "submission.py"
    out.parent.mkdir()
    for where in (folder, project):
        done = run(where, "build", str(project), "-o", str(out), "--force", timeout=300)
        assert_clean(done, markers)
        assert b"native/fast.so" in out.read_bytes()


# the unit side: every Python child's command line starts with ``children.isolated_python``


def test_isolated_python_is_isolated_mode() -> None:
    assert children.isolated_python() == [sys.executable, "-I"]
    assert children.isolated_python("/opt/py/bin/python") == ["/opt/py/bin/python", "-I"]
    folder = Path(children.isolated_python()[0]).parent
    probe = subprocess.run([*children.isolated_python(), "-c", "import sys, connectx_forge; print(sys.path[0])"],
                           cwd=folder, capture_output=True, text=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(folder)})
    assert probe.returncode == 0, probe.stderr  # the editable install still imports
    assert probe.stdout.strip() not in ("", str(folder))


def test_the_kaggle_api_child_is_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(kaggle_cli, "kaggle_executable", lambda: sys.executable)
    monkeypatch.setattr(kaggle_cli, "_run", lambda command, *_: seen.append(command))
    kaggle_cli.run_python_api("    pass\n")
    assert seen[0][1:3] == ["-I", "-c"], seen


def test_the_toolchain_is_isolated() -> None:
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra")
    from connectx_bundler import native_libs

    assert native_libs.toolchain()[1:4] == ["-I", "-m", "ziglang"]


def test_the_toolchain_is_never_a_package_of_the_working_folder(hostile: tuple[Path, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """In a notebook (or under ``python -m``) the working folder is on this process's own import path: the
    compiler is still the installed toolchain's, never a ``ziglang/zig`` of that folder."""
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra")
    from connectx_bundler import cc

    folder, markers = hostile
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    assert not cc.toolchain_dir().startswith(str(folder)), cc.toolchain_dir()
    assert Path(cc.toolchain_dir(), "zig").is_file()
    assert children.find_library("json") is not None and list(markers.iterdir()) == []


def test_the_jailed_warden_and_its_probe_are_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "probe", lambda: jail.Probe(True, "test"))
    monkeypatch.setattr(jail, "program", lambda name, path=None: f"/usr/bin/{name}")
    command = jail.command(3, "/tmp/cxforge-jail-test")
    start = command.index(jail.python())
    assert command[start:start + 4] == [jail.python(), "-I", "-m", "connectx_forge.sandbox.warden"], command


def _python_commands(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Each command line in ``tree`` (a list or tuple) that starts a Python child not through ``isolated_python``:
    ``sys.executable`` as an element, or a ``-c``/``-m`` after an interpreter (a name or call that says
    ``python`` or ``executable``): ``(line, its source)``."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.List, ast.Tuple)):
            continue
        for i, element in enumerate(node.elts):
            text = ast.unparse(element)
            if text == "sys.executable":
                yield node.lineno, ast.unparse(node)[:120]
                break
            if i == 0 or not (isinstance(element, ast.Constant) and element.value in ("-c", "-m")):
                continue
            before = node.elts[i - 1]
            ours = isinstance(before, ast.Starred) and isinstance(before.value, ast.Call) \
                and getattr(before.value.func, "id", getattr(before.value.func, "attr", "")) == "isolated_python"
            said = ast.unparse(before).lower()
            if not ours and ("python" in said or "executable" in said):
                yield node.lineno, ast.unparse(node)[:120]
                break


def test_every_python_child_of_the_toolkit_starts_isolated() -> None:
    """A new ``[sys.executable, "-c", ...]`` (or any interpreter's ``-c``/``-m``) anywhere in the packages, not
    started by ``isolated_python``, fails here."""
    found = []
    for folder in ("agents", "build", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, what in _python_commands(ast.parse(path.read_text(encoding="utf-8"))):
                found.append(f"{rel}:{line}: {what}")
    assert found == []


def test_the_check_sees_an_unisolated_child() -> None:
    tree = ast.parse("a = [sys.executable, '-c', code]\nb = [*isolated_python(), '-m', 'x']\n"
                     "c = ['/bin/sh', '-c', script]\nd = [python(), '-m', 'w']\ne = [kaggle, 'x', '-m', message]\n"
                     "f = (str(python), '-c', body)\ng = [sys.executable, '-I', '-c', code]\n")
    assert [line for line, _ in _python_commands(tree)] == [1, 4, 6, 7]


def test_a_program_is_never_found_in_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty or relative ``PATH`` entry names the working folder: ``program`` skips it."""
    fake = tmp_path / "kaggle"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert children.program("kaggle", path=f"::.:{tmp_path / 'none'}") is None
    assert children.program("kaggle", path=f"/nonexistent:{tmp_path}") == str(fake)
