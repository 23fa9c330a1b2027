"""The immutable, hashed copy of a submission that ``cxforge upload`` checks and then sends.

Checking one file and then uploading it by its path would send whatever the
path holds at upload time: a file rewritten during the check (by another
process, a teammate's sync, a shared run folder), or a different file reached
through a link.  So the file is copied once, before the check, into a fresh
private folder (mode 0700) as a read-only file (0400), its sha256 computed from
the very bytes written; the check is given that copy (with a copy of the build
manifest beside it, whose floors the check judges), the kaggle CLI is given
that copy, and just before the CLI runs the copy is read again and its sha256
compared (``verify``): a copy that changed, even by a process of the same user,
is refused in one line and nothing is sent.  The folder is removed when the
upload ends, however it ends (Ctrl-C included).

The original is opened one path component at a time with ``O_NOFOLLOW``
(``boundedread.open_unlinked``, the rule of every command given a submission
file), so neither the file nor any folder on the path as given may be a symbolic
link; it must be a regular file of at most ``MAX_UPLOAD_BYTES`` (Kaggle's own
limit).  ``cxforge check`` judges such a copy too (``check.check_file``), so
check and upload judge the same bytes by the same rule.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from connectx_bundler.manifest import manifest_path
from connectx_forge.boundedread import MAX_SETTINGS, MIB, open_unlinked
from connectx_forge.errors import UserError

MAX_UPLOAD_BYTES = 100 * MIB  # Kaggle takes a submission of at most 100 MB
CHUNK = 1 * MIB


@dataclass(frozen=True)
class StagedCopy:
    """The copy of ``original`` that is checked and sent: ``file`` (read-only, in its own private folder) and
    the ``sha256`` of the bytes written to it."""

    original: Path
    file: Path
    sha256: str


def _copy(source: Path, target: Path, bound: int, why: str) -> str:
    """Copy ``source`` (``_open_without_links``, a regular file of at most ``bound`` bytes, ``why`` saying
    whose bound) to the new file ``target``, made read-only; the sha256 of the bytes written."""
    fd = open_unlinked(source)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{source}: not a regular file")
        if info.st_size > bound:
            raise UserError(f"{source}: larger than {bound} bytes ({info.st_size}): {why}")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(out, "wb") as dst:
            written = 0
            while chunk := src.read(min(CHUNK, bound + 1 - written)):
                written += len(chunk)
                if written > bound:  # it grew while read
                    raise UserError(f"{source}: larger than {bound} bytes (it grew while read): {why}")
                digest.update(chunk)
                dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())
    os.chmod(target, 0o400)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of the file at ``path`` as it is now (read without following a link)."""
    digest = hashlib.sha256()
    with os.fdopen(open_unlinked(path), "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify(copy: StagedCopy) -> None:
    """Refuse, in one line, a staged copy whose bytes are no longer the ones hashed when it was made (and
    checked): called just before the copy is handed to the kaggle CLI."""
    try:
        now = file_sha256(copy.file)
    except UserError:
        now = "(gone)"
    if now != copy.sha256:
        raise UserError(f"refusing to upload {copy.original}: its checked copy {copy.file} changed after the "
                        f"check (sha256 {copy.sha256[:12]}... then, {now[:12]}... now); nothing was sent")


@contextmanager
def staged_copy(path: Path) -> Iterator[StagedCopy]:
    """A ``StagedCopy`` of ``path`` (and of its build manifest, if one is beside it) in a fresh private folder,
    removed when the block ends, however it ends."""
    folder = Path(tempfile.mkdtemp(prefix="cxforge-upload-"))  # mode 0700, a new name
    try:
        target = folder / path.name
        digest = _copy(path, target, MAX_UPLOAD_BYTES, "Kaggle takes a submission of at most 100 MB")
        manifest = manifest_path(path)
        if manifest.is_symlink() or manifest.is_file():
            _copy(manifest, manifest_path(target), MAX_SETTINGS, "the bound of a build manifest")
        yield StagedCopy(path, target, digest)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
