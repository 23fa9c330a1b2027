"""The build reads only the project: a hostile project (a teammate's, a download) cannot pull the user's files,
here a fake ``~/.kaggle/kaggle.json`` outside the project, into ``submission.py``, by a link, a hard link, a FIFO,
a special file, a ``..`` name, or its C code's ``#include``, ``#embed`` and ``.incbin``.  Each case is refused
in one line naming the file; nothing is written, and the secret is in no output.  Runs as root and as a plain
user (tests/security/test_attack_unprivileged.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectx_bundler import cc, native_libs
from connectx_forge.cli import main
from tests.harness import ROOT

SECRET = "cxforge-attack-secret-6f1c2b"
CREDENTIALS = f'{{"username": "victim", "key": "{SECRET}"}}\n'
READER = """
    from connectx_forge.runtime import read_data

    DATA = read_data("%s")

    def agent(obs, config):
        return len(DATA) %% config.columns
"""
NATIVE = """
    from connectx_forge.runtime import load_native

    LIB = load_native("fast")

    def agent(obs, config):
        return 3
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake home outside the project, holding the user's credentials."""
    kaggle = tmp_path / "home" / ".kaggle"
    kaggle.mkdir(parents=True)
    (kaggle / "kaggle.json").write_text(CREDENTIALS)
    return tmp_path / "home"


def project(root: Path, main_py: str = READER % "data/w.json", settings: str = 'name = "hostile"\n') -> Path:
    """A project folder: ``main.py``, ``cxforge.toml`` and an empty ``data`` folder."""
    (root / "data").mkdir(parents=True)
    (root / "main.py").write_text(textwrap.dedent(main_py))
    (root / "cxforge.toml").write_text(settings)
    return root


def refused(root: Path, out: Path, capsys: pytest.CaptureFixture[str], *named: str) -> tuple[str, str]:
    """Build ``root`` into ``out``: it fails with one error line naming ``named``, writes nothing, says no
    secret; ``(the error line, all it said on stderr)``."""
    assert main(["build", str(root), "-o", str(out)]) != 0
    said = capsys.readouterr()
    assert not out.exists() and not out.with_name(out.name + ".json").exists()
    assert SECRET not in said.out + said.err and SECRET.encode().hex() not in said.out + said.err
    errors = [line for line in said.err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in said.err, said.err
    assert all(name in errors[0] for name in named), errors[0]
    return errors[0], said.err


def test_a_data_file_linked_out_of_the_project_is_refused(tmp_path: Path, home: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p")
    (root / "data" / "w.json").symlink_to(home / ".kaggle" / "kaggle.json")
    line, _ = refused(root, tmp_path / "s.py", capsys, "data/w.json", "a link leading out of the project")
    assert str(home / ".kaggle" / "kaggle.json") in line


def test_a_data_file_in_a_folder_linked_out_is_refused(tmp_path: Path, home: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", READER % "data/keys/kaggle.json")
    (root / "data" / "keys").symlink_to(home / ".kaggle")
    refused(root, tmp_path / "s.py", capsys, "data/keys/kaggle.json", "a link leading out of the project")


def test_a_data_file_linked_to_proc_self_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KEY", SECRET)  # what /proc/self/environ would give away
    root = project(tmp_path / "p")
    (root / "data" / "w.json").symlink_to("/proc/self/environ")
    refused(root, tmp_path / "s.py", capsys, "data/w.json", "a link leading out of the project")


def test_a_dot_dot_data_name_is_refused(tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", READER % "../home/.kaggle/kaggle.json")
    refused(root, tmp_path / "s.py", capsys, "../home/.kaggle/kaggle.json", "inside the project")


def test_a_hard_link_to_a_file_outside_is_refused(tmp_path: Path, home: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p")
    try:
        os.link(home / ".kaggle" / "kaggle.json", root / "data" / "w.json")
    except OSError as exc:
        pytest.skip(f"no hard link here ({exc})")
    refused(root, tmp_path / "s.py", capsys, "data/w.json", "has 2 hard links")


def test_a_socket_or_a_folder_is_no_data_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p")
    (root / "data" / "w.json").mkdir()
    refused(root, tmp_path / "s.py", capsys, "data/w.json", "a folder, not a regular file")
    (root / "data" / "w.json").rmdir()
    monkeypatch.chdir(root / "data")  # a socket's path must be short
    with socket.socket(socket.AF_UNIX) as server:
        try:
            server.bind("w.json")
        except OSError as exc:
            pytest.skip(f"no unix socket here ({exc})")
        refused(root, tmp_path / "s.py", capsys, "data/w.json", "a socket, not a regular file")


def test_a_fifo_does_not_hang_the_build(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    os.mkfifo(root / "data" / "w.json")
    out = tmp_path / "s.py"
    # in a process of its own: opening the FIFO, as the build once did, would block forever
    run = subprocess.run([sys.executable, "-m", "connectx_forge", "build", str(root), "-o", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and not out.exists()
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "data/w.json: a FIFO, not a regular file" in errors[0], run.stderr


@pytest.mark.parametrize("module", ["main.py", "helper.py"])
def test_a_module_linked_out_of_the_project_is_refused(tmp_path: Path, home: Path, module: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", "import helper\n\ndef agent(obs, config):\n    return helper.KEY and 3\n")
    outside = home / "bot.py"
    outside.write_text(f"KEY = {SECRET!r}\n\ndef agent(obs, config):\n    return 3\n")
    (root / "helper.py").write_text("KEY = 1\n")
    (root / module).unlink()
    # helper.py as the credentials themselves: a JSON object is a Python expression
    (root / module).symlink_to(outside if module == "main.py" else home / ".kaggle" / "kaggle.json")
    refused(root, tmp_path / "s.py", capsys, module, "a link leading out of the project")


def test_a_package_folder_linked_out_is_refused(tmp_path: Path, home: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", "from pkg import KEY\n\ndef agent(obs, config):\n    return 3\n")
    (home / "pkg").mkdir()
    (home / "pkg" / "__init__.py").write_text(f"KEY = {SECRET!r}\n")
    (root / "pkg").symlink_to(home / "pkg")
    refused(root, tmp_path / "s.py", capsys, "pkg/__init__.py", "a link leading out of the project")


def test_settings_linked_out_of_the_project_are_refused(tmp_path: Path, home: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", "def agent(obs, config):\n    return 3\n")
    (home / "theirs.toml").write_text(f'name = "{SECRET}"\n')  # the name would be in the submission's header
    (root / "cxforge.toml").unlink()
    (root / "cxforge.toml").symlink_to(home / "theirs.toml")
    refused(root, tmp_path / "s.py", capsys, "cxforge.toml", "a link leading out of the project")


def test_links_that_stay_inside_the_project_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path / "p", READER % "data/alias/w.json")
    (root / "data" / "real").mkdir()
    (root / "data" / "real" / "w.json").write_text("[1, 2, 3]")
    (root / "data" / "alias").symlink_to("real")
    out = tmp_path / "s.py"
    assert main(["build", str(root), "-o", str(out)]) == 0, capsys.readouterr().err
    assert out.is_file()


# native code: the compiler runs in the jail with only the library's files (and, unjailed, checks every file)


@pytest.fixture(params=["jailed", "unjailed"])
def jail(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The compiler jailed (where bwrap runs here) or not (``CXFORGE_JAIL=off``)."""
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    monkeypatch.setenv("CXFORGE_JAIL", "on" if request.param == "jailed" else "off")
    cc.jail_refused.cache_clear()
    cc.say_unjailed.cache_clear()
    if request.param == "jailed" and cc.jail_refused() is not None:
        pytest.skip(f"the compiler cannot be jailed here: {cc.jail_refused()}")
    yield request.param
    cc.jail_refused.cache_clear()
    cc.say_unjailed.cache_clear()


def native_project(root: Path, c: str) -> Path:
    """A project whose library ``fast`` is ``native/fast.c``."""
    project(root, NATIVE, 'name = "hostile"\n[native]\nfast = ["native/fast.c"]\n')
    (root / "native").mkdir()
    (root / "native" / "fast.c").write_text(textwrap.dedent(c) + "int add(int a, int b) { return a + b; }\n")
    return root


@pytest.mark.parametrize("c, named", [
    ('#include "{key}"\n', "includes {key}, which is not a file of the project"),
    ('#include "../../home/.kaggle/kaggle.json"\n', "includes ../../home/.kaggle/kaggle.json, which is not"),
    ('static const char key[] = {{\n#embed "{key}"\n}};\n', "includes {key}, which is not a file of the project"),
    ('__asm__(".section .rodata\\n.incbin \\"{key}\\"\\n.previous");\n', "native/fast.c has inline assembly that "
     "reads a file"),
    ('#define READ(f) __asm__(".incbin \\"" f "\\"")\nREAD("{key}");\n', "inline assembly that reads a file"),
], ids=["include", "relative", "embed", "incbin", "macro"])
def test_c_cannot_pull_a_file_from_outside_the_project(tmp_path: Path, home: Path, jail: str, c: str, named: str,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    key = str(home / ".kaggle" / "kaggle.json")
    root = native_project(tmp_path / "p", c.format(key=key))
    refused(root, tmp_path / "s.py", capsys, "native library 'fast'", named.format(key=key))


@pytest.mark.parametrize("jail", ["jailed"], indirect=True)  # unjailed, any inline assembly is refused (below)
def test_in_the_jail_a_read_no_text_search_finds_fails(tmp_path: Path, home: Path, jail: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    key = home / ".kaggle" / "kaggle.json"
    root = native_project(tmp_path / "p", f'__asm__(".section .rodata\\n.inc" "bin \\"{key}\\"\\n.previous");\n')
    out = tmp_path / "s.py"
    assert main(["build", str(root), "-o", str(out)]) != 0
    said = capsys.readouterr()
    assert not out.exists() and SECRET not in said.out + said.err
    assert f"Could not find incbin file '{key}'" in said.err  # the jail shows no such file


def test_a_c_header_linked_out_of_the_project_is_refused(tmp_path: Path, home: Path, jail: str,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    root = native_project(tmp_path / "p", 'static const char key[] = {\n#include "key.h"\n};\n')
    (root / "native" / "key.h").symlink_to(home / ".kaggle" / "kaggle.json")
    refused(root, tmp_path / "s.py", capsys, "native/key.h", "a link leading out of the project")
    (root / "native" / "key.h").unlink()
    (root / "native" / "fast.c").unlink()
    (root / "native" / "fast.c").symlink_to(home / ".kaggle" / "kaggle.json")
    refused(root, tmp_path / "s.py", capsys, "native/fast.c", "a link leading out of the project")


def test_without_bwrap_inline_assembly_is_refused_and_the_build_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cc, "program", lambda name, *args, **kwargs: None)  # no bwrap here
    cc.jail_refused.cache_clear()
    cc.say_unjailed.cache_clear()
    try:
        # the assembler's file read spelt so that no text search finds it: only the jail would stop it
        root = native_project(tmp_path / "p", '__asm__(".inc" "bin \\"/etc/hostname\\"");\n')
        line, said = refused(root, tmp_path / "s.py", capsys, "native/fast.c has inline assembly, which the build "
                             "cannot check without the jail (no bwrap on PATH")
        assert "install bubblewrap" in line
        assert [x for x in said.splitlines() if x.startswith("note: C compiles without the jail (no bwrap")]
    finally:
        cc.jail_refused.cache_clear()
        cc.say_unjailed.cache_clear()


def test_unjailed_the_build_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    monkeypatch.setenv("CXFORGE_JAIL", "off")
    cc.jail_refused.cache_clear()
    cc.say_unjailed.cache_clear()
    try:
        root = native_project(tmp_path / "p", '#include "/nowhere/x.h"\n')
        notes = []
        for _ in range(2):  # said once per process
            _, said = refused(root, tmp_path / "s.py", capsys, "native/fast.c includes /nowhere/x.h")
            notes += [line for line in said.splitlines() if line.startswith("note: C compiles without the jail")]
        assert notes == ["note: C compiles without the jail (CXFORGE_JAIL=off): every file it includes is "
                         "checked to be the project's, and inline assembly is refused"]
    finally:
        cc.jail_refused.cache_clear()
        cc.say_unjailed.cache_clear()


def test_a_committed_library_linked_out_is_refused(tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    root = native_project(tmp_path / "p", "")
    key = native_libs.cache_key(native_libs.read_sources(root, "fast", ["native/fast.c"], "test"))
    (root / "native" / "fast.so.key").write_text(key + "\n")  # a key that matches: the library would be used
    (root / "native" / "fast.so").symlink_to(home / ".kaggle" / "kaggle.json")
    refused(root, tmp_path / "s.py", capsys, "fast.so", "a link leading out of the project")


def test_the_key_covers_the_headers_a_library_includes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    root = native_project(tmp_path / "p", '#include "v.h"\nint value(void) { return V; }\n')
    header = root / "native" / "v.h"
    header.write_text("#define V 1\n")
    first = native_libs.compile_library(root, "fast", ["native/fast.c"], "test")
    assert native_libs.compile_library(root, "fast", ["native/fast.c"], "test") == first
    header.write_text("#define V 2\n")  # the source is the same: only the header it includes changed
    second = native_libs.compile_library(root, "fast", ["native/fast.c"], "test")
    assert second != first
    written = native_libs.write_prebuilt(root, "fast", ["native/fast.c"])
    assert written.read_bytes() == second
    assert written.with_name("fast.so.key").read_text().splitlines()[1:] == ["native/v.h"]

    def no_toolchain() -> list[str]:
        raise native_libs.BuildError("no toolchain in this test")

    monkeypatch.setattr(native_libs, "toolchain", no_toolchain)
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "empty-cache"))
    assert native_libs.compile_library(root, "fast", ["native/fast.c"], "test") == second  # the committed one
    header.write_text("#define V 3\n")  # the committed library no longer matches its header
    with pytest.raises(native_libs.BuildError, match="no toolchain in this test"):
        native_libs.compile_library(root, "fast", ["native/fast.c"], "test")
