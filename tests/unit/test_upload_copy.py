"""The staged copy ``cxforge upload`` checks and sends (``tools/connectx_forge/submit/upload_copy.py``): its hash, its
verification, the manifest staged beside it, and its folder removed however the block ends."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from connectx_forge.errors import UserError
from connectx_forge.submit.upload_copy import file_sha256, staged_copy, verify

SOURCE = b"def agent(obs, config):\n    return 0\n"


def test_the_copy_holds_the_bytes_it_hashed_and_verifies(tmp_path: Path) -> None:
    original = tmp_path / "submission.py"
    original.write_bytes(SOURCE)
    with staged_copy(original) as copy:
        assert copy.original == original and copy.file.name == "submission.py" and copy.file != original
        assert copy.file.read_bytes() == SOURCE
        assert copy.sha256 == hashlib.sha256(SOURCE).hexdigest() == file_sha256(copy.file)
        original.write_bytes(b"changed")  # the original is no longer what counts
        verify(copy)
    assert not copy.file.parent.exists()


@pytest.mark.parametrize("change", ["rewritten", "appended", "replaced", "removed"])
def test_verify_refuses_a_copy_whose_bytes_changed(tmp_path: Path, change: str) -> None:
    original = tmp_path / "submission.py"
    original.write_bytes(SOURCE)
    with staged_copy(original) as copy:
        os.chmod(copy.file, 0o600)
        if change == "rewritten":
            copy.file.write_bytes(SOURCE.replace(b"0", b"1"))
        elif change == "appended":
            with open(copy.file, "ab") as fh:
                fh.write(b"#")
        elif change == "replaced":  # a new file renamed over it
            (copy.file.parent / "other").write_bytes(b"x = 1\n")
            os.replace(copy.file.parent / "other", copy.file)
        else:
            copy.file.unlink()
        with pytest.raises(UserError, match="changed after the check") as refused:
            verify(copy)
    assert "\n" not in str(refused.value) and "nothing was sent" in str(refused.value)


def test_verify_refuses_a_copy_turned_into_a_link(tmp_path: Path) -> None:
    original = tmp_path / "submission.py"
    original.write_bytes(SOURCE)
    with staged_copy(original) as copy:
        copy.file.unlink()
        copy.file.symlink_to(original)  # the same bytes, through a link: not the copy
        with pytest.raises(UserError, match="changed after the check"):
            verify(copy)


def test_an_archive_is_staged_byte_for_byte_with_its_manifest(tmp_path: Path) -> None:
    original = tmp_path / "submission.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("main.py")
        info.size = len(SOURCE)
        tar.addfile(info, io.BytesIO(SOURCE))
    original.write_bytes(buffer.getvalue())
    manifest = {"floors": {}, "sha256": hashlib.sha256(buffer.getvalue()).hexdigest()}
    (tmp_path / "submission.tar.gz.json").write_text(json.dumps(manifest))
    with staged_copy(original) as copy:
        assert copy.file.read_bytes() == buffer.getvalue()
        assert json.loads((copy.file.parent / "submission.tar.gz.json").read_text()) == manifest
        assert sorted(p.name for p in copy.file.parent.iterdir()) == ["submission.tar.gz", "submission.tar.gz.json"]


def test_a_linked_manifest_is_refused(tmp_path: Path) -> None:
    original = tmp_path / "submission.py"
    original.write_bytes(SOURCE)
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "submission.py.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UserError, match="symbolic link"), staged_copy(original):
        pass


def test_the_folder_is_removed_when_the_block_raises(tmp_path: Path) -> None:
    original = tmp_path / "submission.py"
    original.write_bytes(SOURCE)
    folders: list[Path] = []
    with pytest.raises(KeyboardInterrupt), staged_copy(original) as copy:
        folders.append(copy.file.parent)
        raise KeyboardInterrupt
    assert folders and not folders[0].exists()


def test_a_relative_path_and_a_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "submission.py").write_bytes(SOURCE)
    monkeypatch.chdir(tmp_path)
    with staged_copy(Path("sub/submission.py")) as copy:
        assert copy.file.read_bytes() == SOURCE
    with pytest.raises(UserError, match="no such file"), staged_copy(Path("sub/absent.py")):
        pass
