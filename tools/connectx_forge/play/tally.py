"""W/D/L and rule-break counts from one player's side, over any set of games.

The game loop's reports (``match.py``) and the submission checker's verdict
(``tools/connectx_forge/submit/verdict.py``) count games the same way through ``Tally``: a
game is a win, draw or loss for the counted side, and a rule break (invalid,
error, timeout; crash, memory, protocol, load, counted together as ``crashes``)
is counted against whoever made it, and by kind in ``kinds``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from connectx_forge.play.game_record import GameRecord
from connectx_forge.stats import wilson

FAILURE_FIELDS = {"invalid": "invalid", "error": "errors", "timeout": "timeouts",
                  "crash": "crashes", "memory": "crashes", "protocol": "crashes", "load": "crashes"}


class TallyJson(TypedDict):
    """A ``Tally`` as reports print it (``Tally.to_json``): its counts, then each rate (None before any game) and
    its 95% Wilson interval."""

    games: int
    wins: int
    draws: int
    losses: int
    invalid: int
    errors: int
    timeouts: int
    opponent_invalid: int
    opponent_errors: int
    opponent_timeouts: int
    crashes: int
    opponent_crashes: int
    kinds: dict[str, int]
    opponent_kinds: dict[str, int]
    win_rate: float | None
    win_rate_ci95: list[float]
    draw_rate: float | None
    draw_rate_ci95: list[float]
    loss_rate: float | None
    loss_rate_ci95: list[float]


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

    def to_json(self) -> TallyJson:
        """The counts, with each rate and its 95% Wilson interval."""
        n = self.games
        return TallyJson(games=n, wins=self.wins, draws=self.draws, losses=self.losses, invalid=self.invalid,
                         errors=self.errors, timeouts=self.timeouts, opponent_invalid=self.opponent_invalid,
                         opponent_errors=self.opponent_errors, opponent_timeouts=self.opponent_timeouts,
                         crashes=self.crashes, opponent_crashes=self.opponent_crashes, kinds=dict(self.kinds),
                         opponent_kinds=dict(self.opponent_kinds),
                         win_rate=self.wins / n if n else None, win_rate_ci95=list(wilson(self.wins, n)),
                         draw_rate=self.draws / n if n else None, draw_rate_ci95=list(wilson(self.draws, n)),
                         loss_rate=self.losses / n if n else None, loss_rate_ci95=list(wilson(self.losses, n)))
