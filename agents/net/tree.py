"""A network-guided alpha-beta search: the tree of ``net-search``, and the ``solver`` agent's fallback.

``NetSearch(net, deadline).choose(board)`` runs iterative-deepening negamax with
alpha-beta and a transposition table.  The network's policy orders the moves
and its value scores the horizon; exact tactics (``forced_moves``) prune the
tree everywhere:

* a side that can complete a line does so (a win);
* a side facing two playable opponent wins has lost; facing one, it must block;
* moves that drop a stone right under an opponent's winning cell are avoided
  (Pons' non-losing moves) unless nothing else is left.

So the root always takes a win in one and blocks a loss in one.  The search
stops at its deadline and plays the best move of the deepest finished iteration.
It takes any ``MLP`` with a policy and a value head: the module reads no
weights itself, so an agent that uses it embeds only its own network.
"""

from __future__ import annotations

import time

import numpy as np

from agents.board import Board, cell_columns, playable_cells, safe_moves, winning_cells
from agents.net.features import encode
from agents.net.mlp import MLP

WIN = 10.0  # beyond any network value (those lie in [-1, 1])


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
    """One search: a network, a deadline, a transposition table and node count; with ``max_nodes``, the search
    also stops at that many nodes (then it plays the same move on any machine, unless the deadline comes
    first)."""

    def __init__(self, net: MLP, deadline: float, max_nodes: int | None = None) -> None:
        self.net = net
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.table: dict[int, tuple[int, float, list[int]]] = {}
        self.nodes = 0
        self.ranked: list[int] = []  # after ``choose``: the root's searched moves, best first

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
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise _Timeout
        if self.nodes & 63 == 0 and time.perf_counter() > self.deadline:
            raise _Timeout
        value, moves = forced_moves(board)
        if value is not None:
            return value
        key = board.key()
        hit = self.table.get(key)
        if hit is not None and hit[0] >= depth:
            return hit[1]  # exact values only are stored
        if depth == 0:  # the horizon; its moves are kept in the policy's order for the next iteration
            logits, v = self._evaluate(board)
            self.table[key] = (0, v, self._ordered(board, moves, logits))
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
        self.ranked = order
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
            order = self.ranked = sorted(order, key=lambda c: -scores[c])
            best_move, best_value, reached = order[0], scores[order[0]], depth
            if abs(best_value) >= WIN - 1:  # a proven win or loss: deeper search changes nothing
                break
        return best_move, reached, best_value
