"""``net-search``: the policy+value network guiding an alpha-beta search under a time budget.

Each move runs iterative deepening negamax with alpha-beta and a transposition
table.  The policy orders moves, the value head scores the horizon, and exact
tactics prune the tree everywhere:

* a side that can complete a line does so (a win);
* a side facing two playable opponent wins has lost; facing one, it must block;
* moves that drop a stone right under an opponent's winning cell are avoided
  (Pons' non-losing moves) unless nothing else is left.

The root therefore always takes a win in one and blocks a loss in one.  The
search stops when its budget (default 0.3 s, capped at 1.5 s) runs out and plays
the best move of the deepest finished iteration.

From ``ENDGAME_STONES`` stones on, the exact solver (agents/solver) first gets
half the budget to analyze the position; when it finishes, its best-scoring
move is played (perfect endgame play), else the network search takes over.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from agents.board import Board, cell_columns, playable_cells, safe_moves, standard_board, winning_cells
from agents.net.features import VERSION, encode
from agents.net.mlp import MLP, checked, load_mlp
from agents.resources import read_data

DEFAULT_BUDGET_S = 0.3
MAX_BUDGET_S = 1.5  # Kaggle allows 2 s a move; keep a margin for load and overhead
WIN = 10.0  # beyond any network value (those lie in [-1, 1])
ENDGAME_STONES = 20


@lru_cache(maxsize=1)
def search_net() -> MLP:
    """The policy+value network behind ``net-search`` (loaded once).

    It has its own weight file so that retraining ``net`` does not silently
    change an agent whose strength was measured with these weights.
    """
    return checked(load_mlp(read_data("net_search_weights.npz")), "net_search_weights.npz", VERSION)


class _Timeout(Exception):
    """The search ran out of time."""


def forced_moves(board: Board) -> tuple[float | None, list[int]]:
    """Exact tactics at ``board``: a known value, or the moves worth searching.

    Returns ``(value, [])`` when the position is decided within one move each,
    else ``(None, moves)`` with the moves that do not lose at once.  Built on the
    game core's threat functions, but not the solver's ``non_losing_moves``: a
    lone opponent threat is always blocked here, even when the block lies right
    under another opponent threat cell (there the solver's rule keeps no move and
    this one keeps the block, which the search then finds lost one ply deeper).
    """
    geo = board.geo
    own, mask = board.current, board.mask
    playable = playable_cells(mask, geo)
    if winning_cells(own, mask, geo) & playable:
        return WIN - board.moves * 0.01, []
    if not playable:  # board full
        return 0.0, []
    opp_wins = winning_cells(own ^ mask, mask, geo)
    must = opp_wins & playable
    if must:
        if must & (must - 1):  # two threats to block: lost
            return -(WIN - (board.moves + 1) * 0.01), []
        return None, cell_columns(must, geo)
    cols = cell_columns(safe_moves(playable, opp_wins), geo)  # no threat to block: not under one
    if not cols:  # every move lets the opponent win
        return -(WIN - (board.moves + 1) * 0.01), []
    return None, cols


class NetSearch:
    """One search: a network, a deadline, a transposition table and node count."""

    def __init__(self, net: MLP, deadline: float) -> None:
        self.net = net
        self.deadline = deadline
        self.table: dict[int, tuple[int, float, list[int]]] = {}
        self.nodes = 0

    def _evaluate(self, board: Board) -> tuple[np.ndarray, float]:
        logits, value = self.net.policy_value(encode(board))
        return logits[0], float(value[0])

    def _ordered(self, board: Board, moves: list[int], logits: np.ndarray | None) -> list[int]:
        if logits is None or len(moves) < 2:
            return moves
        return sorted(moves, key=lambda c: -float(logits[c]))

    def negamax(self, board: Board, depth: int, alpha: float, beta: float) -> float:
        """The value of ``board`` for the side to move, searched ``depth`` plies."""
        self.nodes += 1
        if self.nodes & 63 == 0 and time.perf_counter() > self.deadline:
            raise _Timeout
        value, moves = forced_moves(board)
        if value is not None:
            return value
        key = board.key()
        hit = self.table.get(key)
        if hit is not None and hit[0] >= depth:
            return hit[1]  # exact values only are stored
        if depth == 0:
            _, v = self._evaluate(board)
            self.table[key] = (0, v, moves)
            return v
        if hit is not None:
            order = hit[2]
        else:
            order = self._ordered(board, moves, self._evaluate(board)[0] if len(moves) > 1 else None)
        best, best_move = -WIN * 2, order[0]
        a = alpha
        for col in order:
            v = -self.negamax(board.play(col), depth - 1, -beta, -a)
            if v > best:
                best, best_move = v, col
            a = max(a, v)
            if a >= beta:
                break
        if alpha < best < beta:
            self.table[key] = (depth, best, [best_move] + [c for c in order if c != best_move])
        elif hit is None:
            self.table[key] = (-1, 0.0, [best_move] + [c for c in order if c != best_move])
        return best

    def choose(self, board: Board) -> tuple[int, int, float]:
        """``(move, depth reached, value)`` for the side to move."""
        value, moves = forced_moves(board)
        legal = board.legal_moves()
        logits, v0 = self._evaluate(board)
        if value is not None:
            if value > 0:  # a win in one
                return next(c for c in legal if board.is_winning_move(c)), 1, value
            return max(legal, key=lambda c: (float(logits[c]), -c)), 0, value  # lost or drawn anyway
        order = self._ordered(board, moves, logits)
        if len(order) == 1:
            return order[0], 0, v0
        best_move, best_value, reached = order[0], v0, 0
        empties = board.rows * board.columns - board.moves
        for depth in range(1, empties + 1):
            try:
                scores = {}
                alpha = -WIN * 2
                for col in order:
                    v = -self.negamax(board.play(col), depth - 1, -WIN * 2, -alpha)
                    scores[col] = v
                    alpha = max(alpha, v)
            except _Timeout:
                break
            order = sorted(order, key=lambda c: -scores[c])
            best_move, best_value, reached = order[0], scores[order[0]], depth
            if abs(best_value) >= WIN - 1:  # a proven win or loss: deeper search changes nothing
                break
        return best_move, reached, best_value


_SOLVER: list[Any] = []


def exact_move(board: Board, deadline: float) -> int | None:
    """The solver's best move if its analysis finishes before ``deadline``, else None."""
    from agents.solver.search import Solver, Timeout
    from agents.solver.transposition import TranspositionTable

    if not _SOLVER:
        _SOLVER.append(Solver(TranspositionTable(1 << 18)))
    solver = _SOLVER[0]
    solver.deadline = deadline
    try:
        scores = solver.analyze(board)
    except Timeout:
        return None
    finally:
        solver.deadline = float("inf")
    return max((c for c, v in enumerate(scores) if v is not None),
               key=lambda c: (scores[c], -abs(2 * c - board.columns + 1)))


def search_move(board: Board, budget_s: float = DEFAULT_BUDGET_S, endgame: bool = True) -> int:
    """The move ``net-search`` plays on ``board`` within ``budget_s`` seconds."""
    start = time.perf_counter()
    budget = min(max(budget_s, 0.0), MAX_BUDGET_S)
    if endgame and board.moves >= ENDGAME_STONES and not board.winning_moves():
        move = exact_move(board, start + budget / 2)
        if move is not None:
            return int(move)
    move, _, _ = NetSearch(search_net(), start + budget).choose(board)
    return int(move)


def agent(obs: Any, config: Any) -> int:
    """Kaggle entry point (6x7x4 only)."""
    board = standard_board(obs, config, "net-search")
    return search_move(board)
