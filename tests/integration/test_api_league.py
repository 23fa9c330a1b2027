"""The notebook API's ``cf.ladder``, ``cf.ladder_fit``, ``cf.ghosts``, ``cf.regress_add`` and ``cf.regress_list``
(tools/connectx_forge/api/league.py): the same results as their commands, the commands' defaults and one-line errors,
nothing written
into the working folder unless asked, and a ``cxforge new`` project outside the repository as a player, a ghost's
fallback and the project regress works on.  Cheap agents, few days, fixed seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import connectx_forge as cf
from connectx_forge.arena.ladder import ladder_cmd
from connectx_forge.arena.ladder.ladder_report import LadderReport
from connectx_forge.arena.ladder.simulate import DEFAULT_POOL
from connectx_forge.arena.ladder.synthetic import kaggle_episodes, of_submission
from connectx_forge.cli import main
from connectx_forge.leaderboard.regress import data, regress_cmd
from connectx_forge.players.player import team_of
from tests.fake_kaggle import played_replay

CHEAP = {"pool": ["random", "leftmost"], "days": 2, "per_day": 4, "new_per_day": 4, "replicates": 10}
CHEAP_FLAGS = ["--pool", "random", "leftmost", "--days", "2", "--per-day", "4", "--new-per-day", "4",
               "--replicates", "10"]
US = "Lefty"
# (first, second, the teams' names): solver and leftmost play the same moves every time
GAMES = [("leftmost", "solver", (US, "Oracle")), ("solver", "leftmost", ("Oracle", US)),
         ("leftmost", "leftmost", (US, "Twin"))]


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replays")
    for i, (first, second, teams) in enumerate(GAMES):
        (folder / f"episode-{700 + i}-replay.json").write_text(json.dumps(played_replay(first, second, teams)))
    (folder / "notes.json").write_text("[]")  # not a replay: skipped, said so
    return folder


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def parser_defaults(add_arguments: Any, *argv: str) -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return vars(parser.parse_args(list(argv)))


def trajectories(report: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    return {s["player"]: [(b["mu"], b["sigma"]) for b in s["by_day"]] for s in report["submissions"]}


# -- ladder ------------------------------------------------------------------------------------------------

def test_the_functions_defaults_are_the_commands() -> None:
    # the function's keywords are the fields of the Ladder the command builds from its flags
    flags = parser_defaults(ladder_cmd.add_arguments, "x")
    d = cf.Ladder(())
    game = {"act_timeout": d.game.act_timeout, "overage": d.game.overage, "memory": d.game.memory,
            "slowdown": d.game.slowdown}
    defaults = {**{f.name: getattr(d, f.name) for f in dataclasses.fields(d)}, **dataclasses.asdict(d.rating), **game}
    shared = [n for n in flags if n in defaults and n not in ("players", "days", "game")]
    assert len(shared) == 17  # every flag of the ladder's settings, its rating's and its games'
    assert flags["game"] is None and d.game.game == "connectx"  # --game names the game of the games' settings
    for name in shared:
        want = tuple(flags[name]) if name == "pool" else flags[name]
        assert defaults[name] == want, name
    assert d.pool == DEFAULT_POOL and flags["days"] is None and d.days == 10
    with pytest.raises(cf.UserError, match="ladder\\(\\) takes no keyword 'dayz' \\(did you mean 'days'\\?\\)"):
        cf.ladder("lookahead", dayz=3)
    add = parser_defaults(regress_cmd.add_arguments, "add", "g")
    params = inspect.signature(cf.regress_add).parameters
    assert (params["time_limit"].default, params["engine"].default) == (add["time_limit"], add["engine"])


def test_a_ladder_is_the_commands_and_plays_in_a_temporary_store(
        tmp_path: Path, empty_cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = cli_json(capsys, "ladder", "lookahead", *CHEAP_FLAGS, "-w", "1", "--no-progress", "--json", "--store",
                   str(tmp_path / "cli.sqlite"))
    r = cf.ladder("lookahead", **CHEAP, workers=1)
    assert r.store is None and r.report["store"] == r.ladder.store == "(temporary, removed)"
    assert r.report == r.ladder.to_json() and LadderReport.from_json(r.report) == r.ladder
    assert r.report["submissions"] == cli["submissions"] and r.report["run"] == cli["run"]
    assert r.players == ("lookahead",) and r.leader == cli["submissions"][0]["player"]
    # every game of the run: the episodes, and each submission's validation episode against itself
    assert len(r.games) == r.report["episodes"] + 3 == r.report["played_now"]
    assert {g["players"][0] for g in r.games} <= {"lookahead", "random", "leftmost"}
    assert [row["player"] for row in r.standings] == [s["player"] for s in cli["submissions"]]
    assert "by_day" not in r.standings[0] and len(r.by_day()) == 3 * 2
    assert r.to_pandas().shape[0] == 3 and r.to_pandas("by_day").shape[0] == 6
    assert r.text.startswith(f"ladder {cli['run']}: 3 submissions, 2 days") and "lookahead" in r._repr_html_()
    reviewed = cf.review(r, time_limit=0.02)  # a ladder's games review as a tournament's do
    assert [g["source"] for g in reviewed.games] == [f"ladder game {i}" for i in range(len(r.games))]


def test_a_kept_store_resumes_and_plays_on_and_out_writes_the_report(tmp_path: Path, empty_cwd: Path) -> None:
    store = tmp_path / "l.sqlite"
    first = cf.ladder("lookahead", **CHEAP, workers=1, store=store, save=tmp_path / "games.jsonl")
    assert first.store == str(store) and first.report["store"] == str(store)
    assert len((tmp_path / "games.jsonl").read_text().splitlines()) == len(first.games)
    again = cf.ladder(store=store, resume=True)  # the store's last ladder, as --resume --store alone
    assert again.report["played_now"] == 0 and trajectories(again.report) == trajectories(first.report)
    assert again.games == first.games
    longer = cf.ladder(store=store, resume=True, days=3, out=tmp_path / "out", workers=1)
    assert longer.report["days"] == 3 and 0 < longer.report["played_now"] < len(longer.games)
    assert json.loads((tmp_path / "out" / "report.json").read_text())["days"] == 3


def test_bad_ladder_input_is_a_one_line_user_error(empty_cwd: Path) -> None:
    with pytest.raises(cf.UserError, match="give at least one PLAYER"):
        cf.ladder()
    with pytest.raises(cf.UserError, match="needs store="):
        cf.ladder("lookahead", resume=True)
    with pytest.raises(cf.UserError, match="repeated: random"):
        cf.ladder("random", pool="random", days=1)
    with pytest.raises(cf.UserError, match="--per-day must be at least 1"):
        cf.ladder("leftmost", per_day=0)
    with pytest.raises(cf.UserError, match="--beta must be positive"):
        cf.ladder("leftmost", beta=0)
    with pytest.raises(cf.UserError, match="not a function"):
        cf.ladder(lambda obs, config: 0)


def test_ladder_fit_is_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = []
    kaggle = kaggle_episodes(_true(), submissions=8, days=3, seed=5)
    for k in range(0, 8, 3):
        path = tmp_path / f"episodes-{k}.json"
        path.write_text(json.dumps(of_submission(kaggle, 1000 + k)), encoding="utf-8")
        files.append(path)
    r = cf.ladder_fit(*files)
    assert r.report == cli_json(capsys, "ladder", "--fit", *map(str, files), "--json")
    assert set(r.settings) >= {"sigma0", "beta", "tau", "draw_probability"} and r.rmse >= 0
    assert r.settings == r.report["settings"] and round(r.rmse, 4) == r.report["rmse"]
    assert r.to_pandas().shape[0] == 1 and "--sigma0" in r.text
    with pytest.raises(cf.UserError, match="episode list"):
        cf.ladder_fit()


def _true() -> Any:
    from connectx_forge.arena.ladder.rating import RatingSettings

    return RatingSettings(sigma0=180.0, beta=120.0, tau=3.0, draw_probability=0.08)


# -- ghosts ------------------------------------------------------------------------------------------------

def test_replays_and_fallback_reach_ghost_players_for_the_call_only(
        replays: Path, empty_cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``replays=``/``fallback=`` are ``--replays``/``--fallback``: the ghost plays Oracle's recorded moves (the
    solver's, winning against leftmost from either seat), given to the resolver, never put in the environment."""
    import os

    monkeypatch.delenv("CXFORGE_REPLAYS", raising=False)
    monkeypatch.setenv("CXFORGE_GHOST_FALLBACK", "random")
    m = cf.match("ghost:Oracle", "leftmost", games=2, workers=2, replays=replays, fallback="lookahead")
    assert (m.wins, m.losses) == (2, 0)  # on two workers: they play the ghost's file, not its team's name
    assert "CXFORGE_REPLAYS" not in os.environ and os.environ["CXFORGE_GHOST_FALLBACK"] == "random"
    with pytest.raises(cf.UserError, match="no replays"):  # ./replays does not exist here: nothing was left set
        cf.match("ghost:Oracle", "leftmost", games=2, workers=1)
    with pytest.raises(cf.UserError, match="not a function"):
        cf.tournament("leftmost", "random", replays=replays, fallback=lambda obs, config: 0)
    lad = cf.ladder("leftmost", **{**CHEAP, "pool": ["random", "ghost:Oracle"]}, workers=1, replays=[replays])
    first = lad.standings[0]  # the solver's recorded moves: above leftmost and random
    assert first["player"] == "ghost:Oracle" and first["episodes"] > 0
    assert "CXFORGE_REPLAYS" not in os.environ


def test_ghosts_lists_the_teams_as_the_command_does(
        replays: Path, empty_cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = cf.ghosts(replays)
    assert r.report == cli_json(capsys, "ghosts", str(replays), "--json")
    assert {t["team"]: t["games"] for t in r.teams} == {US: 3, "Oracle": 2, "Twin": 1}
    assert r.files == 3 and len(r.skipped) == 1 and "notes.json" in r.skipped[0] and r.written is None
    assert r.to_pandas().shape[0] == 3 and "Oracle" in r._repr_html_() and r.text.endswith("play one as ghost:TEAM")


def test_ghosts_write_refuses_a_half_request_and_an_existing_file(replays: Path, tmp_path: Path) -> None:
    with pytest.raises(cf.UserError, match="go together"):
        cf.ghosts(replays, team="Oracle")
    (tmp_path / "taken.py").write_text("")
    with pytest.raises(cf.UserError, match="the file exists; add force=True to replace it"):
        cf.ghosts(replays, team="Oracle", write=tmp_path / "taken.py")
    assert (tmp_path / "taken.py").read_text() == ""
    cf.ghosts(replays, team="Oracle", write=tmp_path / "taken.py", force=True)
    assert (tmp_path / "taken.py").read_text() != ""
    with pytest.raises(cf.UserError, match="unknown ghost team 'Nobody'"):
        cf.ghosts(replays, team="Nobody", write=tmp_path / "g.py")


# -- a project of one's own, outside the repository ------------------------------------------------------------

@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mybot"]) == 0
    capsys.readouterr()
    return tmp_path / "mybot"


def test_a_new_project_climbs_the_ladder_and_falls_back_behind_a_ghost(
        project: Path, replays: Path, tmp_path: Path) -> None:
    r = cf.ladder(project, pool=["random"], days=1, per_day=4, new_per_day=4, replicates=10, workers=1)
    (mine,) = [s for s in r.standings if s["role"] == "candidate"]
    assert r.players == ("mybot",) and mine["player"] == "mybot" and mine["episodes"] > 0
    g = cf.ghosts(replays, team="Oracle", fallback=project, write=tmp_path / "ghosts" / "oracle.py")
    assert g.written == str(tmp_path / "ghosts" / "oracle.py") and team_of(Path(g.written)) == "Oracle"
    assert "fallback " + str(project) in g.text


def test_regress_adds_the_lost_games_case_once_and_lists_it(project: Path, replays: Path) -> None:
    assert cf.regress_list(project=project).cases == []
    # Oracle's first move wins against any reply: a lost game without a losing move of ours, passed on
    with pytest.warns(UserWarning, match="episode-701-replay.json: lost, but no move of ours"):
        r = cf.regress_add(replays, project=project / "mybot", us=US)  # a folder inside the project finds it
    assert (r.report["games"], r.report["lost"], r.added, len(r.cases)) == (3, 2, 1, 1)
    assert r.project == str(project.resolve()) and r.new == r.cases
    assert r.cases == data.read(project / data.DATA_FILE) and (project / data.TEST_FILE).is_file()
    assert r.cases[0]["moves"] == "" and r.cases[0]["bad_column"] == 0 and r.cases[0]["us"] == US
    assert r.text.endswith("1 case(s) added from 2 lost game(s) of 3; 1 in all")  # cxforge new wrote the test
    problems: list[str] = []
    again = cf.regress_add(replays, project=project, us=[US], on_problem=problems.append)
    assert again.added == 0 and len(again.cases) == 1 and problems and "written" not in again.text
    listed = cf.regress_list(project)
    assert listed.cases == r.cases and listed.report == {"cases": r.cases}
    assert listed.to_pandas().shape[0] == 1 and "(empty)" in listed._repr_html_()
    with pytest.raises(cf.UserError, match="no game has our name 'Nobody'"):
        cf.regress_add(replays, project=project, us="Nobody", on_problem=problems.append)
    with pytest.raises(cf.UserError, match="not inside an agent project"):
        cf.regress_list(project.parent.parent)
