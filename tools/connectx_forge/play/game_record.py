"""One finished game as every command keeps it: ``GameRecord`` (and ``GameJson``, its line in a games file).

ConnectX's games hold their moves; a game of another kaggle-environments game holds Kaggle's final rewards and
statuses and a digest of its steps (``play/episode.py`` plays it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from agents.board import Size
from connectx_forge.play.rules import KAGGLE_STATUS


class GameJson(TypedDict):
    """A ``GameRecord`` as a games file's line holds it (``GameRecord.to_json``): the keys after ``a_seat`` only
    where they say something, so that the lines of games without them stay as they were."""

    players: list[str]
    size: list[int]
    seed: int
    moves: list[int]
    times: list[float]
    outcome: str
    winner: int | None
    culprit: int | None
    bad_action: str | None
    error: str | None
    index: int
    a_seat: int
    detail: NotRequired[str | None]
    opening: NotRequired[int]
    logs: NotRequired[dict[str, str] | None]
    slowed: NotRequired[str | None]
    run: NotRequired[str | None]
    pairing: NotRequired[str | None]
    game: NotRequired[str]
    rewards: NotRequired[list[float | None]]
    statuses: NotRequired[list[str]]
    trace: NotRequired[str]


@dataclass
class GameRecord:
    """One finished game, in seat terms: seat 1 (mark 1) moves first.

    ``moves`` are the columns played; ``times`` the seconds each move took, one
    per call (so it has one more entry than ``moves`` when the last call broke a
    rule).  ``winner`` is the mark that won (by a line, or because the other
    broke a rule), ``None`` for a draw; ``culprit`` is the mark that broke a rule.
    ``opening`` is how many leading ``moves`` were an opening played before the
    agents' first call (``play_game(opening=...)``): they have no entry in
    ``times``, so ``times[i]`` is the call that played ``moves[opening + i]``.
    ``run`` and ``pairing`` name the run (a tournament's, an SPRT's, a match's) and
    the pairing the game was played in: with its opening, A's seat and its seed
    they are the game's stable key (``records.game_key``), by which a games file
    holds each game once.

    A game other than ConnectX (``game``: its name) has no ``moves``: its result is Kaggle's final ``rewards``
    and ``statuses`` by seat (``outcome``, ``winner`` and ``culprit`` follow from them:
    ``episode_result``), and ``trace`` is a digest of every step's actions, so that two games that went
    alike are known as one (``evidence``).
    """

    players: tuple[str, str]
    size: Size
    seed: int
    moves: list[int]
    times: list[float]
    outcome: str
    winner: int | None = None
    culprit: int | None = None
    bad_action: str | None = None  # repr of an invalid action
    error: str | None = None  # "Type: message" of an exception
    index: int = 0
    a_seat: int = 1  # the seat agent A played in a match
    detail: str | None = None  # one line on how a hosted agent broke (scrubbed of credentials)
    opening: int = 0  # leading entries of ``moves`` that came from the opening, not from the agents
    logs: dict[str, str] | None = None  # mark ("1", "2") -> the agent's stdout and stderr, and its traceback
    slowed: str | None = None  # how --slowdown held the game's hosts (throttle.method; "; " between two ways)
    run: str | None = None  # the run the game belongs to (a store's run name; a match's settings) ...
    pairing: str | None = None  # ... and its pairing "A vs B": with the rest, its stable key (records.game_key)
    game: str | None = None  # a game other than ConnectX: its name, its final rewards and statuses, ...
    rewards: list[float | None] | None = None
    statuses: list[str] | None = None
    trace: str | None = None  # ... and the sha256 of its steps' actions
    # its Kaggle replay, handed back by the referee for --save-replays; never in a games file or a store
    replay: dict[str, object] | None = field(default=None, compare=False, repr=False)

    def result(self, mark: int) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for the player with ``mark``."""
        if self.winner is None:
            return "draw"
        return "win" if self.winner == mark else "loss"

    def kaggle_result(self) -> tuple[list[str], list[int | None]]:
        """The final statuses and rewards kaggle_environments gives this game, by seat."""
        if self.outcome == "draw":
            return ["DONE", "DONE"], [0, 0]
        if self.outcome == "win":
            rewards: list[int | None] = [1, -1] if self.winner == 1 else [-1, 1]
            return ["DONE", "DONE"], rewards
        statuses: list[str] = ["DONE", "DONE"]
        rewards = [0, 0]
        assert self.culprit is not None
        statuses[self.culprit - 1] = KAGGLE_STATUS[self.outcome]
        rewards[self.culprit - 1] = None
        return statuses, rewards

    def to_json(self) -> GameJson:
        """A JSON-ready dict (one line of a games file, see ``records.py``), its keys in the fields' order."""
        out = GameJson(players=list(self.players), size=list(self.size), seed=self.seed, moves=list(self.moves),
                       times=[round(t, 6) for t in self.times], outcome=self.outcome, winner=self.winner,
                       culprit=self.culprit, bad_action=self.bad_action, error=self.error, index=self.index,
                       a_seat=self.a_seat, detail=self.detail, opening=self.opening, logs=self.logs,
                       slowed=self.slowed, run=self.run, pairing=self.pairing)  # not asdict: it deep-copies
        if out["detail"] is None:  # the lines of in-process games stay as they were
            del out["detail"]
        if not out["opening"]:  # so do the lines of games without an opening
            del out["opening"]
        if not out["logs"]:  # and of games whose agents said nothing
            del out["logs"]
        if out["slowed"] is None:  # and of games not slowed down
            del out["slowed"]
        if out["run"] is None:  # and of games played outside a run
            del out["run"]
        if out["pairing"] is None:
            del out["pairing"]
        if self.game is not None:  # ConnectX's lines stay as they were
            out["game"], out["rewards"] = self.game, list(self.rewards or [])
            out["statuses"], out["trace"] = list(self.statuses or []), self.trace or ""
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        """The record ``to_json`` wrote: a line as parsed, each key a field (``records.record_of`` checks it)."""
        data = dict(data)
        data["players"] = tuple(data["players"])
        data["size"] = tuple(data["size"])
        return cls(**data)
