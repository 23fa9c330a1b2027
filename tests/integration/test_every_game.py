"""Every two-player game ``cxforge games`` lists as playable, walked as a new user walks it: ``cxforge new NAME
--game G``, ``build``, ``check`` against the game's first built-in, a ``match`` with it and a ``tournament``,
then ``replay`` of a saved Kaggle replay.

A game takes from 1 s (rps) to about 40 s (halite, kore_fleets) an episode here, so the walk is ``make
test-long``'s; ``make test`` walks rps and planet_wars (tests/integration/test_game_projects.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.games import catalog

OTHERS = [name for name in catalog.names() if name != catalog.CONNECTX and 2 in catalog.known()[name].seats]


@pytest.mark.long
@pytest.mark.parametrize("name", OTHERS)
def test_a_new_project_builds_checks_plays_and_enters_a_tournament(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = catalog.known()[name]
    if not game.playable:
        pytest.skip(f"{name} does not play here: cxforge games says why")
    first = f"kaggle:{game.builtins[0]}"
    project = tmp_path / "bot"
    assert main(["new", str(project), "--game", name]) == 0
    capsys.readouterr()
    built = tmp_path / "bot.py"
    assert main(["build", str(project), "-o", str(built)]) == 0
    assert f"game {name}" in capsys.readouterr().out
    assert json.loads(Path(f"{built}.json").read_text())["game"] == name

    assert main(["check", str(built), "-n", "2", "--max-games", "2", "-w", "2", "--opponents", first,
                 "--json"]) in (0, 1, 3)
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == name and report["validation"]["kind"] == "ok", report  # Kaggle's episode passes
    assert not report["problems"], report["problems"]  # no invalid action, error or timeout: only the floors

    save = tmp_path / "games.jsonl"
    assert main(["match", str(built), first, "-n", "2", "-w", "2", "--save", str(save), "--save-replays",
                 str(tmp_path / "replays"), "--json"]) == 0
    played = json.loads(capsys.readouterr().out)
    overall = played["overall"]
    assert (overall["games"], overall["errors"], overall["invalid"], overall["timeouts"]) == (2, 0, 0, 0), played

    assert main(["tournament", str(built), first, "--openings", "1", "-w", "2", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["games"] == 2 and not any(table["failures"].values()), table  # one seed, both seats

    replay = sorted((tmp_path / "replays").iterdir())[0]
    page = tmp_path / "page.html"
    assert main(["replay", str(replay), "-o", str(page)]) == 0
    assert name in capsys.readouterr().out and page.stat().st_size > 0
