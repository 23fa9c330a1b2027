"""A competitor's own agent project, outside this repository: settings, imports, data, refusals, players.

Every project here is made in a temporary folder (``cxforge new``, or by hand),
never under the checkout, and goes through the same commands a user types.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connectx_bundler import project as projects
from connectx_bundler.builder import build
from connectx_bundler.cache import playable, source_needs_build
from connectx_forge.arena.match import run_match
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.play.resolve import reference, resolve, resolve_target
from connectx_forge.players.player import distinct
from connectx_forge.runtime import import_root
from connectx_forge.submit.check import Gate, check_file, manifest_and_floors_text

ROOT = Path(__file__).resolve().parents[2]
EMPTY = {"board": [0] * 42, "mark": 1}
CONFIG = {"rows": 6, "columns": 7, "inarow": 4}


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text))
    return root


def run_built(source: str) -> int:
    """Exec a built file as Kaggle does (empty globals, last callable) and ask for the first move."""
    env: dict = {}
    exec(compile(source, "<submission>", "exec"), env)
    agent = [v for v in env.values() if callable(v)][-1]
    return agent(EMPTY, CONFIG)


@pytest.fixture
def new_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["new", str(tmp_path / "mybot")]) == 0
    capsys.readouterr()
    return tmp_path / "mybot"


# -- cxforge new, settings ----------------------------------------------------------------

def test_new_scaffolds_a_project_that_builds_with_its_floors(new_project: Path) -> None:
    project = projects.load(new_project)
    assert (project.name, project.entry) == ("mybot", "mybot.main:act")
    assert project.floors == {"random": 0.85, "negamax": 0.5}
    built = build(resolve_target(str(new_project)))
    assert built.manifest["floors"] == {"random": 0.85, "negamax": 0.5}
    assert [d["name"] for d in built.manifest["data"]] == ["data/columns.json"]
    assert run_built(built.source) == 3


def test_new_refuses_a_folder_with_files(new_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(new_project)]) == 2
    assert "the folder exists and has files; add --force to replace it" in capsys.readouterr().err


def test_pyproject_tool_cxforge_is_read(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.cxforge]\nname = "pp"\nentry = "bot:play"\n'
                                       '[tool.cxforge.floors]\n"kaggle:random" = 0.75\n',
                     "bot.py": "def play(obs, config):\n    return 2\n"})
    project = projects.load(tmp_path)
    assert (project.name, project.module, project.function, project.floors) == ("pp", "bot", "play",
                                                                                {"random": 0.75})


def test_a_folder_without_settings_builds_main_agent(tmp_path: Path) -> None:
    write(tmp_path, {"main.py": "def agent(obs, config):\n    return 5\n"})
    target = resolve_target(str(tmp_path))
    assert (target.module, target.function, target.floors) == ("main", "agent", {})
    assert run_built(build(target).source) == 5


def test_a_lone_file_uses_its_last_function_like_kaggle(tmp_path: Path) -> None:
    write(tmp_path, {"mine.py": "def helper():\n    return 1\n\ndef my_agent(obs, config):\n    return 6\n"})
    target = resolve_target(str(tmp_path / "mine.py"))
    assert (target.name, target.function) == ("mine", "my_agent")
    assert run_built(build(target).source) == 6


# -- imports and data ---------------------------------------------------------------------

LAYOUT = {
    "cxforge.toml": 'name = "deep"\nentry = "bot.main:act"\n',
    "bot/__init__.py": "",
    "bot/main.py": """
        from . import sub
        from .sub.deeper import TWO
        from bot.helpers import one
        from util import three
        from connectx_forge.runtime import read_data

        WEIGHT = read_data("data/w.bin")

        def act(obs, config):
            return one() + TWO + three() - 4 + WEIGHT[0] + sub.ZERO
    """,
    "bot/helpers.py": "def one():\n    return 1\n",
    "bot/sub/__init__.py": "ZERO = 0\n",
    "bot/sub/deeper.py": "from ..helpers import one\nTWO = one() + 1\n",
    "util.py": "def three():\n    return 3\n",
    "data/w.bin": bytes([1]),
}


def test_absolute_sibling_and_relative_imports_and_data_build_and_run(tmp_path: Path) -> None:
    root = write(tmp_path / "p", LAYOUT)
    built = build(resolve_target(str(root)))
    names = [m["name"] for m in built.manifest["modules"]]
    assert {"bot", "bot.main", "bot.helpers", "bot.sub", "bot.sub.deeper", "util", "connectx_forge.runtime"} <= \
        set(names)
    assert run_built(built.source) == 1 + 2 + 3 - 4 + 1
    # the same sources, run from the folder (as the project's own tests do), read the same data
    assert import_root("bot.main", str(root / "bot" / "main.py")) == str(root)
    assert import_root("bot", str(root / "bot" / "__init__.py")) == str(root)


def test_a_project_may_use_the_toolkit_game_core(tmp_path: Path) -> None:
    root = write(tmp_path, {"main.py": "from agents.board import Board\n\ndef agent(obs, config):\n"
                                       "    return Board.from_obs(obs, config).legal_moves()[-1]\n"})
    built = build(resolve_target(str(root)))
    assert "agents.board" in [m["name"] for m in built.manifest["modules"]]
    assert run_built(built.source) == 6


def test_two_builds_of_a_project_are_byte_identical(tmp_path: Path) -> None:
    root = write(tmp_path / "p", LAYOUT)
    outs = []
    for i in range(2):
        assert main(["build", str(root), "-o", str(tmp_path / str(i) / "s.tar.gz")]) == 0
        outs.append(((tmp_path / str(i) / "s.tar.gz").read_bytes(), (tmp_path / str(i) / "s.tar.gz.json").read_bytes()))
    assert outs[0] == outs[1]


# -- refusals: one line naming the file, what is wrong and what to do ------------------------

@pytest.mark.parametrize("files, message", [
    ({"main.py": "import os\nW = open(os.path.dirname(__file__) + '/w.npy', 'rb').read()\n"
                 "def agent(obs, config):\n    return 0\n"},
     r"main.py:2: uses __file__, which a submission does not have on Kaggle; put the file in the project and "
     r"read it with `from connectx_forge.runtime import read_data`"),
    ({"main.py": "W = open('w.bin', 'rb').read()\ndef agent(obs, config):\n    return 0\n"},
     r"main.py:1: opens a file \(open\), which is not in the submission on Kaggle; .*read_data"),
    ({"main.py": "import numpy as np\nW = np.load('w.npy')\ndef agent(obs, config):\n    return 0\n"},
     r"main.py:2: reads a file with np.load, .*read_data"),
    ({"main.py": "import torch\ndef agent(obs, config):\n    return 0\n"},
     r"main.py:1: imports torch, which is not a module of the project .*Kaggle's runtime may lack it"),
    ({"cxforge.toml": 'entry = "bot.nope:act"\n', "bot/__init__.py": ""},
     r"cxforge.toml: entry bot.nope:act: no bot/nope.py or bot/nope/__init__.py in the project"),
    ({"cxforge.toml": 'entry = "main:nope"\n', "main.py": "def agent(obs, config):\n    return 0\n"},
     r"main.py: defines no 'nope' at top level .*fix entry in .*cxforge.toml"),
    ({"cxforge.toml": 'nmae = "x"\n'}, r"cxforge.toml: unknown setting 'nmae' \(did you mean 'name'\?\); the settings "
                                      r"are name, entry, floors"),
    ({"cxforge.toml": '[floors]\nrandom = 1.5\n'}, r"cxforge.toml: floors: random = 1.5 must be a win rate between"),
    ({"cxforge.toml": '[floors]\nradnom = 0.5\n'}, r"cxforge.toml: floors: unknown opponent 'radnom' \(did you mean"),
    ({"cxforge.toml": 'entry = 5\n'}, r"cxforge.toml: entry must be a string"),
    ({"cxforge.toml": 'entry = "not a module"\n'}, r"cxforge.toml: entry 'not a module' is not module:function"),
    ({"cxforge.toml": 'name = "x\n'}, r"cxforge.toml: not valid TOML"),
])
def test_bad_projects_are_refused_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                files: dict[str, str], message: str) -> None:
    root = write(tmp_path / "p", files)
    code = main(["build", str(root), "-o", str(tmp_path / "out" / "s.py")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cxforge build: error: "), err
    assert __import__("re").search(message, lines[0]), lines[0]
    assert not (tmp_path / "out" / "s.py").exists()


def test_a_marked_read_is_allowed(tmp_path: Path) -> None:
    root = write(tmp_path, {"main.py": "def agent(obs, config):\n    if False:\n"
                                       "        open('log.txt', 'a')  # cxforge: allow-read\n    return 1\n"})
    assert run_built(build(resolve_target(str(root))).source) == 1


# -- players: every kind, in every command -------------------------------------------------

def test_which_py_files_need_their_project(tmp_path: Path) -> None:
    """A lone .py that imports the toolkit is built (alone); one that imports a file beside it is refused in one
    line: a lone .py is built from a folder holding only it (tests/security/test_attack_roots.py)."""
    write(tmp_path, {"alone.py": "import json\ndef agent(obs, config):\n    return 0\n",
                     "broken.py": "def agent(:\n",
                     "uses.py": "from helpers import x\ndef agent(obs, config):\n    return x\n",
                     "helpers.py": "x = 1\n",
                     "core.py": "from connectx_forge.runtime import load_native\nfrom agents.board import Board\n"
                                "def agent(obs, config):\n    return Board.from_obs(obs, config).legal_moves()[0]\n",
                     "reads.py": "from connectx_forge.runtime import read_data\n"})
    assert not source_needs_build(tmp_path / "alone.py") and not source_needs_build(tmp_path / "broken.py")
    assert source_needs_build(tmp_path / "uses.py") and source_needs_build(tmp_path / "reads.py")
    alone = playable(reference(str(tmp_path / "alone.py")))
    assert Path(alone.file) == tmp_path / "alone.py" and not alone.built_here
    built = playable(reference(str(tmp_path / "core.py")))
    assert built.built_here and built.label == "core"
    assert Path(built.file).read_bytes().startswith(b"# ConnectX submission")
    with pytest.raises(UserError, match=r"uses.py: uses.py:1: imports helpers, .*a lone .py is built alone"):
        playable(reference(str(tmp_path / "uses.py")))


def test_projects_and_tar_gz_play_in_match(new_project: Path, tmp_path: Path) -> None:
    out = tmp_path / "b" / "mybot.tar.gz"
    assert main(["build", str(new_project), "-o", str(out)]) == 0
    result = run_match(str(new_project), str(out), games=2, workers=1)
    assert (len(result.records), result.a, result.b) == (2, "mybot", "mybot.tar.gz")
    assert result.isolated == (True, True)
    tally = result.tally()
    assert tally.games == 2 and tally.invalid == tally.errors == tally.crashes == 0
    assert tally.opponent_invalid == tally.opponent_errors == tally.opponent_crashes == 0


def test_a_tar_gz_plays_in_a_tournament(new_project: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b" / "mybot.tar.gz"
    assert main(["build", str(new_project), "-o", str(out)]) == 0
    assert main(["tournament", str(out), "random", "--openings", "1", "-w", "1", "--no-progress",
                 "--store", str(tmp_path / "t.sqlite")]) == 0
    text = capsys.readouterr().out
    assert "mybot.tar.gz vs random" in text and "no player lost a game by an invalid move" in text


def test_two_files_with_the_same_name_get_distinct_labels(tmp_path: Path) -> None:
    source = "def agent(obs, config):\n    return [c for c in range(7) if obs.board[c] == 0][0]\n"
    write(tmp_path, {"a/agent.py": source, "b/agent.py": source})
    a, b = distinct([resolve(str(tmp_path / "a" / "agent.py")), resolve(str(tmp_path / "b" / "agent.py"))])
    assert a.label != b.label and a.label.endswith("a/agent.py") and b.label.endswith("b/agent.py")


def test_winrates_and_check_take_a_project(new_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["winrates", "--agents", str(new_project), "--opponents", "kaggle:random", "-n", "2", "-w", "1",
                 "--no-progress"]) == 0
    assert "| mybot |" in capsys.readouterr().out


# -- the manifest is checked ---------------------------------------------------------------

def test_a_swapped_file_is_refused_by_its_stale_manifest(new_project: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.py"
    assert main(["build", str(new_project), "-o", str(out)]) == 0
    manifest, data, note = manifest_and_floors_text(out)
    assert manifest is not None and data["floors"] == {"random": 0.85, "negamax": 0.5} and note is None
    out.write_text("def agent(obs, config):\n    return 0\n")  # another file in its place
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    with pytest.raises(UserError, match=f"s.py.json does not describe s.py .*the file's {digest[:12]}"):
        check_file(out, Gate(1, opponents=("random", "negamax"), workers=1), validation=False)


def test_a_manifest_with_null_floors_is_read(tmp_path: Path) -> None:
    out = tmp_path / "s.py"
    out.write_text("def agent(obs, config):\n    return 0\n")
    (tmp_path / "s.py.json").write_text(json.dumps({"floors": None,
                                                 "sha256": hashlib.sha256(out.read_bytes()).hexdigest()}))
    assert manifest_and_floors_text(out)[1]["floors"] == {}


def test_build_repacks_a_built_file_keeping_its_manifest(new_project: Path, tmp_path: Path) -> None:
    assert main(["build", str(new_project), "-o", str(tmp_path / "a" / "s.tar.gz")]) == 0
    assert main(["build", str(tmp_path / "a" / "s.tar.gz"), "-o", str(tmp_path / "b" / "s.py")]) == 0
    direct = build(resolve_target(str(new_project))).content
    assert (tmp_path / "b" / "s.py").read_bytes() == direct
    manifest, data, note = manifest_and_floors_text(tmp_path / "b" / "s.py")
    assert note is None and data["agent"] == "mybot" and data["floors"] == {"random": 0.85, "negamax": 0.5}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("kind", [pytest.param("project", marks=pytest.mark.long), "file"])
def test_make_submission_takes_a_project_or_a_file(new_project: Path, tmp_path: Path, kind: str) -> None:
    lone = write(tmp_path / "mine", {"standalone.py": "import random\n\ndef agent(obs, config):\n    return "
                                     "random.choice([c for c in range(config.columns) if obs.board[c] == 0])\n"})
    agent = new_project if kind == "project" else lone / "standalone.py"
    out = tmp_path / "out" / "s.py"
    proc = subprocess.run(["make", "-s", "-o", ".venv/.runtime-installed", "submission", f"AGENT={agent}",
                           f"OUT={out}", "GAMES=2",
                           f"BIN={Path(sys.executable).parent}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.rstrip().endswith("PASS") and out.is_file()
    assert ("floor vs random: 85%" in proc.stdout) == (kind == "project")


def test_module_means_the_shipped_agents_module_with_or_without_its_package(tmp_path: Path) -> None:
    for i, module in enumerate(("weighted", "agents.weighted")):
        assert main(["build", "--module", module, "-o", str(tmp_path / f"{i}.py")]) == 0
    assert (tmp_path / "0.py").read_bytes() == (tmp_path / "1.py").read_bytes()


def test_sprt_and_mistakes_take_a_project(new_project: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sprt", str(new_project), "random", "-n", "4", "-w", "1", "--no-progress",
                 "--store", str(tmp_path / "s.sqlite")]) == 3  # no decision within 4 games
    assert "mybot: " in capsys.readouterr().out
    assert main(["mistakes", "--agents", str(new_project), "--sets", "Random-Middle", "--sample", "2",
                 "--no-cache"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Random-Middle")]
    assert len(row) == 1 and "/2 " in row[0]  # judged 2 positions
    assert " mybot " in row[0] and str(new_project) not in row[0]  # the project by its name, not its path


def test_a_changed_project_starts_a_new_tournament_run(new_project: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", str(new_project), "random", "--openings", "1", "-w", "1", "--no-progress",
            "--store", str(tmp_path / "t.sqlite")]
    assert main(args) == 0 and "2 games played now" in capsys.readouterr().out
    assert main(args) == 0 and "all games were in the store" in capsys.readouterr().out
    resolve.cache_clear()  # a new command: the project is built again
    columns = new_project / "data" / "columns.json"
    columns.write_text(columns.read_text().replace("[3, 2, 4", "[3, 4, 2"))
    assert main(args) == 0 and "2 games played now" in capsys.readouterr().out


def test_mistakes_plays_a_project_in_an_agent_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write(tmp_path / "exits", {"main.py": "import os\n\ndef agent(obs, config):\n    os._exit(3)\n"})
    # in this process the exit would end the run; in a host it is a broken (invalid) move on each position
    assert main(["mistakes", "--agents", str(root), "--sets", "Random-Middle", "--sample", "2", "--no-cache"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Random-Middle")]
    assert len(row) == 1 and " 2/2 " in row[0]
