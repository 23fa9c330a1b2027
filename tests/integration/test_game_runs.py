"""Other Kaggle games through the commands that play: match, tournament, SPRT, logs, compare, replay and the
notebook, each taking ``--game NAME``; ConnectX's own tools refuse another game in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import connectx_forge as cf
from connectx_forge import kaggle_env
from connectx_forge.cli import main
from connectx_forge.games import catalog
from connectx_forge.play.records import read_games

CYCLE = "def agent(obs, config):\n    return obs.step % 3\n"  # rps: rock, paper, scissors in turn
GREEDY = """
def agent(obs, config):
    moves = []
    for p in obs.planets:  # [id, x, y, owner, ships, growth]
        targets = [t for t in obs.planets if t[3] != obs.player]
        if p[3] == obs.player and p[4] >= 2 and targets:
            near = min(targets, key=lambda t: (p[1] - t[1]) ** 2 + (p[2] - t[2]) ** 2)
            moves.append([p[0], near[0], p[4] // 2])
    return moves
"""


def _file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_games_lists_what_plays_here(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert list(listed) == catalog.names() and listed["connectx"]["playable"]
    assert listed["rps"]["builtins"][0] == "rock" and listed["planet_wars"]["seed_key"] == "seed"
    lacking = [name for name, game in listed.items() if not game["playable"]]
    assert all((listed[name]["install"] and listed[name]["missing"]) or listed[name]["broken"] for name in lacking)
    assert listed["lux_ai_2021"]["broken"] and not listed["lux_ai_2021"]["playable"]
    assert {"cabt", "kargo"} <= set(listed)  # found in the installed kaggle-environments, not only the table
    assert main(["games"]) == 0
    assert "planet_wars" in capsys.readouterr().out


def test_an_unknown_game_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "kaggle:rock", "kaggle:paper", "--game", "rsp", "-n", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cxforge match: error: no game 'rsp' (did you mean 'rps'?); cxforge games lists them: "
                   + ", ".join(catalog.names())]


def test_a_game_that_needs_packages_names_them_and_the_install(capsys: pytest.CaptureFixture[str]) -> None:
    lacking = [g for g in catalog.GAMES.values() if g.missing()]
    if not lacking:
        pytest.skip("every game's packages are installed here")
    game = lacking[0]
    assert main(["match", "kaggle:random", "kaggle:random", "--game", game.name, "-n", "2"]) == 2
    err = capsys.readouterr().err
    assert f"{game.name} needs {', '.join(game.missing())}" in err and game.install_line() in err


def test_a_match_of_rps_saves_results_from_kaggles_rewards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = _file(tmp_path, "cycle.py", CYCLE)
    save = tmp_path / "games.jsonl"
    assert main(["match", str(bot), "kaggle:rock", "--game", "rps", "-n", "2", "-w", "1", "--save", str(save),
                 "--no-progress", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 2
    games = read_games(save)
    assert {g.game for g in games} == {"rps"} and all(g.statuses == ["DONE", "DONE"] for g in games)
    assert all(g.moves == [] and len(g.trace or "") == 64 for g in games)
    assert [g.a_seat for g in games] == [1, 2]
    assert games[0].seed == games[1].seed  # the pair shares its seed, seats swapped
    assert main(["logs", str(save), "--game", "connectx"]) == 2
    assert "holds no game of connectx (it holds rps)" in capsys.readouterr().err
    assert main(["logs", str(save), "--index", "1"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].endswith("(rps)") and "moves" not in said[0] and said[1].startswith("-- cycle.py (seat 1)")


def test_a_forged_rps_result_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / "games.jsonl"
    assert main(["match", "kaggle:rock", "kaggle:paper", "--game", "rps", "-n", "1", "-w", "1", "--save",
                 str(save), "--no-progress"]) == 0
    line = json.loads(save.read_text())
    assert line["winner"] == 2 and line["rewards"][1] > line["rewards"][0]  # paper beats rock
    line["winner"], line["rewards"] = 1, line["rewards"]
    save.write_text(json.dumps(line) + "\n")
    capsys.readouterr()
    assert main(["logs", str(save)]) == 2
    assert "does not follow from its rewards and statuses" in capsys.readouterr().err


def test_planet_wars_tournament_plays_seeds_and_replays_render(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    greedy = _file(tmp_path, "greedy.py", GREEDY)
    save, replays = tmp_path / "games.jsonl", tmp_path / "replays"
    assert main(["tournament", str(greedy), "kaggle:do_nothing", "--game", "planet_wars", "--openings", "2",
                 "-w", "2", "--store", str(tmp_path / "t.sqlite"), "--save", str(save), "--save-replays",
                 str(replays), "--no-progress", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4
    games = read_games(save)
    assert len({g.seed for g in games}) == 2  # two seeds (maps), each from both seats
    assert all(g.winner is not None and g.players[g.winner - 1] == "greedy.py" for g in games)
    files = sorted(replays.glob("*.json"))
    assert len(files) == 4
    page = tmp_path / "game.html"
    assert main(["replay", str(files[0]), "-o", str(page)]) == 0
    html = page.read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "fonts.googleapis.com/css" not in html.split("<script")[0]  # no stylesheet link to the web
    assert main(["review", str(save)]) == 2
    assert "ConnectX's alone" in capsys.readouterr().err


def test_sprt_of_deterministic_rps_agents_says_no_map_varies(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    bot = _file(tmp_path, "cycle.py", CYCLE)
    code = main(["sprt", str(bot), "kaggle:rock", "--game", "rps", "-w", "1", "-n", "20", "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 3, out
    assert "no decision: rps has no random map, and the agents repeat their games" in out
    assert "distinct games: 2 of 4" in out


@pytest.mark.parametrize("argv", [["openings", "--game", "rps"], ["mistakes", "--game", "planet_wars"],
                                  ["solve", "44", "--game", "rps"],
                                  ["match", "kaggle:rock", "kaggle:paper", "--game", "rps", "--openings", "2"]])
def test_connectx_tools_refuse_another_game_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is ConnectX's alone" in err[0], err


def test_the_notebook_takes_the_game_by_name(tmp_path: Path) -> None:
    greedy = _file(tmp_path, "greedy.py", GREEDY)
    result = cf.match(str(greedy), "kaggle:do_nothing", games=2, game="planet_wars", workers=1)
    assert [r.game for r in result.played.records] == ["planet_wars", "planet_wars"]
    assert result.wins == 2


def test_a_run_of_another_game_prints_none_of_kaggle_environments_noise(tmp_path: Path) -> None:
    """kaggle-environments prints a "Loading environment X failed" line for each game it cannot load; a run
    imports it quietly, in the workers and in the process that reads their games back alike."""
    run = subprocess.run([sys.executable, "-m", "connectx_forge", "match", "kaggle:rock", "kaggle:paper", "--game",
                          "rps", "-n", "2", "-w", "2", "--no-progress"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "Loading environment" not in run.stdout + run.stderr and "kaggle:rock" in run.stdout


def test_a_referee_that_fails_stops_the_run_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    kaggle_env.load()
    import kaggle_environments

    entry = kaggle_environments.environments["rps"]
    real = entry["interpreter"]

    def failing(state, env):  # type: ignore[no-untyped-def]
        if len(env.steps) > 3:
            raise ValueError("the referee broke")
        return real(state, env)

    monkeypatch.setitem(entry, "interpreter", failing)
    assert main(["match", "kaggle:rock", "kaggle:paper", "--game", "rps", "-n", "2", "-w", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "rps's referee (kaggle-environments) failed" in err and "the referee broke" in err
    assert err.count("\n") == 0, err


def test_the_notebooks_check_takes_the_games_opponents_as_the_command_does(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", str(tmp_path / "bot"), "--game", "rps"]) == 0
    capsys.readouterr()
    result = cf.check(str(tmp_path / "bot"), 2, max_games=2, workers=1, validation=False)  # its floor's: rock
    assert result.checked.game == "rps" and {g["opponent"] for g in result.games} == {"rock"}
    result = cf.check(str(tmp_path / "bot"), 2, opponents=["kaggle:paper", "kaggle:rock"], max_games=2, workers=1,
                      validation=False)
    assert {g["opponent"] for g in result.games} == {"rock", "paper"}
