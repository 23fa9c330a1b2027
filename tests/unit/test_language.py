"""One language: a flag, a list and a player's name mean the same thing in every command."""

from __future__ import annotations

import json

import pytest

from connectx_forge import options, outputs
from connectx_forge.arena import sprt_cmd
from connectx_forge.cli import main
from tests.unit.test_cli import _parsers

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
    (["check", "x.py", "--opponents", "negamx"], "unknown opponent 'negamx' (did you mean 'negamax'?)"),
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


# -- the shared flags: one spelling, one dest, one meaning in every command -------------------------------------
def _flags(parser) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {opt: action for action in parser._actions for opt in action.option_strings}


def _help(action) -> str:  # type: ignore[no-untyped-def]
    return " ".join(str(action.help).split())


def test_wherever_a_shared_flag_appears_it_means_the_same() -> None:
    """-n, -w, --json, --save, --seed and --append: the same short and long form, dest, type, value name,
    default and help words in every command and subcommand that takes them."""
    seen: dict[str, list[str]] = {}
    for path, parser in _parsers():
        flags = _flags(parser)
        for flag in ("-n", "--games", "-w", "--workers", "--seed", "--json", "--save", "--append"):
            if flag in flags:
                seen.setdefault(flag, []).append(path)
        where = f"cxforge {path}"
        for short, long in (("-n", "--games"), ("-w", "--workers")):
            if short in flags or long in flags:
                action = flags.get(short) or flags[long]
                assert action.option_strings == [short, long], (where, action.option_strings)
        if "-n" in flags:
            games = flags["-n"]
            # a positive count everywhere; sprt's at least one pair of games, in the same words for -n 0 and -n 1
            positive = sprt_cmd.pair_count if path == "sprt" else options.positive_int
            assert (games.dest, games.type, games.metavar) == ("games", positive, "N"), where
            assert "games" in _help(games), where
        if "-w" in flags:
            workers = flags["-w"]
            assert (workers.dest, workers.type, workers.metavar, workers.default) == \
                ("workers", options.positive_int, "W", None), where
            assert "worker process" in _help(workers) and "all cores" in _help(workers), where
        if "--seed" in flags:
            seed = flags["--seed"]
            assert seed.option_strings == ["--seed"], where
            assert (seed.dest, seed.type, seed.metavar, seed.default) == ("seed", options.nonnegative_int, "S", 0)
            assert "seed" in _help(seed) and _help(seed).endswith("(default 0)"), where
        if "--json" in flags:
            js = flags["--json"]
            assert js.option_strings == ["--json"] and js.dest == "json" and js.default is False, where
            assert js.nargs in (0, "?") and _help(js).startswith("print ") and " JSON " in _help(js), where
        if "--force" in flags:  # one meaning wherever an output can be replaced (tools/connectx_forge/outputs.py)
            force = flags["--force"]
            assert (force.dest, force.nargs, force.help) == ("force", 0, outputs.FORCE_HELP), where
        assert ("--save" in flags) == ("--append" in flags), where  # --append only where --save is
        if "--save" in flags:
            save, append = flags["--save"], flags["--append"]
            assert save.option_strings == ["--save"] and (save.dest, save.metavar) == ("save", "FILE"), where
            assert _help(save).startswith("write every game") and append.help == options.APPEND_HELP, where
            assert "as a JSON line to FILE as it finishes" in _help(save), where
            assert _help(save).endswith("an existing FILE is refused unless --append or --force"), where
            assert append.option_strings == ["--append"] and append.dest == "append" and append.nargs == 0, where
            assert ("save", "file") in parser.get_default(options.OUTPUTS), where
    assert {"match", "winrates", "tournament", "sprt", "check"} <= set(seen["--save"])
    assert {"tournament", "sprt", "match", "winrates"} <= set(seen["-n"])
    assert {"review", "match", "tournament", "sprt"} <= set(seen["-w"])
    assert {"logs", "review", "match", "tournament", "sprt"} <= set(seen["--json"])


@pytest.mark.parametrize("argv, dest, value", [
    (["tournament", "a", "b", "-n", "12"], "games", 12),
    (["sprt", "a", "b", "-n", "40"], "games", 40),
    (["review", "g.json", "-w", "2"], "workers", 2),
    (["logs", "g.jsonl", "--json"], "json", True),
    (["upload", "s.py", "-m", "x", "--dry-run"], "dry_run", True),
    (["match", "a", "b", "--save", "g.jsonl", "--append"], "append", True),
])
def test_the_flags_once_refused_are_taken(argv: list[str], dest: str, value: object) -> None:
    assert getattr(parser_of(argv[0]).parse_args(argv[1:]), dest) == value


def test_sprt_and_tournament_n_is_the_most_games_they_play() -> None:
    assert parser_of("sprt").parse_args(["a", "b"]).games == 20000
    assert parser_of("tournament").parse_args(["a", "b"]).games is None  # all the schedule's games
    with pytest.raises(SystemExit):  # -n/--games is its one name
        parser_of("sprt").parse_args(["a", "b", "--max-games", "40"])


# -- --save never replaces a file --------------------------------------------------------------------------------
def _lines(path) -> list[str]:  # type: ignore[no-untyped-def]
    return path.read_text().splitlines()


@pytest.mark.parametrize("command", [
    ["match", "leftmost", "random", "-n", "2", "-w", "1"],
    ["winrates", "--agents", "leftmost", "--opponents", "random", "-n", "2", "-w", "1"],
    ["tournament", "leftmost", "random", "--openings", "1", "-w", "1"],
    ["sprt", "leftmost", "random", "-n", "2", "-w", "1"],
])
def test_save_refuses_an_existing_file_before_any_game(command: list[str], tmp_path, monkeypatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    games = tmp_path / "games.jsonl"
    games.write_text('{"an": "earlier game"}\n')
    before = games.read_bytes()
    argv = [*command, "--no-progress", "--save", str(games)]
    if command[0] in ("tournament", "sprt"):
        argv += ["--store", str(tmp_path / "s.sqlite")]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--save {games}: the file exists" in err and "--append" in err and "another name" in err
    assert games.read_bytes() == before and out == ""  # nothing played, nothing lost
    assert not (tmp_path / "s.sqlite").exists()


def test_append_adds_after_the_files_games_and_keeps_them(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    games = tmp_path / "games.jsonl"
    base = ["match", "leftmost", "random", "-w", "1", "--no-progress", "--save", str(games)]
    assert main([*base, "-n", "3"]) == 0
    first = _lines(games)
    assert len(first) == 3
    assert main([*base, "-n", "2", "--seed", "4"]) == 2  # the 20-game file is not replaced by 2 games
    assert _lines(games) == first
    assert main([*base, "-n", "2", "--seed", "4", "--append"]) == 0
    after = _lines(games)
    assert after[:3] == first and len(after) == 5
    assert [json.loads(line)["index"] for line in after[3:]] == [0, 1]
    from connectx_forge.play.records import load_records

    assert len(load_records(games)) == 5  # still one games file: logs, review and replay read it
    capsys.readouterr()


def test_append_without_save_and_a_folder_are_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "leftmost", "random", "-n", "1", "--append"]) == 2
    assert "--append adds games to the file of --save FILE" in capsys.readouterr().err
    assert main(["match", "leftmost", "random", "-n", "1", "--save", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder" in err


def test_append_to_a_file_without_a_final_newline(tmp_path) -> None:
    from connectx_forge.arena.match import run_match
    from connectx_forge.play.records import GameWriter

    path = tmp_path / "g.jsonl"
    path.write_text('{"x": 1}')
    records = run_match("leftmost", "random", games=2, workers=1, progress=False).records
    writer = GameWriter(path, append=True)
    for rec in reversed(records):
        writer.add(rec)
    writer.close(records)  # the run's games rewritten in order; the file's own line kept
    lines = _lines(path)
    assert lines[0] == '{"x": 1}' and [json.loads(x)["index"] for x in lines[1:]] == [0, 1]


# -- the caps and the new flags at work -------------------------------------------------------------------------
def test_tournament_n_plays_the_schedules_first_games(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    store, games = tmp_path / "t.sqlite", tmp_path / "g.jsonl"
    argv = ["tournament", "leftmost", "random", "middle", "--openings", "1", "-w", "1", "--no-progress",
            "--store", str(store)]
    assert main([*argv, "-n", "4", "--json", "--save", str(games)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4 and report["scheduled"] == 6 and report["max_games"] == 4
    assert len(_lines(games)) == 4
    assert main([*argv, "-n", "4"]) == 0
    out = capsys.readouterr().out
    assert "4 of 6 games (-n 4" in out and "(0 games played now" in out
    assert main(argv) == 0  # no cap: the two missing games
    out = capsys.readouterr().out
    assert "colours swapped: 6 games\n" in out and "(2 games played now" in out


def test_sprt_n_is_its_game_limit(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sprt", "leftmost", "random", "--elo1", "50", "-w", "1", "--no-progress", "--json"]
    assert main([*argv, "-n", "4", "--store", str(tmp_path / "a.sqlite")]) == 3  # no decision: exit status 3
    new = json.loads(capsys.readouterr().out)
    assert new["games"] <= 4 and new["settings"]["max_games"] == 4 and new["result"] == "none"
    with pytest.raises(SystemExit) as stop:
        main(["sprt", "leftmost", "random", "-n", "1", "--store", str(tmp_path / "c.sqlite")])
    assert stop.value.code == 2
    assert "-n/--games: must be at least 2 (one pair of games), got 1" in capsys.readouterr().err


def test_review_w_reviews_in_workers_in_order(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    games = tmp_path / "g.jsonl"
    assert main(["match", "leftmost", "random", "-n", "3", "-w", "1", "--no-progress", "--save", str(games)]) == 0
    capsys.readouterr()
    reviewed = {}
    for w in ("1", "2"):
        assert main(["review", str(games), "-w", w, "--json", "--time-limit", "0.5", "--no-progress"]) == 0
        reviewed[w] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(reviewed["1"]) == len(reviewed["2"]) == 3
    for one, two in zip(reviewed["1"], reviewed["2"], strict=True):
        assert [m["column"] for m in one["moves"]] == [m["column"] for m in two["moves"]]
