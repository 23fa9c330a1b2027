"""``cxforge solve``: the exact score of a position given as a Pons move string.

The command-line face of the agents' solver (``agents.solver``) and of its
C engine (``connectx_forge.tool_engines``): a move string in, the
score and its reading in plain words out.  ``parse_moves`` is also how
``cxforge book build --root`` reads its position.
"""

from __future__ import annotations

import argparse
import time

from agents.board import Board
from agents.solver.book import Book
from connectx_forge import options, tool_engines
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX, connectx_only

HELP = ("solve a 6x7 position given as a move string of columns 1-7 (Pons' score convention); "
        "with the C engine where it loads (the pure-Python one can take minutes to hours below ~12 stones)")
EXAMPLE = """\
cxforge solve 4453
cxforge solve 4453 --all --engine python
cxforge solve 334455 --weak"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge solve``."""
    options.add_game(parser)
    parser.add_argument("moves", metavar="MOVES",
                        help="columns played from the empty board, digits 1-7 (e.g. 4453); '' for the empty board")
    parser.add_argument("--weak", action="store_true", help="only win (1), draw (0) or loss (-1)")
    parser.add_argument("--all", action="store_true", help="the score of each column for the side to move")
    options.add_engine(parser, "auto", "the solver, with the opening book's scores (auto: c where it loads; python "
                       "is the same search, about 25x slower)")


def parse_moves(moves: str) -> Board:
    """The board after ``moves``, or a ``UserError`` saying what is wrong with them."""
    text = moves.strip()
    bad = sorted({ch for ch in text if ch not in "1234567"})
    if bad:
        raise UserError(f"bad move string {moves!r}: it holds {''.join(bad)!r}; moves are the digits 1-7")
    board = Board()
    for i, ch in enumerate(text, 1):
        if board.winner() is not None:
            raise UserError(f"bad move string {moves!r}: move {i} comes after the game was won")
        if not board.can_play(int(ch) - 1):
            raise UserError(f"bad move string {moves!r}: move {i} plays column {ch}, which is full")
        board = board.play(int(ch) - 1)
    if board.winner() is not None:
        raise UserError(f"bad move string {moves!r}: the game is already won after the last move")
    return board


def describe(score: int, moves: int, weak: bool) -> str:
    """A plain-words reading of a score for the side to move."""
    if score == 0:
        return "draw"
    if weak:
        return "win" if score > 0 else "loss"
    stones = 22 - abs(score)  # the winner's stones at the win
    move_no = 2 * stones - 1 if (score > 0) == (moves % 2 == 0) else 2 * stones
    return f"{'win' if score > 0 else 'loss'} (with stone {stones} of the winner, move {move_no})"


def run(args: argparse.Namespace) -> int:
    """Solve the position; print its score (or each column's with ``--all``), nodes and time."""
    connectx_only("cxforge solve (the exact solver)", args.game or CONNECTX)
    board = parse_moves(args.moves)
    solver = tool_engines.engine(options.engine_of(args), book=Book.load())  # the book's scores where it has them
    start = time.perf_counter()
    if args.all:
        scores = solver.analyze(board, weak=args.weak)
        elapsed = time.perf_counter() - start
        print(" ".join("-" if s is None else str(s) for s in scores))
    else:
        score = solver.solve(board, weak=args.weak)
        elapsed = time.perf_counter() - start
        print(f"{score}  {describe(score, board.moves, args.weak)}")
    print(f"({solver.nodes} nodes, {elapsed:.3f} s)")
    return 0
