"""Reports are typed objects, not dicts: no function of the package returns ``dict[str, Any]`` (or a
list or tuple holding one) but a report's ``to_json``, and the JSON plumbing listed in ``PLUMBING`` (a format
someone else defines, or raw data before it is checked).  A report is a frozen dataclass with typed fields
(``to_json``/``from_json`` where it is written or read as JSON); a record of a file format may be a
``TypedDict``, as python-chess's are."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.typecheck import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
LOOSE = ("dict[str, Any]", "dict[str, object]")  # after ``Dict`` -> ``dict``

# path:function -> what the dict is, and whose format
PLUMBING = {
    "tools/connectx_forge/boundedread.py:read_toml": "a TOML file's raw tables, before they are checked",
    "tools/connectx_forge/boundedread.py:parse_toml": "a TOML text's raw tables, before they are checked",
    "build/connectx_bundler/project.py:read_settings": "cxforge.toml's raw table, checked into a Project by its reader",
    "tools/connectx_forge/leaderboard/review/kaggle_client.py:list_submissions": "Kaggle's API answer, as it sends it",
    "tools/connectx_forge/leaderboard/review/kaggle_client.py:list_episodes": "Kaggle's API answer, as it sends it",
    "tools/connectx_forge/leaderboard/review/replay_page.py:replay_of":
        "a Kaggle replay, the format kaggle-environments' player "
                                                         "reads",
    "tools/connectx_forge/leaderboard/review/replay_cmd.py:_other_game": "a Kaggle replay of another game, the format "
                                                                         "kaggle-environments' renderer reads",
    "tools/connectx_forge/play/episode.py:configuration": "the configuration kaggle-environments' make takes",
    "tools/connectx_forge/solver/heldout.py:_lines": "a JSON lines file's objects, before they are read into records",
    "tools/connectx_forge/train/netlib.py:load_checkpoint":
        "a training checkpoint's state (torch's state dicts), its fields checked",
    "tools/connectx_forge/train/checkpoint.py:load":
        "a training checkpoint's state (torch's state dicts), before it is checked",
    "tools/connectx_forge/arena/dask_cluster.py:_no_routes":
        "Dask's own configuration keys, as dask.config.set takes them",
    "tools/connectx_forge/train/rl_env.py:_info": "a Gymnasium step's info dict",
    "tools/connectx_forge/train/rl_env.py:reset": "Gymnasium's reset: an observation and its info dict",
    "tools/connectx_forge/train/rl_env.py:step": "Gymnasium's step: an observation, reward, ends and its info dict",
    "tools/connectx_forge/play/rules.py:kaggle_config": "the configuration kaggle-environments passes to agents",
    "tools/connectx_forge/sandbox/protocol.py:decode": "an agent host's message on its pipe",
    "tools/connectx_forge/sandbox/protocol.py:requests": "an agent host's messages on its pipe",
    "tools/connectx_forge/sandbox/template.py:ask": "a template's message on its pipe",
    "tools/connectx_forge/sandbox/warden.py:_ask": "the warden's message on its pipe",
    "tools/connectx_forge/leaderboard/ghosts/teams.py:teams_of":
        "ghosts --json's rows of the table of Books (the report)",
    "tools/connectx_forge/arena/ladder/synthetic.py:kaggle_episodes":
        "a made-up Kaggle API answer, for tests and "
                                                             "demonstrations",
    "tools/connectx_forge/arena/ladder/synthetic.py:of_submission":
        "a made-up Kaggle API answer, for tests and demonstrations",
    "tools/connectx_forge/arena/ladder/synthetic.py:agent":
        "a made-up Kaggle API answer, for tests and demonstrations",
}


def _folders() -> tuple[Path, ...]:
    """The installed packages' folders."""
    return tuple(sorted({ROOT / folder for folder in PACKAGES.values()}))


def returns_loose_dict(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function's return annotation holds ``dict[str, Any]`` (or ``Dict``, or ``object`` values)."""
    if node.returns is None:
        return False
    text = ast.unparse(node.returns).replace("Dict[", "dict[").replace("typing.", "")
    return any(loose in text for loose in LOOSE)


@functools.cache
def loose_functions(folders: tuple[Path, ...]) -> list[str]:
    """``path:function`` of each function returning a loose dict, a ``to_json`` left out."""
    out = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "to_json" \
                        and returns_loose_dict(node):
                    out.append(f"{path.relative_to(ROOT)}:{node.name}")
    return out


def test_the_scan_sees_every_spelling() -> None:
    tree = ast.parse("def a() -> dict[str, Any]: ...\ndef b() -> list[Dict[str, Any]] | None: ...\n"
                     "def c() -> tuple[int, dict[str, object]]: ...\ndef d() -> Report: ...\n"
                     "def e() -> dict[str, int]: ...\n")
    found = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and returns_loose_dict(n)]
    assert found == ["a", "b", "c"]


def test_no_report_is_a_dict() -> None:
    found = loose_functions(_folders())
    new = [f for f in found if f not in PLUMBING]
    assert new == [], ("a report as a dict: make it a frozen dataclass (to_json where it is printed as JSON), or a "
                       "TypedDict record of a file format; PLUMBING lists the JSON that is someone else's format")


def test_the_plumbing_list_names_functions_that_exist() -> None:
    found = set(loose_functions(_folders()))
    assert sorted(set(PLUMBING) - found) == []
