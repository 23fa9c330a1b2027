"""``cxforge match --store FILE`` and ``--resume``: a match as a run of the arena's results store.

Each game is committed as it ends; running again with the same store (``--resume``: it must exist) plays only
the games ``0 .. N-1`` the store lacks, so a match goes on to a larger ``-n``, or finishes after Ctrl-C or after
lost rows, and reports all ``N``, as an uninterrupted match would.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from connectx_forge.arena.match_run import Match
from connectx_forge.arena.run import Execution, execute
from connectx_forge.arena.store import Store
from connectx_forge.cli import main
from connectx_forge.play.game_record import GameRecord
from tests.harness import slow_mover
from tests.integration.test_outputs import _interrupt
from tests.unit.test_cli import _parsers
from tests.unit.test_language import parser_of


def _games(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rows(store: Path) -> dict[int, tuple[object, ...]]:
    """Each stored game by index: its key and what was played (not its move times)."""
    with Store(store) as db:
        (run, _, _), = db.runs("match")
        return {g.slot: (g.key, g.record.moves if g.record else None, g.a_score) for g in db.games(run)}


def _stored_games(store: Path) -> int:
    """How many games the store holds now (0 while it is not made yet): read while a match writes it."""
    try:
        return len(_rows(store)) if store.is_file() else 0
    except Exception:  # the store's tables or run are not there yet
        return 0


def test_a_larger_n_plays_only_the_missing_games_and_reports_them_all(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    store, alone = tmp_path / "m.sqlite", tmp_path / "alone.jsonl"
    argv = ["match", "leftmost", "random", "-w", "1", "--no-progress", "--seed", "3"]
    assert main([*argv, "-n", "6", "--save", str(alone)]) == 0  # no store: as before
    assert main([*argv, "-n", "3", "--store", str(store)]) == 0
    assert sorted(_rows(store)) == [0, 1, 2]
    first = _rows(store)
    played: list[GameRecord] = []
    stored = execute(Match("leftmost", "random", games=6, seed=3),
                     Execution(workers=1, store=store, progress=False, on_game=played.append))
    result, chosen = stored.result, stored.chosen
    assert sorted(r.index for r in played) == [3, 4, 5]  # only the games the store lacked
    assert [r.index for r in result.records] == list(range(6)) and result.interrupted == 0
    assert {k: v for k, v in _rows(store).items() if k < 3} == first and chosen.note is None
    want = [(g["index"], g["moves"], g["a_seat"]) for g in _games(alone)]
    assert [(r.index, r.moves, r.a_seat) for r in result.records] == want  # what one match of 6 plays
    capsys.readouterr()
    resumed = tmp_path / "resumed.jsonl"
    assert main([*argv, "-n", "6", "--store", str(store), "--resume", "--json", "--save", str(resumed)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 6 and report["store"] == str(store) and report["run"].startswith("match-")
    assert [(g["index"], g["moves"]) for g in _games(resumed)] == [(i, m) for i, m, _ in want]


def test_resume_alone_replays_the_stores_last_match_and_plays_lost_rows(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "m.sqlite"
    assert main(["match", "leftmost", "random", "-n", "6", "-w", "2", "--no-progress", "--store", str(store)]) == 0
    before = _rows(store)
    with sqlite3.connect(store) as db:  # as if the match had been stopped before games 1 and 4 ended
        db.execute("DELETE FROM games WHERE slot IN (1, 4)")
    capsys.readouterr()
    assert main(["match", "--resume", "--store", str(store), "-w", "1", "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 6
    assert _rows(store) == before  # the same seeded games again, the others untouched
    with Store(store) as db:
        assert len(db.runs("match")) == 1


def test_ctrl_c_with_a_store_says_how_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "m.sqlite"
    done = _interrupt(["match", str(slow_mover(tmp_path, 0.05)), "random", "-n", "24", "-w", "2", "--store", str(store),
                       "--no-progress"], 0.5, lambda: _stored_games(store) > 0)
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (f"cxforge match: interrupted: every finished game is in "
                                                    f"{store}; resume with: cxforge match --resume --store {store}")
    assert done.stdout == ""
    kept = _rows(store)
    assert len(kept) < 24
    assert main(["match", "--resume", "--store", str(store), "-w", "2", "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 24
    after = _rows(store)
    assert sorted(after) == list(range(24)) and {k: after[k] for k in kept} == kept


@pytest.mark.parametrize("argv, message", [
    (["leftmost", "random", "--resume"], "--resume needs --store FILE"),
    (["leftmost", "random", "--mix-versions"], "--mix-versions needs --store FILE"),
    (["--resume"], "--resume needs --store FILE"),
    (["--resume", "--store", "missing.sqlite"], "nothing to resume: no results store at missing.sqlite"),
    (["--store", "m.sqlite"], "give players A and B (or --resume with --store FILE)"),
    (["leftmost"], "give players A and B"),
])
def test_a_bad_combination_is_one_line(argv: list[str], message: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["match", *argv, "-n", "2", "-w", "1", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_without_a_store_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["match", "leftmost", "random", "-n", "2", "-w", "2", "--no-progress"]) == 0
    assert list(tmp_path.iterdir()) == []


def test_the_store_flags_read_the_same_in_match_tournament_and_sprt() -> None:
    helps: dict[str, dict[str, str]] = {}
    for path, parser in _parsers():
        if path not in ("match", "tournament", "sprt"):  # (train's --resume is a checkpoint's)
            continue
        for action in parser._actions:
            for flag in ("--store", "--resume", "--new-run", "--mix-versions"):
                if flag in action.option_strings:
                    helps.setdefault(flag, {})[path] = " ".join(str(action.help).split())
    assert set(helps["--store"]) == {"match", "tournament", "sprt"}
    for flag in ("--resume", "--new-run", "--mix-versions"):
        assert set(helps[flag]) == set(helps["--store"]) and len(set(helps[flag].values())) == 1, flag
    assert all(h.startswith("SQLite results database, each game committed as it ends (default: ")
               for h in helps["--store"].values())
    assert parser_of("match").parse_args(["--resume", "--store", "m.sqlite"]).a is None
