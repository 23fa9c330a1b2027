"""Filling the book: every position up to N stones, scored exactly (the command: ``cxforge book fill``).

``book build`` follows the agent's own game tree, so a position off it (a game
under review, an opening suite's start, a held-out set) meets no book, and
below about ten stones no solve finishes within a move's time.  ``book fill
--stones N`` closes that gap for the first N stones:

1. every position of N + 1 stones reachable from ``--root`` (mirrors folded,
   finished games left out) gets one exact solve, in parallel, each result
   appended to a progress file as it comes (``--progress``; the easy checks
   of step 3 go beside it, ``easy_progress``), so a stopped run resumes;
2. every position of up to N stones is then scored by minimax over its
   children (no solve: a win in one scores by rule, the rest from the level
   below), with the best move in the agent's centre-first order among ties;
3. the book keeps every entry it had, unchanged, and gains the positions it
   lacks that the agent cannot solve in time (``book build``'s
   ``--easy-nodes`` rule, checked with the same solve from an empty table).

``--shard K/N`` splits step 1 across machines: a run solves only every N-th
leaf (in key order, from the K-th) and writes no book.  Concatenate the shards'
progress files and run once more without ``--shard``: it finds every leaf
solved and goes on to steps 2 and 3.

Positions the book already holds must get the same score from the minimax:
a mismatch is an error, not a warning.  Because old entries stay and easy
positions stay out, the agent's games from the empty board meet the same book
moves as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from agents.board import Board
from agents.solver import engine as engines
from agents.solver.book import Book, BookEntry, BookError
from agents.solver.position import layout
from agents.solver.search import Timeout
from connectx_forge import safe_write, tool_engines
from connectx_forge.errors import UserError
from connectx_forge.play.worker_pool import worker_pool
from connectx_forge.solver.book_builder import (
    BookRun,
    SolvedPosition,
    canonical_position,
    children,
    easy,
    next_frontier,
    read_progress,
    save_book,
    solve_all,
    solve_position,
)
from connectx_forge.train.labels import win_score

DEFAULT_FILL_PROGRESS = "runs/book/fill.jsonl"
FILL_STONES = 6  # the shipped book's fill (its seven-stone solves take hours of CPU: docs/solver.md)
EASY_CAP_S = {"c": 0.2, "python": 2.0}  # well past --easy-nodes for each engine: a longer solve is not easy

Level = dict[int, tuple[Board, str]]  # canonical key -> (board, Pons move string), one ply


def levels(root: Board, line: str, stones: int) -> list[Level]:
    """The positions from ``root`` to ``stones`` stones, one dict a ply (index 0: the root's ply)."""
    key, board, line = canonical_position(root, line)
    out: list[Level] = [{key: (board, line)}]
    while out[-1] and len(out) - 1 + root.moves < stones:
        out.append(next_frontier(kid for board, line in out[-1].values() for kid in children(board, line)))
    return out


# -- solving (worker processes) -----------------------------------------------------------
_SOLVERS: dict[str, engines.Engine] = {}  # the worker's solver: its table persists, since every stored bound stays true


def solve_exact(line: str, seconds: float, engine: str) -> SolvedPosition:
    """The exact score of the position after ``line`` (no best move), from this worker's warm table."""
    solver = _SOLVERS.get(engine)
    if solver is None:
        solver = _SOLVERS[engine] = tool_engines.engine(engine)
    board = Board.from_pons(line)
    start = time.perf_counter()
    first = solver.nodes
    try:
        score: int | None = solver.solve(board, deadline=start + seconds)
    except Timeout:
        score = None  # a search cut off by its deadline stores nothing, so the table stays sound
    return SolvedPosition(board.key(), line, score, None, solver.nodes - first, time.perf_counter() - start)


def run_pool(solve: Callable[[str, float, str], SolvedPosition], lines: list[str], seconds: float, engine: str,
             workers: int, progress: Path, done: dict[int, SolvedPosition], label: str, bars: bool) -> None:
    """``solve(line, seconds, engine)`` for each line on ``workers`` processes (``book.solve_all``)."""
    if lines:
        with worker_pool(workers) as pool:  # the shared pool: Ctrl-C stops its workers mid-solve
            solve_all(pool, solve, lines, seconds, engine, progress, done, label, bars)


# -- minimax ------------------------------------------------------------------------------------
def back_up(board: Board, known: dict[int, int]) -> tuple[int, int] | None:
    """``(score, best column)`` of ``board`` from its children's scores in ``known``; None if one is missing.

    Ties go to the column the agent's search tries first (centre first).
    """
    best: tuple[int, int] | None = None
    for col in layout().order:
        if not board.can_play(col):
            continue
        if board.is_winning_move(col):
            score = win_score(board)
        else:
            child = board.play(col)
            if child.is_full():
                score = 0
            else:
                child_score = known.get(canonical_position(child, "")[0])
                if child_score is None:
                    return None
                score = -child_score
        if best is None or score > best[0]:
            best = (score, col)
    return best


# -- the fill ----------------------------------------------------------------------------------
def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)`` with 1 <= K <= N; a UserError naming the flag otherwise."""
    k, sep, n = text.partition("/")
    if sep and k.strip().isdigit() and n.strip().isdigit() and 1 <= int(k) <= int(n):
        return int(k), int(n)
    raise UserError(f"--shard must be K/N with 1 <= K <= N (for example 1/2), got {text!r}")


def fill(stones: int, run: BookRun | None = None, shard: tuple[int, int] | None = None) -> int:
    """Add every position of up to ``stones`` stones below ``run.root`` to the book at ``run.out``; 0.

    ``run.seconds`` (default 600) limits each exact solve of the last level; a
    position whose subtree has an unsolved leaf is left out (and counted).
    Results go to ``run.progress`` (default ``DEFAULT_FILL_PROGRESS``).
    ``shard`` ``(K, N)``: solve only the leaves K, K + N, K + 2N, ... (from 1, in
    key order) and stop there, without a book: the shards' progress files,
    concatenated, let a run without ``shard`` write it.
    """
    if not 0 <= stones <= 40:
        raise UserError(f"--stones must be between 0 and 40, got {stones}")
    if shard is not None and not 1 <= shard[0] <= shard[1]:
        raise UserError(f"--shard must be K/N with 1 <= K <= N, got {shard[0]}/{shard[1]}")
    run = (run if run is not None else BookRun()).settled(600.0, DEFAULT_FILL_PROGRESS)
    start = Board.from_pons(run.root.strip())
    if start.moves > stones:
        raise UserError(f"the root has {start.moves} stones, more than --stones {stones}")
    if not run.out.parent.is_dir():
        raise UserError(f"folder of --out does not exist: {run.out.parent}")
    try:
        book = Book.from_bytes(run.out.read_bytes()) if run.out.exists() else Book.empty()
    except (OSError, BookError) as exc:
        raise UserError(f"cannot read the book {run.out}: {exc}") from None
    engine = tool_engines.resolve(run.engine or "auto", check=False)  # checked after the dry run
    tree = levels(start, run.root.strip(), stones + 1)  # the last level is the leaves (empty if every game ended)
    leaves, have = tree[-1], set(book.keys)
    new = [(key, line) for lv in tree[:-1] for key, (board, line) in lv.items() if key not in have and board.moves]
    for ply, lv in enumerate(tree, start.moves):
        print(f"ply {ply}: {len(lv)} positions", flush=True)
    print(f"{len(leaves)} positions of {stones + 1} stones to solve, {len(new)} of up to {stones} not in the book "
          f"({engine})", flush=True)
    if run.dry_run:
        return 0
    tool_engines.resolve(engine)  # loads now: one clear error instead of one per worker
    safe_write.check_target(run.progress)
    done, easy_file = read_progress(run.progress), easy_progress(run.progress)
    ordered = sorted(leaves.items())
    if shard is not None:
        ordered = ordered[shard[0] - 1::shard[1]]
    todo = [line for key, (_, line) in ordered if key not in done or (run.retry and done[key].score is None)]
    run_pool(solve_exact, todo, run.seconds, engine, run.workers, run.progress, done, f"solve {stones + 1}", run.bars)
    if shard is not None:
        solved = sum(1 for key, _ in ordered if key in done and done[key].score is not None)
        print(f"shard {shard[0]}/{shard[1]}: {solved} of its {len(ordered)} positions solved, in {run.progress}; "
              f"no book written (concatenate the shards' progress files and run without --shard)", flush=True)
        return 0
    checked = read_progress(easy_file)
    todo = [line for key, line in new if key not in checked]
    run_pool(solve_position, todo, EASY_CAP_S[engine], engine, run.workers, easy_file, checked, "easy?", run.bars)
    return write(book, tree, done, checked, run.out, run.easy_nodes, stones)


def easy_progress(progress: Path) -> Path:
    """Where the easy checks go, beside the solves' progress file (``fill.jsonl``: ``fill.easy.jsonl``).

    Apart, because a check cut off at its short limit says "not easy", not "unsolved": a later fill
    with more stones must not take it for a leaf still to solve.
    """
    return progress.with_name(f"{progress.stem}.easy{progress.suffix}")


def write(book: Book, tree: list[Level], done: dict[int, SolvedPosition], checked: dict[int, SolvedPosition], out: Path,
          easy_nodes: int, stones: int) -> int:
    """Score the inner levels by minimax, merge the new hard positions into ``book``, write ``out``; 0.

    ``done``: the exact solves (only the leaves' are used); ``checked``: the easy checks.
    """
    known = {key: r.score for key, r in done.items() if r.score is not None and key in tree[-1]}
    added: list[BookEntry] = []
    missing = 0
    have = set(book.keys)
    for lv in reversed(tree[:-1]):
        for key, (board, _) in lv.items():
            found = back_up(board, known)
            if found is None:
                missing += 1
                continue
            known[key] = found[0]
            if key in have:
                old = book.lookup(board.current, board.mask)
                if old is not None and old[0] != found[0]:
                    raise UserError(f"{lv[key][1] or 'the empty board'}: the book says {old[0]}, "
                                    f"its children say {found[0]}")
            elif board.moves and not easy(checked.get(key), easy_nodes):  # the empty board: the fixed opening
                added.append(BookEntry(key, found[0], found[1]))
    entries = book.entries() + added
    size = save_book(Book.from_entries(entries, max(book.max_moves, stones if added else -1)), out)
    unsolved = sum(1 for key in tree[-1] if key not in known)
    print(f"wrote {out}: {len(entries)} entries ({size} bytes), {len(added)} new; "
          f"{missing} positions left out for {unsolved} unsolved of {stones + 1} stones", flush=True)
    return 0

