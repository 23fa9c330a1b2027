"""Benchmark: the opening book's size against the search it leaves to the agent.

Replays a book build's progress file (no solving) for several cut-offs:
``--easy-nodes`` (positions solved in fewer nodes are left out) and the
deepest ply kept.  For each it reports the entries, the file size raw and
compressed (as the bundler embeds it), the time to load it, and the largest
search left to the agent on the book's tree: the most nodes any position it
can meet outside the book needs (weak + exact solve, empty table).

    cxforge bench book [--progress runs/book/progress.jsonl]
"""

from __future__ import annotations

import base64
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from agents.board import Board
from agents.solver.book import NO_MOVE, Book, BookEntry
from agents.solver.policy import POLICY
from connectx_forge.errors import UserError
from connectx_forge.solver.book_builder import (
    DEFAULT_PROGRESS,
    SolvedPosition,
    book_child,
    canonical_position,
    children,
    next_frontier,
    read_progress,
    solves_at,
)
from connectx_forge.table import render

CUTS = [(100_000, 99), (300_000, 99), (1_000_000, 99), (3_000_000, 99), (100_000, 16), (100_000, 12),
        (100_000, 8)]


def walk(done: dict[int, SolvedPosition], side: str, easy_nodes: int,
         max_plies: int) -> tuple[list[SolvedPosition], int, int]:
    """The book entries for one cut-off, the largest search left, and the positions met but not solved."""
    key, board, line = canonical_position(Board(), "")
    frontier = {key: (board, line)}
    kept: list[SolvedPosition] = []
    worst = missing = 0
    for ply in range(0, 43):
        kids: list[tuple[Board, str]] = []
        for key, (board, line) in frontier.items():
            ours = solves_at(ply, side)
            if ours and ply == 0 and side == "first":
                kids += book_child(board, line, POLICY.opening_move)
            elif ours:
                r = done.get(key)
                if r is None or r.score is None:
                    missing += 1
                    continue
                if r.nodes < easy_nodes or ply > max_plies:
                    worst = max(worst, r.nodes)  # the agent searches this one itself
                    continue
                kept.append(r)
                if r.move is not None:
                    kids += book_child(board, line, r.move)
            else:
                kids += children(board, line)
        frontier = next_frontier(kids)
        if not frontier:
            break
    return kept, worst, missing


@dataclass(frozen=True)
class Cut:
    """One cut-off's book (positions searched in at least ``easy_nodes`` nodes, up to ``max_plies`` moves): its
    ``entries``, its size in ``bytes`` and once ``embedded`` (compressed, base64), its load time, the largest
    search it leaves to the agent, and how many positions the walk met that the build never solved."""

    easy_nodes: int
    max_plies: int
    entries: int
    bytes: int
    embedded: int
    load_ms: float
    worst_left: int
    unsolved_met: int


def measure(done: dict[int, SolvedPosition], side: str, easy_nodes: int, max_plies: int) -> Cut:
    """One cut-off's book: entries, sizes, load time, and the largest search it leaves to the agent."""
    kept, worst, missing = walk(done, side, easy_nodes, max_plies)
    book = Book.from_entries([BookEntry(r.key, r.score, r.move if r.move is not None else NO_MOVE)
                              for r in kept if r.score is not None],
                             max((len(r.moves) for r in kept), default=0))
    raw = book.to_bytes()
    packed = base64.b64encode(zlib.compress(raw, 9))
    times = []
    for _ in range(20):  # the fastest of 20: the machine is shared
        start = time.perf_counter()
        Book.from_bytes(zlib.decompress(base64.b64decode(packed)))
        times.append(time.perf_counter() - start)
    load_ms = min(times) * 1e3
    return Cut(easy_nodes, max_plies, len(kept), len(raw), len(packed), load_ms, worst, missing)


def report(progress: Path = Path(DEFAULT_PROGRESS), side: str = "first") -> int:
    """Print the table of every cut-off in ``CUTS`` for a book build's progress file; 0."""
    progress = Path(progress)
    if not progress.is_file():
        raise UserError(f"no progress file at {progress}: build a book first (cxforge book build)")
    done = read_progress(progress)
    rows = []
    for easy_nodes, max_plies in CUTS:
        m = measure(done, side, easy_nodes, max_plies)
        note = f"{m.unsolved_met} positions met that the build never solved" if m.unsolved_met else ""
        rows.append([f"{easy_nodes:,}", "all" if max_plies == 99 else str(max_plies), f"{m.entries:,}",
                     f"{m.bytes:,}", f"{m.embedded:,}", f"{m.load_ms:.2f}", f"{m.worst_left:,}", note])
    headers = ["easy nodes", "max ply", "entries", "bytes", "embedded", "load ms", "largest search left", "note"]
    if not any(row[-1] for row in rows):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    print(render(headers, rows, "markdown", align="rrrrrrrl"[:len(headers)]))
    return 0
