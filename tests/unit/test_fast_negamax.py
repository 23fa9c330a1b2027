"""tools/connectx_forge/players/fast_negamax.py plays exactly as Kaggle's built-in negamax.

Kaggle's agent breaks ties between equal scores with ``random.choice([True,
False])``.  Fixing that coin to always True (the last equal-best column wins) or
always False (the first one) makes Kaggle's move a function of the position,
and the clone given the same fixed coin must return the same column.  Together
the two settings pin the clone's scores' maximum set at both ends, on every size.
"""

from __future__ import annotations

from types import SimpleNamespace
from unittest.mock import patch

from hypothesis import given, settings

from agents.board import Board
from connectx_forge.play.resolve import resolve
from connectx_forge.players import fast_negamax
from tests.strategies import positions, sizes


def kaggle_negamax(board: Board, coin: bool) -> int:
    """Kaggle's own negamax move with its tie-break coin fixed to ``coin``."""
    import kaggle_environments.envs.connectx.connectx as connectx

    obs = SimpleNamespace(board=board.to_grid(), mark=board.mark)
    config = SimpleNamespace(rows=board.rows, columns=board.columns, inarow=board.inarow)
    with patch.object(connectx, "choice", lambda seq: seq[0] if coin else seq[-1]):
        return connectx.negamax_agent(obs, config)


@settings(deadline=None)
@given(board=sizes(max_side=7).flatmap(lambda s: positions(size=s)))
def test_same_move_as_kaggle_with_the_coin_fixed(board: Board) -> None:
    for coin in (True, False):
        assert fast_negamax.choose(board, lambda coin=coin: coin) == kaggle_negamax(board, coin)


def test_player_spec_resolves() -> None:
    player = resolve("negamax-fast")
    board = Board.from_moves([3, 3, 2])
    obs = {"board": board.to_grid(), "mark": board.mark}
    assert player.new_agent()(obs, {"rows": 6, "columns": 7, "inarow": 4}) in board.legal_moves()
