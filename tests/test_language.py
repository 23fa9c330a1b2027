"""One language: a flag, a list and a player's name mean the same thing in every command."""

from __future__ import annotations

import pytest

from connectx_forge.tools import options
from connectx_forge.tools.cli import main
from tests.test_cli import _parsers

PLAYING = ("match", "winrates", "tournament", "sprt")  # the commands that play games of the game loop


def parser_of(path: str):  # type: ignore[no-untyped-def]
    return dict(_parsers())[path]


@pytest.mark.parametrize("path, flag, dest", [
    ("winrates", "--agents", "agents"), ("winrates", "--opponents", "opponents"),
    ("mistakes", "--agents", "agents"), ("mistakes", "--sets", "sets"), ("check", "--opponents", "opponents"),
    ("heldout build", "--sets", "sets"),
])
def test_a_list_flag_takes_commas_or_spaces(path: str, flag: str, dest: str) -> None:
    parser = parser_of(path)
    positional = ["x"] if path == "check" else []
    by_commas = getattr(parser.parse_args([*positional, flag, "a,b", "c"]), dest)
    by_spaces = getattr(parser.parse_args([*positional, flag, "a", "b", "c"]), dest)
    assert by_commas == by_spaces == ["a", "b", "c"]


def test_every_engine_flag_offers_the_same_choices() -> None:
    engines = {path: a.choices for path, p in _parsers() for a in p._actions if "--engine" in a.option_strings}
    assert len(engines) >= 8 and all(tuple(c) == options.ENGINES for c in engines.values()), engines


@pytest.mark.parametrize("path", PLAYING)
def test_every_command_that_plays_saves_its_games_and_takes_the_board_size(path: str) -> None:
    flags = {f for a in parser_of(path)._actions for f in a.option_strings}
    assert {"--save", "--rows", "--columns", "--inarow"} <= flags
    assert "--rows" in {f for a in parser_of("check")._actions for f in a.option_strings}


@pytest.mark.parametrize("argv, message", [
    (["match", "negamax", "random", "-n", "1"], "unknown player 'negamax' (did you mean 'kaggle:negamax'?)"),
    (["match", "lookahaed", "random", "-n", "1"], "unknown player 'lookahaed' (did you mean 'lookahead'?)"),
    (["winrates", "--agents", "leftmost", "--opponents", "negamax", "-n", "1"],
     "unknown player 'negamax' (did you mean 'kaggle:negamax'?)"),
    (["check", "x.py", "--opponents", "negamax"], "unknown opponent 'negamax' (did you mean 'kaggle:negamax'?)"),
    (["check", "x.py", "--opponents", "kaggle:negamx"], "(did you mean 'kaggle:negamax'?)"),
    (["mistakes", "--agents", "lookahead", "--sets", "Begin-Hadr"], "unknown set 'Begin-Hadr' (did you mean"),
    (["match", "random", "random", "--inarow", "9", "-n", "1"], "--inarow 9 on a 6x7 board: no line of 9 fits"),
    (["match", "net", "random", "--rows", "7", "-n", "1"], "agent 'net' plays only the 6x7 four-in-a-row board"),
    (["tournament", "random", "leftmost", "--rows", "5"], "plays paired openings of the 6x7 four-in-a-row suite"),
    (["chek"], "no such command (did you mean 'check'?)"),
])
def test_a_bad_name_or_size_is_one_line_with_a_hint(argv: list[str], message: str, tmp_path, monkeypatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("def agent(obs, config):\n    return 0\n")
    assert main(argv) in (1, 2)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_check_plays_kaggles_agents_written_with_their_prefix(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "first.py"
    path.write_text("def agent(obs, config):\n    return [c for c in range(7) if obs.board[c] == 0][0]\n")
    assert main(["check", str(path), "-n", "2", "-w", "1", "--opponents", "kaggle:negamax", "--no-validation"]) \
        in (0, 1)
    out = capsys.readouterr().out
    assert "negamax   first" in out and "random" not in out.split("validation")[0]
