"""Evidence is distinct games: a game two deterministic agents play again, move for move, tells nothing new.

Two deterministic agents play the same game each time they meet in the same
seats on the same opening, whatever the seed: replaying it adds games, not
evidence.  So ``sprt``, ``tournament``, ``ladder`` and ``compare`` count a unit
(one game; for an SPRT, a pair of games: both seats on one opening) as new
evidence only when it differs from every unit already counted under the same
key (the same two agents, seats and opening).

Which pairs are deterministic is read from the games themselves, per pair of
agents (the ``scope``): a pair is taken as deterministic while every unit
played again under a key repeats the first one move for move.  The first
unit that differs from an earlier one under its key shows the pair
stochastic: from then on every unit of that pair counts, and so do the
repeats held back until then, since they were real draws from the pair's
distribution that happened to coincide.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from connectx_forge.play.game_record import GameRecord

T = TypeVar("T")
Play = tuple[object, ...]


def play_of(record: GameRecord) -> Play:
    """What makes two games one game: the moves (the opening's included; another game's trace of its steps'
    actions) and how it ended."""
    return tuple(record.moves), record.trace, record.outcome, record.winner, record.culprit


@dataclass
class Evidence(Generic[T]):
    """Units as they arrive, in order: which of them count (``add``), how many were distinct, which scopes
    (pairs of agents) were shown stochastic."""

    plays: dict[tuple[Hashable, Hashable], set[Hashable]] = field(default_factory=dict)
    stochastic: set[Hashable] = field(default_factory=set)
    held: dict[Hashable, list[T]] = field(default_factory=dict)
    units: int = 0

    def add(self, scope: Hashable, key: Hashable, play: Hashable, item: T) -> list[T]:
        """The items that count as evidence now that ``item`` (played as ``play``) came under ``key`` of
        ``scope``: ``[item]`` when it is new or its scope stochastic; ``[]`` for a repeat of a scope taken as
        deterministic (held back); ``[*held, item]`` when it shows its scope stochastic."""
        self.units += 1
        seen = self.plays.setdefault((scope, key), set())
        if scope in self.stochastic or not seen:
            seen.add(play)
            return [item]
        if play in seen:
            self.held.setdefault(scope, []).append(item)
            return []
        seen.add(play)
        self.stochastic.add(scope)
        return [*self.held.pop(scope, []), item]

    @property
    def distinct(self) -> int:
        """The units that differed from every earlier one under their key."""
        return sum(len(plays) for plays in self.plays.values())

    def distinct_in(self, scope: Hashable) -> int:
        """The distinct units of one scope."""
        return sum(len(plays) for (where, _), plays in self.plays.items() if where == scope)

    @property
    def repeats(self) -> int:
        """The units held back: repeats of pairs taken as deterministic."""
        return sum(len(items) for items in self.held.values())

    def shown_stochastic(self, scope: Hashable) -> bool:
        return scope in self.stochastic


def counted(units: Iterable[tuple[Hashable, Hashable, Hashable, T]]) -> tuple[list[T], Evidence[T]]:
    """The items that count among ``(scope, key, play, item)`` units, in the order they count, and the
    ``Evidence`` that read them (its ``distinct``, its scopes shown stochastic)."""
    seen: Evidence[T] = Evidence()
    out: list[T] = []
    for scope, key, play, item in units:
        out.extend(seen.add(scope, key, play, item))
    return out, seen


def distinct_games(games: Iterable[tuple[Hashable, GameRecord]]) -> int:
    """How many of ``(key, record)`` games differ from every other game under the same key (the key: the pair,
    the seats, the opening)."""
    return len({(key, play_of(record)) for key, record in games})
