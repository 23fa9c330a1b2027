"""The book's second-seat moves made practical, offline (the command: ``cxforge book practical``).

In play the agent keeps every book move: the practical search
(agents/solver/expectimax.py) needs weak solves of the positions below, which
in the first plies take far longer than a move's second.  Offline they do not:

1. every position of the second seat (an odd number of stones) from ``--root``
   up to ``--stones`` stones that the book holds with a move (mirrors folded) is
   searched by ``practical_search`` against ``--opponent``'s model, ``--depth``
   of our moves deep at most, ``--seconds`` each (the C engine reads the book,
   whose filled first six stones answer the shallow solves at once), in
   parallel, each result appended to a progress file as it comes (a stopped run
   resumes);
2. a chosen move that differs from the book's must keep the book's coverage one
   move of ours below it: every position after an opponent reply is in the book
   or easy for the agent (the ``--easy-nodes`` rule of ``book build``); one that
   does not is recorded and not used;
3. the book is written with those moves in place of its own (the exact scores
   stay: every move the search may choose has the position's exact score), and
   each searched position's expected result against the model is printed.

``--shard K/N`` solves only every N-th position (in key order, from the K-th)
and writes no book, as ``book fill --shard`` does: concatenate the shards'
progress files and run once more without it.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.board import Board
from agents.net.agent import policy_prior
from agents.solver.book import Book, BookEntry, BookError
from agents.solver.engine import Engine
from agents.solver.expectimax import practical_search
from agents.solver.opponents import MODELS, named
from agents.solver.policy import POLICY
from agents.solver.position import layout
from connectx_forge import safe_write, tool_engines
from connectx_forge.errors import UserError
from connectx_forge.play.worker_pool import worker_pool
from connectx_forge.solver.book_builder import BookRun, easy, read_records, save_book, solve_position
from connectx_forge.solver.book_fill import levels

DEFAULT_PRACTICAL_PROGRESS = "runs/book/practical.jsonl"
PRACTICAL_STONES = 3  # the second seat's first two moves
PRACTICAL_DEPTH = 4  # our moves searched deep at most (the agent's own search stops at its time)
EASY_CAP_S = 5.0  # an easy check's limit: the node count decides; this bounds a hard one (and the first table)


@dataclass(frozen=True)
class Choice:
    """One searched position: the book's move and score, the search's move, its expected result (-1: not
    searched), the deepest level finished, and the positions one move of ours below that are neither in the book
    nor easy (the move is used only when there are none)."""

    key: int
    line: str
    score: int
    book_move: int
    move: int
    expected: float
    depth: int
    uncovered: int
    seconds: float


@dataclass(frozen=True)
class Job:
    """What a worker needs: the position, the book file, the engine, the model, the depth and the limits."""

    line: str
    book: str
    engine: str
    opponent: str
    depth: int
    seconds: float
    easy_nodes: int


# the worker's engine on the book and the book, by engine and the book file's path, size and time: its table persists
_WORKERS: dict[tuple[str, str, int, int], tuple[Engine, Book]] = {}


def _worker(kind: str, book_file: str) -> tuple[Engine, Book]:
    """This worker's engine on the book and the book itself, read once per worker (again if the file changed)."""
    stat = Path(book_file).stat()
    key = (kind, book_file, stat.st_size, stat.st_mtime_ns)
    found = _WORKERS.get(key)
    if found is None:
        book = Book.from_bytes(Path(book_file).read_bytes())
        found = _WORKERS[key] = (tool_engines.engine(kind, book=book), book)
    return found


def uncovered(book: Book, line: str, move: int, easy_nodes: int, engine: str) -> int:
    """The positions after ``line``, ``move`` and an opponent reply (our turn again) that the book lacks and the
    agent cannot solve in time (a solve from an empty table, as ``book build`` checks)."""
    child = Board.from_pons(line).play(move)
    count = 0
    for reply in child.legal_moves():
        if child.is_winning_move(reply):
            continue
        grand = child.play(reply)
        if grand.is_full() or book.lookup(grand.current, grand.mask) is not None:
            continue
        count += not easy(solve_position(f"{line}{move + 1}{reply + 1}", EASY_CAP_S, engine), easy_nodes)
    return count


def search_one(job: Job) -> Choice:
    """The practical choice at ``job.line`` (a worker's task)."""
    solver, book = _worker(job.engine, job.book)
    board = Board.from_pons(job.line)
    found_entry = book.lookup(board.current, board.mask)
    score, book_move = found_entry if found_entry is not None else (0, None)
    if book_move is None:
        raise UserError(f"{job.line}: not in the book with a move")
    start = time.perf_counter()
    found = practical_search(solver, board, book_move, score, layout().order, start + job.seconds,
                             named(job.opponent, policy_prior), job.depth)
    gaps = 0 if found.move == book_move else uncovered(book, job.line, found.move, job.easy_nodes, job.engine)
    return Choice(board.key(), job.line, score, book_move, found.move, found.expected, found.depth, gaps,
                  time.perf_counter() - start)


def targets(book: Book, root: str, stones: int) -> list[tuple[int, str]]:
    """``(key, line)`` of every second-seat position from ``root`` up to ``stones`` stones that the book holds
    with a move, in key order (mirrors folded)."""
    out = []
    for level in levels(Board.from_pons(root), root, stones):
        for key, (board, line) in level.items():
            found = book.lookup(board.current, board.mask)
            if board.moves % 2 == 1 and found is not None and found[1] is not None:
                out.append((key, line))
    return sorted(out)


@dataclass(frozen=True)
class PracticalRun:
    """``book practical``'s own flags: the model, the depth, the stones and the shard (``None``: the whole)."""

    opponent: str = POLICY.opponent
    depth: int = PRACTICAL_DEPTH
    stones: int = PRACTICAL_STONES
    shard: tuple[int, int] | None = None


def practical(how: PracticalRun, run: BookRun | None = None) -> int:
    """Search the book's second-seat positions (``how``) and write the book at ``run.out`` with the practical
    moves; 0.  ``run.seconds`` (default 120) limits each search, ``run.progress`` (default
    ``DEFAULT_PRACTICAL_PROGRESS``) records them."""
    if how.opponent not in MODELS:
        raise UserError(f"--opponent must be one of {', '.join(MODELS)}, got {how.opponent!r}")
    if not 1 <= how.depth <= 20 or not 1 <= how.stones <= 41:
        raise UserError(f"--depth must be 1 to 20 and --stones 1 to 41, got {how.depth} and {how.stones}")
    run = (run if run is not None else BookRun()).settled(120.0, DEFAULT_PRACTICAL_PROGRESS)
    try:
        book = Book.from_bytes(run.out.read_bytes())
    except (OSError, BookError) as exc:
        raise UserError(f"cannot read the book {run.out}: {exc}") from None
    todo = targets(book, run.root.strip(), how.stones)
    if how.shard is not None:
        todo = todo[how.shard[0] - 1::how.shard[1]]
    print(f"{len(todo)} second-seat positions of up to {how.stones} stones in the book to search "
          f"({how.opponent} model, depth {how.depth}, {run.seconds:g} s each)", flush=True)
    if run.dry_run:
        return 0
    engine = tool_engines.resolve(run.engine or "auto")
    safe_write.check_target(run.progress)
    done = read_records(run.progress, Choice)
    jobs = [Job(line, str(run.out), engine, how.opponent, how.depth, run.seconds, run.easy_nodes)
            for key, line in todo if key not in done]
    if jobs:
        with worker_pool(run.workers) as pool, safe_write.open_append(run.progress) as fh:
            for choice in pool.map(search_one, jobs):
                fh.write(json.dumps(asdict(choice)) + "\n")
                fh.flush()
                done[choice.key] = choice
    if how.shard is not None:
        print(f"shard {how.shard[0]}/{how.shard[1]}: {len(todo)} positions searched, in {run.progress}; no book "
              "written (concatenate the shards' progress files and run without --shard)", flush=True)
        return 0
    return write(book, [done[key] for key, _ in todo if key in done], run.out)


def write(book: Book, choices: list[Choice], out: Path) -> int:
    """The book with each covered practical move in place of its own, written to ``out``; a line per choice; 0."""
    moves = {c.key: c.move for c in choices if c.move != c.book_move and c.uncovered == 0 and c.depth > 0}
    for c in choices:
        what = ("changed" if c.key in moves else "kept" if c.move == c.book_move
                else f"kept ({c.uncovered} hard positions below are not in the book)")
        print(f"{c.line}: score {c.score}, book {c.book_move + 1}, search {c.move + 1}, expected "
              f"{c.expected:.3f} at depth {c.depth}: {what}", flush=True)
    entries = [BookEntry(e.key, e.score, moves.get(e.key, e.move)) for e in book.entries()]
    size = save_book(Book.from_entries(entries, book.max_moves), out)
    print(f"wrote {out}: {len(entries)} entries ({size} bytes), {len(moves)} moves changed", flush=True)
    return 0
