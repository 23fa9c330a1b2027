"""``cxforge compare``: two agents' saved games paired game by game (tools/connectx_forge/play/paired.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.play.comparison import table
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.paired import compare, summarise


def _game(a: str, opponent: str, seed: int, outcome: str, opening: tuple[int, ...] = (3, 3)) -> GameRecord:
    """A game A played second against ``opponent``; ``outcome`` is A's: win, draw or loss."""
    winner = {"win": 2, "draw": None, "loss": 1}[outcome]
    return GameRecord((opponent, a), (6, 7, 4), seed, [*opening, 0, 1], [0.0, 0.0], "draw" if winner is None
                      else "win", winner=winner, a_seat=2, opening=len(opening))


def test_the_difference_is_taken_game_by_game() -> None:
    new = [_game("new", "eps", 1, "win"), _game("new", "eps", 2, "draw"), _game("new", "eps", 3, "loss"),
           _game("new", "net", 1, "win")]
    base = [_game("base", "eps", 3, "loss"), _game("base", "eps", 1, "draw"), _game("base", "eps", 2, "draw"),
            _game("base", "net", 1, "loss"), _game("base", "net", 9, "win")]  # seed 9: no partner, left out
    eps, net, everyone = compare(new, base)
    assert (eps.opponent, eps.games, eps.better, eps.worse) == ("eps", 3, 1, 0)
    assert eps.new_score == pytest.approx(0.5) and eps.base_score == pytest.approx(1 / 3)
    assert eps.difference == pytest.approx(1 / 6) and eps.low < eps.difference < eps.high
    assert (net.games, net.difference, net.high) == (1, 1.0, 1.0) and net.low < 0  # one game shows little
    assert (everyone.opponent, everyone.games, everyone.better, everyone.worse) == ("all", 4, 2, 0)


def test_games_pair_only_from_the_same_opening() -> None:
    with pytest.raises(UserError, match="no game of NEW pairs"):
        compare([_game("new", "eps", 1, "win", (3, 3))], [_game("base", "eps", 1, "win", (3, 2))])
    twice = [_game("new", "eps", 1, "win"), _game("new", "eps", 1, "loss")]
    with pytest.raises(UserError, match="two games against eps"):
        compare(twice, twice)


def test_the_interval_narrows_with_more_games() -> None:
    few = summarise("x", [(1.0, 0.5), (0.5, 0.5), (0.5, 1.0), (1.0, 0.5)])
    many = summarise("x", [(1.0, 0.5), (0.5, 0.5), (0.5, 1.0), (1.0, 0.5)] * 25)
    assert few.difference == pytest.approx(many.difference) == pytest.approx(0.125)
    assert many.high - many.low < (few.high - few.low) / 4


def test_the_interval_stays_within_what_a_mean_can_be() -> None:
    """Six games, five lost where the base won and one drawn: a normal interval alone reaches below -1."""
    row = summarise("x", [(0.0, 1.0)] * 5 + [(0.5, 1.0)])
    assert -1.0 <= row.low < row.difference < row.high < 0
    assert summarise("x", [(1.0, 0.0)] * 5 + [(1.0, 0.5)]).high <= 1.0


def test_six_tied_games_are_not_a_zero_width_interval() -> None:
    """Not ``+0.0 [+0.0, +0.0] over 6 paired games``: six games alike on both sides cannot rule out that
    NEW scores more (or less) in a third of the games; the interval says so."""
    for tied in ([(0.5, 0.5)] * 6, [(1.0, 1.0)] * 6, [(0.0, 0.0)] * 3 + [(1.0, 1.0)] * 3):
        row = summarise("x", tied)
        assert row.difference == 0 and row.low < -0.3 and row.high > 0.3
    assert "+0.0 [+0.0, +0.0]" not in table([summarise("x", [(0.5, 0.5)] * 6)], "new", "base")


def test_compare_a_project_with_a_registered_agent_from_saved_matches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The user's path: a project from ``cxforge new`` and a registered agent, each going second against the same
    opponent from the same openings and seed, then compared; a file of another agent is refused in one line."""
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mybot"]) == 0
    flags = ["--seats", "second", "--openings", "3", "-n", "3", "-w", "1", "--seed", "4", "--no-progress"]
    for agent, out in (("mybot", "new.jsonl"), ("random", "base.jsonl"), ("lookahead", "other.jsonl")):
        assert main(["match", agent, "lookahead", *flags, "--save", out]) == 0
    capsys.readouterr()
    assert main(["compare", "--new", "new.jsonl", "--base", "base.jsonl", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["new"] == "mybot" and report["base"] == "random"
    [row] = report["rows"]
    assert row["opponent"] == "lookahead" and row["games"] == 3
    assert main(["compare", "--new", "new.jsonl", "--base", "base.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "difference [95%]" in out and "lookahead" in out and "mybot" in out
    assert main(["compare", "--new", "new.jsonl", "other.jsonl", "--base", "base.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "one agent's games" in err and len(err.strip().splitlines()) == 1
