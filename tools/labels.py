"""Solver labels for training positions: generated, cached and resumable.

Positions come from games between mixed players (uniform random, and
"tactical random": takes a win in one, blocks a loss in one, avoids dropping
under an opponent threat, else random), after an opening of random moves.  Each
finished game is labelled from its last position backwards with the exact
solver's ``analyze`` (every column's score for the side to move), so every
earlier position starts from a transposition table the later ones warmed up.

Early positions can take the pure-Python solver seconds to minutes (the
compiled twin, ``engine="c"``, about 20 times less).  Each
``analyze`` therefore runs under a deadline (``--label-budget``); the first
position of a game that times out, and every earlier one, stays unlabelled.
The network sees early positions only through the ones that finish in time.

Labels are cached as append-only JSON lines, one shard per seed, under
``.cache/labels/``: ``{"game": g, "moves": "4453...", "scores": [...]}`` (Pons
move digits 1-7; ``null`` for a full column), then ``{"game": g, "done": true}``.
A game's records are written together after it is labelled, so a rerun resumes
after the last game written.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from agents.board import Board

DEFAULT_DIR = Path(".cache/labels")


@dataclass(frozen=True)
class Label:
    """One labelled position: Pons move digits and each column's exact score."""

    moves: str
    scores: tuple[int | None, ...]

    def board(self) -> Board:
        return Board.from_pons(self.moves)


def tactical_random(board: Board, rng: random.Random) -> int:
    """A move that wins in one, else blocks a loss in one, else a random safe column."""
    from agents.net.search import _forced

    legal = board.legal_moves()
    wins = [c for c in legal if board.is_winning_move(c)]
    if wins:
        return rng.choice(wins)
    _, moves = _forced(board)
    return rng.choice(moves or legal)


def play_game(rng: random.Random, max_opening: int = 8) -> list[int]:
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


def label_game(moves: list[int], solver, budget_s: float, min_stones: int = 0) -> list[Label]:
    """Labels for the positions of one game before its end, latest first, until one times out.

    ``solver`` is the Python ``Solver`` or its compiled twin ``tools.csolver.CSolver``;
    ``budget_s`` bounds each ``analyze``.
    """
    from agents.solver.search import Timeout

    boards = [Board()]
    for col in moves[:-1]:
        boards.append(boards[-1].play(col))
    digits = "".join(str(c + 1) for c in moves)
    out = []
    for board in reversed(boards):
        if board.moves < min_stones:
            break
        solver.deadline = time.perf_counter() + budget_s
        try:
            scores = solver.analyze(board)
        except Timeout:
            break
        finally:
            solver.deadline = float("inf")
        out.append(Label(digits[:board.moves], tuple(scores)))
    return out


def shard_path(cache_dir: Path, seed: int) -> Path:
    return Path(cache_dir) / f"labels-seed{seed}.jsonl"


def _last_game(path: Path) -> int:
    last = -1
    if path.exists():
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    last = max(last, int(json.loads(line)["game"]))
                except (ValueError, KeyError):
                    continue  # a torn last line from an interrupted run
    return last


def generate(cache_dir: Path, seed: int, games: int, budget_s: float = 1.0,
             min_stones: int = 0, progress: bool = True, engine: str = "python") -> int:
    """Label ``games`` games for shard ``seed`` (resuming after the last one written).

    ``engine`` "c" labels with the compiled twin of the solver (the same scores,
    about 20x faster).

    Returns how many positions were labelled in this call.
    """
    from tqdm import tqdm

    from agents.solver.search import Solver
    from agents.solver.transposition import TranspositionTable

    path = shard_path(cache_dir, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = _last_game(path) + 1
    if engine == "c":
        from tools.csolver import CSolver

        solver = CSolver()
    else:
        solver = Solver(TranspositionTable(1 << 20))
    written = 0
    bar = tqdm(range(start, games), desc=f"labels seed {seed}", disable=not progress,
               initial=start, total=games)
    with open(path, "a", encoding="utf-8") as fh:
        for g in bar:
            rng = random.Random(seed * 1_000_003 + g)
            moves = play_game(rng)
            solver.reset()
            labels = label_game(moves, solver, budget_s, min_stones)
            fh.write("".join(json.dumps({"game": g, "moves": lab.moves, "scores": list(lab.scores)}) + "\n"
                             for lab in labels) + json.dumps({"game": g, "done": True}) + "\n")
            fh.flush()
            written += len(labels)
            bar.set_postfix(positions=written)
    return written


def read_labels(cache_dir: Path) -> Iterator[Label]:
    """Every cached label, shard by shard (duplicates included)."""
    for path in sorted(Path(cache_dir).glob("labels-*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                    yield Label(rec["moves"], tuple(rec["scores"]))
                except (ValueError, KeyError):
                    continue


if __name__ == "__main__":  # python -m tools.labels SEED GAMES [BUDGET [ENGINE]]
    import sys

    seed, games = int(sys.argv[1]), int(sys.argv[2])
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    engine = sys.argv[4] if len(sys.argv) > 4 else "python"
    os.nice(5)
    generate(DEFAULT_DIR, seed, games, budget, engine=engine)
