"""Solver labels for training positions: generated, cached and resumable.

Positions come from games between mixed players (uniform random, and
"tactical random": takes a win in one, blocks a loss in one, avoids dropping
under an opponent threat, else random), after an opening of random moves.  Each
finished game is labelled from its last position backwards with the exact
solver's ``analyze`` (every column's score for the side to move), so every
earlier position starts from a transposition table the later ones warmed up.

Early positions can take the pure-Python solver seconds to minutes (the
C engine, ``engine="c"``, about 20 times less).  Each
``analyze`` therefore runs under a deadline (``--label-budget``); the first
position of a game that times out, and every earlier one, stays unlabelled.
The network sees early positions only through the ones that finish in time.

Labels are cached as append-only JSON lines, one shard per seed, under
``.cache/labels/``: ``{"game": g, "moves": "4453...", "scores": [...]}`` (Pons
move digits 1-7; ``null`` for a full column), then ``{"game": g, "done": true}``.
A game's records are written together after it is labelled, so a rerun resumes
after the last game written.

The opening book's build (``cxforge book build``) solves far earlier positions
than games can afford: its ``book_labels`` (tools/connectx_forge/solver/book_builder.py) turns its progress file into
labels.
Every position where the book's opponent is to move has all its children
solved (a full ``Label``); the book side's own positions have their score and
best move (a ``BestMove``).  ``cxforge labels book PROGRESS`` writes
them to one gzipped shard, ``labels-book.jsonl.gz``:
``{"moves": "...", "scores": [...]}`` or ``{"moves": "...", "best": c, "score": s}``
(``c`` a 0-based column).

The command line is ``cxforge labels generate|book|pack`` (tools/connectx_forge/solver/labels_cmd.py).
"""

from __future__ import annotations

import gzip
import io
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agents.board import Board
from agents.net.tree import forced_moves
from agents.solver.engine import Engine
from agents.solver.search import Timeout
from connectx_forge import progress as progress_bars
from connectx_forge import safe_write, tool_engines
from connectx_forge.boundedread import MAX_DEPTH, MAX_LINE, loads, too_deep

DEFAULT_DIR = Path(".cache/labels")


@dataclass(frozen=True)
class Label:
    """One labelled position: Pons move digits and each column's exact score."""

    moves: str
    scores: tuple[int | None, ...]

    def board(self) -> Board:
        return Board.from_pons(self.moves)


@dataclass(frozen=True)
class BestMove:
    """A position known only by its exact score and one best move (0-based column)."""

    moves: str
    move: int
    score: int

    def board(self) -> Board:
        return Board.from_pons(self.moves)


def win_score(board: Board) -> int:
    """The exact score of winning with the next stone (Pons: 22 minus the winner's stones)."""
    return (board.geo.rows * board.geo.columns + 1 - board.moves) // 2


def write_shard(path: Path, records: Iterator[Label | BestMove]) -> int:
    """Write labels to a (gzipped when the name ends in .gz) JSON-lines shard; returns the count."""
    count = 0
    buf = io.BytesIO()
    # mtime 0: reproducible bytes
    raw = gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) if str(path).endswith(".gz") else buf
    with io.TextIOWrapper(raw, encoding="utf-8", write_through=True) as fh:
        for rec in records:
            if isinstance(rec, BestMove):
                fh.write(json.dumps({"moves": rec.moves, "best": rec.move, "score": rec.score}) + "\n")
            else:
                fh.write(json.dumps({"moves": rec.moves, "scores": list(rec.scores)}) + "\n")
            count += 1
        fh.flush()
        if raw is not buf:
            raw.close()  # the gzip trailer, before the bytes are taken
        safe_write.write_bytes(path, buf.getvalue(), replace=True)
    return count


def tactical_random(board: Board, rng: random.Random) -> int:
    """A move that wins in one, else blocks a loss in one, else a random safe column."""
    legal = board.legal_moves()
    wins = [c for c in legal if board.is_winning_move(c)]
    if wins:
        return rng.choice(wins)
    _, moves = forced_moves(board)
    return rng.choice(moves or legal)


def random_game_moves(rng: random.Random, max_opening: int = 8) -> list[int]:
    """The moves of one game between two players drawn at random, after random opening moves."""
    styles = [rng.random() < 0.25 for _ in range(2)]  # True: uniform random side
    board, moves = Board(), []
    opening = rng.randint(0, max_opening)
    while not board.is_over():
        if board.moves < opening or styles[board.moves % 2]:
            col = rng.choice(board.legal_moves())
        else:
            col = tactical_random(board, rng)
        board = board.play(col)
        moves.append(col)
    return moves


def label_game(moves: list[int], solver: Engine, budget_s: float, min_stones: int = 0) -> list[Label]:
    """Labels for the positions of one game before its end, latest first, until one times out.

    ``solver`` is a solver engine (``agents.solver.engine``: the Python ``Solver`` or its C engine);
    ``budget_s`` bounds each ``analyze``.
    """
    boards = [Board()]
    for col in moves[:-1]:
        boards.append(boards[-1].play(col))
    digits = "".join(str(c + 1) for c in moves)
    out = []
    for board in reversed(boards):
        if board.moves < min_stones:
            break
        try:
            scores = solver.analyze(board, deadline=time.perf_counter() + budget_s)
        except Timeout:
            break
        out.append(Label(digits[:board.moves], tuple(scores)))
    return out


def shard_path(cache_dir: Path, seed: int) -> Path:
    return Path(cache_dir) / f"labels-seed{seed}.jsonl"


def _last_game(path: Path) -> int:
    last = -1
    if path.exists():
        with open(path, encoding="utf-8") as fh:
            for rec in _records(fh):
                if not isinstance(rec, dict):
                    continue  # no game's marker: a JSON value other than an object (the read below skips it too)
                try:
                    last = max(last, int(rec["game"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a label line
    return last


def generate(cache_dir: Path, seed: int, games: int, budget_s: float = 1.0,
             min_stones: int = 0, progress: bool = True, engine: str = "python") -> int:
    """Label ``games`` games for shard ``seed`` (resuming after the last one written).

    ``engine`` "c" labels with the C engine of the solver (the same scores,
    about 20x faster), "auto" with it where it loads.

    Returns how many positions were labelled in this call.
    """
    path = shard_path(cache_dir, seed)
    safe_write.check_target(path)
    start = _last_game(path) + 1
    solver = tool_engines.engine(engine, py_entries=1 << 20)
    written = 0
    with safe_write.open_append(path) as fh, \
            progress_bars.bar(games, f"labels seed {seed}", unit="game", enabled=progress,
                              plan=f"cxforge labels: seed {seed}: {progress_bars.count(max(0, games - start), 'game')} "
                                   "to play and label") as bar:
        bar.already(min(start, games))
        for g in range(start, games):
            rng = random.Random(seed * 1_000_003 + g)
            moves = random_game_moves(rng)
            solver.reset()
            labels = label_game(moves, solver, budget_s, min_stones)
            fh.write("".join(json.dumps({"game": g, "moves": lab.moves, "scores": list(lab.scores)}) + "\n"
                             for lab in labels) + json.dumps({"game": g, "done": True}) + "\n")
            fh.flush()
            written += len(labels)
            bar.set_postfix(positions=written)
            bar.update()
    return written


def shards(cache_dir: Path) -> list[Path]:
    """The label shards in a folder (``labels-*.jsonl``, gzipped or not), in name order."""
    return sorted(p for p in Path(cache_dir).glob("labels-*.jsonl*") if p.name.endswith((".jsonl", ".jsonl.gz")))


def _records(fh: IO[str]) -> Iterator[object]:
    """The JSON value of each line of a shard, read within ``boundedread``'s bounds (a line of at most
    ``MAX_LINE`` characters, nested at most ``MAX_DEPTH`` deep: json recurses per level); a line that is none
    is skipped, as a torn one is (a shard may be anyone's: a shared cache, a downloaded dataset)."""
    while line := fh.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE or too_deep(line, MAX_DEPTH):
            continue
        try:
            yield loads(line)
        except ValueError:
            continue


def read_labels_file(path: Path) -> Iterator[Label | BestMove]:
    """The labels of one shard, in order."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for rec in _records(fh):
            if not isinstance(rec, dict):
                continue  # no label: a JSON value other than an object (the reads below skip it too)
            try:
                if "best" in rec:
                    yield BestMove(rec["moves"], int(rec["best"]), int(rec["score"]))
                else:
                    yield Label(rec["moves"], tuple(rec["scores"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn line, or a game's "done" marker


def read_labels(cache_dir: Path) -> Iterator[Label | BestMove]:
    """Every cached label, shard by shard (duplicates included)."""
    for path in shards(cache_dir):
        yield from read_labels_file(path)


def packed_path(shard: Path, dst: Path) -> Path:
    """Where ``pack`` writes the gzipped copy of ``shard`` in the dataset folder ``dst``."""
    return Path(dst) / (shard.name if shard.name.endswith(".gz") else shard.name + ".gz")


def pack(src: Path, dst: Path) -> list[Path]:
    """Gzipped copies in ``dst`` of every shard in ``src`` (torn lines dropped): a dataset to commit."""
    out = []
    for path in shards(src):
        target = packed_path(path, dst)
        write_shard(target, read_labels_file(path))
        out.append(target)
    return out
