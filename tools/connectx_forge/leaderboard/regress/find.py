"""The first losing move of our side in a lost game, with the solver's verdict on every move there.

As ``cxforge review`` marks it (``tools/connectx_forge/leaderboard/review/annotate.py``): our first move from a won or
drawn position
to a lost one.  Only our moves are solved, from the first, and the search stops at that move, so a long game
costs no more than its opening.  A game lost without one (a value the solver did not reach in time, or a rule
broken) gives no case.
"""

from __future__ import annotations

from agents.board import Board
from connectx_forge.leaderboard.regress.data import Case
from connectx_forge.leaderboard.review.annotate import wdl_name
from connectx_forge.leaderboard.review.games import Game
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.summary import pons_moves


def first_losing_case(game: Game, mark: int, labeller: Labeller) -> Case | None:
    """The regression case of ``mark``'s first losing move in ``game`` (see ``data``), or None."""
    board = Board(*game.size)
    for i, col in enumerate(game.moves):
        if board.mark == mark and i >= game.opening:
            position = labeller.position(board, col)
            before, after = position.before.wdl, position.moves[col].wdl
            if before is not None and before >= 0 and after == -1:
                return Case(moves=pons_moves(game.moves[:i]), bad_column=col,
                            holding_columns=sorted(c for c, v in position.moves.items()
                                                   if v.wdl is not None and v.wdl >= 0),
                            losing_columns=sorted(c for c, v in position.moves.items() if v.wdl == -1),
                            best_columns=position.best(), value=wdl_name(before), source=game.source,
                            episode_id=game.episode_id, us=game.names[mark - 1])
        board = board.play(col)
    return None
