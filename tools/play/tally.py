"""W/D/L and rule-break counts from one player's side, over any set of games.

The game loop's reports (``match.py``) and the submission checker's verdict
(``tools/submit/verdict.py``) count games the same way through ``Tally``: a
game is a win, draw or loss for the counted side, and a rule break (invalid,
error, timeout; crash, memory, protocol, load, counted together as ``crashes``)
is counted against whoever made it, and by kind in ``kinds``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from connectx_forge.play.game import GameRecord
from connectx_forge.stats import wilson

FAILURE_FIELDS = {"invalid": "invalid", "error": "errors", "timeout": "timeouts",
                  "crash": "crashes", "memory": "crashes", "protocol": "crashes", "load": "crashes"}


@dataclass
class Tally:
    """Results from one side over some games; ``invalid``... count its own rule breaks."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    invalid: int = 0
    errors: int = 0
    timeouts: int = 0
    opponent_invalid: int = 0
    opponent_errors: int = 0
    opponent_timeouts: int = 0
    crashes: int = 0  # crash, memory, protocol and load: only agents in hosts break these ways
    opponent_crashes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # own rule breaks by kind
    opponent_kinds: dict[str, int] = field(default_factory=dict)

    def add(self, rec: GameRecord, mark: int) -> None:
        """Count game ``rec`` from the side of the player with ``mark``."""
        failure = rec.outcome if rec.culprit is not None else None
        self.count(rec.result(mark), failure, own=rec.culprit == mark)

    def count(self, result: str, failure: str | None = None, own: bool = True) -> None:
        """Count one game: ``result`` is win, draw or loss; ``failure`` (invalid, error,
        timeout, crash, memory, protocol, load) is the rule break that ended it, ``own`` when it was ours."""
        self.games += 1
        self.wins += result == "win"
        self.draws += result == "draw"
        self.losses += result == "loss"
        if failure is not None:
            name = ("" if own else "opponent_") + FAILURE_FIELDS[failure]
            setattr(self, name, getattr(self, name) + 1)
            kinds = self.kinds if own else self.opponent_kinds
            kinds[failure] = kinds.get(failure, 0) + 1

    @property
    def win_rate(self) -> float:
        """Wins over games (0 before any game)."""
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        """The counts, with each rate and its 95% Wilson interval."""
        out: dict[str, Any] = asdict(self)
        for name, k in (("win", self.wins), ("draw", self.draws), ("loss", self.losses)):
            out[f"{name}_rate"] = k / self.games if self.games else None
            out[f"{name}_rate_ci95"] = list(wilson(k, self.games))
        return out
