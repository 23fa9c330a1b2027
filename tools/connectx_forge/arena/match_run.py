"""A match played into the arena's results store (``cxforge match --store FILE``): crash-safe and resumable.

The match is a run of the store (``tools/connectx_forge/arena/store``) as a tournament is: its
name hashes the settings that decide its games (the players by their canonical
specs, the seed, the board, the clock, the seats, the openings, the agent hosts'
limits), leaving out the number of games ``N``, so a match asked for more games
later goes on in the same run; the players' source digests pick the run as in a
tournament (``run.choose_run``: ``--new-run``, ``--mix-versions``).  Game ``i``
is keyed by its pairing (``"A vs B"``, the players' labels), opening, A's mark
and its seed ``game_seed(seed, i)``; every game is committed as it ends, and a
run again with the same store (``--resume``: the store must exist) plays only
the games ``0 .. N-1`` the store lacks and reports all ``N``::

    from connectx_forge.arena.run import Execution, execute
    from connectx_forge.arena.match_run import Match
    stored = execute(Match("lookahead", "random", games=6), Execution(workers=1, store="m.sqlite"))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from agents.board import STANDARD
from connectx_forge.arena import openings as suites
from connectx_forge.arena.match import MatchJson, MatchPlan, PlayedMatch, play_match
from connectx_forge.arena.run import (
    MEMORY,
    Chosen,
    Execution,
    Opened,
    canonical_specs,
)
from connectx_forge.arena.store import Key
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import tag
from connectx_forge.play.resolve import resolve
from connectx_forge.play.settings import GameKey, GameSettings, GameSettingsJson
from connectx_forge.players.player import GhostFiles, Player, distinct


class MatchKey(TypedDict):
    """A stored match's identity, what its run's name hashes (``Match.run_key``): its settings with ``games``
    None, so that more games extend the run."""

    a: str
    b: str
    games: None
    seed: int
    seats: str
    openings: int | None
    game: GameKey


class MatchSettingsJson(TypedDict):
    """A ``Match`` as a store keeps it (``Match.to_json``)."""

    a: str
    b: str
    games: int
    seed: int
    seats: str
    openings: int | None
    game: GameSettingsJson


@dataclass(frozen=True)
class Match:
    """What ``cxforge match`` was asked for, as a store keeps it: the players (specs), ``games`` (N), the seed,
    A's seats, the suite's first ``openings`` (None: the empty board) and what every game is played under
    (``game``: the board, Kaggle's clock, the agent hosts' limits, ``isolate``)."""

    kind: ClassVar[str] = "match"
    a: str
    b: str
    games: int = 100
    seed: int = 0
    seats: str = "both"
    openings: int | None = None
    game: GameSettings = field(default_factory=GameSettings)

    def __post_init__(self) -> None:
        if self.openings is not None and self.openings < 1:
            raise UserError(f"--openings must be at least 1, got {self.openings}")

    def specs(self) -> tuple[str, ...]:
        return (self.a, self.b)

    def to_json(self) -> MatchSettingsJson:
        return MatchSettingsJson(a=self.a, b=self.b, games=self.games, seed=self.seed, seats=self.seats,
                                 openings=self.openings, game=self.game.to_json())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Match:
        fields = dict(data)  # a stored run's settings (``RunConfig.settings``)
        fields["game"] = GameSettings.from_json(data["game"])
        return cls(**fields)

    def run_key(self) -> MatchKey:
        """The settings the run's name hashes: all but N (more games extend the run)."""
        return MatchKey(a=self.a, b=self.b, games=None, seed=self.seed, seats=self.seats, openings=self.openings,
                        game=self.game.run_key())

    def settled(self, ghosts: GhostFiles | None = None) -> Match:
        """A and B as a run stores them (absolute paths)."""
        a, b = canonical_specs([self.a, self.b], ghosts)
        return replace(self, a=a, b=b)

    def columns(self, progress: bool) -> tuple[tuple[int, ...], ...]:
        """The suite's first ``openings`` as columns (a larger suite is labelled once, and cached, when asked)."""
        if self.openings is None:
            return ()
        catalog.connectx_only("--openings", self.game.game)

        if tuple(self.game.size) != tuple(STANDARD):
            raise UserError("--openings plays the 6x7 four-in-a-row suite; it cannot be used with another board "
                            "size")
        suite = suites.load_suite(size=max(suites.DEFAULT_SIZE, self.openings), progress=progress)
        return tuple(tuple(o.columns) for o in suite[:self.openings])

    def plan_of(self, a: Player, b: Player, progress: bool) -> MatchPlan:
        """The match's games between players A and B as given (the API's: a function too); ``UserError`` for
        settings that make no match (``MatchPlan``)."""
        return MatchPlan(a, b, self.games, self.seed, self.game, self.seats, self.columns(progress))

    def play(self, opened: Opened, how: Execution) -> StoredMatch:
        """Play the games ``0 .. N-1`` the store lacks, committing each as it ends; the result counts all N."""
        labels, db, run = opened.labels, opened.db, opened.run
        pairing = f"{labels[self.a]} vs {labels[self.b]}"
        a, b = distinct([how.player(self.a), how.player(self.b)])
        plan = self.plan_of(a, b, how.progress)
        keys = {job.slot: Key(pairing, job.digits, job.colour, job.seed) for job in plan.jobs()}
        index = {key: i for i, key in keys.items()}
        stored = [replace(g.record, index=index[g.key]) for g in db.games(run) if g.key in index]

        def commit(record: GameRecord) -> None:
            tag(record, run, pairing)
            db.add(run, keys[record.index], record.index, labels[self.a], labels[self.b], record)
            if how.on_game is not None:
                how.on_game(record)

        result = play_match(plan, how.workers, how.progress, on_game=commit, stored=stored)
        return StoredMatch(result, opened.chosen, opened.path)


class StoredMatchJson(MatchJson):
    """``cxforge match --store --json`` (``StoredMatch.to_json``): the match's summary and the store's run."""

    store: str
    run: str
    mixed_versions: list[str]
    run_note: str | None


@dataclass(frozen=True)
class StoredMatch:
    """A match played into a store: its result (all N games), the run chosen in the store, and the store."""

    result: PlayedMatch
    chosen: Chosen
    store: Path

    def to_json(self) -> StoredMatchJson:
        """``cxforge match --store --json``: the match's summary and the store's run."""
        return {**self.result.to_json(), "store": str(self.store), "run": self.chosen.run,
                "mixed_versions": list(self.chosen.mixed), "run_note": self.chosen.note}


def in_memory(s: Match, how: Execution) -> tuple[Match, Execution]:
    """Match ``s`` played without a store (``cxforge match`` without ``--store``): its games kept in memory
    (``MEMORY``), its players resolved once as written (a ghost's from ``how.ghosts``), the match named by their
    ``canonical`` specs as ``settled`` names it for a store, so that ``--save`` names each game as a stored run of
    it would (its stable key)."""
    a, b = resolve(s.a, how.ghosts), resolve(s.b, how.ghosts)
    return replace(s, a=a.canonical, b=b.canonical), replace(how, store=MEMORY,
                                                             players={a.canonical: a, b.canonical: b})
