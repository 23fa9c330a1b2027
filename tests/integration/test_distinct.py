"""Evidence is distinct games: sprt, tournament, ladder and compare count a game again only when it
differs, so two deterministic agents exhaust a suite (exit 3, saying so) while stochastic ones count every game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import connectx_forge as cf
from connectx_forge.cli import main
from connectx_forge.play.comparison import Comparison
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import read_all

EXHAUSTED = "no decision: the suite's 3 openings are exhausted"


def _true_distinct(path: Path) -> int:
    """The distinct games of a saved SPRT, counted here from the file: A's seat, the opening, the moves, the end."""
    return len({(g.a_seat, tuple(g.moves[:g.opening]), tuple(g.moves), g.outcome, g.winner)
                for g in read_all([path])})


def test_a_deterministic_pair_exhausts_a_small_suite_and_says_so(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sprt", "leftmost", "middle", "--openings", "3", "-w", "1", "--no-progress",
            "--store", str(tmp_path / "s.sqlite")]
    assert main([*args, "--json", "--save", str(tmp_path / "g.jsonl")]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["result"] == "none" and report["exhausted"] is True and report["stochastic"] is False
    assert report["distinct_games"] == _true_distinct(tmp_path / "g.jsonl") == 6  # 3 openings, 2 seats
    assert report["games_played"] == 12 and report["games"] == 2 * report["pairs"] == 6  # the replays not counted
    assert len(report["llr_history"]) == 3 and report["openings"] == 3
    assert main(args) == 3  # from the store: the same answer, in words, with the way to more openings
    text = capsys.readouterr().out
    assert EXHAUSTED in text and "--band=-4:4" in text and "drop --openings" in text and "--plies 7" in text
    assert "distinct games: 6 of 12 played on 3 openings" in text


def test_a_stochastic_pair_counts_its_repeats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # random against itself: 40 games cannot decide 0 against 10 Elo, so the game limit ends it
    assert main(["sprt", "random", "random", "--openings", "3", "-n", "40", "-w", "1", "--no-progress", "--json",
                 "--store", str(tmp_path / "s.sqlite")]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["stochastic"] is True and report["exhausted"] is False
    assert report["games"] == report["games_played"] == 40  # far past the suite's 3 openings: every game counted
    assert report["distinct_games"] <= 40 and len(report["llr_history"]) == 20


def test_the_notebook_says_what_the_command_says(empty_cwd: Path) -> None:
    s = cf.sprt("leftmost", "leftmost", openings=2, workers=1)
    assert (s.decision, s.distinct_games, s.report["exhausted"]) == ("none", 4, True)
    assert "no decision: the suite's 2 openings are exhausted" in s.text
    assert "the suite&#x27;s 2 openings are exhausted" in s._repr_html_()
    assert s.summary()[0]["distinct_games"] == 4 and len(s.games) == 8  # every game played, repeats included


def test_a_tournament_reports_its_distinct_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "leftmost", "middle", "--openings", "2", "-w", "1", "--no-progress",
            "--store", str(tmp_path / "t.sqlite")]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["distinct_games"] == report["games"] == 4  # each opening once per seat: every game is new
    assert main(args) == 0 and "distinct games: 4 of 4" in capsys.readouterr().out


def _game(a: str, seed: int, opening: tuple[int, ...], moves: tuple[int, ...], winner: int | None) -> GameRecord:
    """A game A played first against ``opp`` from ``opening``, then ``moves``."""
    return GameRecord((a, "opp"), (6, 7, 4), seed, [*opening, *moves], [0.0] * len(moves),
                      "draw" if winner is None else "win", winner=winner, a_seat=1, opening=len(opening))


def test_compare_counts_a_deterministic_repeat_once() -> None:
    openings = [(3,), (2,)]
    # ten seeds on each of two openings; deterministic players play the same game whatever the seed
    new = [_game("new", s, o, (0, 0), 1) for s in range(10) for o in openings]
    base = [_game("base", s, o, (0, 1), None if o == (3,) else 2) for s in range(10) for o in openings]
    found = Comparison.of(new, base)
    row = found.rows[-1]
    assert (row.games, row.distinct_games, row.paired_games) == (2, 2, 20)
    assert found.to_json()["distinct_games"] == 2 and "2 of 20" in found.text()
    # BASE stochastic on one opening (another seed gave another game): every paired game counts
    base[0] = _game("base", 0, (3,), (0, 2), 1)
    row = Comparison.of(new, base).rows[-1]
    assert (row.games, row.distinct_games, row.paired_games) == (20, 3, 20)


def test_the_ladder_counts_the_distinct_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ladder", "leftmost", "--pool", "middle", "weighted", "--days", "3", "--per-day", "4",
                 "--replicates", "5", "-w", "1", "--no-progress", "--json", "--store", str(tmp_path / "l.sqlite")]) == 0
    report = json.loads(capsys.readouterr().out)
    # three deterministic agents from the empty board: one game a seating of two, however many episodes
    assert report["distinct_games"] <= 6 < report["episodes"]
