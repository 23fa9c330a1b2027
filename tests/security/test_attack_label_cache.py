"""The review's label cache is a file like any other cxforge reads: a planted FIFO, a line built to hang or crash
the parser, a value out of range, or a link where it appends, is refused or skipped, never followed or run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agents.board import Board
from connectx_forge.leaderboard.review import label_cache
from connectx_forge.leaderboard.review.label_cache import LabelCache, label_key
from connectx_forge.leaderboard.review.labeller import PositionValues, Value
from connectx_forge.safe_write import UnsafeOutput


def _good(board: Board) -> dict[str, object]:
    moves = {str(c): [0, 0, "solver"] for c in board.legal_moves()}
    return {"k": label_key(board), "e": "c", "t": 2.0, "b": [0, 0, "solver"], "m": moves, "bm": None, "to": False}


def test_a_fifo_at_the_cache_path_is_no_hang(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path / "cache"))
    path = label_cache.default_path()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    cache = LabelCache(path)  # no reader blocks on the FIFO: refused as not a regular file
    assert cache.entries == {} and "starting it afresh" in capsys.readouterr().err
    assert path.is_file() and path.read_text() == ""


def test_hostile_lines_are_skipped_and_a_good_one_kept(tmp_path: Path) -> None:
    board = Board().play(3)
    bad = [
        "[" * 100_000 + "]" * 100_000,  # deeper than any parser should recurse
        '{"k": 1' + "0" * 5000 + "}",  # an integer of thousands of digits
        json.dumps({**_good(board), "b": [2, 0, "solver"]}),  # a class that is no win, draw or loss
        json.dumps({**_good(board), "m": {"\u0661": [0, 0, "solver"]}}),  # a column in Arabic-Indic digits
        json.dumps({**_good(board), "m": {"99": [0, 0, "solver"]}}),  # a column no board has
        json.dumps({**_good(board), "b": [0, 10**9, "solver"]}),  # a score no board allows
        json.dumps({**_good(board), "b": [0, 0, "__import__('os')"]}),  # a source that is not one of ours
        json.dumps({**_good(board), "extra": 1}),
        '{"k": "torn',
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([*bad, json.dumps(_good(board))]) + "\n")
    cache = LabelCache(path)
    assert list(cache.entries) == [label_key(board)]
    assert cache.get(board, "python", 60.0) is not None  # exact: good for any engine and limit
    other = Board().play(2)
    assert cache.get(other, "c", 2.0) is None


def test_a_kept_position_that_does_not_fit_the_board_is_not_used(tmp_path: Path) -> None:
    board = Board()
    for col in (3, 3, 3, 3, 3, 3):  # column 3 full: it is no legal move
        board = board.play(col)
    entry = _good(Board())
    entry["k"] = label_key(board)  # the empty board's seven columns, under the key of a board with six
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(entry) + "\n")
    assert LabelCache(path).get(board, "c", 2.0) is None


def test_the_cache_never_appends_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    path = tmp_path / "labels.jsonl"
    path.symlink_to(target)
    cache = LabelCache(path)  # the link's target is read as data: its lines are not entries
    assert cache.entries == {}
    cache.keep(Board(), PositionValues(Value(1, 1, "book"), {c: Value(0, 0, "book") for c in range(7)}), "c", 2.0)
    with pytest.raises(UnsafeOutput, match="symbolic link"):
        cache.save()
    assert target.read_text() == "precious\n"
