"""The line after a match or a tournament that says how to see why a player lost: the exact ``cxforge review``
command for its games.

A table of wins and losses says how often, not why; ``cxforge review`` says why
(each move judged by the solver, the first losing move of each lost game).  The
review reads a games file (``--save``), not a results store, so a run without
``--save`` is told to rerun with it: a stored run then writes its games from the
store without playing them again.  The line goes to stderr, so ``--json`` keeps
stdout one JSON object.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from connectx_forge.games.catalog import CONNECTX

DEFAULT_FILE = "games.jsonl"  # the file the line suggests when the run saved none


def hint(command: str, us: str, save: Path | None, stored: bool) -> str:
    """The line for ``cxforge COMMAND`` whose player of interest is labelled ``us`` in its saved games; ``save``:
    the run's ``--save`` file (None: none); ``stored``: the run kept its games in a results store."""
    review = f"cxforge review {shlex.quote(str(save or DEFAULT_FILE))} --us {shlex.quote(us)}"
    if save is not None:
        return f"cxforge {command}: to see why {us} lost: {review} (--summary: where; --html DIR: the replays)"
    again = " (the store's games are written, none played again)" if stored else ""
    return f"cxforge {command}: to see why {us} lost: rerun with --save {DEFAULT_FILE}{again}, then {review}"


def print_hint(command: str, us: str, save: Path | None, stored: bool, lost: int, game: str = CONNECTX) -> None:
    """``hint`` on stderr, where ``us`` lost ``lost`` > 0 games (after a clean sweep there is nothing to see) of
    ConnectX (review's solver is ConnectX's)."""
    if lost > 0 and game == CONNECTX:
        print(hint(command, us, save, stored), file=sys.stderr)
