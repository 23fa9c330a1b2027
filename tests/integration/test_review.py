"""``cxforge review`` and ``cxforge replay``: games read from replays and saved games, judged by the exact solver.

The main test plays a real kaggle-environments game (``tests/review_games.py``)
that the first player loses by a blunder, and checks every verdict of the
review against the exact solver's scores, computed independently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.board import Board
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.annotate import review_game, tag_of
from connectx_forge.leaderboard.review.games import read_file, read_replay
from connectx_forge.leaderboard.review.labeller import Labeller, sign
from connectx_forge.leaderboard.review.replay_page import FONT_URLS, replay_of
from connectx_forge.leaderboard.review.summary import summarise
from connectx_forge.solver.solve_cmd import parse_moves
from tests.review_games import BLUNDER_PLY, blunder_replay, exact_truth

WDL = {1: "win", 0: "draw", -1: "loss"}
LINE = {"players": ["alpha", "beta"], "size": [6, 7, 4], "seed": 0, "times": [], "outcome": "win", "winner": 1,
        "culprit": None, "bad_action": None, "error": None, "index": 0, "a_seat": 1}


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "blunder.json"
    path.write_text(json.dumps(blunder_replay()))
    return path


@pytest.fixture(scope="module")
def reviewed(replay_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``cxforge review REPLAY --json`` (a generous time limit: every move must be labelled)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["review", str(replay_file), "--json", "--time-limit", "60", "--no-progress"]) == 0
    [line] = out.getvalue().splitlines()
    return json.loads(line)


def test_the_moves_of_a_kaggle_replay_are_read_from_its_boards(replay_file: Path) -> None:
    replay = json.loads(replay_file.read_text())
    [game] = read_file(replay_file)
    board = Board.from_moves(game.moves)
    assert board.to_grid() == replay["steps"][-1][0]["observation"]["board"]
    assert len(game.moves) == len(replay["steps"]) - 1
    assert game.outcome == "win" and game.winner == board.winner() == 2
    assert replay["rewards"] == [-1, 1]


def test_every_verdict_matches_the_exact_solver(reviewed: dict) -> None:
    moves = [m["column"] for m in reviewed["moves"]]
    truth = exact_truth(moves)
    assert len(reviewed["moves"]) == len(truth) and reviewed["unlabelled_moves"] == 0
    for m, (before, after, best) in zip(reviewed["moves"], truth, strict=True):
        assert set(m) >= {"ply", "mark", "column", "best", "before", "after", "tag"}
        assert m["mark"] == 1 + (m["ply"] - 1) % 2
        assert m["before"] == WDL[sign(before)] and m["after"] == WDL[sign(after)], m
        assert (m["score_before"], m["score_after"], m["best"], m["unlabelled"]) == (before, after, best, []), m
        if sign(after) < sign(before):
            assert m["tag"] == "blunder", m
        elif sign(before) == 1 and after < before:
            assert m["tag"] == "slower-win", m
        else:
            assert m["tag"] is None, m


def test_the_review_names_the_losing_sides_first_losing_move_and_the_best_move(reviewed: dict,
                                                                               replay_file: Path, capsys) -> None:
    moves = [m["column"] for m in reviewed["moves"]]
    before, after, best = exact_truth(moves[:BLUNDER_PLY])[-1]
    assert sign(before) == 1 and sign(after) == -1  # the game really was thrown away there
    assert reviewed["first_losing_move"] == {"1": BLUNDER_PLY, "2": None}
    losing = reviewed["moves"][BLUNDER_PLY - 1]
    assert losing["first_losing"] and losing["tag"] == "blunder" and losing["best"] == best
    assert main(["review", str(replay_file), "--time-limit", "60", "--no-progress"]) == 0
    out = capsys.readouterr().out
    cols = ",".join(map(str, best))
    assert f"first losing move of first (mark 1): ply {BLUNDER_PLY}, column {moves[BLUNDER_PLY - 1]}; best {cols}" \
        in out


def test_a_value_not_found_in_time_is_unlabelled_never_guessed() -> None:
    moves = [0, 6, 1, 5, 0, 6, 1, 5]  # far off the book's tree: most values need long solves
    review = review_game(read_file_from_moves(moves), Labeller("python", time_limit=0.01))
    assert review.unlabelled() > 0
    assert review.moves[0].before == 1 and review.moves[0].after == -1  # the book knows the first move's values
    for m in review.moves:
        if m.before is None or m.after is None:
            assert m.tag is None and not m.first_losing
        assert not set(m.best) & set(m.unknown)  # a best move is one whose value is known


def read_file_from_moves(moves: list[int], opening: int = 0):  # type: ignore[no-untyped-def]
    """The review of a saved game of ``moves``: a win where they make a line, else the side to move timed out
    (a saved game's result is the one its moves give: ``rules.end_disagreement``)."""
    from connectx_forge.leaderboard.review.games import read_record

    winner, to_move = Board.from_moves(moves).winner(), 1 + len(moves) % 2
    end = {"outcome": "win", "winner": winner, "culprit": None} if winner else {
        "outcome": "timeout", "winner": 3 - to_move, "culprit": to_move}
    return read_record({**LINE, **end, "moves": moves, "opening": opening}, "test")


@pytest.mark.parametrize(("before", "after", "sb", "sa", "tag"), [
    (1, 0, None, None, "blunder"), (1, -1, 3, -2, "blunder"), (0, -1, 0, -5, "blunder"),
    (1, 1, 5, 2, "slower-win"), (1, 1, 5, 5, None), (1, 1, None, 2, None), (0, 0, 0, 0, None),
    (-1, -1, -2, -9, None), (None, -1, None, -1, None), (1, None, 2, None, None)])
def test_tags(before, after, sb, sa, tag) -> None:  # type: ignore[no-untyped-def]
    assert tag_of(before, after, sb, sa) == tag


def test_saved_games_with_an_opening_and_old_lines_without_one(replay_file: Path, tmp_path: Path) -> None:
    moves = read_file(replay_file)[0].moves
    path = tmp_path / "games.jsonl"
    lines = [{**LINE, "moves": moves, "winner": 2, "opening": 2},
             {**LINE, "players": ["beta", "alpha"], "moves": moves, "winner": 2}]  # an old line: no "opening"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    games = read_file(path)
    assert [g.opening for g in games] == [2, 0]
    labeller = Labeller(time_limit=60)
    first, second = (review_game(g, labeller) for g in games)
    truth = exact_truth(moves)
    assert [m.opening for m in first.moves[:3]] == [True, True, False]
    assert [m.tag for m in first.moves[:2]] == [None, None]
    assert [m.tag for m in first.moves[2:]] == [tag_of(sign(b), sign(a), b, a) for b, a, _ in truth[2:]]
    assert [m.tag for m in second.moves] == [tag_of(sign(b), sign(a), b, a) for b, a, _ in truth]
    summary = summarise([first, second], ["beta"])
    assert summary.games == 2 and summary.losses == 1
    assert summary.by_seat["first"]["loss"] == 1 and summary.by_seat["second"]["win"] == 1
    assert summary.first_losing_plies == {BLUNDER_PLY: 1}
    [position] = summary.positions
    assert position.moves == "".join(str(c + 1) for c in moves[:BLUNDER_PLY - 1])
    assert position.best == truth[BLUNDER_PLY - 1][2]


@pytest.mark.parametrize(("content", "message"), [
    ("", "the file is empty"),
    ('{"steps": [[{"observation": {"board": [0]}}, {}]', "is not a Kaggle replay"),
    ('{"hello": 1}', "neither a Kaggle replay"),
    ('{"players": ["a", "b"], "moves": [3, 3, 3, 3, 3, 3, 3]}', "the moves break the rules"),
])
def test_bad_files_are_one_clear_line(tmp_path: Path, capsys, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["review", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(path) in err


def test_a_replay_whose_boards_break_the_rules_names_the_step() -> None:
    replay = blunder_replay()
    board = replay["steps"][5][0]["observation"]["board"]
    board[board.index(0)] = 1  # a stone floating at the top
    with pytest.raises(UserError, match="step 5: the board does not follow from step 4"):
        read_replay(replay, "tampered")


def test_an_unknown_game_argument_is_one_line(capsys) -> None:
    assert main(["review", "no-such-file.json"]) == 2
    assert "no such file, and not an episode id" in capsys.readouterr().err


def test_replay_pages_are_offline_and_list_every_move(replay_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "game.html"
    assert main(["replay", str(replay_file), "-o", str(out), "--time-limit", "60"]) == 0
    page = out.read_text()
    assert not any(url in page for url in FONT_URLS)
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page
    n = len(json.loads(replay_file.read_text())["steps"]) - 1
    assert page.count('<tr class="move') == n + 1  # the start, then each move
    assert f'data-ply="{BLUNDER_PLY}"' in page and "first losing move" in page


def test_saved_games_replay_through_the_environment(tmp_path: Path) -> None:
    record = read_file_from_moves([3, 3, 2, 2, 1, 1, 0])
    replay = replay_of(record)
    again = read_replay(replay, "rebuilt")
    assert again.moves == record.moves and again.winner == 1
    broken = read_file_from_moves([3, 3, 2])
    broken.outcome, broken.culprit, broken.winner = "timeout", 2, 1
    rebuilt = read_replay(replay_of(broken), "rebuilt")
    assert (rebuilt.outcome, rebuilt.culprit, rebuilt.winner) == ("timeout", 2, 1)


def test_review_html_writes_an_index_and_a_page_per_game(tmp_path: Path, capsys) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps({**LINE, "moves": m}) + "\n"
                            for m in ([3, 3, 2, 2, 1, 1, 0], [3, 2, 3, 2, 3, 2, 3])))
    assert main(["review", str(path), "--html", str(tmp_path / "site"), "--summary", "--no-progress",
                 "--time-limit", "0.2"]) == 0
    out = capsys.readouterr().out  # both play every game: neither is "ours" until --us says so
    assert "where we lose: give --us NAME to say which player is ours (the players are alpha, beta)" in out
    assert main(["review", str(path), "--summary", "--no-progress", "--time-limit", "0.2", "--us", "beta"]) == 0
    assert "our agent (beta): 2 games, 2 lost" in capsys.readouterr().out
    index = (tmp_path / "site" / "index.html").read_text()
    assert index.count('href="game-00') == 2
    assert (tmp_path / "site" / "game-002.html").stat().st_size > 100_000


def _invalid_late(obs, config):  # type: ignore[no-untyped-def]
    return 1 if sum(1 for x in obs.board if x) < 5 else config.columns  # a column that does not exist


def _centre(obs, config):  # type: ignore[no-untyped-def]
    return 3 if obs.board[3] == 0 else 2


def test_a_replay_that_ends_by_a_broken_rule_names_the_culprit() -> None:
    from connectx_forge import kaggle_env

    kaggle_env.load()
    from kaggle_environments import make

    env = make("connectx")
    env.run([_centre, _invalid_late])
    replay = json.loads(json.dumps(env.toJSON()))
    game = read_replay(replay, "broken")
    assert [s["status"] for s in replay["steps"][-1]] == ["DONE", "INVALID"]
    assert (game.outcome, game.culprit, game.winner) == ("invalid", 2, 1)
    assert game.moves == [3, 1, 3, 1, 3] and game.result(2) == "loss"


def test_a_replay_without_boards_is_read_from_its_actions() -> None:
    replay = blunder_replay()
    moves = read_replay(blunder_replay(), "with boards").moves
    for step in replay["steps"]:
        del step[0]["observation"]["board"]
    game = read_replay(replay, "actions only")
    assert (game.moves, game.outcome, game.winner) == (moves, "win", 2)


# -- the inputs review reads, and how it speaks of columns ---------------------------------------------------

def test_pretty_printed_json_and_lists_of_games_are_read(tmp_path: Path, capsys) -> None:
    games = [{**LINE, "moves": m} for m in ([3, 3, 2, 2, 1, 1, 0], [3, 2, 3, 2, 3, 2, 3])]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(games[0], indent=2))
    many = tmp_path / "many.json"
    many.write_text(json.dumps(games, indent=2))
    assert main(["review", str(one), "--no-progress", "--time-limit", "0.1"]) == 0
    assert capsys.readouterr().out.count("== ") == 1
    assert main(["review", str(many), "--no-progress", "--time-limit", "0.1", "--index", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("== ") == 1 and f"== {many}[2]:" in out


def test_a_bad_line_is_reported_by_number_and_the_others_are_reviewed(tmp_path: Path, capsys) -> None:
    path = tmp_path / "games.jsonl"
    good = json.dumps({**LINE, "moves": [3, 3, 2, 2, 1, 1, 0]})
    path.write_text(f"{good}\n{{not json\n{json.dumps({'hello': 1})}\n{good}\n")
    assert main(["review", str(path), "--no-progress", "--time-limit", "0.1", "--us", "beta", "--summary"]) == 0
    out, err = capsys.readouterr()
    assert f"{path}: line 2 skipped: not JSON" in err and f"{path}:3: neither a Kaggle replay" in err
    assert "(line 3 skipped)" in err and "Traceback" not in err
    assert "our agent (beta): 2 games, 2 lost" in out


def test_only_us_is_ours_and_columns_are_counted_from_0(tmp_path: Path, capsys) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps({**LINE, "moves": [3, 3, 2, 2, 1, 1, 0]}) + "\n")
    assert main(["review", str(path), "--no-progress", "--time-limit", "1", "--us", "beta", "--summary"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("our agent (beta): 1 game, 1 lost")
    positions = [line for line in out.splitlines() if "after columns" in line]
    assert positions and all("Pons" not in line and "1-7" not in line for line in out.splitlines())
    assert positions == [f"  {path}: going second, ply 4, after columns 3,3,2: played column 2, best 1,4 "
                         "(columns from 0, as Kaggle's actions; cxforge solve 443)"]
    solved = parse_moves(positions[0].rsplit("cxforge solve ", 1)[1].rstrip(")"))
    assert solved.key() == Board().play(3).play(3).play(2).key()  # the position before the losing move
