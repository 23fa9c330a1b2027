"""A project never reaches past its own root, and what the toolkit copies is bounded.

The attacks: the user's home folder (holding a fake ``~/.kaggle/kaggle.json``), ``/`` or a folder holding
credentials (``runtime.CREDENTIALS``) given as a project; a settings file in HOME that would make every file
below it a project's; a lone ``.py`` downloaded beside the user's files, which reads, imports or lists them;
``read_data`` and ``[native]`` sources in a credentials folder inside a project; a 10,000-deep ``.tar.gz``
and a deep folder given to the staging copy and to the C build's walk.  Each is refused in one line naming
the folder, file or bound (and the fix), before anything is written or played, and the secret is in no
output; a lone ``.py`` at play sees only itself.  Runs as root and as a plain user
(tests/security/test_attack_unprivileged.py)."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectx_bundler import cc
from connectx_bundler import project as projects
from connectx_forge import archive, credentials
from connectx_forge.arena.match import run_match
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.runtime import CREDENTIALS, RefusedData
from connectx_forge.sandbox import jail

SECRET = "cxforge-roots-secret-3d9a71"
AGENT = "def agent(obs, config):\n    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n"
READS = 'from connectx_forge.runtime import read_data\n\nDATA = read_data("%s")\n\n' + AGENT


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME set to a folder holding a fake ``.kaggle/kaggle.json`` and an agent ``main.py``; the user cache
    elsewhere."""
    folder = tmp_path / "home"
    (folder / ".kaggle").mkdir(parents=True)
    (folder / ".kaggle" / "kaggle.json").write_text(f'{{"username": "victim", "key": "{SECRET}"}}\n')
    (folder / "main.py").write_text(AGENT)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    return folder


def one_error(capsys: pytest.CaptureFixture[str], *named: str) -> str:
    """The one error line a refused command printed (naming each of ``named``, saying no secret)."""
    said = capsys.readouterr()
    text = said.out + said.err
    assert SECRET not in text and "Traceback" not in text, text
    errors = [line for line in said.err.splitlines() if "error:" in line]
    assert len(errors) == 1, said.err
    assert all(name in errors[0] for name in named), errors[0]
    return errors[0]


@pytest.mark.parametrize("command", [["build", "{home}", "-o", "{out}"],
                                     ["build", "--module", "main", "--project-root", "{home}", "-o", "{out}"],
                                     ["match", "{home}", "kaggle:random", "-n", "2", "-w", "1", "--no-progress"],
                                     ["check", "{home}", "-n", "2", "-w", "1", "--no-progress"]])
def test_home_as_a_project_is_refused_in_one_line(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  command: list[str]) -> None:
    out = tmp_path / "out" / "s.py"
    assert main([part.format(home=home, out=out) for part in command]) == 2
    one_error(capsys, str(home), "is your home folder", "move your agent into a folder of its own")
    assert not out.exists()


def test_cxforge_build_in_home_refuses_it(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME with settings of its own, the working folder: ``cxforge build`` takes it as the project, and refuses."""
    (home / "cxforge.toml").write_text('name = "home"\n')
    monkeypatch.chdir(home)
    assert main(["build", "-o", str(tmp_path / "s.py")]) == 2
    one_error(capsys, "is your home folder")


@pytest.mark.parametrize("place", CREDENTIALS)
def test_a_project_holding_credentials_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  place: str) -> None:
    root = tmp_path / "p"
    (root / place).parent.mkdir(parents=True, exist_ok=True)
    if place.endswith((".json", "credentials", "rc")):
        (root / place).write_text(SECRET)
    else:
        (root / place).mkdir()
    (root / "main.py").write_text(AGENT)
    (root / "cxforge.toml").write_text('name = "p"\n')
    assert main(["build", str(root), "-o", str(tmp_path / "s.py")]) == 2
    one_error(capsys, str(root), f"holds credentials ({place})", "a folder of its own")
    assert not (tmp_path / "s.py").exists()


def test_the_filesystem_root_and_folders_above_home_are_no_project(home: Path) -> None:
    for folder, problem in ((Path("/"), "is the filesystem's root"), (home.parent, "holds your home folder")):
        with pytest.raises(UserError, match=f"{folder}: {problem}.*a folder of its own"):
            projects.refuse_root(folder)
    assert credentials.exposes(home / "sub") is None


def test_walking_up_from_a_file_never_lands_on_home(home: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Settings in HOME naming a file there as its entry: the file builds alone, never with HOME as its root, so
    its read of ``.kaggle/kaggle.json`` finds nothing to embed."""
    (home / "cxforge.toml").write_text('name = "home"\nentry = "bot:agent"\n')
    (home / "bot.py").write_text(READS % ".kaggle/kaggle.json")
    (home / "sub").mkdir()
    assert projects.find_root(home / "sub") is None and projects.find_root(home) is None
    out = tmp_path / "s.py"
    assert main(["build", str(home / "bot.py"), "-o", str(out)]) == 2
    one_error(capsys, str(home / "bot.py"), ".kaggle")
    assert not out.exists()


SNOOP = """
import os
{imports}

SECRET = {secret!r}


def found():
    seen = False
    for name in ("secret.txt", "notes/secret.txt", "../secret.txt"):
        try:
            with open(name) as fh:  # cxforge: allow-read
                seen = seen or SECRET in fh.read()
        except OSError:
            pass
    try:
        seen = seen or bool({{"secret.txt", "notes"}} & set(os.listdir(".")))
    except OSError:
        pass
    return seen


def agent(obs, config):
    return 42 if found() else [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


@pytest.mark.parametrize("built", [False, True], ids=["as-is", "built"])
def test_a_lone_py_at_play_sees_no_file_beside_it(tmp_path: Path, built: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A lone .py (played as it is, or built because it imports the toolkit) in a folder beside a secret: at play
    its folder holds only itself.  It plays an invalid move if it finds anything else."""
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "Downloads"
    (folder / "notes").mkdir(parents=True)
    for path in (folder / "secret.txt", folder / "notes" / "secret.txt"):
        path.write_text(SECRET)
    agent = folder / "snoop.py"
    agent.write_text(SNOOP.format(imports="from connectx_forge.runtime import load_native" if built else "",
                                  secret=SECRET))
    result = run_match(str(agent), "kaggle:random", games=2, workers=1, progress=False)
    tally = result.tally()
    assert tally.games == 2 and tally.invalid == tally.errors == tally.crashes == 0, tally


@pytest.mark.parametrize("source, named", [(READS % "secret.txt", "data file secret.txt"),
                                           ("import helper\n\n" + AGENT, "imports helper")])
def test_a_lone_py_is_built_from_a_folder_holding_only_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, source: str,
                                                          named: str) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "Downloads"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    (folder / "helper.py").write_text(f"KEY = {SECRET!r}\n")
    (folder / "agent.py").write_text(source)
    out = tmp_path / "s.py"
    assert main(["build", str(folder / "agent.py"), "-o", str(out)]) == 2
    one_error(capsys, str(folder / "agent.py"), named, "a lone .py is built alone")
    assert not out.exists()


def test_a_lone_py_builds_and_its_manifest_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "Downloads"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    (folder / "mine.py").write_text("from connectx_forge.runtime import load_native\n\n" + AGENT)
    out = tmp_path / "s.py"
    assert main(["build", str(folder / "mine.py"), "-o", str(out)]) == 0
    capsys.readouterr()
    manifest = (tmp_path / "s.py.json").read_text()
    assert '"agent": "mine"' in manifest and '"path": "mine.py"' in manifest and SECRET not in out.read_text()
    copy = projects.load(folder / "mine.py").entry_path
    assert copy is not None and os.listdir(copy.parent) == ["mine.py"] and copy.parent.stat().st_mode & 0o077 == 0


def test_read_data_refuses_credentials_wherever_the_root_is(tmp_path: Path, home: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """In a project (not at its top: the project itself is accepted), ``read_data`` of a credentials folder is
    refused by the build and by the runtime, and so is a link into the user's."""
    root = tmp_path / "p"
    (root / "data" / ".kaggle").mkdir(parents=True)
    (root / "data" / ".kaggle" / "kaggle.json").write_text(SECRET)
    (root / "data" / "linked").symlink_to(home / ".kaggle")
    (root / "cxforge.toml").write_text('name = "p"\n')
    for name in ("data/.kaggle/kaggle.json", "data/linked/kaggle.json", ".ssh/id_rsa"):
        (root / "main.py").write_text(READS % name)
        assert main(["build", str(root), "-o", str(tmp_path / "s.py")]) == 2
        one_error(capsys, name)
        with pytest.raises(RefusedData, match=r"credentials are kept"):  # the runtime, as the project's tests run it
            exec(compile(READS % name, str(root / "main.py"), "exec"), {"__name__": "main",
                                                                        "__file__": str(root / "main.py")})
    assert not (tmp_path / "s.py").exists()


def test_a_native_source_in_a_credentials_folder_is_refused(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    (root / "native" / ".ssh").mkdir(parents=True)
    (root / "native" / ".ssh" / "fast.c").write_text(f'const char *k = "{SECRET}";\nint f(void) {{ return 1; }}\n')
    (root / "cxforge.toml").write_text('name = "p"\n[native]\nfast = ["native/.ssh/fast.c"]\n')
    (root / "main.py").write_text('from connectx_forge.runtime import load_native\n\nLIB = load_native("fast")\n\n'
                                  + AGENT)
    assert main(["build", str(root), "-o", str(tmp_path / "s.py")]) == 2
    one_error(capsys, "native/.ssh/fast.c", "credentials are kept")


def deep(folder: Path, depth: int) -> Path:
    """``depth`` nested folders ``d/d/...`` under ``folder``, made through descriptors (no path grows long)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    return folder


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder that ``rm -rf`` empties afterwards (a deep tree is beyond a recursive remover)."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def tar_gz(path: Path, names: list[str]) -> Path:
    """A .tar.gz with ``main.py`` and the folders ``names``."""
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        main_py = tarfile.TarInfo("main.py")
        main_py.size = len(AGENT)
        tar.addfile(main_py, io.BytesIO(AGENT.encode()))
        for name in names:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
    return path


@pytest.mark.parametrize("names", [["/".join(["d"] * 10_000)], ["/".join(["d"] * n) for n in range(1, 40)]],
                         ids=["one-member", "a-chain"])
def test_a_deep_archive_is_refused_in_one_line_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], names: list[str]) -> None:
    source = tar_gz(tmp_path / "deep.tar.gz", names)
    for command in (["check", str(source), "-n", "2", "-w", "1", "--no-progress"],
                    ["match", str(source), "kaggle:random", "-n", "2", "-w", "1", "--no-progress"],
                    ["build", str(source), "-o", str(tmp_path / "out" / "s.py")]):
        assert main(command) == 2
        one_error(capsys, str(source), f"(at most {archive.MAX_DEPTH})")
    with pytest.raises(UserError, match=f"names deep \\(at most {archive.MAX_DEPTH}\\)"):
        archive.unpack(source, tmp_path / "dest")
    assert not (tmp_path / "dest").exists() and not (tmp_path / "out" / "s.py").exists()


def test_check_and_match_accept_the_same_archives(tmp_path: Path) -> None:
    """What unpacks (match) also passes ``check`` and its staging copy into each game folder, and the other way."""
    fine = tar_gz(tmp_path / "fine.tar.gz", ["/".join(["d"] * (archive.MAX_DEPTH - 1))])
    archive.check(fine)
    archive.copy_tree(archive.unpack(fine, tmp_path / "stage").parent, tmp_path / "game")
    assert (tmp_path / "game" / "main.py").read_text() == AGENT
    for bad in (["/".join(["d"] * (archive.MAX_DEPTH + 1))], [".ssh"]):
        refused = tar_gz(tmp_path / "bad.tar.gz", bad)
        for step in (archive.check, lambda p: archive.unpack(p, tmp_path / "bad")):
            with pytest.raises(UserError, match="at most|credentials"):
                step(refused)


def test_the_staging_copy_refuses_a_deep_tree_home_and_links(scratch: Path, home: Path) -> None:
    (scratch / "main.py").write_text(AGENT)
    deep(scratch, 2_000)  # past Python's recursion limit: a recursive copy (shutil.copytree) would crash
    with pytest.raises(UserError, match=f"names deep \\(at most {archive.MAX_DEPTH}\\)"):
        archive.copy_tree(scratch, scratch.parent / "game")
    assert not (scratch.parent / "game").exists()
    with pytest.raises(UserError, match="is your home folder"):
        archive.copy_tree(home, scratch.parent / "game")
    linked = scratch.parent / "linked"
    linked.mkdir()
    (linked / "main.py").symlink_to(home / ".kaggle" / "kaggle.json")
    with pytest.raises(UserError, match="'main.py' is not a regular file or a folder"):
        archive.copy_tree(linked, scratch.parent / "game")


def test_the_c_builds_walk_is_bounded(scratch: Path) -> None:
    (scratch / "fast.c").write_text("int f(void) { return 1; }\n")
    deep(scratch, 2_000)
    with pytest.raises(UserError, match=f"more than {cc.MAX_DEPTH} folders deep"):
        cc.c_files(scratch, ["fast.c"])


def test_the_jail_never_shows_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: were the toolkit's folder the home folder, the jail would refuse to start."""
    monkeypatch.setattr(jail, "toolkit", lambda: [str(home)])
    with pytest.raises(UserError, match=f"would show {home}, which is your home folder"):
        jail.shown()



def test_a_long_import_chain_builds_without_recursion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A project whose modules import each other 1,500 deep (past Python's recursion limit) is ordered by the
    bundler's own stack, not a traceback."""
    root = tmp_path / "chain"
    root.mkdir()
    for i in range(1_500):
        (root / f"m{i}.py").write_text(f"import m{i + 1}\n" if i < 1_499 else "X = 1\n")
    (root / "main.py").write_text("import m0\n\n" + AGENT)
    assert main(["build", str(root), "-o", str(tmp_path / "s.py")]) == 0, capsys.readouterr().err
    assert "1501 module(s)" in capsys.readouterr().out
