"""The solver's opening book: its build (resumable, parallel) and a summary of a book file.

The command line is ``cxforge book`` (tools/connectx_forge/solver/book_cmd.py).

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
tree is not followed below it.  The solver's C engine
(``connectx_forge.tool_engines``, about 25x faster) does the solving where it loads;
``--engine python`` uses the agent's own solver.

Deeper books need only a longer run of the same command, e.g.
``cxforge book build --plies 8 --seconds 600``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

from agents.board import Board
from agents.solver.book import Book, BookEntry, BookError, key_stones
from agents.solver.engine import Engine
from agents.solver.policy import POLICY
from agents.solver.search import Timeout
from connectx_forge import boundedread, safe_write, tool_engines
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.paths import agent_data
from connectx_forge.play import worker_pool as pools
from connectx_forge.train.labels import BestMove, Label, win_score

if TYPE_CHECKING:
    from agents.solver.book import Book

DEFAULT_PROGRESS = "runs/book/progress.jsonl"
EASY_NODES = 100_000  # about 0.25 s of the agent's Python search on this machine
DEFAULT_BOOK = Path(agent_data("opening_book.bin"))


class SolvedPosition(NamedTuple):
    key: int  # canonical key
    moves: str  # the Pons move string solved (canonical orientation)
    score: int | None  # None: not solved within the time limit
    move: int | None  # best column, canonical orientation
    nodes: int  # of the weak and the exact solve together
    seconds: float


# -- positions ------------------------------------------------------------------------
def canonical_position(board: Board, line: str) -> tuple[int, Board, str]:
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
        key, board, line = canonical_position(child, child_line)
        out.setdefault(key, (board, line))
    return out


def solves_at(ply: int, side: str) -> bool:
    return side == "both" or (ply % 2 == 0) == (side == "first")


# -- solving (worker processes) -----------------------------------------------------------
_ENGINES: dict[str, Engine] = {}  # the worker process's solver of each kind (no book: it is being built)


def solve_position(line: str, seconds: float, engine: str = "python") -> SolvedPosition:
    """Score and best move of the position after ``line`` (weak, then exact, like the agent: from an empty
    table)."""
    board = Board.from_pons(line)
    start = time.perf_counter()
    move: int | None
    score: int | None
    solver = _ENGINES.get(engine)
    if solver is None:
        solver = _ENGINES[engine] = tool_engines.engine(engine)
    solver.reset()
    deadline = start + seconds
    first = solver.nodes
    try:
        solver.best_move(board, weak=True, deadline=deadline)
        move, score = solver.best_move(board, deadline=deadline)
    except Timeout:
        move = score = None
    return SolvedPosition(board.key(), line, score, move, solver.nodes - first, time.perf_counter() - start)


def easy(result: SolvedPosition | None, easy_nodes: int) -> bool:
    """Whether the agent's own search solves this position in time (so the book skips it)."""
    return result is not None and result.score is not None and result.nodes < easy_nodes


# -- progress file ----------------------------------------------------------------------
class Keyed(Protocol):
    """A progress file's record: one position, named by its canonical key."""

    @property
    def key(self) -> int: ...


RecordT = TypeVar("RecordT", bound=Keyed)


def read_records(path: Path, record: Callable[..., RecordT]) -> dict[int, RecordT]:
    """A progress file's records, each made by ``record(**fields)`` (a later line for a key wins); a torn last
    line is ignored.  ``book build``/``fill`` record ``SolvedPosition``s, ``book practical`` its choices."""
    done: dict[int, RecordT] = {}
    if not path.exists():
        return done
    try:
        text = path.read_text()
    except OSError as exc:  # a folder, no permission: one line, not a traceback
        raise UserError(f"cannot read the progress file {path}: {exc.strerror}") from None
    for line in text.splitlines():
        try:
            r = record(**boundedread.parse_json(line, str(path)))
        except (UserError, TypeError):
            continue  # an interrupted write (or a line beyond bounds)
        done[r.key] = r
    return done


def read_progress(path: Path) -> dict[int, SolvedPosition]:
    """The results recorded so far by ``book build`` or ``book fill``."""
    return read_records(path, SolvedPosition)


def book_labels(progress: Path) -> Iterator[Label | BestMove]:
    """Labels from a book build's progress file (``read_progress``): full labels first, then best moves.

    A position whose every child was solved (the book opponent's turns) gives a
    ``Label``; each solved position gives a ``BestMove``.  Mirrors and
    transpositions are looked up by key.
    """
    done = {k: r for k, r in read_progress(Path(progress)).items() if r.score is not None}

    def score_of(board: Board) -> int | None:
        r = done.get(board.key()) or done.get(board.mirror().key())
        return None if r is None else r.score

    parents: dict[int, str] = {}
    for r in done.values():
        if r.moves:
            q = Board.from_pons(r.moves[:-1])
            parents.setdefault(q.canonical_key(), r.moves[:-1])
    for line in parents.values():
        q = Board.from_pons(line)
        scores: list[int | None] = []
        for col in range(q.geo.columns):
            if not q.can_play(col):
                scores.append(None)
            elif q.is_winning_move(col):
                scores.append(win_score(q))
            else:
                child = score_of(q.play(col))
                if child is None:
                    break
                scores.append(-child)
        else:
            yield Label(line, tuple(scores))
    for r in done.values():
        if r.move is not None and r.score is not None:
            yield BestMove(r.moves, int(r.move), int(r.score))


def append_progress(path: Path, result: SolvedPosition) -> None:
    with safe_write.open_append(path) as fh:
        fh.write(json.dumps(result._asdict()) + "\n")


def write_book(results: dict[int, SolvedPosition], out: Path, easy_nodes: int = 0) -> int:
    """Write the solved positions that are not easy; return how many."""
    kept = [r for r in results.values() if r.score is not None and not easy(r, easy_nodes)]
    entries = [BookEntry(r.key, r.score, r.move if r.move is not None else 255) for r in kept if r.score is not None]
    save_book(Book.from_entries(entries, max((len(r.moves) for r in kept), default=0)), out)
    return len(entries)


def save_book(book: Book, out: Path) -> int:
    """Write ``book`` to ``out`` through a temporary file (a stopped write leaves the old file whole); its bytes."""
    data = book.to_bytes()
    safe_write.write_bytes(out, data, replace=True)  # a book output is updated in place (-o ... "update")
    return len(data)


def solve_all(pool: Executor, solve: Callable[[str, float, str], SolvedPosition], lines: list[str], seconds: float,
              engine: str, progress: Path, done: dict[int, SolvedPosition], label: str, bars: bool) -> None:
    """``solve(line, seconds, engine)`` for each line on ``pool``; each result recorded in ``progress`` and ``done``
    as it comes, under a bar that counts the unsolved."""
    futures = [pool.submit(solve, line, seconds, engine) for line in lines]
    unsolved = 0
    plan = f"cxforge book: {label}: {progress_bars.count(len(futures), 'position')} to solve, {seconds:g} s " \
           "each at most"
    with progress_bars.bar(len(futures), label, unit="pos", enabled=bars, plan=plan) as bar:
        for fut in as_completed(futures):
            r = fut.result()
            append_progress(progress, r)
            done[r.key] = r
            unsolved += r.score is None
            bar.set_postfix(unsolved=unsolved, refresh=False)
            bar.update()


# -- the build ------------------------------------------------------------------------------
@dataclass(frozen=True)
class BookRun:
    """How ``book build`` and ``book fill`` run, the flags they share.

    ``root``: the Pons move string below which positions are taken; ``seconds``:
    each solve's limit (None: the command's default); ``workers``: the shared
    pool's processes; ``progress``: the file results are appended to as they come
    (a rerun resumes there; None: the command's default); ``out``: the book
    written; ``engine`` None: the C engine where it loads, else the Python solver;
    ``easy_nodes``: a position the agent solves in fewer nodes stays out;
    ``retry``: solve again what timed out; ``dry_run``: count only; ``bars``:
    progress bars.
    """

    root: str = ""
    seconds: float | None = None
    workers: int = 1
    progress: Path | None = None
    out: Path = DEFAULT_BOOK
    engine: str | None = None
    easy_nodes: int = EASY_NODES
    retry: bool = False
    dry_run: bool = False
    bars: bool = True

    def settled(self, seconds: float, progress: str | Path) -> SettledRun:
        """This run with the command's defaults (``seconds``, ``progress``) in place of None and its files as
        paths, checked once: both commands take the same flags by the same rules and messages."""
        fields = asdict(self) | {"seconds": seconds if self.seconds is None else self.seconds,
                                 "progress": Path(progress if self.progress is None else self.progress),
                                 "out": Path(self.out)}
        run = SettledRun(**fields)
        if run.seconds <= 0 or run.workers < 1 or run.easy_nodes < 0:
            raise UserError("--seconds must be positive, --workers at least 1 and --easy-nodes at least 0")
        return run


@dataclass(frozen=True)
class SettledRun(BookRun):
    """A ``BookRun`` with every default filled in (``BookRun.settled``): what a command's body reads."""

    seconds: float = 60.0
    progress: Path = Path(DEFAULT_PROGRESS)


def build(plies: int = 4, run: BookRun | None = None, *, min_plies: int = 0, side: str = "both") -> int:
    """Solve the book's positions from ``run.root`` (a valid Pons move string) to ``plies`` stones, write
    ``run.out`` (each solve 60 s at most and results in ``DEFAULT_PROGRESS`` unless ``run`` says).

    ``run.dry_run`` only counts the positions of each ply.  Returns 0.
    """
    if plies < 0 or min_plies < 0 or min_plies > plies:
        raise UserError(f"need 0 <= --min-plies <= --plies, got {min_plies} and {plies}")
    if plies > 41:
        raise UserError(f"--plies is at most 41 on a 6x7 board, got {plies}")
    run = (run if run is not None else BookRun()).settled(60.0, DEFAULT_PROGRESS)
    engine = tool_engines.resolve(run.engine or "auto")  # loaded now: one clear error instead of one per worker
    safe_write.check_target(run.progress)
    if not run.out.parent.is_dir():
        raise UserError(f"folder of --out does not exist: {run.out.parent}")
    start = Board.from_pons(run.root.strip())
    if start.moves > plies:
        raise UserError(f"the root has {start.moves} stones, more than --plies {plies}")
    done = read_progress(run.progress)
    key, board, line = canonical_position(start, run.root.strip())
    frontier: dict[int, tuple[Board, str]] = {key: (board, line)}
    pool = None if run.dry_run else pools.worker_processes(run.workers)  # the shared pool's workers: Ctrl-C is ours
    try:
        for ply in range(start.moves, plies + 1):
            solve = ply >= max(min_plies, 1) and solves_at(ply, side)  # ply 0: the agent's fixed move
            todo = [line for key, (_, line) in frontier.items()
                    if solve and (key not in done or (run.retry and done[key].score is None))]
            print(f"ply {ply}: {len(frontier)} positions, {len(todo) if solve else 0} to solve ({engine})", flush=True)
            if todo and pool is not None:
                solve_all(pool, solve_position, todo, run.seconds, engine, run.progress, done, f"ply {ply}", run.bars)
            if ply == plies:
                break
            kids: list[tuple[Board, str]] = []
            for key, (board, line) in frontier.items():
                known = done.get(key) if solves_at(ply, side) else None
                if ply == 0 and side == "first":  # the agent's fixed first move
                    known = SolvedPosition(key, line, None, POLICY.opening_move, 0, 0.0)
                if easy(known, run.easy_nodes):
                    continue  # the agent solves it, and what follows, itself
                if known is not None and known.move is not None and (side != "both" or ply == 0):
                    kids += book_child(board, line, known.move)
                else:
                    kids += children(board, line)
            frontier = next_frontier(kids)
    except BaseException:
        if pool is not None:
            pools.terminate(pool)  # mid-solve: its workers ignore Ctrl-C
        raise
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if run.dry_run:
        return 0
    n = write_book(done, run.out, run.easy_nodes)
    unsolved = sum(1 for r in done.values() if r.score is None)
    n_easy = sum(1 for r in done.values() if easy(r, run.easy_nodes))
    print(f"wrote {run.out}: {n} entries ({run.out.stat().st_size} bytes); {n_easy} easy positions left to the "
          f"agent; {unsolved} positions unsolved within {run.seconds:g} s")
    return 0


def info(path: Path = DEFAULT_BOOK) -> int:
    """Print a book file's entries, depth, size and load time; 0."""
    path = Path(path)
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

