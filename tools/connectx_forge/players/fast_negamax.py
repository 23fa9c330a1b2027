"""Kaggle's built-in ``negamax`` agent, rewritten on the bitboard and memoised.

kaggle_environments' ``negamax_agent`` searches 4 plies on a list board, tens of
milliseconds a move: too slow to train against for thousands of games.  The clone
is several times faster with an empty memo (``cxforge bench negamax`` measures it) and
far faster once the memo fills.  It computes the same per-column scores, quirks
included (a leaf counts own stones left, right and below the landing cell,
"below" only when the column already holds two stones), and then makes the same
sequence of fair coin flips between equal scores, so it plays with the same
move distribution.
tests/unit/test_fast_negamax.py checks it against Kaggle's code with the coin
fixed both ways.  Scores are memoised by (position, depth) across calls.

Player spec: ``negamax-fast`` (``cxforge match dqn negamax-fast``).  Reported
win rates still use the real ``kaggle:negamax``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from agents.board import Board
from connectx_forge.kaggle_env import load

MAX_DEPTH = 4  # Kaggle's max_depth
_MEMOS: dict[tuple[int, int, int], dict[tuple[int, int], float]] = {}  # per board size
_MEMO_CAP = 2_000_000


def _leaf_score(board: Board, col: int, base: float) -> float:
    """Kaggle's depth-0 score of dropping in ``col``: ``base`` plus own neighbours of the landing cell."""
    geo, own = board.geo, board.current
    drop = (board.mask + geo.bottom_masks[col]) & geo.column_masks[col]
    score = base
    if col > 0 and own & (drop >> geo.height):
        score += 1
    if col < geo.columns - 1 and own & (drop << geo.height):
        score += 1
    # Kaggle also tests the cell above, which is always empty; "below" counts only from height 2 on.
    if board.height(col) >= 2 and own & (drop >> 1):
        score += 1
    return score


def _memo(board: Board) -> dict[tuple[int, int], float]:
    geo = board.geo
    memo = _MEMOS.setdefault((geo.rows, geo.columns, geo.inarow), {})
    if len(memo) >= _MEMO_CAP:
        memo.clear()
    return memo


def _value(board: Board, depth: int, memo: dict[tuple[int, int], float]) -> float:
    """Kaggle's ``negamax(board, mark, depth)`` score for the side to move."""
    memo_key = (board.key(), depth)
    hit = memo.get(memo_key)
    if hit is None:
        scores = column_scores(board, depth, memo)
        hit = memo[memo_key] = 0.0 if scores is None else max(s for _, s in scores)
    return hit


def column_scores(board: Board, depth: int = MAX_DEPTH,
                  memo: dict[tuple[int, int], float] | None = None) -> list[tuple[int, float]] | None:
    """Each legal column's score as Kaggle's negamax sees it; ``None`` on a full board.

    When the side to move can win at once, only the first winning column is listed,
    as Kaggle returns it before looking at any other.
    """
    geo = board.geo
    size = geo.rows * geo.columns
    if board.moves == size:
        return None
    base = (size + 1 - board.moves) / 2
    legal = board.legal_moves()
    for col in legal:
        if board.is_winning_move(col):
            return [(col, base)]
    if depth <= 0:
        return [(col, _leaf_score(board, col, base)) for col in legal]
    memo = _memo(board) if memo is None else memo
    return [(col, -_value(board.play(col), depth - 1, memo)) for col in legal]


def choose(board: Board, coin: Callable[[], bool]) -> int:
    """Kaggle's move: the column loop with its fair coin between equal scores."""
    scores = column_scores(board)
    if not scores:
        raise ValueError("negamax has no move on a full board")
    best_col, best = None, -float(board.rows * board.columns)
    for col, score in scores:
        if score > best or (score == best and coin()):
            best_col, best = col, score
    return best_col if best_col is not None else scores[0][0]


def make_agent(rng: random.Random | None = None) -> Callable[[object, object], int]:
    """A Kaggle-style ``agent(obs, config)`` drawing its coin flips from ``rng``.

    Without ``rng`` it uses the ``random`` module, as Kaggle's agent does, so the
    game loop's per-game seeding makes matches reproducible.
    """
    flip = rng.random if rng is not None else random.random

    def agent(obs: object, config: object) -> int:
        return choose(Board.from_obs(obs, config), lambda: flip() < 0.5)

    return agent


agent = make_agent()


def bench(positions: int = 60, seed: int = 1) -> tuple[float, float]:
    """CPU ms per move of Kaggle's negamax and of this clone with an empty memo, same positions."""
    import time
    from types import SimpleNamespace

    load()  # kaggle_environments, without its noise
    from kaggle_environments.envs.connectx.connectx import negamax_agent

    rng, boards = random.Random(seed), list[Board]()
    while len(boards) < positions:
        board = Board()
        for _ in range(rng.randrange(30)):
            col = rng.choice(board.legal_moves())
            if board.is_winning_move(col):
                break
            board = board.play(col)
        boards.append(board)
    theirs = ours = 0.0
    for board in boards:
        obs = SimpleNamespace(board=board.to_grid(), mark=board.mark)
        start = time.process_time()
        negamax_agent(obs, SimpleNamespace(rows=6, columns=7, inarow=4))
        theirs += time.process_time() - start
        _MEMOS.clear()
        start = time.process_time()
        choose(board, lambda: True)
        ours += time.process_time() - start
    return 1000 * theirs / positions, 1000 * ours / positions

