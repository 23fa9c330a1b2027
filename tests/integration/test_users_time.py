"""The user's time: a long command's first line says what it will play and about how long; a second
review of the same games solves nothing again; ``--us`` reviews only that player's games; after a match or a
tournament one line gives the exact ``cxforge review`` command for the games.

No assertion here is on wall-clock time: the first line's estimate is checked for its form, the cache by the
solver's calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from connectx_forge import progress
from connectx_forge.cli import main
from connectx_forge.leaderboard.review import label_cache
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.play import why_lost

LINE = {"players": ["alpha", "beta"], "size": [6, 7, 4], "seed": 0, "times": [], "outcome": "win", "winner": 1,
        "culprit": None, "bad_action": None, "error": None, "index": 0, "a_seat": 1}
GAMES = ([3, 3, 2, 2, 1, 1, 0], [3, 2, 3, 2, 3, 2, 3], [0, 6, 1, 5, 0, 6, 1, 5, 2, 4])


def _games_file(path: Path, players: list[list[str]] | None = None) -> Path:
    """Three saved games (the last one off the book: the solver has work), by ``players`` where given."""
    names = players or [["alpha", "beta"]] * len(GAMES)
    lines = []
    for moves, who in zip(GAMES, names, strict=True):
        end = {"outcome": "win", "winner": 1} if len(moves) == 7 else {"outcome": "timeout", "winner": 2,
                                                                      "culprit": 1}
        lines.append(json.dumps({**LINE, **end, "players": who, "moves": moves}))
    path.write_text("".join(line + "\n" for line in lines))
    return path


# -- the first line ------------------------------------------------------------------------------------------

def test_the_first_line_says_about_how_long_and_how_fast() -> None:
    plan = "cxforge sprt: up to 20,000 games of mybot2 vs mybot on 1,234 openings, -w 2"
    line = progress.first_line(plan, 24, 19_976, 2.0, "game", False, 3.0)
    assert line == f"{plan}: about 28 min at 12 games/s"
    assert progress.first_line(plan, 3, 20, 12.0, "game", False).endswith("about 80 s at 4.0 s a game")
    assert progress.first_line(plan, 5, None, 1.0, "game", False).endswith(": 5.0 games/s")
    assert progress.first_line(plan, 1, 10, 0.5, "move", True).endswith(": 1 move in 0.5 s")
    assert [progress.about(s) for s in (0.2, 40, 200, 9000)] == ["under a second", "about 40 s", "about 3 min",
                                                                 "about 2.5 h"]


def test_the_bar_prints_its_first_line_once_and_never_with_no_progress(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "MEASURE_S", 0.0)
    with progress.bar(10, "x", plan="cxforge x: 10 games") as bar:  # stderr is no terminal here: no bar
        for _ in range(10):
            bar.update()
        bar.write("a later line")
    err = capsys.readouterr().err
    assert re.fullmatch(r"cxforge x: 10 games: (about \S+ \S+|under a second) at [\d,.]+ games/s", err.splitlines()[0])
    assert err.count("cxforge x:") == 1
    assert err.splitlines()[1:] == ["a later line"] and "\r" not in err
    with progress.bar(10, "x", enabled=False, plan="cxforge x: 10 games") as bar:
        bar.update(10)
    assert capsys.readouterr().err == ""


def test_a_match_names_its_games_first_and_json_stays_json(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / "games.jsonl"
    assert main(["match", "random", "lookahead", "-n", "4", "-w", "1", "--json", "--save", str(save)]) == 0
    out, err = capsys.readouterr()
    json.loads(out)  # stdout is the JSON alone
    lines = err.splitlines()
    assert lines[0].startswith("cxforge match: 4 games of random vs lookahead, -w 1: ")
    assert lines[-1].startswith(f"cxforge match: to see why random lost: cxforge review {save} --us random")
    assert main(["match", "random", "lookahead", "-n", "2", "-w", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "cxforge match: 2 games" not in err
    assert err.splitlines() == ["cxforge match: to see why random lost: rerun with --save games.jsonl, then "
                                "cxforge review games.jsonl --us random"]


def test_no_hint_after_a_clean_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    """``middle`` plays invalid moves on purpose: lookahead loses nothing, so there is nothing to review."""
    assert main(["match", "lookahead", "middle", "-n", "2", "-w", "1", "--no-progress"]) == 0
    assert "to see why" not in capsys.readouterr().err


def test_a_tournament_and_an_sprt_name_their_games_pool_and_workers_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "lookahead", "random", "--openings", "2", "-w", "1", "--store",
                 str(tmp_path / "t.sqlite"), "--gauntlet", "random"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("cxforge tournament: 4 games of lookahead, random (gauntlet of random) on 2 "
                               "openings, -w 1: ")
    assert lines[-1] == ("cxforge tournament: to see why random lost: rerun with --save games.jsonl (the store's "
                         "games are written, none played again), then cxforge review games.jsonl --us random")
    store = str(tmp_path / "s.sqlite")
    assert main(["sprt", "lookahead", "random", "-n", "8", "-w", "1", "--store", store]) in (0, 1, 3)
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("cxforge sprt: up to 8 games of lookahead vs random on ") and ", -w 1: " in first


def test_the_ladder_names_its_games_days_and_pool_before_its_days(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ladder", "lookahead", "--pool", "random", "leftmost", "--days", "2", "--per-day", "4",
                 "--replicates", "5", "-w", "1", "--store", str(tmp_path / "l.sqlite")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("cxforge ladder: about 27 games over 2 days: lookahead against the pool random, "
                               "leftmost, -w 1: ")
    assert [line.split(" rated")[0] for line in lines[1:]] == ["cxforge ladder: day 1/2", "cxforge ladder: day 2/2"]


def test_winrates_and_mistakes_name_their_work_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["winrates", "--agents", "lookahead", "--opponents", "random", "leftmost", "-n", "2", "-w", "1",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    json.loads(out)
    lines = err.splitlines()
    assert lines[0] == ("cxforge winrates: 4 games, 2 matches of 2 (lookahead against random, leftmost); each "
                        "match's line says how long")
    assert lines[1].startswith("cxforge match: 2 games of lookahead vs random, -w 1: ")
    assert lines[2].startswith("cxforge winrates: the first match took ") and lines[2].endswith(" for all 2")
    assert main(["mistakes", "--agents", "random", "--sets", "Random-Middle", "--sample", "2", "--no-cache"]) == 0
    assert capsys.readouterr().err.startswith("cxforge mistakes: random on 2 positions of Random-Middle, each move ")


def test_the_hint_quotes_what_a_shell_would_split() -> None:
    assert why_lost.hint("match", "My Team", Path("my games.jsonl"), False) == (
        "cxforge match: to see why My Team lost: cxforge review 'my games.jsonl' --us 'My Team' (--summary: where; "
        "--html DIR: the replays)")


# -- the review: its cache, and --us ---------------------------------------------------------------------------

@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """The solver's calls of each review run in this process (one worker), with a user cache of the test's own."""
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    calls: list[int] = []
    real = Labeller._solve

    def counted(self: Labeller, *args: object) -> object:
        calls.append(1)
        return real(self, *args)

    monkeypatch.setattr(Labeller, "_solve", counted)
    return calls


def test_a_second_review_of_the_same_games_solves_nothing_again(
        tmp_path: Path, solves: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    games = _games_file(tmp_path / "games.jsonl")
    assert main(["review", str(games), "--summary", "--us", "beta", "-w", "1", "--time-limit", "5"]) == 0
    first, summary = len(solves), capsys.readouterr().out
    assert first > 0 and label_cache.default_path().is_file()
    assert main(["review", str(games), "--html", str(tmp_path / "site"), "--us", "beta", "-w", "1",
                 "--time-limit", "5"]) == 0
    out, err = capsys.readouterr()
    assert len(solves) == first  # every position the solver labelled came from the cache
    assert summary.strip() in out and "labelled before, in the cache" in err.splitlines()[0]
    assert main(["review", str(games), "--summary", "--us", "beta", "-w", "1", "--time-limit", "5", "--json"]) == 0
    assert len(solves) == first
    cached = [json.loads(line) for line in label_cache.default_path().read_text().splitlines()]
    assert len({c["k"] for c in cached}) == len(cached)  # each position kept once


def test_a_cache_line_that_does_not_fit_its_position_is_not_used(
        tmp_path: Path, solves: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    games = _games_file(tmp_path / "games.jsonl")
    assert main(["review", str(games), "--json", "-w", "1", "--time-limit", "5", "--no-progress"]) == 0
    truth = capsys.readouterr().out
    path = label_cache.default_path()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in lines:  # every kept column renamed: a position's columns no longer match
        entry["m"] = {str(int(c) + 10): v for c, v in entry["m"].items()}
    path.write_text("".join(json.dumps(e) + "\n" for e in lines) + '{"k": "torn\n' + "[1, 2]\n")
    before = len(solves)
    assert main(["review", str(games), "--json", "-w", "1", "--time-limit", "5", "--no-progress"]) == 0
    assert capsys.readouterr().out == truth and len(solves) > before  # solved again, to the same verdicts


def test_an_unreadable_cache_is_started_afresh_in_one_note(
        tmp_path: Path, solves: list[int], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    games = _games_file(tmp_path / "games.jsonl")
    path = label_cache.default_path()
    path.parent.mkdir(parents=True)
    path.write_text("x" * 200 + "\n")
    monkeypatch.setattr(label_cache, "MAX_BYTES", 100)
    assert main(["review", str(games), "--summary", "-w", "1", "--time-limit", "5", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "label cache is not readable" in err and "starting it afresh" in err and "Traceback" not in err
    assert path.read_text().startswith('{"k": ')


def test_us_reviews_only_the_games_that_player_played(tmp_path: Path, solves: list[int],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    games = _games_file(tmp_path / "games.jsonl", [["alpha", "beta"], ["gamma", "beta"], ["gamma", "delta"]])
    assert main(["review", str(games), "--us", "alpha", "--json", "-w", "1", "--time-limit", "1",
                 "--no-progress"]) == 0
    reviewed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["players"] for r in reviewed] == [["alpha", "beta"]]
    assert main(["review", str(games), "--us", "beta", "--summary", "-w", "1", "--time-limit", "1",
                 "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("our agent (beta): 2 games")
    assert main(["review", str(games), "--us", "nobody", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--us nobody: no game has that player (the players are alpha, beta, delta, gamma)" in err
