"""``cxforge book``: build and inspect the solver's opening book.

``book build`` walks the game tree ply by ply from the empty board and solves
each position where the book's side is to move (exact score and best move,
mirror positions folded).  Where the side already has a book move, only that
move's child is followed (for the first player, the agent's fixed centre
opening too); elsewhere every reply is.  Each result is appended to
a progress file as soon as it is known, so an interrupted build resumes where
it stopped; a position that ran out of its time limit is recorded as unsolved
and retried only with ``--retry``.  Positions are solved in parallel on all
cores.  The book file is written from the progress file at the end.

Only the positions the agent cannot solve in time are kept: one whose solve
(a weak then an exact best move, as the agent does, from an empty table) takes
fewer than ``--easy-nodes`` nodes is left to the agent's own search, and the
tree is not followed below it.  The compiled twin of the solver
(``tools.csolver``, about 25x faster) does the solving where a C compiler is
present; ``--engine python`` uses the agent's own solver.

Deeper books need only a longer run of the same command, e.g.
``cxforge book build --plies 8 --seconds 600``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from agents.board import Board
from agents.resources import data_path
from agents.solver.agent import OPENING_MOVE
from tools.csolver import available as csolver_available
from tools.errors import UserError

HELP = "build (resumable, parallel) or inspect the solver's opening book"
DEFAULT_PROGRESS = "runs/book/progress.jsonl"
EASY_NODES = 100_000  # about 0.25 s of the agent's Python search on this machine


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="book_command", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="solve positions of the first plies and write the book")
    b.add_argument("--plies", type=int, default=4, help="deepest ply (stones on the board) to solve (default 4)")
    b.add_argument("--min-plies", type=int, default=0, help="shallowest ply to solve (default 0)")
    b.add_argument("--root", default="", metavar="MOVES",
                   help="build below this position (a Pons move string) instead of the empty board")
    b.add_argument("--side", choices=("first", "second", "both"), default="both",
                   help="whose turns the book covers (default both)")
    b.add_argument("--seconds", type=float, default=60.0, help="time limit per position (default 60)")
    b.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    b.add_argument("--progress", default=DEFAULT_PROGRESS, help=f"append-only progress file (default {DEFAULT_PROGRESS})")
    b.add_argument("--out", default=data_path("opening_book.bin"), help="book file (default agents/data/opening_book.bin)")
    b.add_argument("--engine", choices=("c", "python"), default=None,
                   help="solver to build with: the compiled twin (default where a C compiler is found) or the agent's")
    b.add_argument("--easy-nodes", type=int, default=EASY_NODES,
                   help=f"positions solved in fewer nodes are left to the agent's search (default {EASY_NODES}; 0 keeps all)")
    b.add_argument("--retry", action="store_true", help="retry positions recorded as unsolved")
    b.add_argument("--dry-run", action="store_true", help="only count the positions of each ply")
    i = sub.add_parser("info", help="entries, depth, size and load time of a book")
    i.add_argument("path", nargs="?", default=data_path("opening_book.bin"), help="book file (default: the agents' book)")


class Result(NamedTuple):
    key: int  # canonical key
    moves: str  # the Pons move string solved (canonical orientation)
    score: int | None  # None: not solved within the time limit
    move: int | None  # best column, canonical orientation
    nodes: int  # of the weak and the exact solve together
    seconds: float


# -- positions ------------------------------------------------------------------------
def canonical(board: Board, line: str) -> tuple[int, Board, str]:
    """The key of ``board`` or its mirror (the smaller), that board, and its move string."""
    mirrored = board.mirror()
    if mirrored.key() < board.key():
        return mirrored.key(), mirrored, "".join(str(8 - int(c)) for c in line)
    return board.key(), board, line


def children(board: Board, line: str) -> Iterator[tuple[Board, str]]:
    """The positions one move later where the game goes on and the mover cannot win at once."""
    for col in board.legal_moves():
        if board.is_winning_move(col):
            continue
        child = board.play(col)
        if not child.is_full():
            yield child, line + str(col + 1)


def book_child(board: Board, line: str, col: int) -> list[tuple[Board, str]]:
    """The position after our book move ``col`` (none if it fills the board): the only one followed."""
    child = board.play(col)
    return [] if child.is_full() else [(child, line + str(col + 1))]


def next_frontier(kids: Iterable[tuple[Board, str]]) -> dict[int, tuple[Board, str]]:
    """``kids`` keyed by canonical key, a position and its mirror kept once."""
    out: dict[int, tuple[Board, str]] = {}
    for child, child_line in kids:
        key, board, line = canonical(child, child_line)
        out.setdefault(key, (board, line))
    return out


def solves_at(ply: int, side: str) -> bool:
    return side == "both" or (ply % 2 == 0) == (side == "first")


# -- solving (worker processes) -----------------------------------------------------------
_ENGINE = None  # the worker process's compiled solver


def solve_position(line: str, seconds: float, engine: str = "python") -> Result:
    """Score and best move of the position after ``line`` (weak, then exact, like the agent)."""
    global _ENGINE
    from agents.solver.search import Solver, Timeout

    board = Board.from_pons(line)
    start = time.perf_counter()
    if engine == "c":
        from tools.csolver import CSolver

        if _ENGINE is None:
            _ENGINE = CSolver()
        solver = _ENGINE
        solver.reset()
    else:
        solver = Solver()
    solver.deadline = start + seconds
    first = solver.nodes
    try:
        solver.best_move(board, weak=True)
        move, score = solver.best_move(board)
    except Timeout:
        move = score = None
    return Result(board.key(), line, score, move, solver.nodes - first, time.perf_counter() - start)


def easy(result: Result | None, easy_nodes: int) -> bool:
    """Whether the agent's own search solves this position in time (so the book skips it)."""
    return result is not None and result.score is not None and result.nodes < easy_nodes


# -- progress file ----------------------------------------------------------------------
def read_progress(path: Path) -> dict[int, Result]:
    """The results recorded so far (a later line for a key wins); a torn last line is ignored."""
    done: dict[int, Result] = {}
    if not path.exists():
        return done
    for no, line in enumerate(path.read_text().splitlines(), 1):
        try:
            r = Result(**json.loads(line))
        except (ValueError, TypeError):
            continue  # an interrupted write
        done[r.key] = r
    return done


def append_progress(path: Path, result: Result) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(result._asdict()) + "\n")


def write_book(results: dict[int, Result], out: Path, easy_nodes: int = 0) -> int:
    """Write the solved positions that are not easy; return how many."""
    from agents.solver.book import Book, Entry

    kept = [r for r in results.values() if r.score is not None and not easy(r, easy_nodes)]
    entries = [Entry(r.key, r.score, r.move if r.move is not None else 255) for r in kept]
    max_moves = max((len(r.moves) for r in kept), default=0)
    data = Book.from_entries(entries, max_moves).to_bytes()
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return len(entries)


# -- the build ------------------------------------------------------------------------------
def build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.plies < 0 or args.min_plies < 0 or args.min_plies > args.plies:
        raise UserError(f"need 0 <= --min-plies <= --plies, got {args.min_plies} and {args.plies}")
    if args.plies > 41:
        raise UserError(f"--plies is at most 41 on a 6x7 board, got {args.plies}")
    if args.seconds <= 0 or args.workers < 1 or args.easy_nodes < 0:
        raise UserError("--seconds must be positive, --workers at least 1 and --easy-nodes at least 0")
    engine = args.engine or ("c" if csolver_available() else "python")
    if engine == "c":
        from tools.csolver import library_path

        library_path()  # compile now: one clear error instead of one per worker
    progress, out = Path(args.progress), Path(args.out)
    progress.parent.mkdir(parents=True, exist_ok=True)
    if not out.parent.is_dir():
        raise UserError(f"folder of --out does not exist: {out.parent}")
    from tools.solve import parse_moves

    root = parse_moves(args.root)
    if root.moves > args.plies:
        raise UserError(f"the root has {root.moves} stones, more than --plies {args.plies}")
    done = read_progress(progress)
    key, board, line = canonical(root, args.root.strip())
    frontier: dict[int, tuple[Board, str]] = {key: (board, line)}
    pool = None if args.dry_run else ProcessPoolExecutor(args.workers)
    try:
        for ply in range(root.moves, args.plies + 1):
            solve = ply >= max(args.min_plies, 1) and solves_at(ply, args.side)  # ply 0: the agent's fixed move
            todo = [line for key, (_, line) in frontier.items()
                    if solve and (key not in done or (args.retry and done[key].score is None))]
            print(f"ply {ply}: {len(frontier)} positions, {len(todo) if solve else 0} to solve ({engine})", flush=True)
            if todo and pool is not None:
                futures = [pool.submit(solve_position, line, args.seconds, engine) for line in todo]
                unsolved = 0
                with tqdm(total=len(futures), desc=f"ply {ply}", unit="pos") as bar:
                    for fut in as_completed(futures):
                        r = fut.result()
                        append_progress(progress, r)
                        done[r.key] = r
                        unsolved += r.score is None
                        bar.set_postfix(unsolved=unsolved, refresh=False)
                        bar.update()
            if ply == args.plies:
                break
            kids: list[tuple[Board, str]] = []
            for key, (board, line) in frontier.items():
                known = done.get(key) if solves_at(ply, args.side) else None
                if ply == 0 and args.side == "first":  # the agent's fixed first move
                    known = Result(key, line, None, OPENING_MOVE, 0, 0.0)
                if easy(known, args.easy_nodes):
                    continue  # the agent solves it, and what follows, itself
                if known is not None and known.move is not None and (args.side != "both" or ply == 0):
                    kids += book_child(board, line, known.move)
                else:
                    kids += children(board, line)
            frontier = next_frontier(kids)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if args.dry_run:
        return 0
    n = write_book(done, out, args.easy_nodes)
    unsolved = sum(1 for r in done.values() if r.score is None)
    n_easy = sum(1 for r in done.values() if easy(r, args.easy_nodes))
    print(f"wrote {out}: {n} entries ({out.stat().st_size} bytes); {n_easy} easy positions left to the agent; "
          f"{unsolved} positions unsolved within {args.seconds:g} s")
    return 0


def info(args: argparse.Namespace) -> int:
    from agents.solver.book import Book, BookError, key_stones

    path = Path(args.path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    start = time.perf_counter()
    try:
        book = Book.from_bytes(data)
    except BookError as exc:
        raise UserError(f"{path}: {exc}") from None
    load = time.perf_counter() - start
    import zlib
    side = {0: "no side", 1: "the first player's turns", 2: "the second player's turns", 3: "both players' turns"}
    print(f"{path}: {len(book)} entries for {side[book.sides]}, positions of up to {book.max_moves} stones, "
          f"{len(data)} bytes ({len(zlib.compress(data, 9))} compressed), parsed in {load * 1e3:.2f} ms")
    by_ply: dict[int, int] = {}
    for key in book.keys:
        stones = key_stones(key)
        by_ply[stones] = by_ply.get(stones, 0) + 1
    if by_ply:
        print("entries by stones: " + ", ".join(f"{p}: {n}" for p, n in sorted(by_ply.items())))
    return 0


def run(args: argparse.Namespace) -> int:
    return build(args) if args.book_command == "build" else info(args)
