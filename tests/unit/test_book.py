"""The opening book: its file format, mirror folding, lookups, and the resumable builder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given

from agents.board import Board
from agents.solver.book import NO_MOVE, Book, BookEntry, BookError
from agents.solver.policy import POLICY
from agents.solver.search import Solver
from connectx_forge import tool_engines
from connectx_forge.solver.book_builder import read_progress
from connectx_forge.solver.book_cmd import add_arguments, run
from tests.strategies import standard_positions

LATE = "6614446666373154"  # a Middle-Medium position: its subtree solves in seconds


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def canonical_entry(board: Board, score: int, move: int) -> BookEntry:
    mirrored = board.mirror()
    if mirrored.key() < board.key():
        return BookEntry(mirrored.key(), score, 6 - move)
    return BookEntry(board.key(), score, move)


@given(standard_positions(max_moves=20))
def test_lookup_finds_a_position_and_its_mirror(board: Board) -> None:
    move = board.legal_moves()[0]
    book = Book.from_bytes(Book.from_entries([canonical_entry(board, 5, move)], board.moves).to_bytes())
    assert book.lookup(board.current, board.mask) == (5, move)
    mirrored = board.mirror()
    if mirrored.key() != board.key():  # a symmetric position is its own mirror
        assert book.lookup(mirrored.current, mirrored.mask) == (5, 6 - move)
    assert book.score(board.current, board.mask) == 5


def test_round_trip_and_misses() -> None:
    boards = [Board.from_pons(m) for m in ("", "4", "44", "43", "1", "7")]
    entries = {}
    for i, b in enumerate(boards):
        e = canonical_entry(b, i - 2, 3)
        entries[e.key] = e
    book = Book.from_entries(entries.values(), 2)
    again = Book.from_bytes(book.to_bytes())
    assert again.entries() == book.entries() and again.max_moves == 2
    assert len(again) == 5  # "1" and "7" are mirrors: one entry
    assert again.lookup(Board.from_pons("46").current, Board.from_pons("46").mask) is None
    no_move = Book.from_entries([BookEntry(Board().key(), 1, NO_MOVE)], 0)
    assert no_move.lookup(0, 0) == (1, None)


def test_sides_say_whose_turns_a_book_covers() -> None:
    even = Book.from_entries([canonical_entry(Board.from_pons(m), 0, 3) for m in ("", "44", "4455")], 4)
    assert even.sides == 1
    entries = [canonical_entry(Board.from_pons(m), 0, 3) for m in ("4", "44")]
    mixed = Book.from_bytes(Book.from_entries(entries, 2).to_bytes())
    assert mixed.sides == 3 and Book.empty().sides == 0


def test_bad_files_are_rejected() -> None:
    with pytest.raises(BookError, match="magic"):
        Book.from_bytes(b"XXXX" + bytes(8))
    with pytest.raises(BookError, match="expected"):
        Book.from_bytes(Book.empty().to_bytes() + b"x")
    with pytest.raises(BookError, match="twice"):
        Book.from_entries([BookEntry(1, 0, 0), BookEntry(1, 2, 0)], 0)


def test_the_shipped_book_loads_and_its_late_entries_are_exact() -> None:
    from connectx_forge.runtime import read_data

    book = Book.from_bytes(read_data("agents/data/opening_book.bin"))  # raises on a damaged file
    assert len(Book.load()) == len(book)
    solver = Solver()
    deepest = sorted(book.entries(), key=lambda e: -next(_boards_of(e.key)).moves)[:3]
    for entry in deepest:  # the cheapest to check, with the pure-Python solver
        board = next(_boards_of(entry.key))
        assert solver.solve(board) == entry.score
        child = board.play(entry.move)
        assert child.winner() is not None or -solver.solve(child) == entry.score  # the move keeps the score


def _boards_of(key: int):
    """The board whose key is ``key`` (decoded column by column)."""
    current = mask = 0
    for c in range(7):
        col = (key >> (7 * c)) & 0x7F
        h = (col + 1).bit_length() - 1
        mask |= ((1 << h) - 1) << (7 * c)
        current |= (col - ((1 << h) - 1)) << (7 * c)
    moves = bin(mask).count("1")
    yield Board._from(Board().geo, current, mask, moves)


def test_book_scores_speed_up_the_solver_and_stay_exact(tmp_path: Path) -> None:
    root = Board.from_pons(LATE)
    solver = Solver()
    score = solver.solve(root)
    plain_nodes = solver.nodes
    entries = []
    for col in root.legal_moves():
        child = root.play(col)
        entries.append(canonical_entry(child, Solver().solve(child), 0))
    book = Book.from_entries(entries, root.moves + 1)
    with_book = Solver(book=book)
    assert with_book.solve(root) == score
    assert with_book.nodes < plain_nodes


ENGINES = ["python", pytest.param("c", marks=pytest.mark.skipif(not tool_engines.available(),
                                                                reason="the compiled solver does not load here"))]


@pytest.mark.parametrize("engine", ENGINES)
def test_build_is_resumable_and_writes_a_loadable_book(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       engine: str) -> None:
    progress, out = tmp_path / "progress.jsonl", tmp_path / "book.bin"
    args = ["build", "--root", LATE, "--plies", str(len(LATE) + 1), "--side", "both", "--easy-nodes", "0",
            "--engine", engine, "--workers", "1", "--seconds", "30", "--progress", str(progress), "--out", str(out)]
    assert run(parse(*args)) == 0
    done = read_progress(progress)
    root = Board.from_pons(LATE)
    kids = {min(c.key(), c.mirror().key()) for c in (root.play(m) for m in root.legal_moves())}
    assert len(done) == 1 + len(kids)  # the root and its children, mirrors folded
    book = Book.from_bytes(out.read_bytes())
    assert len(book) == len(done) and book.max_moves == len(LATE) + 1
    solver = Solver()
    for r in done.values():
        board = Board.from_pons(r.moves)
        assert book.lookup(board.current, board.mask) == (r.score, r.move)
        assert solver.analyze(board)[r.move] == r.score == solver.solve(board)
    lines_before = progress.read_text().count("\n")
    capsys.readouterr()
    assert run(parse(*args)) == 0  # a rerun solves nothing again
    assert progress.read_text().count("\n") == lines_before
    assert "0 to solve" in capsys.readouterr().out


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_positions_are_left_to_the_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str) -> None:
    progress, out = tmp_path / "progress.jsonl", tmp_path / "book.bin"
    args = ["build", "--root", LATE, "--plies", str(len(LATE) + 2), "--side", "first", "--engine", engine,
            "--workers", "1", "--progress", str(progress), "--out", str(out)]
    assert run(parse(*args, "--easy-nodes", str(10**9))) == 0
    done = read_progress(progress)
    assert len(done) == 1 and len(Book.from_bytes(out.read_bytes())) == 0  # the root is easy: nothing below it
    (root,) = done.values()
    assert "0 entries" in capsys.readouterr().out
    assert run(parse(*args, "--easy-nodes", str(root.nodes))) == 0  # now the root is hard: kept, and followed
    book = Book.from_bytes(out.read_bytes())
    assert len(read_progress(progress)) > 1  # its grandchildren were solved (easier, so left out)
    assert len(book) == 1 and book.lookup(*_bits(LATE)) == (root.score, root.move)


def _bits(moves: str) -> tuple[int, int]:
    board = Board.from_pons(moves)
    return board.current, board.mask


def test_torn_progress_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    good = {"key": 5, "moves": "4", "score": None, "move": None, "nodes": 10, "seconds": 1.0}
    path.write_text(json.dumps(good) + "\n" + '{"key": 7, "mo')
    assert list(read_progress(path)) == [5]


def test_book_cli_errors(tmp_path: Path) -> None:
    from connectx_forge.errors import UserError

    with pytest.raises(UserError, match="min-plies"):
        run(parse("build", "--plies", "2", "--min-plies", "3"))
    with pytest.raises(UserError, match="bad move string"):
        run(parse("build", "--root", "448", "--plies", "5"))
    with pytest.raises(UserError, match="cannot read"):
        run(parse("info", str(tmp_path / "missing.bin")))
    (tmp_path / "junk.bin").write_bytes(b"junkjunkjunkjunk")
    with pytest.raises(UserError, match="not a book"):
        run(parse("info", str(tmp_path / "junk.bin")))


@pytest.mark.parametrize("opening, we_play",
                         [("", 0), ("2", 1), ("6", 1), ("1", 1), ("7", 1), ("3", 1), ("5", 1), ("4", 1)])
def test_on_the_books_tree_every_move_comes_from_the_book_or_a_finished_solve(opening: str, we_play: int) -> None:
    """The shipped book is complete for both players (second: after every opening, mirrors folded):
    no move there falls back to the heuristic."""
    import random
    import time

    from agents.solver import agent as solver_agent

    if len(Book.load()) == 0:
        pytest.skip("no opening book shipped")
    rng = random.Random(0)
    for _ in range(3):
        solver_agent.reset()
        board, hows = Board.from_pons(opening), []
        while not board.is_over():
            if board.moves % 2 == we_play:
                col = solver_agent.choose(board, time.perf_counter(), POLICY.move_budget)
                hows.append(solver_agent.state().last)
            else:
                col = rng.choice(board.legal_moves())
            board = board.play(col)
        assert board.winner() == we_play + 1
        assert set(hows) <= {"opening", "book", "weak", "exact", "win in one", "only move"}, hows
        assert "book" in hows
