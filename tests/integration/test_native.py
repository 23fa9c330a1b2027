"""Native code in a submission: C compiled for Kaggle's runtime with the pinned toolchain, embedded, loaded from
memory or a temporary file, and a pure-Python fallback that says why it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connectx_bundler import native_libs
from connectx_bundler.builder import build
from connectx_bundler.errors import BuildError
from connectx_forge.cli import main
from connectx_forge.play.resolve import resolve_target

pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")

C = "int add(int a, int b) { return a + b; }\n"
MAIN = """
    import ctypes
    from connectx_forge.runtime import load_native

    LIB = load_native("fast")

    def agent(obs, config):
        if LIB is not None:
            return int(LIB.add(1, 2))
        return 1 + 2
"""


def project(root: Path, c: str = C, main_py: str = MAIN, settings: str = '[native]\nfast = ["native/fast.c"]\n') \
        -> Path:
    (root / "native").mkdir(parents=True)
    (root / "native" / "fast.c").write_text(c)
    (root / "main.py").write_text(textwrap.dedent(main_py))
    (root / "cxforge.toml").write_text('name = "fast"\n' + settings)
    return root


RUN = """
import json, sys
env = {}
exec(compile(open(sys.argv[1]).read(), "main.py", "exec"), env)
agent = [v for v in env.values() if callable(v)][-1]
print(json.dumps(agent({"board": [0] * 42, "mark": 1}, {"rows": 6, "columns": 7, "inarow": 4})))
"""


def run_bundle(path: Path, mode: str, cwd: Path) -> tuple[int, str]:
    """Run a built file as Kaggle loads it, in a fresh interpreter; its move and what it said on stderr."""
    env = {k: v for k, v in os.environ.items() if k != "CXFORGE_NATIVE"}
    env["CXFORGE_NATIVE"] = mode
    proc = subprocess.run([sys.executable, "-c", RUN, str(path)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def test_the_library_is_embedded_and_loads_from_memory_a_file_or_not_at_all(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    built = build(resolve_target(str(root)))
    assert [d["name"] for d in built.manifest["data"]] == ["native/fast.so"]
    out = tmp_path / "alone" / "main.py"
    out.parent.mkdir()
    out.write_bytes(built.content)
    move, said = run_bundle(out, "on", out.parent)
    assert move == 3 and "native library 'fast': loaded from memory (memfd)" in said
    move, said = run_bundle(out, "file", out.parent)
    assert move == 3 and "native library 'fast': loaded from a temporary file in" in said
    move, said = run_bundle(out, "off", out.parent)
    assert move == 3 and "native library 'fast': off (CXFORGE_NATIVE=off); running the pure-Python code" in said


def test_a_corrupt_or_foreign_library_falls_back_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import connectx_forge.runtime as runtime

    monkeypatch.setattr(runtime, "ANNOUNCE", True)  # as in an agent's process (the tools turn it off)

    good = native_libs.compile_library(project(tmp_path / "p"), "fast", ["native/fast.c"], "test")
    library, why = runtime._from_bytes("junk", good[:64] + bytes(200))  # its header, then nothing: truncated
    assert library is None and "OSError" in why and not list(Path.cwd().glob("cxforge-junk-*"))
    assert runtime._from_bytes("text", b"hello") == (None, "not an ELF shared object")
    foreign = tmp_path / "arm.so"
    subprocess.run([*native_libs.toolchain(), "-target", "aarch64-linux-gnu", "-shared", "-fPIC", "-o", str(foreign),
                    "-x", "c", "-"], input=C, text=True, check=True, capture_output=True, timeout=300)
    assert runtime._from_bytes("arm", foreign.read_bytes()) == (None, "built for aarch64, and this machine is x86_64")
    runtime.EMBEDDED["native/arm.so"] = foreign.read_bytes()
    try:
        assert runtime.load_native("arm") is None
    finally:
        del runtime.EMBEDDED["native/arm.so"]
        runtime._loaded.pop("arm", None)
    said = capsys.readouterr().err
    assert "native library 'arm': cannot be loaded (built for aarch64, and this machine is x86_64); running the " \
           "pure-Python code" in said


@pytest.mark.long
def test_rebuilding_gives_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p")
    builds = []
    for i in range(2):
        monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / f"cache{i}"))  # compiled afresh each time
        builds.append(native_libs.compile_library(root, "fast", ["native/fast.c"], "test"))
    assert builds[0] == builds[1] and builds[0][:4] == b"\x7fELF"
    assert str(tmp_path).encode() not in builds[0]  # no path of this machine in the object


@pytest.mark.parametrize("c, settings, main_py, message", [
    ("int add(int a, int b) { return a + ; }\n", None, MAIN, "native library 'fast' does not compile:\n"),
    (C, "", MAIN, "load_native('fast'), but the project's settings declare no such library (declared: none)"),
    (C, '[native]\nfast = ["native/missing.c"]\n', MAIN, "native: fast: no file native/missing.c in the project"),
    (C, None, MAIN.replace('load_native("fast")', "load_native(NAME)"), "load_native() takes one argument"),
])
def test_bad_native_input_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], c: str,
                                             settings: str | None, main_py: str, message: str) -> None:
    root = project(tmp_path / "p", c, main_py, **({} if settings is None else {"settings": settings}))
    assert main(["build", str(root), "-o", str(tmp_path / "s.py")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_without_the_toolchain_the_build_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: (_ for _ in ()).throw(metadata.PackageNotFoundError(name))
                        if name == "ziglang" else real(name))
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(BuildError, match=r"needs the pinned toolchain; pip install 'ziglang==0\.17\.1'"):
        build(resolve_target(str(project(tmp_path / "p"))))


@pytest.mark.long
def test_new_native_builds_checks_and_passes_its_own_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(tmp_path / "fastbot"), "--native"]) == 0
    root = tmp_path / "fastbot"
    assert main(["check", str(root), "-n", "2", "-w", "2", "--no-floors"]) == 0
    out = capsys.readouterr().out
    assert "note: the agent's native library 'tactics': loaded from memory (memfd)" in out
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "5 passed" in proc.stdout  # tests/test_agent.py (4) and tests/test_regressions.py


def test_a_library_written_beside_its_source_builds_without_the_toolchain_while_the_source_matches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p")
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    assert main(["build", str(root), "--write-native", "-o", str(tmp_path / "a.py")]) == 0
    assert "wrote native library 'fast'" in capsys.readouterr().out
    written = (root / "native" / "fast.so").read_bytes()
    assert (root / "native" / "fast.so.key").is_file()

    def no_toolchain() -> list[str]:
        raise BuildError("no toolchain here")

    monkeypatch.setattr(native_libs, "toolchain", no_toolchain)
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "empty-cache"))  # nothing cached: only the written file
    import hashlib

    [entry] = build(resolve_target(str(root))).manifest["data"]
    assert entry["sha256"] == hashlib.sha256(written).hexdigest()
    (root / "native" / "fast.c").write_text(C.replace("a + b", "b + a"))  # edited: the written file is stale
    with pytest.raises(BuildError, match="no toolchain here"):
        build(resolve_target(str(root)))
    capsys.readouterr()
    assert main(["new", str(tmp_path / "plain")]) == 0
    assert main(["build", str(tmp_path / "plain"), "--write-native", "-o", str(tmp_path / "b.py")]) == 2
    assert "declare no [native] library" in capsys.readouterr().err
