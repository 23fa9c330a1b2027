"""``cxforge book fill``: every position of the first stones in the book, scored by minimax over exact solves."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agents.board import Board
from agents.solver.book import Book, BookEntry
from agents.solver.search import Solver
from connectx_forge.errors import UserError
from connectx_forge.solver.book_builder import canonical_position, read_progress
from connectx_forge.solver.book_cmd import add_arguments, run
from connectx_forge.solver.book_fill import FILL_STONES, back_up, levels
from tests.unit.test_book import ENGINES, LATE


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def fill_args(tmp_path: Path, engine: str, *extra: str) -> list[str]:
    return ["fill", "--root", LATE, "--stones", str(len(LATE) + 1), "--engine", engine, "--workers", "1",
            "--seconds", "60", "--progress", str(tmp_path / "fill.jsonl"), "--out", str(tmp_path / "book.bin"),
            "--no-progress", *extra]


@pytest.mark.parametrize("engine", ENGINES)
def test_fill_adds_exact_scores_and_best_moves_and_resumes(tmp_path: Path, engine: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert run(parse(*fill_args(tmp_path, engine, "--easy-nodes", "0"))) == 0
    book = Book.from_bytes((tmp_path / "book.bin").read_bytes())
    tree = levels(Board.from_pons(LATE), LATE, len(LATE) + 1)
    assert len(book) == len(tree[0]) + len(tree[1])  # with --easy-nodes 0 every inner position is kept
    solver = Solver()
    for level in tree[:-1]:
        for board, _ in level.values():
            score, move = book.lookup(board.current, board.mask) or (None, None)
            assert move is not None
            scores = solver.analyze(board)
            assert scores[move] == score == max(s for s in scores if s is not None)
    leaves = levels(Board.from_pons(LATE), LATE, len(LATE) + 2)[-1]
    assert set(read_progress(tmp_path / "fill.jsonl")) == set(leaves)  # the solves: the leaves only
    assert set(read_progress(tmp_path / "fill.easy.jsonl")) == set(tree[0]) | set(tree[1])  # the easy checks
    lines = (tmp_path / "fill.jsonl").read_text().count("\n")
    capsys.readouterr()
    assert run(parse(*fill_args(tmp_path, engine, "--easy-nodes", "0"))) == 0  # a rerun solves nothing
    assert (tmp_path / "fill.jsonl").read_text().count("\n") == lines
    assert "0 new" in capsys.readouterr().out


def test_fill_keeps_old_entries_and_leaves_easy_positions_out(tmp_path: Path) -> None:
    root = Board.from_pons(LATE)
    key, board, _ = canonical_position(root, LATE)
    move, score = Solver().best_move(board)
    other = (move + 1) % 7 if board.can_play((move + 1) % 7) else move
    old = BookEntry(key, score, other)  # a move the fill would not pick: kept as it is
    (tmp_path / "book.bin").write_bytes(Book.from_entries([old], len(LATE)).to_bytes())
    assert run(parse(*fill_args(tmp_path, "python", "--easy-nodes", str(10**9)))) == 0  # every new one is easy
    assert Book.from_bytes((tmp_path / "book.bin").read_bytes()).entries() == [old]
    assert all(r.score is not None for r in read_progress(tmp_path / "fill.jsonl").values())


def test_fill_refuses_a_book_its_minimax_contradicts(tmp_path: Path) -> None:
    key, board, _ = canonical_position(Board.from_pons(LATE), LATE)
    wrong = BookEntry(key, Solver().solve(board) + 1, board.legal_moves()[0])
    (tmp_path / "book.bin").write_bytes(Book.from_entries([wrong], len(LATE)).to_bytes())
    with pytest.raises(UserError, match="the book says"):
        run(parse(*fill_args(tmp_path, "python")))


def test_shards_split_the_solves_and_their_concatenation_writes_the_same_book(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    whole, split = tmp_path / "whole", tmp_path / "split"
    whole.mkdir(), split.mkdir()
    assert run(parse(*fill_args(whole, "python", "--easy-nodes", "0"))) == 0
    leaves = set(read_progress(whole / "fill.jsonl"))
    parts = []
    for k in (1, 2, 3):
        args = fill_args(split, "python", "--easy-nodes", "0", "--shard", f"{k}/3", "--progress",
                         str(split / f"shard{k}.jsonl"))
        assert run(parse(*args)) == 0
        assert "no book written" in capsys.readouterr().out
        parts.append(set(read_progress(split / f"shard{k}.jsonl")))
    assert not (split / "book.bin").exists() and not (split / "shard1.easy.jsonl").exists()
    assert all(parts) and sum(map(len, parts)) == len(leaves) and set().union(*parts) == leaves  # disjoint, whole
    (split / "fill.jsonl").write_text("".join((split / f"shard{k}.jsonl").read_text() for k in (1, 2, 3)))
    assert run(parse(*fill_args(split, "python", "--easy-nodes", "0"))) == 0
    assert (split / "fill.jsonl").read_text().count("\n") == len(leaves)  # nothing solved again
    assert (split / "book.bin").read_bytes() == (whole / "book.bin").read_bytes()


@pytest.mark.parametrize("shard", ["0/3", "4/3", "1", "a/b", "1/0"])
def test_fill_refuses_a_bad_shard(shard: str) -> None:
    with pytest.raises(UserError, match="--shard must be K/N"):
        run(parse("fill", "--root", LATE, "--stones", str(len(LATE) + 1), "--shard", shard))


def test_back_up_scores_a_win_in_one_by_rule_and_waits_for_missing_children() -> None:
    board = Board.from_pons("445566")  # the side to move wins at once in columns 2 and 6 (0-based)
    assert back_up(board, {}) is None  # the other columns' children are not known yet
    solver = Solver()
    known = {canonical_position(board.play(c), "")[0]: solver.solve(board.play(c))
             for c in board.legal_moves() if not board.is_winning_move(c)}
    assert back_up(board, known) == (18, 2)  # (43 - 6) // 2, and the tie goes to the column nearer the centre


def test_fill_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="more than --stones"):
        run(parse("fill", "--root", LATE, "--stones", "3"))
    with pytest.raises(UserError, match="bad move string"):
        run(parse("fill", "--root", "448", "--stones", "5"))
    with pytest.raises(UserError, match="--stones must be"):
        run(parse("fill", "--stones", "99"))
    with pytest.raises(UserError, match="cannot read the progress file"):
        run(parse("fill", "--root", LATE, "--stones", str(len(LATE)), "--progress", str(tmp_path),
                  "--out", str(tmp_path / "book.bin")))
    (tmp_path / "junk.bin").write_bytes(b"junkjunkjunkjunk")
    with pytest.raises(UserError, match="cannot read the book"):
        run(parse("fill", "--root", LATE, "--stones", str(len(LATE)), "--out", str(tmp_path / "junk.bin")))


def test_shipped_book_is_its_own_minimax_up_to_the_filled_stones() -> None:
    """Every position of fewer than FILL_STONES stones that the shipped book holds, and whose children
    it settles (or a win in one does), has the score its children give."""
    book = Book.load()
    checked = 0
    for level in levels(Board(), "", FILL_STONES - 1):
        for board, line in level.values():
            found = book.lookup(board.current, board.mask)
            if found is None:
                continue
            known = {}
            for col in board.legal_moves():
                child = board.play(col)
                kid = book.lookup(child.current, child.mask)
                if kid is not None:
                    known[canonical_position(child, "")[0]] = kid[0]
            got = back_up(board, known)
            if got is not None:
                assert got[0] == found[0], line
                checked += 1
    assert checked > 100


def test_shipped_book_agrees_with_pons_on_begin_hard(pons_dir: Path) -> None:
    """The filled book's score of every Begin-Hard position of up to FILL_STONES stones is Pons' exact score."""
    from connectx_forge.boundedread import read_positions

    early = [(moves, score) for moves, score in read_positions(pons_dir / "Test_L1_R3") if len(moves) <= FILL_STONES]
    book = Book.load()
    for moves, score in early:
        board = Board.from_pons(moves)
        found = book.lookup(board.current, board.mask)
        assert found is not None and found[0] == score, moves  # none of these is easy enough to be left out
    assert len(early) > 300
