"""``cxforge new --game G``'s files, and the ``game`` of cxforge.toml: read, validated, carried into the manifest."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from connectx_bundler import project as projects
from connectx_bundler.builder import build, target_for_project
from connectx_bundler.errors import BuildError
from connectx_forge import scaffold
from connectx_forge.cli import main
from connectx_forge.games import catalog

# sha256 of the ConnectX project's files as cxforge new writes them (without and with --native): another
# game's project must leave them byte for byte as they were
CONNECTX_FILES = {
    False: "bf4baed1cc2ba6acca7040a23f2e609057eea4b8d90fdfbe30d377ac73f5a20c",
    True: "f619a44f19c0f96f3e4b64b34e07cf661d6f67a6d6da6a2102ab29f7df799cbc",
}
PLAYABLE = [n for n in catalog.names() if n != catalog.CONNECTX and catalog.known()[n].two_player
            and catalog.known()[n].playable]


def digest(files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("native", [False, True])
def test_the_connectx_project_is_written_as_it_was(native: bool) -> None:
    assert digest(scaffold.files("mybot", "mybot", native)) == CONNECTX_FILES[native]


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("game", PLAYABLE)
def test_a_game_project_names_its_game_and_builds(game: str, tmp_path: Path) -> None:
    info = catalog.get(game)
    files = scaffold.game_files("bot", "bot", info, "    obs['step']: the step")
    project = projects.load(write(tmp_path / "bot", files))
    assert project.game == game
    assert set(project.floors) <= set(info.builtins)
    assert "obs['step']" in files["bot/main.py"]
    assert info.action_help in "".join(files.values())
    built = build(target_for_project(project))
    assert built.manifest["game"] == game
    assert built.manifest["floors"] == project.floors
    namespace: dict[str, object] = {}
    exec(compile(built.source, "submission.py", "exec"), namespace)  # the built file loads alone


def test_the_observation_lines_are_the_specification_s() -> None:
    lines = scaffold.observation_lines("rps")
    assert "obs['lastOpponentAction']" in lines and "obs['reward']" in lines


def test_a_connectx_manifest_names_no_game(tmp_path: Path) -> None:
    project = projects.load(write(tmp_path / "mybot", scaffold.files("mybot", "mybot")))
    assert project.game == catalog.CONNECTX
    assert "game" not in build(target_for_project(project)).manifest


def settings(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "p"
    write(root, {"cxforge.toml": text, "main.py": "def agent(obs, config):\n    return 0\n"})
    return root


def test_floors_name_the_game_s_own_built_ins(tmp_path: Path) -> None:
    root = settings(tmp_path, 'entry = "main:agent"\ngame = "planet_wars"\n[floors]\nrandom = 0.6\n'
                              '"kaggle:do_nothing" = 0.9\n')
    assert projects.load(root).floors == {"random": 0.6, "do_nothing": 0.9}


@pytest.mark.parametrize(("text", "said"), [
    ('game = "planet_wars"\n[floors]\n"kaggle:negamax" = 0.5\n', "planet_wars's built-in agents are"),
    ('[floors]\n"kaggle:rock" = 0.5\n', "connectx's built-in agents are"),
    ('game = "plnet_wars"\n', "no game 'plnet_wars' (did you mean 'planet_wars'?)"),
    ("game = 3\n", "game must be a string"),
])
def test_a_bad_game_or_floor_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(BuildError) as caught:
        projects.load(settings(tmp_path, text))
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_game_whose_packages_are_missing_builds_but_is_named_in_one_line_where_played(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(catalog.GAMES, "rps", replace(catalog.GAMES["rps"], requires=("no_such_module_57",),
                                                      extra="rps"))
    root = settings(tmp_path, 'game = "rps"\n')
    assert projects.load(root).game == "rps"  # building needs none of the game's packages
    assert main(["new", str(tmp_path / "other"), "--game", "rps"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no_such_module_57" in err and 'connectx-forge[rps]' in err


def test_new_refuses_an_unknown_game_and_native_elsewhere(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(tmp_path / "a"), "--game", "nope"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["new", str(tmp_path / "b"), "--game", "rps", "--native"]) == 2
    assert "ConnectX's alone" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
