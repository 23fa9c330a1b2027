"""Hostile results stores and games files: a store or a games file is data, never code, and never a report.

A results store (``--store FILE``) and a games file (``--save FILE``) may come from a teammate, a shared run
folder or a download.  Each attack here goes through the command that reads it (``tournament --resume``,
``match --resume``, ``logs``) or the notebook API, and must end in one error line naming the file (exit
status 2), with nothing run from the file and no forged number in any report:

* SQLite runs code from a schema: a trigger, a view, a virtual table, an index on an expression.  The store's
  schema is compared with the toolkit's before any statement touches a row (``arena/sqlite_file.py``);
* a row whose A and B are not two of its run's players, or whose pairing names them in more than one way (a
  label may hold " vs "), is refused (``arena/store.py``);
* a store kept each game's score beside its record (``a_score``), and the reports counted the score: a store
  whose scores said A won every game it lost reported it.  Now no score is stored: every report counts the
  records, whose result is checked against their moves, and a row whose key disagrees with its record is
  refused (``arena/store.py``, ``play/rules.end_disagreement``);
* a run's stored settings are checked as strictly as the flags (``arena/stored_settings.py``);
* a file that is no SQLite database, or a damaged one, is one line;
* a query that runs past its deadline stops in one line, and Ctrl-C stops it at once;
* a games file whose claimed result its moves do not give is refused (``play/records.record_of``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import connectx_forge as cf
from connectx_forge.arena.store import Store
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.games import read_file
from connectx_forge.play.game import play_game
from connectx_forge.play.records import read_games

CHEAP = ["-w", "1", "--no-progress"]
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    run TEXT NOT NULL,
    pairing TEXT NOT NULL,
    opening TEXT NOT NULL,
    colour INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    a_score REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run, pairing, opening, colour, seed)
);
"""  # the store as the previous version made it, a score beside each record

def one_line_error(code: int, err: str, *words: str) -> None:
    """The command failed with exit status 2 and one error line holding ``words``."""
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store a real tournament wrote: random against leftmost on one opening (two games)."""
    path = tmp_path_factory.mktemp("genuine") / "t.sqlite"
    assert main(["tournament", "random", "leftmost", "--openings", "1", "--store", str(path), *CHEAP]) == 0
    return path


def forged(genuine: Path, tmp_path: Path, *sql: str, name: str = "forged.sqlite") -> Path:
    """A copy of the genuine store with ``sql`` run on it by someone else's sqlite3."""
    path = tmp_path / name
    shutil.copy(genuine, path)
    db = sqlite3.connect(path)
    for statement in sql:
        db.execute(statement)
    db.commit()
    db.close()
    return path


def resume(path: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    """``cxforge tournament --resume --store PATH``: its exit status and stderr."""
    code = main(["tournament", "--resume", "--store", str(path), "--json", *CHEAP, *more])
    return code, capsys.readouterr().err


# -- the schema ------------------------------------------------------------------------------------------
SCHEMA_CODE = {
    "trigger": ("CREATE TRIGGER evil AFTER INSERT ON games BEGIN UPDATE runs SET kind = 'pwned'; END", "evil"),
    "view": ("CREATE VIEW standings AS SELECT a, count(*) FROM games GROUP BY a", "standings"),
    "table": ("CREATE TABLE extra (x)", "extra"),
    "virtual table": ("CREATE VIRTUAL TABLE notes USING fts5(text)", "notes"),
    "expression index": ("CREATE INDEX by_seed ON games (abs(seed) + 1)", "by_seed"),
    "generated column": ("ALTER TABLE games ADD COLUMN score REAL GENERATED ALWAYS AS (1.0) VIRTUAL", "games"),
}


@pytest.mark.parametrize("kind", list(SCHEMA_CODE))
def test_a_store_with_schema_code_is_refused_and_nothing_of_it_runs(genuine: Path, tmp_path: Path, kind: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A store holding a trigger, a view, a virtual table, an index or a column the toolkit does not make: the
    run that would write into it (more openings: new games) is refused in one line naming the store and the
    object, and the trigger never fired."""
    sql, name = SCHEMA_CODE[kind]
    path = forged(genuine, tmp_path, sql)
    code = main(["tournament", "random", "leftmost", "--openings", "2", "--store", str(path), *CHEAP])
    one_line_error(code, capsys.readouterr().err, str(path), repr(name), "refusing it")
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM runs WHERE kind = 'pwned'").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM games").fetchone()[0] == 2  # nothing was added
    db.close()


# -- reports from the games themselves -------------------------------------------------------------------
def test_a_store_of_the_old_layout_with_forged_scores_never_reports_them(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The store as the previous version wrote it, its ``a_score`` saying A won the game its record says A
    lost: refused in one line, never reported as a win."""
    record = play_game("leftmost", "random", seed=1, a_seat=2).to_json()  # mark 1 (leftmost) wins
    record.update(run="r", pairing="random vs leftmost")
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO runs VALUES ('r', 'tournament', '{}', 0)")
    db.execute("INSERT INTO games VALUES ('r', 'random vs leftmost', '', 2, 1, 0, 'random', 'leftmost', 1.0, ?)",
               (json.dumps(record),))
    db.commit()
    db.close()
    code, err = resume(path, capsys)
    one_line_error(code, err, str(path), "'games'", "refusing it")


@pytest.mark.parametrize("forgery", [
    "UPDATE games SET record = json_set(record, '$.winner', 3 - json_extract(record, '$.winner'))",
    "UPDATE games SET record = json_set(record, '$.outcome', 'timeout', '$.culprit', "
    "json_extract(record, '$.winner'), '$.winner', 3 - json_extract(record, '$.winner'))",
    "UPDATE games SET record = json_set(record, '$.outcome', 'draw', '$.winner', NULL)",
    "UPDATE games SET colour = 3 - colour",
    "UPDATE games SET a = 'leftmost', b = 'random'",
    "UPDATE games SET seed = seed + 1",
    "UPDATE games SET slot = slot + 5",
    "UPDATE games SET record = json_set(record, '$.run', 'another-run')",
])
def test_a_forged_game_is_refused_by_the_command_and_the_api(genuine: Path, tmp_path: Path, forgery: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A game whose record claims a result its moves do not give, or whose row's key, players or slot disagree
    with its record: ``tournament --resume`` and the notebook API refuse the store in one line naming the row;
    no standings are printed from it."""
    path = forged(genuine, tmp_path, forgery)
    code, err = resume(path, capsys)
    one_line_error(code, err, str(path), "game (", "refusing")
    with pytest.raises(UserError, match="refusing"):
        cf.tournament("random", "leftmost", openings=1, workers=1, store=path, progress=False)


def test_the_report_counts_the_records(genuine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The genuine store's standings are its records' results, game by game."""
    code = main(["tournament", "--resume", "--store", str(genuine), "--json", *CHEAP])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    with Store(genuine) as db:
        games = db.games(report["run"])
    wins = sum(g.record.winner == g.key.colour for g in games)
    losses = sum(g.record.winner == 3 - g.key.colour for g in games)
    (pair,) = report["pairs"]
    assert (pair["wins"], pair["losses"], pair["games"]) == (wins, losses, 2)


LEFTMOST = "def agent(obs, config):\n    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n"


def test_a_pairing_split_into_players_the_run_never_had_is_refused(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A label may hold " vs ": the players "x vs y.py" and "z.py" play the pairing "x vs y.py vs z.py", and a
    row forged to A "x", B "y.py vs z.py" (its pairing and its record as they were, so each still agrees with
    the other) would rank two players the run never had.  ``--resume`` and the API refuse the store in one line:
    a row's A and B must be two of the run's players, named by its pairing in one way only."""
    x, z = tmp_path / "x vs y.py", tmp_path / "z.py"
    x.write_text(LEFTMOST)
    z.write_text(LEFTMOST)
    path = tmp_path / "t.sqlite"
    assert main(["tournament", str(x), str(z), "--openings", "1", "--store", str(path), *CHEAP]) == 0
    capsys.readouterr()
    db = sqlite3.connect(path)
    forged_rows = db.execute("UPDATE games SET a = 'x', b = 'y.py vs z.py' WHERE a = 'x vs y.py'").rowcount
    db.commit()
    db.close()
    assert forged_rows == 2  # the pairing's two games, A with each mark
    code, err = resume(path, capsys)
    one_line_error(code, err, str(path), "'x', 'y.py vs z.py'", "two of the run's players", "refusing the store")
    with pytest.raises(UserError, match="two of the run's players"):
        cf.tournament(str(x), str(z), openings=1, workers=1, store=path, progress=False)


# -- stored settings -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("change", "words"), [
    ("json_set(config, '$.evil', 1)", "unknown setting 'evil'"),
    ("json_remove(config, '$.seed')", "no setting 'seed'"),
    ("json_set(config, '$.openings', 'many')", "its settings"),
    ("json_set(config, '$.openings', 0)", "--openings must be at least 1"),
    ("json_set(config, '$.games', -5)", "-n/--games must be at least 1"),
    ("json_set(config, '$.players', 'random')", "'players'"),
    ("json_set(config, '$.seed', 1.5)", "'seed'"),
    ("json_set(config, '$.game.isolate', 'yes')", "'isolate'"),
    ("json_set(config, '$.game.act_timeout', -1)", "--act-timeout must be positive"),
    ("json_set(config, '$.game.evil', 1)", "'game'"),
    ("json_set(config, '$.band', json('[1, 2, 3]'))", "'band'"),
    ("json_set(config, '$.game.size', json('[6, 100000, 4]'))", "its board"),
    ("'{\"players\": '", "its settings"),
])
def test_stored_settings_are_checked_in_one_line(genuine: Path, tmp_path: Path, change: str, words: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--resume`` alone plays the store's settings: unknown, missing, mistyped or out-of-range ones are one
    line naming the store, the run and the setting."""
    path = forged(genuine, tmp_path, f"UPDATE runs SET config = {change}")
    code, err = resume(path, capsys)
    one_line_error(code, err, str(path), "its settings", words)


def test_a_stored_match_with_unknown_settings_is_one_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.sqlite"
    assert main(["match", "random", "leftmost", "-n", "2", "--store", str(path), *CHEAP]) == 0
    capsys.readouterr()
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET config = json_set(config, '$.seats', json('[\"both\"]'))")
    db.commit()
    db.close()
    code = main(["match", "--resume", "--store", str(path), *CHEAP])
    one_line_error(code, capsys.readouterr().err, str(path), "'seats'")


# -- files that are no store -----------------------------------------------------------------------------
@pytest.mark.parametrize("content", ["text", "truncated", "fifo"])
def test_a_file_that_is_no_store_is_one_line(genuine: Path, tmp_path: Path, content: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store.sqlite"
    if content == "text":
        path.write_text("runs,games\n1,2\n")
    elif content == "truncated":
        path.write_bytes(genuine.read_bytes()[:5000])
    else:
        os.mkfifo(path)
    code, err = resume(path, capsys)
    one_line_error(code, err, str(path))


# -- deadlines and Ctrl-C --------------------------------------------------------------------------------
def _big_store(path: Path, rows: int) -> None:
    """A store whose run ``r`` holds ``rows`` rows (a store too large to read within a deadline)."""
    Store(path).close()
    db = sqlite3.connect(path)
    db.executemany("INSERT INTO games VALUES ('r', 'a vs b', '', 1, ?, 0, 'a', 'b', '{}')",
                   ((i,) for i in range(rows)))
    db.commit()
    db.close()


def test_a_query_past_its_deadline_is_one_line(tmp_path: Path) -> None:
    """A statement stops when its deadline passes (here one already past), however many rows it had left."""
    path = tmp_path / "big.sqlite"
    _big_store(path, 50_000)
    with Store(path, seconds=0.0) as db, pytest.raises(UserError, match="ran past its deadline of 0 s"):
        db.games("r")


def test_ctrl_c_stops_a_query_at_once(tmp_path: Path) -> None:
    """Ctrl-C in the middle of a statement that would never end is a KeyboardInterrupt (what a run turns into
    "interrupted; resume with ..."), not a wait for the deadline nor an SQLite error."""
    path = tmp_path / "s.sqlite"
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as at a terminal (not a worker's)
    with Store(path, seconds=30.0) as db:
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                db.file.rows(endless)
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, before)


# -- games files -----------------------------------------------------------------------------------------
def _games_file(path: Path, forge: Callable[[dict[str, Any]], None]) -> Path:
    """A games file of one real game (leftmost, mark 1, wins by a line), forged by ``forge``."""
    line = play_game("leftmost", "random", seed=3).to_json()
    assert line["outcome"] == "win" and line["winner"] == 1
    forge(line)
    path.write_text(json.dumps(line) + "\n")
    return path


GAME_FORGERIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "winner swapped": lambda g: g.update(winner=2),
    "a draw": lambda g: g.update(outcome="draw", winner=None),
    "a rule break": lambda g: g.update(outcome="timeout", culprit=1, winner=2),
    "moves after the line": lambda g: g.update(moves=[*g["moves"], (g["moves"][-1] + 1) % 7]),
    "no line": lambda g: g.update(moves=g["moves"][:-1]),
    "an unknown outcome": lambda g: g.update(outcome="resigned"),
    "a bool winner": lambda g: g.update(outcome="invalid", culprit=True, winner=2, moves=g["moves"][:-1]),
}


@pytest.mark.parametrize("forgery", list(GAME_FORGERIES))
def test_a_games_file_with_a_forged_result_is_refused(tmp_path: Path, forgery: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A games line whose outcome, winner or culprit its moves do not give: every reader refuses it in one line
    naming the file and the line (``logs``, ``compare``, the API's readers and ``review``'s)."""
    path = _games_file(tmp_path / "games.jsonl", GAME_FORGERIES[forgery])
    with pytest.raises(UserError, match="line 1: its result does not follow from its moves"):
        read_games(path)
    with pytest.raises(UserError, match="does not follow from its moves|the moves break the rules"):
        read_file(path)
    one_line_error(main(["logs", str(path)]), capsys.readouterr().err, str(path), "does not follow")
    code = main(["compare", "--new", str(path), "--base", str(path)])
    one_line_error(code, capsys.readouterr().err, str(path), "does not follow")


def test_a_genuine_games_file_reads_back(tmp_path: Path) -> None:
    """The check refuses forgeries, not games: real wins, a draw-free rule break and opening games read."""
    path = _games_file(tmp_path / "games.jsonl", lambda g: None)
    assert [g.winner for g in read_games(path)] == [1]
