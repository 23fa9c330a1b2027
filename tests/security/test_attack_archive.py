"""A hostile ``.tar.gz`` submission writes nothing outside its folder and never crashes ``cxforge check``.

The promise (tools/connectx_forge/archive.py): a submission archive may hold only
regular files and folders under plain relative names, each once, within the
module's bounds.  Any other archive -- links of any kind (including the
CVE-2025-4517 chain that defeats ``tarfile``'s ``filter="data"`` on Python
3.11.7), ``..`` or absolute names, devices, fifos, duplicate or clashing names,
a gzip bomb, too many members -- is refused by ``unpack`` and by ``check`` with
ONE ``UserError`` line that names the archive and the member, before a single
byte is written: the folder around the destination (a sentinel ``flag`` file
and an ``outside`` folder the attacks aim at) and the destination itself are
left exactly as they were.  Unreadable input (truncated gzip, a folder, an
empty file, a fifo) is one "not a readable .tar.gz" line, never a traceback.
A normal archive (main.py, a helper module and a data folder) still unpacks and
loads with Kaggle's loader.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from connectx_forge import archive
from connectx_forge.errors import UserError
from tests.harness import run_cxforge

Member = tuple[tarfile.TarInfo, bytes | None]
MAIN = b"def agent(obs, config):\n    return 0\n"


@dataclass(frozen=True)
class Arena:
    """``root`` holds a sentinel ``flag`` file, an empty ``outside`` folder and the empty destination ``dest``;
    archives are written beside it, in ``archives``."""

    root: Path
    dest: Path
    outside: Path
    archives: Path

    def archive(self, name: str, members: list[Member], fmt: int = tarfile.GNU_FORMAT) -> Path:
        path = self.archives / f"{name}.tar.gz"
        with tarfile.open(path, "w:gz", format=fmt) as tar:
            for info, data in members:
                tar.addfile(info, io.BytesIO(data) if data is not None else None)
        return path


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    root = tmp_path / "around"
    out = Arena(root, root / "dest", root / "outside", tmp_path / "archives")
    for folder in (out.dest, out.outside, out.archives):
        folder.mkdir(parents=True)
    (root / "flag").write_text("sentinel")
    return out


def snapshot(top: Path) -> dict[str, str | bytes]:
    """Everything under ``top`` (links not followed): a file's bytes, a link's target, a folder's mark."""
    out: dict[str, str | bytes] = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder, name)
            key = str(path.relative_to(top))
            out[key] = ("link:" + os.readlink(path) if path.is_symlink() else "dir" if path.is_dir()
                        else path.read_bytes() if path.is_file() else "special")
    return out


def regular(name: str, data: bytes = b"x", mode: int = 0o644) -> Member:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def folder(name: str, mode: int = 0o755) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, mode
    return info, None


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def special(name: str, kind: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = kind, 1, 3
    return info, None


def cve_2025_4517(dest: Path) -> list[Member]:
    """The shape of gh-135034, tuned to unpacking into ``dest``: nested folder links whose resolved path passes
    PATH_MAX, a link that escapes through them to ``dest/..``, a hard link through it to the ``flag`` there,
    then files written through both."""
    steps = "abcdefghijklmnop"
    max_path = os.pathconf("/", "PC_PATH_MAX")
    component = "d" * ((max_path - len(str(dest)) - 1) // (len(steps) + 1))
    members, path = [regular("main.py", MAIN)], ""
    for step in steps:
        members += [folder(os.path.join(path, component), 0o777), link(os.path.join(path, step), component)]
        path = os.path.join(path, component)
    long_link = os.path.join(*steps, "l" * 254)
    members += [link(long_link, os.path.join(*[".."] * len(steps))),
                link("escape", os.path.join(long_link, "..")),
                link("flaglink", os.path.join("escape", "flag"), tarfile.LNKTYPE),
                regular("flaglink", b"overwrite"),
                regular("escape/newfile", b"new")]
    return members


@dataclass(frozen=True)
class Case:
    """A hostile archive: its members (main.py first, so a partial unpack shows), the member to be named."""

    name: str
    members: Callable[[Arena], list[Member]]
    member: str
    fmt: int = tarfile.GNU_FORMAT


def with_main(*more: Member) -> Callable[[Arena], list[Member]]:
    return lambda arena: [regular("main.py", MAIN), *more]


CASES = [
    Case("cve_2025_4517", lambda a: cve_2025_4517(a.dest), "a"),
    Case("symlink_escape", lambda a: [regular("main.py", MAIN), link("data", os.path.relpath(a.outside, a.dest)),
                                      regular("data/evil.py", b"pwned")], "data"),
    Case("symlink_absolute", lambda a: [regular("main.py", MAIN), link("data", str(a.outside)),
                                        regular("data/evil.py", b"pwned")], "data"),
    Case("symlink_inside", with_main(link("alias.py", "main.py")), "alias.py"),
    Case("symlink_loop", with_main(link("loop1", "loop2"), link("loop2", "loop1")), "loop1"),
    Case("symlink_to_itself_then_a_file", with_main(link("loop", "loop"), regular("loop/x.py")), "loop"),
    Case("hardlink_escape", with_main(link("flaglink", "../flag", tarfile.LNKTYPE),
                                      regular("flaglink", b"overwrite")), "flaglink"),
    Case("hardlink_inside", with_main(link("copy.py", "main.py", tarfile.LNKTYPE)), "copy.py"),
    Case("hardlink_to_itself", with_main(link("self.py", "self.py", tarfile.LNKTYPE)), "self.py"),
    Case("dotdot", with_main(regular("../outside/evil.py", b"pwned")), "../outside/evil.py"),
    Case("dotdot_inner", with_main(regular("data/../../flag", b"pwned")), "data/../../flag"),
    Case("absolute", lambda a: [regular("main.py", MAIN), regular("/tmp/cxforge-attack-abs.py", b"pwned")],
         "/tmp/cxforge-attack-abs.py"),
    Case("device", with_main(special("null", tarfile.CHRTYPE)), "null"),
    Case("block_device", with_main(special("disk", tarfile.BLKTYPE)), "disk"),
    Case("fifo", with_main(special("pipe", tarfile.FIFOTYPE)), "pipe"),
    Case("duplicate_main", with_main(regular("main.py", b"def agent(obs, config):\n    return 6\n")), "main.py"),
    Case("duplicate_dot_slash", with_main(regular("./main.py", b"x = 1\n")), "main.py"),
    Case("file_used_as_folder", with_main(regular("data", b"x"), regular("data/w.txt")), "data/w.txt"),
    Case("double_slash", with_main(regular("data//w.txt")), "data//w.txt"),
    Case("dot_component", with_main(regular("data/./w.txt")), "data/./w.txt"),
    Case("control_character", with_main(regular("bad\nname.py")), "bad\nname.py"),
    Case("nul_in_pax_name", with_main(regular("n" * 120 + "\x00.py")), "n" * 120 + "\x00.py", tarfile.PAX_FORMAT),
    Case("empty_name", with_main(regular("")), ""),
    Case("dot_as_file", with_main(regular(".")), "."),
]


def assert_one_line_naming(error: BaseException, path: Path, member: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    assert str(path) in text, text
    assert repr(member)[:60] in text, text  # a long name is cut


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unpack_refuses_a_hostile_archive_and_writes_nothing(arena: Arena, case: Case) -> None:
    path = arena.archive(case.name, case.members(arena), case.fmt)
    before = snapshot(arena.root)
    with pytest.raises(UserError) as caught:
        archive.unpack(path, arena.dest)
    assert_one_line_naming(caught.value, path, case.member)
    assert snapshot(arena.root) == before
    assert not any(arena.dest.iterdir())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_refuses_a_hostile_archive_in_one_line(arena: Arena, case: Case) -> None:
    path = arena.archive(case.name, case.members(arena), case.fmt)
    before = snapshot(arena.root)
    with pytest.raises(UserError) as caught:
        archive.check(path)
    assert_one_line_naming(caught.value, path, case.member)
    assert snapshot(arena.root) == before


def refused_by_both(arena: Arena, path: Path) -> list[UserError]:
    """The errors with which ``check`` and ``unpack`` refuse ``path`` (each must), once nothing was unpacked."""
    errors = []
    for step in (archive.check, lambda p: archive.unpack(p, arena.dest)):
        with pytest.raises(UserError) as caught:
            step(path)
        errors.append(caught.value)
    assert not any(arena.dest.iterdir())
    return errors


def raw_archive(path: Path, info: tarfile.TarInfo, tail: bytes) -> Path:
    """A .tar.gz of ``info``'s header followed by ``tail`` as it is (its declared size need not be there)."""
    path.write_bytes(gzip.compress(info.tobuf(tarfile.GNU_FORMAT) + tail, compresslevel=1))
    return path


def test_a_header_declaring_a_terabyte_is_refused_at_its_header(arena: Arena) -> None:
    info = tarfile.TarInfo("bomb.bin")
    info.size = 1 << 40
    path = raw_archive(arena.archives / "tera.tar.gz", info, bytes(1 << 16))
    for error in refused_by_both(arena, path):
        assert_one_line_naming(error, path, "bomb.bin")
        assert "bytes unpacked" in str(error)


def test_a_gzip_bomb_past_the_unpacked_bound_is_refused(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_UNPACKED_BYTES", 1 << 20)
    path = arena.archive("bomb", [regular("main.py", MAIN), regular("zeros.bin", bytes(4 << 20))])
    assert path.stat().st_size < 64 << 10
    for error in refused_by_both(arena, path):
        assert_one_line_naming(error, path, "zeros.bin")


def test_many_small_files_past_the_unpacked_bound_are_refused(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_UNPACKED_BYTES", 1 << 20)
    path = arena.archive("many", [regular("main.py", MAIN)] + [regular(f"d/{i}", bytes(1 << 18)) for i in range(8)])
    with pytest.raises(UserError) as caught:
        archive.unpack(path, arena.dest)
    assert_one_line_naming(caught.value, path, "d/3")
    assert not any(arena.dest.iterdir())


def test_reading_stops_at_the_work_bound(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_TAR_BYTES", 64 << 10)
    path = arena.archive("headers", [regular("main.py", MAIN)] + [folder(f"d{i}") for i in range(400)])
    for error in refused_by_both(arena, path):
        assert "\n" not in str(error) and "more than 65536 bytes" in str(error)


def test_a_pax_header_larger_than_the_header_bound_is_not_read(arena: Arena) -> None:
    info, data = regular("main.py", MAIN)
    info.pax_headers = {"comment": "c" * (2 << 20)}
    path = arena.archive("pax", [(info, data)], tarfile.PAX_FORMAT)
    for error in refused_by_both(arena, path):
        assert "\n" not in str(error) and "header" in str(error)


def too_many(arena: Arena) -> Path:
    return arena.archive("crowd", [regular("main.py", MAIN)]
                         + [regular(f"f{i}", b"") for i in range(archive.MAX_MEMBERS)])


def test_one_member_too_many_is_refused(arena: Arena) -> None:
    path = too_many(arena)
    last = f"f{archive.MAX_MEMBERS - 1}"
    for error in refused_by_both(arena, path):
        assert_one_line_naming(error, path, last)


UNREADABLE: dict[str, Callable[[Path, bytes], object]] = {
    "truncated": lambda path, good: path.write_bytes(good[:-30]),
    "empty": lambda path, good: path.write_bytes(b""),
    "not_gzip": lambda path, good: path.write_bytes(MAIN),
    "plain_tar": lambda path, good: path.write_bytes(gzip.decompress(good)),
    "folder": lambda path, good: path.mkdir(),
    "fifo": lambda path, good: os.mkfifo(path),  # opening it for reading must not wait for a writer
    "missing": lambda path, good: None,
}


@pytest.mark.parametrize("label", list(UNREADABLE))
def test_unreadable_input_is_one_line_never_a_traceback(arena: Arena, label: str) -> None:
    good = arena.archive("good", [regular("main.py", MAIN)]).read_bytes()
    path = arena.archives / f"{label}.tar.gz"
    UNREADABLE[label](path, good)
    for error in refused_by_both(arena, path):
        text = str(error)
        assert "\n" not in text and f"{path}: not a readable .tar.gz (" in text, text


def test_a_normal_archive_unpacks_and_loads(arena: Arena) -> None:
    from connectx_forge.players.player import file_agent

    main = (b"from cxf_attack_helper import COLUMN\n"
            b"def agent(obs, config):\n    return COLUMN\n")
    helper = b"import os\nCOLUMN = int(open(os.path.join(os.path.dirname(__file__), 'data', 'col.txt')).read())\n"
    path = arena.archive("normal", [folder("./"), regular("./main.py", main), regular("./cxf_attack_helper.py", helper),
                                    folder("./data"), regular("./data/col.txt", b"5\n"),
                                    regular("./data/tool.sh", b"#!/bin/sh\n", 0o4755)])
    archive.check(path)
    loaded = archive.unpack(path, arena.dest)
    assert loaded == arena.dest / "main.py" and loaded.read_bytes() == main
    assert sorted(p.name for p in arena.dest.rglob("*")) == ["col.txt", "cxf_attack_helper.py", "data", "main.py",
                                                              "tool.sh"]
    assert (arena.dest / "data").stat().st_mode & 0o7777 == 0o755
    assert (arena.dest / "main.py").stat().st_mode & 0o7777 == 0o644
    assert (arena.dest / "data" / "tool.sh").stat().st_mode & 0o7777 == 0o755  # execute kept, setuid not
    assert file_agent(str(loaded))({"board": [0] * 42, "mark": 1}, {"columns": 7, "rows": 6}) == 5


STAGE = "cxforge-check-12345678"  # the length of the folder ``cxforge check`` stages an archive in
E2E = [Case("cve_2025_4517", lambda a: cve_2025_4517(a.root / "tmp" / STAGE), "a"),
       *(c for c in CASES if c.name in ("symlink_loop", "hardlink_to_itself", "symlink_escape"))]


@pytest.mark.parametrize("case", E2E, ids=[c.name for c in E2E])
def test_cxforge_check_refuses_a_hostile_archive_in_one_line(arena: Arena, case: Case) -> None:
    """Its temporary folders are made under ``around/tmp``, so an escape from the stage lands in the arena."""
    path = arena.archive(case.name, case.members(arena), case.fmt)
    (arena.root / "tmp").mkdir()
    before = snapshot(arena.root)
    run = run_cxforge({**os.environ, "TMPDIR": str(arena.root / "tmp")}, "check", str(path), "-n", "2",
                      "--no-progress", timeout=300)
    lines = [line for line in run.text.splitlines() if line.strip()]
    assert run.returncode != 0, run.text
    assert "Traceback" not in run.text, run.text
    assert len(lines) == 1 and repr(case.member) in lines[0] and str(path) in lines[0], run.text
    assert snapshot(arena.root) == before
