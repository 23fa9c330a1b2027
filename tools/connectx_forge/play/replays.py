"""``--save-replays DIR``: each game of another kaggle-environments game as its Kaggle replay, one file a game.

A game other than ConnectX keeps its result and a digest in a games file (``--save``); its steps, what
``cxforge replay`` renders, are the replay kaggle-environments made (``env.toJSON()``), which the referee hands
back with the record (``GameRecord.replay``, never stored in a results store).  Each is written, as the game
ends, to ``DIR/<pairing>-<A's seat>-<seed>.json`` (a new file, never through a link).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from connectx_forge import safe_write
from connectx_forge.errors import UserError
from connectx_forge.play.game_record import GameRecord

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def replay_name(rec: GameRecord) -> str:
    """The file a game's replay is written to: its pairing (or players), A's seat and seed, as a plain name."""
    pairing = rec.pairing or f"{rec.players[rec.a_seat - 1]} vs {rec.players[2 - rec.a_seat]}"
    return f"{UNSAFE.sub('_', pairing)[:80]}-{'AB'[rec.a_seat - 1]}-{rec.seed}.json"


class ReplayFolder:
    """The replays of the games given to ``add``, written into ``folder`` (made when the first comes)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def add(self, rec: GameRecord) -> None:
        """Write ``rec``'s replay (ConnectX's games have none here: ``cxforge replay`` reads their moves)."""
        if rec.replay is None:
            return
        target = self.folder / replay_name(rec)
        try:
            safe_write.make_folder(self.folder)
            safe_write.write_text(target, json.dumps(rec.replay), replace=True)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
        self.count += 1
