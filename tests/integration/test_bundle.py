"""The bundler (build/): one self-contained, deterministic submission file per agent.

Fake projects in ``tmp_path`` (their own agents/ package, with copies of the real
game core and resources module) exercise each bad input and each import form;
built files are loaded the way Kaggle loads them (``get_last_callable`` on the
source, in a subprocess started from an empty folder, with every route back to
the project blocked).  Also: the ``weighted`` agent, which ships a data file.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from agents.board import Board
from agents.registry import REGISTRY
from connectx_bundler.builder import DEFAULT_SIZE_LIMIT, Target, build, target_for_file, write
from connectx_bundler.embed import decode, encode
from connectx_bundler.errors import BuildError
from connectx_forge.play.resolve import resolve_target
from tests.strategies import positions

ROOT = Path(__file__).resolve().parents[2]
CXFORGE = Path(sys.executable).parent / "cxforge"
EMPTY_OBS = {"board": [0] * 42, "mark": 1}

# Runs in a fresh interpreter (-I: no cwd, no PYTHONPATH) from an empty folder.  Any
# import of a project package raises, so a bundle that still needs the project fails.
ISOLATED_LOADER = r'''
import json, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"agents", "tools", "build", "tests", "connectx_bundler"}:
            raise ImportError(f"the submission imported project module {name}")
sys.meta_path.insert(0, Block())
from kaggle_environments.agent import get_last_callable
from kaggle_environments.utils import structify
results = []
for job in json.load(sys.stdin):
    try:
        raw = open(job["path"], encoding="utf-8").read()
        agent = get_last_callable(raw)
        move = agent(structify(job["obs"]), structify(job["config"]))
        results.append({"name": agent.__name__, "move": move, "type": type(move).__name__})
    except Exception as exc:
        results.append({"error": f"{type(exc).__name__}: {exc}"})
OURS = {"agents", "connectx_forge", "connectx_bundler", "tools", "build"}
results.append({"project_modules": sorted(m for m in sys.modules if m.partition(".")[0] in OURS)})
print(json.dumps(results))
'''


def run_isolated(tmp_path: Path, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Load each built file as Kaggle does, in one clean subprocess; one result per job."""
    empty = tmp_path / "empty"
    empty.mkdir(exist_ok=True)
    for job in jobs:
        job.setdefault("obs", EMPTY_OBS)
        job.setdefault("config", {"rows": 6, "columns": 7, "inarow": 4})
        job["path"] = str(job["path"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-I", "-c", ISOLATED_LOADER], input=json.dumps(jobs), cwd=empty,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert results.pop() == {"project_modules": []}
    return results


def make_project(root: Path, files: dict[str, str], data: dict[str, bytes] | None = None) -> Path:
    """A fake project: agents/ with the real board.py, plus ``files``; ``data`` in agents/data/."""
    (root / "agents" / "data").mkdir(parents=True)
    (root / "agents" / "__init__.py").write_text('"""Fake agents package."""\n')
    shutil.copy(ROOT / "agents" / "board.py", root / "agents" / "board.py")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for name, content in (data or {}).items():
        (root / "agents" / "data" / name).write_bytes(content)
    return root


def build_fake(root: Path, module: str = "agents.bot", function: str = "agent", **kwargs: Any):
    return build(Target(name=module.rpartition(".")[2], module=module, function=function), root, **kwargs)


def write_built(built: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(built.content)
    return path


def exec_like_kaggle(source: str) -> tuple[dict[str, Any], Any]:
    """In this process: exec in an empty dict and take the last callable, as Kaggle does."""
    env: dict[str, Any] = {}
    exec(compile(source, "<submission>", "exec"), env)
    return env, [v for v in env.values() if callable(v)][-1]


BOT = textwrap.dedent("""
    from agents.board import Board

    def agent(obs, config):
        return Board.from_obs(obs, config).legal_moves()[0]
""")


# -- the real agents -------------------------------------------------------------

def test_every_registered_agent_builds_and_loads_isolated(tmp_path: Path) -> None:
    jobs = []
    for name, spec in sorted(REGISTRY.items()):
        built = build(resolve_target(name, ROOT), ROOT)
        assert built.manifest["agent"] == name and built.manifest["module"] == spec.module
        assert built.manifest["function"] == spec.function and built.manifest["floors"] == spec.floors
        jobs.append({"path": write_built(built, tmp_path / f"{name}.py"), "agent": name})
    for job, result in zip(jobs, run_isolated(tmp_path, jobs), strict=True):
        assert "error" not in result, (job["agent"], result)
        assert result["name"] == "agent", job["agent"]
        if REGISTRY[job["agent"]].valid:
            assert result["type"] == "int" and 0 <= result["move"] < 7, (job["agent"], result)


def test_weighted_bundle_plays_the_same_moves_as_the_source(tmp_path: Path) -> None:
    from agents.weighted import agent as source_agent

    path = write_built(build(resolve_target("weighted", ROOT), ROOT), tmp_path / "w.py")
    positions = [Board(), Board.from_moves([3, 3, 2, 2]), Board.from_moves([0, 1, 0, 1, 0]),
                 Board.from_moves([3, 2, 3, 4, 5, 4, 6])]
    jobs = [{"path": path, "obs": {"board": b.to_grid(), "mark": b.mark}} for b in positions]
    config = {"rows": 6, "columns": 7, "inarow": 4}
    expected = [source_agent(job["obs"], config) for job in jobs]
    assert [r["move"] for r in run_isolated(tmp_path, jobs)] == expected


def test_loading_a_bundle_leaves_the_host_modules_alone() -> None:
    import agents.board
    import connectx_forge.runtime

    tops = ("agents", "connectx_forge")
    before = {k: v for k, v in sys.modules.items() if k.partition(".")[0] in tops}
    env, agent = exec_like_kaggle(build(resolve_target("weighted", ROOT), ROOT).source)
    after = {k: v for k, v in sys.modules.items() if k.partition(".")[0] in tops}
    assert after == before and sys.modules["agents.board"] is agents.board
    assert connectx_forge.runtime.EMBEDDED == {}
    assert agent(EMPTY_OBS, {"rows": 6, "columns": 7, "inarow": 4}) == 3
    assert [k for k, v in env.items() if callable(v)] == ["_cxforge_agent", "agent"]


# -- determinism, formats, manifest, size -----------------------------------------------

@pytest.mark.parametrize("fmt", ["py", "tar.gz"])
def test_two_builds_are_byte_identical(tmp_path: Path, fmt: str) -> None:
    suffix = ".py" if fmt == "py" else ".tar.gz"
    outs = []
    for i in range(2):
        built = build(resolve_target("weighted", ROOT), ROOT, fmt=fmt)
        out = tmp_path / str(i) / f"submission{suffix}"
        manifest = write(built, out)
        assert manifest == tmp_path / str(i) / f"submission{suffix}.json"
        outs.append((out.read_bytes(), manifest.read_bytes()))
    assert outs[0] == outs[1]
    content, manifest_bytes = outs[0]
    manifest = json.loads(manifest_bytes)
    assert manifest["sha256"] == hashlib.sha256(content).hexdigest() and manifest["size"] == len(content)
    assert manifest["format"] == fmt and manifest["valid"] is True and manifest["submittable"] is True
    assert [m["name"] for m in manifest["modules"]][-1] == "agents.weighted"
    assert [d["name"] for d in manifest["data"]] == ["agents/data/cell_weights.json"]


def test_tar_gz_holds_main_py_with_the_same_source_and_fixed_metadata() -> None:
    target = resolve_target("weighted", ROOT)
    source = build(target, ROOT).source
    packed = build(target, ROOT, fmt="tar.gz").content
    assert packed[4:8] == b"\0\0\0\0"  # gzip header mtime
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["main.py"]
        assert (members[0].mtime, members[0].uid, members[0].gid, members[0].uname) == (0, 0, 0, "")
        assert tar.extractfile(members[0]).read().decode() == source  # type: ignore[union-attr]
    assert gzip.decompress(packed)  # a plain gzip stream


def test_sources_hash_follows_sources_and_data(tmp_path: Path) -> None:
    bot = BOT + "\nX = read_data('agents/data/t.bin')\nfrom connectx_forge.runtime import read_data\n"
    root = make_project(tmp_path, {"agents/bot.py": bot}, {"t.bin": b"one"})
    first = build_fake(root).manifest["sources_sha256"]
    (root / "agents" / "data" / "t.bin").write_bytes(b"two")
    second = build_fake(root).manifest["sources_sha256"]
    (root / "agents" / "bot.py").write_text((root / "agents" / "bot.py").read_text() + "# changed\n")
    assert len({first, second, build_fake(root).manifest["sources_sha256"]}) == 3


def test_size_limit(tmp_path: Path) -> None:
    built = build(resolve_target("weighted", ROOT), ROOT)
    size = len(built.content)
    assert size < DEFAULT_SIZE_LIMIT
    assert build(resolve_target("weighted", ROOT), ROOT, size_limit=size).content == built.content
    with pytest.raises(BuildError, match=f"{size:,} bytes, above the size limit of {size - 1:,}"):
        build(resolve_target("weighted", ROOT), ROOT, size_limit=size - 1)


# -- Kaggle's last-callable rule ---------------------------------------------------

def test_last_callable_is_the_agent_whatever_the_source_ends_with(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"agents/bot.py": """
        from agents.board import Board

        def agent(obs, config):
            return Board.from_obs(obs, config).legal_moves()[-1]

        def other(obs, config):
            return 0

        class Trailing:
            pass

        alias = other
        from collections import OrderedDict
    """})
    path = write_built(build_fake(root), tmp_path / "out" / "bot.py")
    assert run_isolated(tmp_path, [{"path": path}]) == [{"name": "agent", "move": 6, "type": "int"}]


def test_a_one_argument_agent_gets_only_obs(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"agents/bot.py": """
        def agent(obs):
            return sum(obs["board"]) + 2
    """})
    _, agent = exec_like_kaggle(build_fake(root).source)
    assert agent(EMPTY_OBS, {}) == 2


# -- import forms that must work ---------------------------------------------------

def test_relative_imports_packages_and_function_level_imports(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "agents/__init__.py": "from agents.board import Board as Board\n",
        "agents/sub/__init__.py": "from .helper import centre\n",
        "agents/sub/helper.py": "def centre(columns):\n    return columns // 2\n",
        "agents/late.py": "def late():\n    from agents import bot\n    return bot.OFFSET\n",
        "agents/bot.py": """
            import numpy as np
            import agents.sub.helper
            from agents import Board
            from . import sub
            from .sub import centre
            OFFSET = 0

            def agent(obs, config):
                from agents.late import late
                board = Board.from_obs(obs, config)
                assert sub.helper.centre is centre is agents.sub.helper.centre
                return int(np.int64(centre(board.columns) + late()))
        """,
    })
    built = build_fake(root)
    names = [m["name"] for m in built.manifest["modules"]]
    assert set(names) == {"agents", "agents.board", "agents.sub", "agents.sub.helper", "agents.late", "agents.bot"}
    # import-time dependencies first (the packages here import their own modules)
    assert names.index("agents.board") < names.index("agents") < names.index("agents.bot")
    assert names.index("agents.sub.helper") < names.index("agents.sub") < names.index("agents.bot")
    path = write_built(built, tmp_path / "out" / "bot.py")
    assert run_isolated(tmp_path, [{"path": path}]) == [{"name": "agent", "move": 3, "type": "int"}]


def test_dataclasses_with_string_annotations_work_in_a_bundle(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"agents/bot.py": """
        from __future__ import annotations
        from dataclasses import dataclass

        @dataclass(frozen=True)
        class Choice:
            column: int

        def agent(obs, config):
            return Choice(4).column
    """})
    _, agent = exec_like_kaggle(build_fake(root).source)
    assert agent(EMPTY_OBS, {}) == 4


def test_build_by_path_for_a_file_outside_the_agents_package(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", {"mine/mybot.py": BOT})
    target = target_for_file(root / "mine" / "mybot.py", root)
    assert (target.name, target.module) == ("mybot", "mybot")
    path = write_built(build(target, root), tmp_path / "out" / "mybot.py")
    assert run_isolated(tmp_path, [{"path": path}]) == [{"name": "agent", "move": 0, "type": "int"}]
    assert target_for_file(ROOT / "agents" / "weighted.py", ROOT).module == "agents.weighted"


# -- embedded data -----------------------------------------------------------------

DATA_BOT = """
    import hashlib
    from connectx_forge.runtime import read_data

    BLOB = read_data("agents/data/tables/blob.bin")

    def agent(obs, config):
        return hashlib.sha256(BLOB).hexdigest()
"""


def test_data_round_trip_and_sha_check(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 300 + os.urandom(1000)
    root = make_project(tmp_path, {"agents/bot.py": DATA_BOT})
    (root / "agents" / "data" / "tables").mkdir()
    (root / "agents" / "data" / "tables" / "blob.bin").write_bytes(blob)
    built = build_fake(root)
    digest = hashlib.sha256(blob).hexdigest()
    assert built.manifest["data"] == [{"name": "agents/data/tables/blob.bin", "size": len(blob), "sha256": digest}]
    _, agent = exec_like_kaggle(built.source)
    assert agent(EMPTY_OBS, {}) == digest
    assert decode(encode(blob)) == blob

    wrong_digest = built.source.replace(repr(digest), repr("0" * 64))
    with pytest.raises(ImportError, match="'agents/data/tables/blob.bin' fails its sha256 check"):
        exec_like_kaggle(wrong_digest)
    lines = built.source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if repr(digest) in line) + 1  # first line of the blob
    quote = lines[at].index("'")
    lines[at] = lines[at][:quote + 5] + ("A" if lines[at][quote + 5] != "A" else "B") + lines[at][quote + 6:]
    with pytest.raises(Exception, match="sha256|Error -3|Incorrect padding"):
        exec_like_kaggle("".join(lines))


def test_missing_data_file_names_it(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"agents/bot.py": DATA_BOT})
    with pytest.raises(BuildError, match=r"agents/bot.py:5: data file agents/data/tables/blob.bin cannot be read"):
        build_fake(root)


def test_read_data_needs_a_literal(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"agents/bot.py": """
        from connectx_forge.runtime import read_data
        NAME = "x.bin"

        def agent(obs, config):
            return read_data(NAME)[0]
    """})
    with pytest.raises(BuildError, match=r"agents/bot.py:6: read_data\(NAME\) needs a string literal"):
        build_fake(root)


# -- bad inputs: one clear message naming the culprit --------------------------------------

@pytest.mark.parametrize("files, message", [
    ({"agents/bot.py": "def agent(obs, config):\n    return (\n"}, r"agents/bot.py:2: syntax error"),
    ({"agents/bot.py": "def helper():\n    pass\n"}, r"agents/bot.py: defines no 'agent'"),
    ({"agents/bot.py": "from agents.board import Nope\n" + BOT},
     r"agents/bot.py:1: cannot import name 'Nope' from agents.board"),
    ({"agents/bot.py": "import agents.nope\n" + BOT}, r"agents/bot.py:1: cannot resolve import 'agents.nope'"),
    ({"agents/bot.py": "from . import nope\n" + BOT}, r"cannot import name 'nope' from agents "),
    ({"agents/bot.py": BOT + "\ndef f():\n    import torch\n"},
     r"agents/bot.py:8: imports torch, which is not a module of the project \(no torch.py or torch/ in "),
    ({"agents/bot.py": "from connectx_forge.paths import CACHE\n" + BOT},
     r"agents/bot.py:1: imports connectx_forge.paths, a part of connectx-forge that is not bundle-safe"),
    ({"agents/bot.py": "import agents.registry\n" + BOT, "agents/registry.py": "X = 1\n"},
     r"agents/bot.py:1: imports agents.registry: it is for the tools"),
    ({"agents/bot.py": "from agents.a import A\n" + BOT, "agents/a.py": "from agents.b import B\nA = 1\n",
      "agents/b.py": "import os\nfrom agents.a import A\nB = 2\n"},
     r"import cycle the bundler cannot order: agents.a -> agents.b -> agents.a "
     r"\(imports at agents/a.py:1, agents/b.py:2\)"),
    ({"agents/bot.py": "from agents.helper import x\n" + BOT, "agents/helper.py": "def x(:\n"},
     r"agents/helper.py:1: syntax error"),
    ({"agents/bot.py": "from ... import x\n" + BOT}, r"agents/bot.py:1: relative import goes above"),
])
def test_bad_sources_fail_with_one_clear_line(tmp_path: Path, files: dict[str, str], message: str) -> None:
    root = make_project(tmp_path, files)
    with pytest.raises(BuildError, match=message) as info:
        build_fake(root)
    assert "\n" not in str(info.value)


def test_a_cycle_through_function_level_imports_is_fine(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "agents/bot.py": "from agents.a import pick\n\ndef agent(obs, config):\n    return pick()\n",
        "agents/a.py": "def pick():\n    from agents.b import FIVE\n    return FIVE\n",
        "agents/b.py": "from agents.a import pick\nFIVE = 5\n",
    })
    _, agent = exec_like_kaggle(build_fake(root).source)
    assert agent(EMPTY_OBS, {}) == 5


def test_stdlib_and_numpy_pass_everything_else_is_refused(tmp_path: Path) -> None:
    ok = "import numpy.linalg\nimport collections.abc, json, zlib\nfrom itertools import product\n" + BOT
    build_fake(make_project(tmp_path / "ok", {"agents/bot.py": ok}))
    for module in ("torch", "numba", "scipy.signal", "kaggle_environments"):
        root = make_project(tmp_path / module, {"agents/bot.py": BOT + f"\nif False:\n    import {module}\n"})
        with pytest.raises(BuildError, match=f"agents/bot.py:8: imports {module},"):
            build_fake(root)


def test_unknown_agent() -> None:
    with pytest.raises(BuildError, match=r"unknown player 'nope'; use a registered agent \(.*weighted"):
        resolve_target("nope", ROOT)


def test_cli_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", {"agents/bot.py": "import torch\n" + BOT})
    proc = subprocess.run([str(CXFORGE), "build", "--project-root", str(root), "--module", "agents.bot",
                           "-o", str(tmp_path / "x.py")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"cxforge build: error: agents/bot.py:1: imports torch, which is not a module of "
                                   f"the project (no torch.py or torch/ in {root.resolve()}), nor in the standard "
                                   "library or numpy; Kaggle's runtime may lack it: put that code in the project, "
                                   "or drop the import")
    assert not (tmp_path / "x.py").exists()
    proc = subprocess.run([str(CXFORGE), "build", "nope"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "unknown player 'nope'" in proc.stderr


def test_cli_writes_the_file_and_manifest_and_prints_the_hash(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "submission.tar.gz"
    proc = subprocess.run([str(CXFORGE), "build", "weighted", "-o", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "sub" / "submission.tar.gz.json").read_text())
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert manifest["format"] == "tar.gz" and manifest["sha256"] == digest
    assert proc.stdout.strip().splitlines()[-1] == f"{out}  {out.stat().st_size:,} bytes  sha256 {digest}"


# -- the data-file agent -------------------------------------------------------------

def test_weighted_table_is_the_line_count() -> None:
    from agents.weighted import count_lines, stored_tables, weights

    stored = stored_tables()["6x7x4"]
    assert stored[0] == (3, 4, 5, 7, 5, 4, 3) and stored[2] == (5, 8, 11, 13, 11, 8, 5)
    assert stored == count_lines(6, 7, 4) and stored == tuple(reversed(stored))
    assert sum(map(sum, count_lines(6, 7, 4))) == 69 * 4  # 69 lines of four on 6x7
    assert weights(5, 5, 3)[2][2] == 12 and weights(5, 5, 3) == count_lines(5, 5, 3)


def test_weighted_wins_then_blocks_then_takes_the_heaviest_cell() -> None:
    from agents.weighted import choose

    assert choose(Board()) == 3
    assert choose(Board.from_moves([0, 6, 0, 6, 0, 6])) == 0  # own win before the block
    assert choose(Board.from_moves([3, 0, 3, 0, 4, 0])) == 0  # block
    assert choose(Board.from_moves([3, 3, 3, 3, 3, 3])) in (2, 4)  # centre full: next heaviest
    assert choose(Board(5, 5, 3)) == 2


@given(positions())
def test_opponent_winning_moves_are_the_wins_the_opponent_would_have_on_move(board: Board) -> None:
    passed = Board._from(board.geo, board.current ^ board.mask, board.mask, board.moves + 1)  # a "pass"
    assert board.opponent_winning_moves() == passed.winning_moves()
