"""Monte Carlo tree search of a few hundred random playouts (UCT): an imperfect opponent unlike the searchers.

The classic MCTS of the ConnectX notebooks: from the root, descend by UCB1
(``C`` = sqrt 2) to a node with an untried column, add that child, play
uniformly random moves to the end of the game, and back the result up (1 a
win, 0.5 a draw, 0 a loss, for the player who moved into each node).  After
``PLAYOUTS`` playouts the most visited column is played.  A win in one ends a
playout at once (both in the tree and in the random part).

The draws come from the process's ``random`` module, which the referee seeds
for each seat (tools/connectx_forge/play/seat_random.py), so a game replays from its seed.
Bundle-safe: the standard library and the game core only.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from agents.board import Board

PLAYOUTS = 300  # mcts's playouts a move
EXPLORE = math.sqrt(2.0)  # UCB1's exploration constant


@dataclass
class Node:
    """A position of the tree: its board, visits, wins for the player who moved into it, children by column."""

    board: Board
    visits: int = 0
    wins: float = 0.0
    children: dict[int, Node] = field(default_factory=dict)
    untried: list[int] = field(default_factory=list)
    result: float | None = None  # the game is over here: the result for the player who moved into it

    def select(self) -> tuple[int, Node]:
        """The child of the highest UCB1 score."""
        log_n = math.log(self.visits)
        return max(self.children.items(),
                   key=lambda kv: kv[1].wins / kv[1].visits + EXPLORE * math.sqrt(log_n / kv[1].visits))


def _expand(node: Node, col: int) -> Node:
    """Add the child after ``col``, noting whether that move ends the game."""
    board = node.board
    result = 1.0 if board.is_winning_move(col) else None
    child_board = board.play(col)
    if result is None and child_board.is_full():
        result = 0.5
    child = Node(child_board, result=result)
    if result is None:
        child.untried = child_board.legal_moves()
        random.shuffle(child.untried)
    node.children[col] = child
    return child


def rollout(board: Board) -> float:
    """A uniformly random game from ``board``: its result for the player who moved into ``board``."""
    sign = 0  # 0: the side to move in ``board`` moves now
    while not board.is_full():
        col = random.choice(board.legal_moves())
        if board.is_winning_move(col):
            return 0.0 if sign == 0 else 1.0
        board = board.play(col)
        sign ^= 1
    return 0.5


def search(board: Board, playouts: int = PLAYOUTS) -> int:
    """The most visited column after ``playouts`` UCT playouts from ``board`` (the side to move's)."""
    root = Node(board, untried=board.legal_moves())
    random.shuffle(root.untried)
    for _ in range(playouts):
        node, path = root, [root]
        while node.result is None and not node.untried and node.children:
            node = node.select()[1]
            path.append(node)
        if node.result is None and node.untried:
            node = _expand(node, node.untried.pop())
            path.append(node)
        value = node.result if node.result is not None else rollout(node.board)
        for n in reversed(path):  # ``value`` is for the player who moved into ``n``
            n.visits += 1
            n.wins += value
            value = 1.0 - value
    return max(root.children.items(), key=lambda kv: kv[1].visits)[0]


def agent(obs: object, config: object) -> int:
    """Kaggle entry point: UCT with ``PLAYOUTS`` random playouts a move (any board size)."""
    board = Board.from_obs(obs, config)
    legal = board.legal_moves()
    if len(legal) == 1:
        return legal[0]
    return int(search(board))
