"""Upload sends exactly the bytes that were checked (``tools/connectx_forge/submit/upload_copy.py``).

``cxforge upload`` used to check the file at its path, then hand that same path to ``kaggle competitions
submit``: whatever the path held at upload time was sent, checked or not.  Each attack goes through the real
command, the real kaggle CLI and a local fake Kaggle server (``tests/fake_kaggle.py``) that records the bytes it
received: the original rewritten during and after its check (a test hook standing in for another process, a sync,
a teammate), the original reached through a link (the file, or a folder on its path), a FIFO and an oversized
file, and the staged copy itself rewritten after the check by a process of the same user (chmod back, rewrite).
What is sent is the checked copy's bytes, or nothing at all; the copy's private folder is gone afterwards,
whichever way the command ended (Ctrl-C too).
"""

from __future__ import annotations

import hashlib
import os
import stat
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.submit import upload as upload_module
from connectx_forge.submit.check import Gate, check_file
from connectx_forge.submit.verdict import CheckReport
from tests.fake_kaggle import FakeKaggle, FakeKaggleServer, isolate_cli

GOOD = textwrap.dedent("""
    def agent(obs, config):
        return [c for c in range(config.columns) if obs.board[c] == 0][-1]
""")
EVIL = "def agent(obs, config):\n    return -1  # never checked\n"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeKaggle]:
    """A local fake Kaggle the real CLI reaches, with fake credentials; nothing else is reachable."""
    isolate_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("KAGGLE_USERNAME", "forge-tester")
    monkeypatch.setenv("KAGGLE_KEY", "fake-key-for-the-upload-attacks")
    with FakeKaggleServer() as server:
        monkeypatch.setenv("HTTP_PROXY", server.proxy_url)
        monkeypatch.setenv("http_proxy", server.proxy_url)
        yield server


Seen = list[tuple[Path, bytes]]


def hook_check(monkeypatch: pytest.MonkeyPatch, before: Callable[[Path], None] | None = None,
               after: Callable[[Path], None] | None = None) -> Seen:
    """Run the real check inside ``upload``, calling ``before(path)`` / ``after(path)`` on the path it was given
    around it; what the check was given (its path and bytes) is recorded."""
    seen: Seen = []

    def hooked(path: Path, *args: Any, **kwargs: Any) -> CheckReport:
        seen.append((Path(path), Path(path).read_bytes()))
        if before is not None:
            before(Path(path))
        report = check_file(path, *args, **kwargs)
        if after is not None:
            after(Path(path))
        return report

    monkeypatch.setattr(upload_module, "check_file", hooked)
    return seen


def upload(path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["upload", str(path), "-m", "attack", "--games", "2", "--no-progress", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_refusal(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert all(w in lines[0] for w in words), err


@pytest.mark.parametrize("when", ["during", "after"])
def test_a_file_rewritten_during_or_after_its_check_sends_the_checked_bytes(
        fake: FakeKaggle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        when: str) -> None:
    original = tmp_path / "submission.py"
    original.write_text(GOOD)

    def rewrite(_given: Path) -> None:
        original.write_text(EVIL)

    seen = hook_check(monkeypatch, before=rewrite if when == "during" else None,
                      after=rewrite if when == "after" else None)
    code, out, err = upload(original, capsys)
    assert code == 0, err
    [(given, checked)] = seen
    assert given != original and given.name == original.name  # the check played the copy, not the path
    assert checked == GOOD.encode() and original.read_text() == EVIL
    assert list(fake.uploads.values()) == [checked]  # what Kaggle received is what was checked
    assert fake.requests[0].json()["fileName"] == "submission.py"
    assert f"check {original}" in out  # the report names the user's file
    assert hashlib.sha256(checked).hexdigest() in out
    assert not given.parent.exists()


def test_the_staged_copy_is_private_and_read_only(fake: FakeKaggle, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    modes: list[tuple[int, int]] = []
    original = tmp_path / "submission.py"
    original.write_text(GOOD)
    hook_check(monkeypatch, before=lambda p: modes.append((stat.S_IMODE(p.parent.stat().st_mode),
                                                           stat.S_IMODE(p.stat().st_mode))))
    code, _out, err = upload(original, capsys, "--dry-run")
    assert code == 0, err
    assert modes == [(0o700, 0o400)]


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_link_is_refused_in_one_line_and_nothing_is_sent(
        fake: FakeKaggle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        link: str) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "submission.py").write_text(GOOD)
    if link == "file":
        named = tmp_path / "submission.py"
        named.symlink_to(real / "submission.py")
    else:
        (tmp_path / "shared").symlink_to(real)
        named = tmp_path / "shared" / "submission.py"
    seen = hook_check(monkeypatch)
    code, _out, err = upload(named, capsys)
    one_line_refusal(code, err, str(named), "symbolic link")
    assert seen == [] and fake.requests == []


def test_a_fifo_or_an_oversized_file_is_refused_without_a_hang(
        fake: FakeKaggle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "submission.py"
    os.mkfifo(fifo)  # the command line's player lookup refuses it first: the upload itself must too
    seen = hook_check(monkeypatch)
    with pytest.raises(UserError, match="not a regular file"):
        upload_module.upload(fifo, "attack", Gate(games=2))
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as fh:
        fh.truncate(101 << 20)  # sparse: nothing is written
    code, _out, err = upload(huge, capsys)
    one_line_refusal(code, err, str(huge), "larger than", "100 MB")
    assert seen == [] and fake.requests == []


def test_a_staged_copy_changed_after_the_check_is_refused_and_nothing_is_sent(
        fake: FakeKaggle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Another process of the same user can undo the copy's 0400: the sha256 taken while copying catches it."""
    original = tmp_path / "submission.py"
    original.write_text(GOOD)

    def tamper(copy: Path) -> None:
        os.chmod(copy, 0o600)
        copy.write_text(EVIL)

    seen = hook_check(monkeypatch, after=tamper)
    code, _out, err = upload(original, capsys)
    one_line_refusal(code, err, "refusing to upload", str(original), "changed after the check", "nothing was sent")
    assert fake.requests == [] and fake.uploads == {}
    assert not seen[0][0].parent.exists()


def test_ctrl_c_during_the_check_removes_the_copy(fake: FakeKaggle, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    original = tmp_path / "submission.py"
    original.write_text(GOOD)

    def interrupt(_given: Path) -> None:
        raise KeyboardInterrupt

    seen = hook_check(monkeypatch, before=interrupt)
    code, _out, _err = upload(original, capsys)
    assert code == 130 and fake.requests == []
    assert seen and not seen[0][0].parent.exists()
