"""Ghosts (``ghost:TEAM``, ``cxforge ghosts``): a team's observed book from real kaggle-environments replays,
played as a Kaggle agent file, and the episode scores the fake Kaggle serves kept by ``cxforge episodes``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents.board import Board
from connectx_bundler.cache import is_built
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.agent_file import Ghosts, ghost_file
from connectx_forge.leaderboard.ghosts.observed_moves import load_books, position_key
from connectx_forge.leaderboard.review.games import read_replay
from connectx_forge.play.resolve import reference
from connectx_forge.players.player import FILE
from tests.fake_kaggle import FakeKaggle, played_replay, scored_episode
from tests.integration.test_review_kaggle import KEY, OURS, cxforge, fake  # noqa: F401  (fake: the fake Kaggle fixture)

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "ghosts.txt"
# (first, second, the teams' names): solver and leftmost play the same moves every time
GAMES = [("leftmost", "solver", ("Lefty", "Oracle")), ("solver", "leftmost", ("Oracle", "Lefty")),
         ("leftmost", "leftmost", ("Lefty", "Twin"))]


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replays")
    for i, (first, second, teams) in enumerate(GAMES):
        (folder / f"episode-{900 + i}-replay.json").write_text(json.dumps(played_replay(first, second, teams)))
    (folder / "episode-900-agent-0-logs.json").write_text("[]")  # logs beside the replays are skipped
    return folder


def assert_snapshot(path: Path, text: str) -> None:
    """``text`` equals the snapshot file; ``CXFORGE_UPDATE_SNAPSHOTS=1`` rewrites it (review its diff)."""
    if os.environ.get("CXFORGE_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no snapshot yet: run CXFORGE_UPDATE_SNAPSHOTS=1 pytest {__file__}"
    assert text == path.read_text(encoding="utf-8"), f"the output differs from {path.name}; if meant, rerun with " \
        "CXFORGE_UPDATE_SNAPSHOTS=1 and review the diff"


def kaggle_load(path: Path) -> Any:
    """The agent as Kaggle loads a file: exec'd in empty globals, the last callable."""
    space: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), space)
    return [v for v in space.values() if callable(v)][-1]


def obs_of(moves: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
    board = Board.from_moves(moves)
    return ({"board": board.to_grid(), "mark": board.mark, "step": len(moves), "remainingOverageTime": 60},
            {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2})


def test_the_book_holds_each_position_a_team_moved_in(replays: Path) -> None:
    books = load_books([str(replays)])
    assert books.files == 3 and len(books.skipped) == 1
    assert sorted(books.teams) == ["Lefty", "Oracle", "Twin"]
    lefty = books.team("Lefty")
    assert lefty.games == 3 and lefty.episodes == {900, 901, 902}
    expected: dict[str, Counter[int]] = {}  # from the replays' own moves, seat by seat
    for path in sorted(replays.glob("episode-*-replay.json")):
        game = read_replay(json.loads(path.read_text()), path.name)
        board = Board()
        for col in game.moves:
            if game.names[board.mark - 1] == "Lefty":
                expected.setdefault(position_key(board), Counter())[col] += 1
            board = board.play(col)
    assert lefty.moves == expected
    assert lefty.moves[position_key(Board())] == Counter({0: 2})  # it opened twice, in column 0 both times


def test_an_unknown_team_is_one_error_with_a_did_you_mean(replays: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_REPLAYS", str(replays))
    with pytest.raises(UserError, match=r"unknown ghost team 'Lefti' \(did you mean 'Lefty'\?\)"):
        reference("ghost:Lefti", ghosts=Ghosts())
    monkeypatch.setenv("CXFORGE_REPLAYS", str(replays / "nothing-here"))
    with pytest.raises(UserError, match="no such file or folder"):
        reference("ghost:Lefty", ghosts=Ghosts())
    with pytest.raises(UserError, match=r"^player 'ghost:Lefty': a ghost plays in match, tournament, sprt and "
                                        r"ladder \(with --replays\), not here"):
        reference("ghost:Lefty")  # a caller that gives no ghosts takes none


def test_the_ghost_file_plays_its_record_then_the_fallback_and_says_how_often(replays: Path) -> None:
    from agents.registry import REGISTRY

    book = load_books([str(replays)]).team("Oracle")
    path = ghost_file(book, "leftmost")
    agent = kaggle_load(path)
    recorded = next(k for k in book.moves)
    assert path.read_text().startswith("# ConnectX submission for Kaggle, built by connectx-forge ")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        first = agent(*obs_of([]))  # Oracle opened in the centre
        off = agent(*obs_of([6, 6]))  # never seen: the fallback (leftmost) plays
    assert first == 3 and recorded and off == REGISTRY["leftmost"].load()(*obs_of([6, 6])) == 0
    assert out.getvalue().splitlines() == ["ghost Oracle: on record 1/1 moves this game",
                                           "ghost Oracle: on record 1/2 moves this game"]


def test_several_moves_are_drawn_by_count_and_seed(tmp_path: Path) -> None:
    for i, column in enumerate([0, 0, 0, 6]):  # one team opened three times in column 0, once in column 6
        (tmp_path / f"episode-{i}-replay.json").write_text(json.dumps(_opening_replay(column)))
    book = load_books([str(tmp_path)]).team("Mixed")
    assert book.moves[position_key(Board())] == Counter({0: 3, 6: 1}) and book.choices == 1
    agent = kaggle_load(ghost_file(book, "leftmost"))

    def pick(seed: int) -> int:
        random.seed(seed)  # what the match seeds each seat's random with, game by game
        with contextlib.redirect_stdout(io.StringIO()):
            return int(agent(*obs_of([])))

    picks = [pick(seed) for seed in range(200)]
    assert [pick(seed) for seed in range(20)] == picks[:20]  # the same seed, the same move
    counts = Counter(picks)
    assert set(counts) == {0, 6} and 120 < counts[0] < 180  # about three in four: weighted by the counts


def _opening_replay(column: int) -> dict[str, Any]:
    """A one-move replay: Mixed opens in ``column`` (boards built as kaggle-environments writes them)."""
    base = played_replay("leftmost", "leftmost", ("Mixed", "Other"))
    grid = [0] * 42
    grid[35 + column] = 1
    steps = base["steps"][:2]
    steps[1][0]["observation"]["board"] = grid
    steps[1][0]["action"] = column
    base["steps"] = steps
    return base


def test_a_ghost_plays_a_match_as_a_player(replays: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("CXFORGE_REPLAYS", str(replays))
    monkeypatch.setenv("CXFORGE_GHOST_FALLBACK", "leftmost")
    ref = reference("ghost:Oracle", ghosts=Ghosts())
    assert ref.kind == FILE and ref.label == "ghost:Oracle" and ref.path is not None and is_built(ref.path)
    assert main(["match", "ghost:Oracle", "leftmost", "-n", "2", "-w", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["a"] == "ghost:Oracle" and result["games"] == 2
    # Oracle's recorded moves are the solver's against leftmost, in both seats: it wins both games
    assert result["a_first"]["wins"] == 1 and result["a_second"]["wins"] == 1


def test_cxforge_ghosts_table_snapshot_and_json(replays: Path, capsys) -> None:
    assert main(["ghosts", str(replays)]) == 0
    out = capsys.readouterr().out
    assert_snapshot(SNAPSHOT, out)
    assert main(["ghosts", str(replays), "--json"]) == 0
    teams = {t["team"]: t for t in json.loads(capsys.readouterr().out)["teams"]}
    assert teams["Lefty"]["games"] == 3 and teams["Twin"]["games"] == 1


def test_episodes_keep_the_scores_and_ghosts_read_the_downloaded_replays(fake: FakeKaggle,  # noqa: F811
                                                                         tmp_path: Path, capsys) -> None:
    fake.episodes[OURS] = [scored_episode(8001, [(OURS, "Forge", 1, 600.0, 631.5), (4242, "Rival", -1, 640.0, 612.25)]),
                           scored_episode(8002, [(4242, "Rival", 1, 612.25, 630.0), (OURS, "Forge", -1, 631.5, 610.0)])]
    fake.replays[8001] = json.dumps(played_replay("solver", "leftmost", ("Forge", "Rival"))).encode()
    fake.replays[8002] = json.dumps(played_replay("solver", "leftmost", ("Rival", "Forge"))).encode()
    folder = tmp_path / "replays"
    code, out, _ = cxforge(["episodes", str(OURS), "--json", "--download", str(folder)], capsys)
    assert code == 0
    rows = {r["id"]: r for r in json.loads(out[:out.rindex("]") + 1])}
    scores = {(r["id"], a["team"]): (a["initialScore"], a["updatedScore"]) for r in rows.values() for a in r["agents"]}
    assert scores == {(8001, "Forge"): (600.0, 631.5), (8001, "Rival"): (640.0, 612.25),
                      (8002, "Rival"): (612.25, 630.0), (8002, "Forge"): (631.5, 610.0)}
    assert main(["ghosts", str(folder), "--json"]) == 0
    teams = {t["team"]: t for t in json.loads(capsys.readouterr().out)["teams"]}
    assert teams["Rival"]["episodes"] == 2 and teams["Forge"]["games"] == 2


def test_kaggle_environments_loads_and_plays_the_ghost_file(replays: Path) -> None:
    from connectx_forge import kaggle_env

    path = ghost_file(load_books([str(replays)]).team("Oracle"), "leftmost")
    kaggle_env.load()
    from kaggle_environments import make

    env = make("connectx")
    env.run([str(path), "random"])  # Kaggle's own loader: the file exec'd, its last callable the agent
    assert [s["status"] for s in env.steps[-1]] == ["DONE", "DONE"]


def test_ghosts_play_tournaments_and_ladders_from_the_flags_labelled_by_team(
        replays: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--replays and --fallback mean the same in every command that plays; the ghost is ghost:TEAM in the
    tables and the store (its file says so), from a `cxforge new` project outside the checkout."""
    for name in ("CXFORGE_REPLAYS", "CXFORGE_GHOST_FALLBACK"):
        monkeypatch.delenv(name, raising=False)  # the flags reach the resolver as an argument, not through them
    assert main(["new", str(tmp_path / "mybot")]) == 0
    monkeypatch.chdir(tmp_path / "mybot")  # no ./replays here: only the flag finds them
    capsys.readouterr()
    flags = ["--replays", str(replays), "--fallback", "leftmost", "-w", "1", "--no-progress", "--json"]
    assert main(["tournament", "ghost:Oracle", "mybot", "--openings", "1", "--store", str(tmp_path / "t.sqlite"),
                 *flags]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(r["player"] for r in report["ratings"]) == ["ghost:Oracle", "mybot"]
    assert main(["tournament", "--resume", "--store", str(tmp_path / "t.sqlite"), "--json", "--no-progress"]) == 0
    assert sorted(r["player"] for r in json.loads(capsys.readouterr().out)["ratings"]) == ["ghost:Oracle", "mybot"]
    assert main(["ladder", "mybot", "--pool", "ghost:Oracle", "random", "--days", "1", "--store",
                 str(tmp_path / "l.sqlite"), *flags]) == 0
    assert "ghost:Oracle" in capsys.readouterr().out
    assert "CXFORGE_GHOST_FALLBACK" not in os.environ and "CXFORGE_REPLAYS" not in os.environ
