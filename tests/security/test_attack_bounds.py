"""Bounded everywhere: no tree an agent shapes, and no file the user is given, makes the toolkit recurse,
allocate or follow a link past its bounds.

The attacks: an agent that writes a folder 3,000 deep (with a link to the user's files and a folder it made
unreadable) into its game folder at its first move, played unjailed and jailed (every folder the referee and
the warden remove, and the walks of the warden, are ``connectx_forge.trees``: no recursion, no link followed);
the match ends without a traceback and leaves no folder behind.  A ``train --init`` weight file whose array
header claims 10^9 numbers (numpy would allocate 4 GB for them before it found the bytes missing): refused in
one line naming the file and the header, with no large allocation.  Runs as root and as a plain user
(tests/security/test_attack_unprivileged.py)."""

from __future__ import annotations

import io
import os
import tempfile
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agents.net.features import VERSION
from agents.net.mlp import save_mlp
from connectx_forge import trees
from connectx_forge.errors import UserError
from connectx_forge.sandbox import namespace
from connectx_forge.train import dqn_training
from tests.harness import planted_world, run_cxforge

DEPTH = 3000  # past Python's recursion limit: shutil.rmtree and os.walk/os.fwalk recurse once per level on 3.11

DEEP_AGENT = """import os

def agent(obs, config):
    if not os.path.lexists("deep"):
        os.symlink(%(victim)r, "victim")  # a removal that follows it empties the user's folder
        top = os.open(".", os.O_RDONLY)
        for _ in range(%(depth)d):
            os.mkdir("deep")
            os.chdir("deep")
        os.mkdir("locked")
        open("locked/inside", "w").close()
        os.chmod("locked", 0)
        os.fchdir(top)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


@pytest.fixture
def temp() -> Iterator[Path]:
    """A TMPDIR for the run's folders, in memory where the machine has ``/dev/shm`` (a 3,000-deep tree costs
    seconds on a disk), open to the hosts' own uids."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="cxforge-bounds-", dir=shm if os.access(shm, os.W_OK) else None))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        trees.remove(folder)


def _deep(top: Path, depth: int) -> None:
    """``top/d/d/.../d`` ``depth`` deep, a file at each level, made through descriptors (no path is that long)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


@pytest.mark.parametrize("jail", ["not-jailed", "jailed"])
def test_an_agents_deep_tree_crashes_nothing_and_is_removed(jail: str, tmp_path: Path, temp: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("the user's\n")
    agent = tmp_path / "deep.py"
    agent.write_text(DEEP_AGENT % {"victim": str(victim), "depth": DEPTH})
    env = dict(planted_world(tmp_path), TMPDIR=str(temp))
    if jail == "not-jailed":
        env["CXFORGE_JAIL"] = "off"
    run = run_cxforge(env, "match", str(agent), "kaggle:random", "-n", "2", "-w", "1", "--no-progress",
                      timeout=180)
    assert run.returncode == 0, run.text
    assert "Traceback" not in run.text and "RecursionError" not in run.text, run.text
    assert len(run.stderr.splitlines()) <= 2, run.stderr  # at most a line per game
    assert list(temp.iterdir()) == [], list(temp.iterdir())
    assert (victim / "keep.txt").read_text() == "the user's\n"


def test_remove_takes_a_deep_unreadable_linked_tree_and_follows_no_link(tmp_path: Path, temp: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("kept\n")
    top = temp / "game"
    top.mkdir()
    _deep(top, DEPTH)
    (top / "link").symlink_to(victim)
    (top / "file-link").symlink_to(victim / "keep.txt")
    (top / "shut" / "inner").mkdir(parents=True)
    (top / "shut" / "inner" / "f").write_text("x")
    os.chmod(top / "shut" / "inner", 0)
    os.chmod(top / "shut", 0o500)
    assert trees.remove(top)
    assert not top.exists() and (victim / "keep.txt").read_text() == "kept\n"
    assert trees.remove(tmp_path / "no-such-folder")
    (tmp_path / "a-link").symlink_to(victim)
    assert trees.remove(tmp_path / "a-link") and victim.is_dir()


def test_the_wardens_walks_are_bounded_not_recursive(temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``namespace.written`` (a template's budget, read between games) on a tree deeper than ``trees.DEEPEST``:
    None (the template is dropped), not a RecursionError; a shallow tree is read whole."""
    (temp / "work" / "w").mkdir(parents=True)  # overlay's work folder: left out
    (temp / "a").mkdir()
    (temp / "a" / "f").write_text("x")
    fd = os.open(temp, os.O_RDONLY | os.O_DIRECTORY)
    try:
        monkeypatch.setitem(namespace._ROOTS, -1, fd)
        assert [entry[0] for entry in namespace.written(-1) or ()] == ["./a", "./a/f"]
        _deep(temp / "a", DEPTH)
        assert namespace.written(-1) is None
        with pytest.raises(trees.TooDeep):
            list(trees.walk(fd, trees.DEEPEST))
    finally:
        os.close(fd)


def _lying_npz(elements: int) -> bytes:
    """A weight file (``save_mlp``'s, compressed) whose ``w0`` header claims ``elements`` float32 numbers over 8."""
    real = save_mlp([np.zeros((2, 2))], [np.zeros(2)], {"features": VERSION})
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (elements,)})
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(real)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in src.namelist():
            data = src.read(name)
            out.writestr(name, header.getvalue() + b"\0" * 32 if name == "w0.npy"
                         else data)
    return buf.getvalue()


def test_an_init_weight_file_that_lies_about_its_size_is_refused_before_numpy_sizes_anything(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    good.write_bytes(save_mlp([np.ones((3, 2))], [np.ones(2)], {"features": VERSION}))
    assert dqn_training.load_init(good).weights[0].shape == (3, 2)  # a real weight file still loads
    path = tmp_path / "init.npz"
    path.write_bytes(_lying_npz(10**9))
    tracemalloc.start()
    try:
        with pytest.raises(UserError) as raised:
            dqn_training.load_init(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    line = str(raised.value)
    assert "\n" not in line and str(path) in line and "w0.npy: its header does not describe" in line, line
    assert peak < 16 << 20, peak  # numpy's own allocations are traced: the 4 GB array was never asked for
