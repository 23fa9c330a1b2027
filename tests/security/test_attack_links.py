"""Nothing is written through a link: a symbolic link planted where a command writes never redirects the write.

A run folder, a working folder or ``/tmp`` may be shared with someone hostile, who plants a link at the file a
command will write (``report.json -> ~/.bashrc``) or at a folder on its way (``runs/t1 -> ~/``).  For a
representative set of writers (``build -o``, ``match --save``/``--append``/``--store``, ``tournament -o DIR``,
``replay -o``, ``review --html DIR``, ``ladder -o DIR``, the openings cache in the user cache), each attack
plants the link to a victim outside and checks that the command says one line naming the link and that the
victim is unchanged; a plain run still writes its files (``connectx_forge.safe_write``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from connectx_forge import safe_write
from connectx_forge.arena import openings
from connectx_forge.cli import main
from tests.review_games import blunder_replay

FAST = ["-n", "2", "-w", "1", "--no-progress"]
MATCH = ["match", "random", "leftmost", *FAST]
TOURNAMENT = ["tournament", "random", "leftmost", *FAST]


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder outside the working folder holding a file the user cares about."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "home_file").write_text("precious\n")
    return folder


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder the commands run in (the victim is beside it, outside)."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def replay(tmp_path: Path) -> Path:
    path = tmp_path / "episode-75000002-replay.json"
    path.write_text(json.dumps(blunder_replay()))
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes (a new file, or a changed one, shows)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], victim: Path, link: str) -> None:
    """``cxforge ARGV`` stops with one line naming the link ``link``, and the victim is as it was."""
    before = snapshot(victim)
    status = main(argv)
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1, err
    assert f"{link} is a symbolic link" in err, err
    assert snapshot(victim) == before
    assert (victim / "home_file").read_text() == "precious\n"


def plant(link: str, target: Path) -> None:
    Path(link).parent.mkdir(parents=True, exist_ok=True)
    Path(link).symlink_to(target)


CASES: dict[str, tuple[Callable[[Path, Path], list[str]], str, str]] = {
    # name: (argv given the victim folder and the replay, the link's path, what it points at: "file" or "folder")
    "build -o, at the file": (lambda v, r: ["build", "random", "-o", "out/sub.py", "--force"], "out/sub.py", "file"),
    "build -o, at its folder": (lambda v, r: ["build", "random", "-o", "out/sub.py"], "out", "folder"),
    "build -o, at its manifest": (lambda v, r: ["build", "random", "-o", "out/sub.py"], "out/sub.py.json", "file"),
    "match --save --append, at the file": (lambda v, r: [*MATCH, "--save", "g.jsonl", "--append"], "g.jsonl", "file"),
    "match --save, at a folder": (lambda v, r: [*MATCH, "--save", "runs/t1/g.jsonl"], "runs/t1", "folder"),
    "match --store, at its folder": (lambda v, r: [*MATCH, "--store", "runs/t1/s.sqlite"], "runs/t1", "folder"),
    "match --store, at its log": (lambda v, r: [*MATCH, "--store", "s.sqlite"], "s.sqlite-wal", "file"),
    "tournament -o DIR, the folder": (lambda v, r: [*TOURNAMENT, "-o", "rep"], "rep", "folder"),
    "tournament -o DIR, a folder above": (lambda v, r: [*TOURNAMENT, "-o", "runs/rep"], "runs", "folder"),
    "tournament -o DIR, a file in it": (lambda v, r: [*TOURNAMENT, "-o", "rep", "--store", "t.sqlite"],
                                        "rep/report.json", "file"),
    "replay -o, at the file": (lambda v, r: ["replay", str(r), "-o", "page.html", "--force"], "page.html", "file"),
    "replay -o, at its folder": (lambda v, r: ["replay", str(r), "-o", "pages/page.html"], "pages", "folder"),
    "review --html DIR, the folder": (lambda v, r: ["review", str(r), "--html", "html"], "html", "folder"),
    "review --html DIR, its index": (lambda v, r: ["review", str(r), "--html", "html"], "html/index.html", "file"),
    "ladder -o DIR, the folder": (lambda v, r: ["ladder", "random", "-o", "lad"], "lad", "folder"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_link_where_a_command_writes_is_refused_and_the_victim_is_unchanged(
        case: str, victim: Path, replay: Path, cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, link, kind = CASES[case]
    plant(link, victim if kind == "folder" else victim / "home_file")
    refused(capsys, argv(victim, replay), victim, link)


def test_an_absolute_path_through_a_link_is_refused(victim: Path, cwd: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    plant("runs", victim)
    target = cwd / "runs" / "g.jsonl"
    refused(capsys, [*MATCH, "--save", str(target)], victim, str(cwd / "runs"))


def test_appending_to_a_hard_link_of_another_file_is_refused(victim: Path, cwd: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    os.link(victim / "home_file", "g.jsonl")
    status = main([*MATCH, "--save", "g.jsonl", "--append"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and "hard links" in err, err
    assert (victim / "home_file").read_text() == "precious\n"


def test_a_link_planted_between_the_check_and_the_write_is_not_followed(victim: Path, cwd: Path) -> None:
    """The writers hold each folder open as they walk (``O_NOFOLLOW``) and rename a new file into place, so a
    link at the target is refused or replaced, never written through, whenever it appears."""
    safe_write.check_target("out/report.json")
    plant("out/report.json", victim / "home_file")
    with pytest.raises(safe_write.UnsafeOutput, match="out/report.json is a symbolic link"):
        safe_write.write_text("out/report.json", "{}", replace=True)
    with pytest.raises(safe_write.UnsafeOutput, match="out/report.json is a symbolic link"):
        safe_write.open_append("out/report.json")
    assert (victim / "home_file").read_text() == "precious\n"
    assert [p.name for p in Path("out").iterdir()] == ["report.json"]  # no temporary file left


def _cache_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: Path, where: str | None) -> Path:
    """The user cache at ``tmp_path/cache``, with a link to ``victim`` at ``where`` inside it ("": the cache
    folder itself; ``None``: no link); the openings cache is kept there (a tiny suite: the solver is not what is
    tested)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CXFORGE_CACHE", str(cache))
    monkeypatch.setattr(openings, "CACHE", cache / "openings")
    monkeypatch.setattr(openings, "build_suite", lambda *a, **k: [openings.Opening("4", 0)])
    if where == "":
        cache.symlink_to(victim)
    elif where is not None:
        (cache / where).parent.mkdir(parents=True, exist_ok=True)
        (cache / where).symlink_to(victim)
    return cache


@pytest.mark.parametrize("where", ["", "openings"])
def test_the_openings_cache_is_never_written_through_a_link(where: str, tmp_path: Path, victim: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache_case(tmp_path, monkeypatch, victim, where)
    before = snapshot(victim)
    with pytest.raises(safe_write.UnsafeOutput, match=f"{cache / where if where else cache} is a symbolic link"):
        openings.load_suite(2, (-5, 5), 3, progress=False)
    assert snapshot(victim) == before


def test_a_cache_folder_of_another_user_is_refused(tmp_path: Path, victim: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("a plain user cannot give a folder to another user")
    cache = _cache_case(tmp_path, monkeypatch, victim, None)
    cache.mkdir()
    os.chown(cache, 65534, 65534)
    with pytest.raises(safe_write.UnsafeOutput, match="owned by another user"):
        openings.load_suite(2, (-5, 5), 3, progress=False)
    assert not any(cache.iterdir())


def test_plain_runs_still_write_their_files(tmp_path: Path, replay: Path, cwd: Path,
                                            monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    """The regression check: every writer above writes where it was told, folders made as needed; the user
    cache is made 0700."""
    assert main([*MATCH, "--save", "runs/t1/g.jsonl", "--store", "runs/t1/s.sqlite"]) == 0
    assert len(Path("runs/t1/g.jsonl").read_text().splitlines()) == 2
    assert main([*MATCH, "--save", "runs/t1/g.jsonl", "--append", "--seed", "1"]) == 0
    assert len(Path("runs/t1/g.jsonl").read_text().splitlines()) == 4
    assert main(["build", "random", "-o", "out/sub.py"]) == 0
    assert Path("out/sub.py").stat().st_size > 0 and json.loads(Path("out/sub.py.json").read_text())["sha256"]
    assert main(["replay", str(replay), "-o", "pages/page.html"]) == 0
    assert "<html" in Path("pages/page.html").read_text().lower()
    assert main(["replay", str(replay), "-o", "pages/page.html"]) == 2  # -o replaces only with --force
    assert main(["replay", str(replay), "-o", "pages/page.html", "--force"]) == 0
    cache = _cache_case(tmp_path, monkeypatch, tmp_path / "unused", None)
    assert openings.load_suite(2, (-5, 5), 3, progress=False) == [openings.Opening("4", 0)]
    assert (cache / "openings").stat().st_mode & 0o777 == 0o700 and cache.stat().st_mode & 0o777 == 0o700
    assert not [p for p in Path().rglob("*") if p.name.startswith(".cxforge-")]  # no temporary file left
    capsys.readouterr()


# -- nothing is read through a link either: the submission file a command is given ---------------------------
AGENT = "def agent(obs, config):\n    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n"
GIVEN = {  # a command given a submission file: its arguments
    "match": lambda f: ["match", f, "random", *FAST],
    "check": lambda f: ["check", f, "-n", "1", "-w", "1", "--no-progress"],
    "build": lambda f: ["build", f, "-o", "built.py", "--force"],
    "upload": lambda f: ["upload", f, "--dry-run", "-m", "x", "-n", "1", "-w", "1", "--no-progress"],
}


@pytest.mark.parametrize("command", list(GIVEN))
@pytest.mark.parametrize("through", ["file", "folder"])
def test_a_submission_reached_through_a_link_is_refused_alike_by_every_command(
        command: str, through: str, cwd: Path, victim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``match``, ``check``, ``build`` and ``upload`` follow one rule for the file they judge
    (``boundedread.open_unlinked``): a link at the file, or at a folder on its path, is refused in one line
    naming it, before anything is played, built or staged; nothing is read of what it points at."""
    (victim / "agent.py").write_text(AGENT)
    link = "sub.py" if through == "file" else "shared"
    Path(link).symlink_to(victim / ("agent.py" if through == "file" else ""))
    given = "sub.py" if through == "file" else "shared/agent.py"
    refused(capsys, GIVEN[command](given), victim, "sub.py: the file" if through == "file" else link)
    assert not Path("built.py").exists()


def test_check_judges_one_copy_read_without_links(tmp_path: Path, cwd: Path, victim: Path) -> None:
    """``check_file`` (the API ``cxforge check`` and ``upload`` share) reads its file once, as ``upload`` does
    (``upload_copy.staged_copy``): a link or a FIFO given straight to it is one line, and never hangs."""
    from connectx_forge.errors import UserError
    from connectx_forge.submit.check import check_file

    (victim / "agent.py").write_text(AGENT)
    Path("linked.py").symlink_to(victim / "agent.py")
    with pytest.raises(UserError, match="linked.py: the file is a symbolic link"):
        check_file("linked.py")
    os.mkfifo("fifo.py")
    with pytest.raises(UserError, match="fifo.py: not a regular file"):
        check_file("fifo.py")
