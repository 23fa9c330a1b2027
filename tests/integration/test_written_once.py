"""A game is written once, numbered one way, and ``-o`` never replaces a file silently.

Games carry a stable key (run, pairing, opening, A's seat, seed: ``records.game_key``): ``--save`` with
``--resume`` and ``--append`` adds exactly the games its file lacks, the resume line repeats every output flag
of the interrupted command, and ``compare`` counts a game saved twice once.  Games are numbered from 1 in
every command (``match``'s report, ``logs --game``).  ``-o PATH`` refuses an existing file unless ``--force``,
as ``--save`` does; a folder ``-o`` says ``DIR``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena import tournament
from connectx_forge.cli import main
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import game_key, read_games

ROOT = Path(__file__).resolve().parents[2]
CHEAP = ["-w", "1", "--no-progress"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _keys(path: Path) -> list[tuple[object, ...]]:
    return [game_key(rec) for rec in read_games(path)]


def test_a_resumed_tournament_appends_exactly_the_games_its_file_lacks(tmp_path: Path) -> None:
    """Stopped after 4 of its 10 games (-n 4), then resumed twice with --save FILE --append: 10 lines, each game
    once (before, each resume wrote the run's every game again after the file's: 4, 14, 24 lines)."""
    store, save = tmp_path / "t.sqlite", tmp_path / "games.jsonl"
    argv = ["tournament", "leftmost", "random", "--openings", "5", "--store", str(store), *CHEAP]
    assert main([*argv, "-n", "4", "--save", str(save)]) == 0
    first = save.read_text()
    assert len(first.splitlines()) == 4
    for _ in range(2):
        assert main(["tournament", "--resume", "--store", str(store), "--save", str(save), "--append", *CHEAP]) == 0
        keys = _keys(save)
        assert len(keys) == len(set(keys)) == 10
    assert save.read_text().startswith(first)  # the lines that were there are left alone
    runs = {rec["run"] for rec in _lines(save)}
    assert len(runs) == 1 and runs.pop().startswith("tournament-")
    assert {rec["pairing"] for rec in _lines(save)} == {"leftmost vs random"}


def _stop_after(games: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C once ``games`` games of the next tournament have ended (each committed and saved first)."""
    real = tournament.play_run

    def play_run(*args: Any, on_game: Callable[[Any, GameRecord], None] | None = None, **kwargs: Any) -> int:
        ended = [0]

        def then_stop(job: Any, record: GameRecord) -> None:
            if on_game is not None:
                on_game(job, record)
            ended[0] += 1
            if ended[0] == games:
                raise KeyboardInterrupt

        return real(*args, on_game=then_stop, **kwargs)

    monkeypatch.setattr(tournament, "play_run", play_run)


def test_the_resume_line_repeats_every_output_flag_and_following_it_finishes_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store, save, out = tmp_path / "t s.sqlite", tmp_path / "games.jsonl", tmp_path / "report"
    _stop_after(3, monkeypatch)
    assert main(["tournament", "leftmost", "random", "--openings", "4", "--store", str(store), "-o", str(out),
                 "--save", str(save), "--json", *CHEAP]) == 130
    hint = capsys.readouterr().err.strip().splitlines()[-1]
    again = shlex.split(hint.split("resume with: ", 1)[1])
    assert again == ["cxforge", "tournament", "--resume", "--store", str(store), "-o", str(out), "--save", str(save),
                     "--append", "--json"]
    assert len(_keys(save)) == 3
    monkeypatch.undo()
    assert main([*again[1:], *CHEAP]) == 0  # the line as printed
    report = json.loads(capsys.readouterr().out)
    keys = _keys(save)
    assert len(keys) == len(set(keys)) == report["games"] == 8 and (out / "report.json").is_file()


def test_a_match_resumed_from_its_store_writes_each_game_once(tmp_path: Path) -> None:
    """``match --store``: a larger -n appends to --save FILE only the games the file lacks, the stored ones not
    again (before: 3 + 6 lines), and the identical command again adds nothing."""
    store, save = tmp_path / "m.sqlite", tmp_path / "games.jsonl"
    argv = ["match", "leftmost", "random", "--store", str(store), "--save", str(save), *CHEAP]
    assert main([*argv, "-n", "3"]) == 0
    for _ in range(2):
        assert main([*argv, "-n", "6", "--append"]) == 0
        assert [g["index"] for g in _lines(save)] == [0, 1, 2, 3, 4, 5]
    assert len(set(_keys(save))) == 6


def test_a_match_without_a_store_keys_its_games_as_a_stored_one(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--store`` a match names its saved games by the run a store would give it: a file given by a
    relative path is named by its absolute path in both, so the two files hold the same stable keys."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text("def agent(obs, config):\n    return 3\n")
    plain, stored = tmp_path / "plain.jsonl", tmp_path / "stored.jsonl"
    argv = ["match", "bot.py", "random", "-n", "2", *CHEAP]
    assert main([*argv, "--save", str(plain)]) == 0
    assert main([*argv, "--save", str(stored), "--store", str(tmp_path / "m.sqlite")]) == 0
    assert _keys(plain) == _keys(stored) and str(_lines(plain)[0]["run"]).startswith("match-")


def test_a_plain_match_saved_twice_is_one_match_for_compare(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    new, base, doubled = tmp_path / "new.jsonl", tmp_path / "base.jsonl", tmp_path / "doubled.jsonl"
    flags = ["--seats", "second", "--openings", "2", "-n", "2", "--seed", "4", *CHEAP]
    assert main(["match", "leftmost", "random", *flags, "--save", str(new)]) == 0
    assert main(["match", "middle", "random", *flags, "--save", str(base)]) == 0
    doubled.write_text(new.read_text() * 2)  # a file written twice (by hand, or before games had a key)
    capsys.readouterr()
    assert main(["compare", "--new", str(doubled), "--base", str(base), "--json"]) == 0  # (before: refused)
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["games"] == 2
    assert main(["match", "leftmost", "random", *flags, "--save", str(new), "--append"]) == 0
    assert len(_lines(new)) == 2  # the same seeded games: already in the file


BREAKS_SECOND = """\
def agent(obs, config):
    if obs.mark == 2:
        raise RuntimeError("only when second")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def test_match_and_logs_number_a_game_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The agent breaks only in the 2nd game (A moves second there): match names it game 2 (before: game 1),
    and ``logs --index 2`` shows that game."""
    bot, save = tmp_path / "second.py", tmp_path / "games.jsonl"
    bot.write_text(BREAKS_SECOND)
    assert main(["match", str(bot), "random", "-n", "2", "--save", str(save), *CHEAP]) == 0
    out = capsys.readouterr().out
    assert "A error: 1 game(s); game 2: RuntimeError: only when second" in out
    assert main(["logs", str(save), "--index", "2"]) == 0
    assert "second.py lost by error" in capsys.readouterr().out.splitlines()[0]
    assert main(["logs", str(save), "--index", "1"]) == 0
    assert "lost by" not in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("argv", [
    ["build", "random", "-o", "{out}"],
    ["replay", "{game}", "-o", "{out}", "--time-limit", "0.05"],
    ["winrates", "--agents", "leftmost", "--opponents", "random", "-n", "2", *CHEAP, "-o", "{out}"],
])
def test_o_refuses_an_existing_file_unless_force(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    game, out = tmp_path / "game.jsonl", tmp_path / "out.txt"
    assert main(["match", "leftmost", "random", "-n", "1", "--save", str(game), *CHEAP]) == 0
    out.write_text("mine")
    args = [a.format(out=out, game=game) for a in argv]
    capsys.readouterr()
    assert main(args) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"-o {out}: the file exists" in err and "--force" in err
    assert out.read_text() == "mine"
    assert main([*args, "--force"]) == 0
    assert out.read_text() != "mine"


def test_o_reads_dir_where_it_is_a_folder_and_says_force_where_it_is_a_file(
        capsys: pytest.CaptureFixture[str]) -> None:
    def usage(command: str) -> str:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        return " ".join(capsys.readouterr().out.split())

    for command in ("tournament", "sprt", "ladder"):
        text = usage(command)
        assert "-o DIR, --out DIR" in text and "PATH" not in text.split("-o DIR, --out DIR", 1)[1][:120], command
    for command in ("build", "replay", "winrates", "mistakes", "openings"):
        text = usage(command)
        assert "-o PATH, --out PATH" in text and "--force" in text, command


def test_make_submission_rebuilds_with_force() -> None:
    """``make submission`` rebuilds the same file each time: that is what the target means, so it says --force."""
    target = (ROOT / "Makefile").read_text().split("\nsubmission:", 1)[1].split("\n\n", 1)[0]
    assert "cxforge build $(AGENT) -o $(OUT) --force" in target
