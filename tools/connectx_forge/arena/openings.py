"""Opening suites: positions a few plies in, each with its exact score, kept when the game is still open.

A suite holds 6x7 positions after ``plies`` moves, mirror images counted once,
whose exact score (Pons' convention, for the side to move) lies in a band.  The
default band, ``-1:1``, keeps the draws and the narrowest wins and losses (won
or lost with the last stone), so that either side can still win or lose and a
stronger agent shows it from both seats.

Positions are taken in a fixed order that spreads them (sorted by a hash of
their moves) and kept while in the band, up to ``size`` of them: a 4-ply
position takes the compiled solver seconds to minutes (BENCHMARKS.md), so a
suite is as large as it needs to be, not every position.  A larger suite starts
with the smaller one, so any first M openings of a suite are the same.

Scores come from, in order: the labels shipped for that ply count
(``tools/connectx_forge/datasets/openings/scores-K.txt``: the positions after K plies solved so far,
in suite order, computed once by the compiled solver), the opening book
(``agents/data``), and the solver itself (the C engine where it loads,
else the pure-Python search with the book).  A position is named by the moves that first reach it in a
breadth-first walk trying columns left to right.

A suite file is Pons' benchmark format, one ``<moves> <score>`` line per
position, moves as digits 1-7 (so ``cxforge bench solver FILE`` re-checks it),
in suite order.  The same arguments give the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agents.board import Board, BoardError
from agents.solver.book import Book
from connectx_forge import paths, safe_write, tool_engines
from connectx_forge import progress as bars
from connectx_forge.errors import UserError

DATASETS = paths.DATASETS / "openings"
DEFAULT_PLIES = 4
DEFAULT_BAND = (-1, 1)
DEFAULT_SIZE = 30
MAX_PLIES = 8  # positions grow about fourfold a ply; 8 plies is about 100,000 of them
BOOK_PLIES = 6  # up to here the opening book scores every position: a whole band in under a second
CACHE = paths.CACHE / "openings"


@dataclass(frozen=True)
class Opening:
    """One position of a suite: its moves (Pons' digits 1-7) and exact score for the side to move."""

    moves: str
    score: int

    @property
    def columns(self) -> list[int]:
        """The moves as 0-based columns (what ``play_game(opening=...)`` takes)."""
        return [int(ch) - 1 for ch in self.moves]

    def line(self) -> str:
        return f"{self.moves} {self.score}"


def seed_slots(count: int) -> list[Opening]:
    """The "suite" of a game without openings (every game but ConnectX): ``count`` empty starts, each played
    under a seed of its own (the run passes its index as the seed's ``repeat``), so each is a new map where
    the game has one."""
    return [Opening("", 0)] * count


def parse_band(text: str) -> tuple[int, int]:
    """``"LO:HI"`` (inclusive scores, e.g. ``-1:1``) as two ints; ``ValueError`` says what is wrong."""
    parts = text.split(":")
    if len(parts) != 2:
        raise ValueError(f"a band is LO:HI, e.g. -1:1, got {text!r}")
    try:
        lo, hi = int(parts[0]), int(parts[1])
    except ValueError:
        raise ValueError(f"a band is two whole scores LO:HI, e.g. -1:1, got {text!r}") from None
    if lo > hi:
        raise ValueError(f"a band's low end must not be above its high end, got {text!r}")
    return lo, hi


def positions(plies: int) -> list[str]:
    """Every position after ``plies`` moves, one move string per mirror pair, games already won left out.

    Breadth first, parents in order and columns left to right: a position is
    named by the first moves that reach it (or its mirror image).
    """
    if not 1 <= plies <= MAX_PLIES:
        raise UserError(f"--plies must be between 1 and {MAX_PLIES}, got {plies}")
    level: list[tuple[str, Board]] = [("", Board())]
    for _ in range(plies):
        seen: set[int] = set()
        nxt: list[tuple[str, Board]] = []
        for moves, board in level:
            for col in board.legal_moves():
                if board.is_winning_move(col):
                    continue  # the game would be over
                child = board.play(col)
                key = child.canonical_key()
                if key not in seen:
                    seen.add(key)
                    nxt.append((moves + str(col + 1), child))
        level = nxt
    return [moves for moves, _ in level]


def read_suite(path: Path) -> list[Opening]:
    """The openings of a suite file (``<moves> <score>`` lines); ``UserError`` names a bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read opening suite {path}: {exc.strerror or exc}") from None
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError(f"expected '<moves> <score>', got {line!r}")
            board = Board.from_pons(parts[0])
            if board.is_over():
                raise ValueError(f"the game is over after {parts[0]}")
            out.append(Opening(parts[0], int(parts[1])))
        except (ValueError, BoardError) as exc:
            raise UserError(f"{path}:{no}: {exc}") from None
    return out


def write_suite(openings: Iterable[Opening], path: Path | None) -> str:
    """The suite's text; written to ``path`` when given (``UserError`` when it cannot be)."""
    text = "".join(o.line() + "\n" for o in openings)
    if path is not None:
        try:
            safe_write.write_text(path, text, replace=True)  # -o's --force rule: options.prepare
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    return text


def spread(openings: Iterable[Opening]) -> list[Opening]:
    """The suite order: by a hash of the moves, so that any first M are spread over the whole suite."""
    return sorted(openings, key=lambda o: (hashlib.sha256(o.moves.encode()).hexdigest(), o.moves))


def scores_file(plies: int) -> Path:
    """Where the shipped labels of positions after ``plies`` moves live (those solved so far, in suite order)."""
    return DATASETS / f"scores-{plies}.txt"


def suite_file(plies: int) -> Path:
    """Where the shipped suite for ``plies`` lives (default band and size)."""
    return DATASETS / f"plies{plies}.txt"


@cache
def _shipped_scores(plies: int) -> dict[int, int]:
    """Canonical key -> score from the shipped labels of ``plies`` (empty when none are shipped)."""
    path = scores_file(plies)
    if not path.is_file():
        return {}
    return {Board.from_pons(o.moves).canonical_key(): o.score for o in read_suite(path)}


Solve = Callable[[Board], int]


def _solver(engine: str) -> Solve:
    """A function giving a board's exact score: the engine ``engine`` names (C where it loads), with the book."""
    return tool_engines.engine(engine, book=Book.load()).solve


class ExactScorer:
    """Exact scores: the shipped labels, then the opening book, then the solver (made on first need)."""

    def __init__(self, engine: str = "auto") -> None:
        self.engine = engine
        self.book = Book.load()
        self.solve: Solve | None = None
        self.solved = 0  # positions the solver had to solve

    def known(self, moves: str) -> int | None:
        """The score the shipped labels or the book hold, else None."""
        board = Board.from_pons(moves)
        score = _shipped_scores(len(moves)).get(board.canonical_key())
        if score is None and board.moves <= self.book.max_moves:
            score = self.book.score(board.current, board.mask)
        return score

    def __call__(self, moves: str) -> Opening:
        score = self.known(moves)
        if score is None:
            if self.solve is None:
                self.solve = _solver(self.engine)
            score = self.solve(Board.from_pons(moves))
            self.solved += 1
        return Opening(moves, score)


def label(moves: list[str], engine: str = "auto", progress: bool = True) -> list[Opening]:
    """Each position with its exact score (``ExactScorer``)."""
    labeller = ExactScorer(engine)
    with bars.bar(len(moves), "labelling openings", "position", progress,
                  f"cxforge openings: {bars.count(len(moves), 'position')} to label with the solver") as bar:
        out = []
        for m in moves:
            out.append(labeller(m))
            bar.update(1)
    return out


def build_suite(plies: int = DEFAULT_PLIES, band: tuple[int, int] = DEFAULT_BAND, size: int | None = DEFAULT_SIZE,
                engine: str = "auto", progress: bool = True) -> list[Opening]:
    """The suite: positions after ``plies`` moves in suite order, kept while their score is in ``band``
    (inclusive), until there are ``size`` (None: every position in the band)."""
    lo, hi = band
    labeller = ExactScorer(engine)
    suite: list[Opening] = []
    candidates = spread(Opening(m, 0) for m in positions(plies))
    plan = (f"cxforge openings: building the {plies}-ply suite: {bars.count(size or len(candidates), 'opening')} "
            f"in the band {lo}:{hi}, labelled by the solver")
    with bars.bar(size or len(candidates), "building the suite", "opening", progress, plan) as bar:
        for c in candidates:
            if size is not None and len(suite) >= size:
                break
            o = labeller(c.moves)
            if lo <= o.score <= hi:
                suite.append(o)
                bar.update(1)
    return suite


def load_suite(plies: int = DEFAULT_PLIES, band: tuple[int, int] = DEFAULT_BAND, size: int | None = DEFAULT_SIZE,
               engine: str = "auto", progress: bool = True) -> list[Opening]:
    """The suite for ``plies``, ``band`` and ``size`` (None: every position in the band, as the SPRT plays): the
    shipped file, else built once and kept in the user cache (``safe_write``: never through a link)."""
    if (band, size) == (DEFAULT_BAND, DEFAULT_SIZE) and suite_file(plies).is_file():
        return read_suite(suite_file(plies))
    cached = CACHE / f"plies{plies}_band{band[0]}_{band[1]}_size{'all' if size is None else size}.txt"
    if cached.is_file():
        return read_suite(cached)
    suite = build_suite(plies, band, size, engine, progress)
    write_suite(suite, cached)
    return suite
