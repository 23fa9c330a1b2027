"""``cxforge book practical`` (tools/connectx_forge/solver/book_practical.py): the book's second-seat moves made
practical offline.

The command may only put a move of the entry's exact score in the book, the
one the practical search picks; it resumes from its progress file, writes no
book from a shard, and names a bad flag in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.board import Board
from agents.net.agent import policy_prior
from agents.solver.book import Book, BookEntry
from agents.solver.chooser import engine
from agents.solver.expectimax import practical_search
from agents.solver.opponents import named
from agents.solver.position import layout
from connectx_forge.errors import UserError
from connectx_forge.solver.book_builder import BookRun, canonical_position, read_records
from connectx_forge.solver.book_practical import Choice, PracticalRun, practical, targets

INF = float("inf")
DRAWN = "7362344453766637331"  # 19 stones, the second seat to move; four moves draw


def _book(path: Path) -> tuple[int, int, int]:
    """A one-entry book holding DRAWN with the solver's own move; ``(key, score, move)`` in canonical orientation."""
    key, board, _ = canonical_position(Board.from_pons(DRAWN), DRAWN)
    move, score = engine("auto").best_move(board, deadline=INF)
    path.write_bytes(Book.from_entries([BookEntry(key, score, move)], 19).to_bytes())
    return key, score, move


def test_the_book_gets_the_practical_move_of_the_same_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) \
        -> None:
    out, progress = tmp_path / "book.bin", tmp_path / "practical.jsonl"
    key, score, old = _book(out)
    run = BookRun(DRAWN, 30.0, 1, progress, out, "auto", bars=False)
    assert practical(PracticalRun("slips", 2, 19), run) == 0
    _, board, line = canonical_position(Board.from_pons(DRAWN), DRAWN)
    solver = engine("auto")
    want = practical_search(solver, board, old, score, layout().order, INF, named("slips", policy_prior), 2)
    book = Book.from_bytes(out.read_bytes())
    assert book.lookup(board.current, board.mask) == (score, want.move) and want.move != old
    assert solver.analyze(board, deadline=INF)[want.move] == score
    choice = read_records(progress, Choice)[key]
    assert (choice.line, choice.book_move, choice.move, choice.depth) == (line, old, want.move, 2)
    assert choice.expected == pytest.approx(want.expected) and choice.uncovered == 0
    assert "1 moves changed" in capsys.readouterr().out
    lines = progress.read_text().splitlines()
    out.write_bytes(Book.from_entries([BookEntry(key, score, old)], 19).to_bytes())
    assert practical(PracticalRun("slips", 2, 19), run) == 0  # resumes: nothing searched again, the book rewritten
    assert progress.read_text().splitlines() == lines
    assert Book.from_bytes(out.read_bytes()).lookup(board.current, board.mask) == (score, want.move)
    assert json.loads(lines[0])["score"] == score


def test_a_shard_writes_no_book(tmp_path: Path) -> None:
    out, progress = tmp_path / "book.bin", tmp_path / "practical.jsonl"
    _book(out)
    before = out.read_bytes()
    run = BookRun(DRAWN, 30.0, 1, progress, out, "auto", bars=False)
    assert practical(PracticalRun("slips", 1, 19, shard=(1, 1)), run) == 0
    assert out.read_bytes() == before and len(read_records(progress, Choice)) == 1


def test_the_targets_are_the_second_seats_book_positions() -> None:
    book = Book.load()
    found = targets(book, "", 3)
    assert found and all(Board.from_pons(line).moves % 2 == 1 for _, line in found)
    assert all(book.lookup(Board.from_pons(line).current, Board.from_pons(line).mask) is not None for _, line in found)
    assert len({key for key, _ in found}) == len(found) and [k for k, _ in found] == sorted(k for k, _ in found)


@pytest.mark.parametrize(("how", "message"), [
    (PracticalRun(opponent="strong"), "--opponent"),
    (PracticalRun(depth=0), "--depth"),
    (PracticalRun(stones=42), "--stones"),
])
def test_bad_flags_are_one_line(tmp_path: Path, how: PracticalRun, message: str) -> None:
    with pytest.raises(UserError, match=message):
        practical(how, BookRun(out=tmp_path / "none.bin"))


def test_a_missing_book_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read the book"):
        practical(PracticalRun(), BookRun(out=tmp_path / "none.bin", bars=False))
