"""A match played into the arena's results store (``cxforge match --store FILE``): crash-safe and resumable.

The match is a run of the store (``tools/arena/store``) as a tournament is: its
name hashes the settings that decide its games (the players by their canonical
specs, the seed, the board, the clock, the seats, the openings, the agent hosts'
limits), leaving out the number of games ``N``, so a match asked for more games
later goes on in the same run; the players' source digests pick the run as in a
tournament (``run.choose_run``: ``--new-run``, ``--mix-versions``).  Game ``i``
is keyed by its pairing (``"A vs B"``, the players' labels), opening, A's mark
and its seed ``game_seed(seed, i)``; every game is committed as it ends, and a
run again with the same store (``--resume``: the store must exist) plays only
the games ``0 .. N-1`` the store lacks and reports all ``N``::

    from connectx_forge.tools.play.match_store import MatchSettings, run_stored_match
    result, chosen = run_stored_match(MatchSettings("lookahead", "random", games=6), "m.sqlite", workers=1)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from agents.board import STANDARD, Size
from connectx_forge.tools.arena.run import (
    Chosen,
    canonical_specs,
    choose_run,
    file_versions,
    host_limits,
    interruptible,
    labels_of,
    limits_key,
    run_config,
    run_name,
    settings_only,
    store_path,
    versioned_name,
)
from connectx_forge.tools.arena.store import Key, Store
from connectx_forge.tools.play.game import GameRecord
from connectx_forge.tools.play.match import MatchResult, match_jobs, run_match
from connectx_forge.tools.play.players import Player
from connectx_forge.tools.play.records import tag
from connectx_forge.tools.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.tools.play.settings import GameSettings

KIND = "match"


@dataclass(frozen=True)
class MatchSettings:
    """What ``cxforge match`` was asked for, as a store keeps it: the players (specs), ``games`` (N), the seed,
    the board, Kaggle's clock, A's seats, ``isolate``, the suite's first ``openings`` (None: the empty board) and
    the agent hosts' ``memory`` (bytes; None: the default) and ``slowdown``."""

    a: str
    b: str
    games: int = 100
    seed: int = 0
    size: Size = STANDARD
    act_timeout: float = ACT_TIMEOUT
    overage: float = OVERAGE
    seats: str = "both"
    isolate: bool = False
    openings: int | None = None
    memory: int | None = None
    slowdown: float = 1.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["size"] = list(self.size)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchSettings:
        data = settings_only(data)  # a stored run's config: its settings, less its labels and versions
        data["size"] = tuple(data["size"])
        return cls(**data)

    def run_key(self) -> dict[str, Any]:
        """The settings the run's name hashes: all but N, and the host limits only where not the defaults."""
        out = {k: v for k, v in self.to_json().items() if k not in ("games", "memory", "slowdown")}
        return {**out, **limits_key(self.memory, self.slowdown)}

    def game_settings(self) -> GameSettings:
        """The settings every game is played under (a slowed-down match plays every player in a host)."""
        limits, slowed = host_limits(self.memory, self.slowdown)
        return GameSettings(self.size, self.act_timeout, self.overage, limits, self.isolate or slowed)


def keys_of(s: MatchSettings, pairing: str, openings: tuple[tuple[int, ...], ...]) -> dict[int, Key]:
    """Each game's key in the store, by game index."""
    return {job.slot: Key(pairing, job.digits, job.colour, job.seed)
            for job in match_jobs(s.a, s.b, s.games, s.seed, GameSettings(s.size), s.seats, openings)}


def match_run(s: MatchSettings) -> tuple[str, str]:
    """The run and pairing that name the games of match ``s`` played without a store (their stable key's): the
    run a new store would give it (its settings and the players' sources), "A vs B" by the players' labels."""
    specs = canonical_specs([s.a, s.b])
    labels = labels_of(specs)
    base = run_name(KIND, replace(s, a=specs[0], b=specs[1]).run_key())
    return versioned_name(base, file_versions(specs)), f"{labels[specs[0]]} vs {labels[specs[1]]}"


def run_stored_match(s: MatchSettings, store: Path | str, workers: int | None = None, progress: bool = True,
                     openings: tuple[tuple[int, ...], ...] = (), players: tuple[Player, Player] | None = None,
                     resume: bool = False, on_change: str | None = None,
                     on_game: Callable[[GameRecord], None] | None = None) -> tuple[MatchResult, Chosen]:
    """Play the games of match ``s`` that the store at ``store`` lacks, committing each as it ends; the result
    counts all ``s.games`` (those stored before and those played now) and the run chosen.

    ``openings``: the suite's first ``s.openings`` as columns; ``players``: A and B resolved (default: from
    ``s``); ``resume``: the store must exist; ``on_change``: as ``run.choose_run``; ``on_game`` sees each game
    played now.  Ctrl-C raises ``run.RunInterrupted`` naming the store, every finished game in it.
    """
    specs = canonical_specs([s.a, s.b])
    s = replace(s, a=specs[0], b=specs[1])
    labels = labels_of(specs)
    pairing = f"{labels[s.a]} vs {labels[s.b]}"
    versions = file_versions(specs)
    base = run_name(KIND, s.run_key())
    path = store_path(store, base, resume)
    keys = keys_of(s, pairing, openings)
    index = {key: i for i, key in keys.items()}
    with interruptible(path), Store(path) as db:
        chosen = choose_run(db, KIND, base, versions, labels, resume, on_change)
        run = chosen.run
        db.register(run, KIND, run_config(s.to_json(), base, versions, labels, chosen))
        stored = [replace(g.record, index=index[g.key]) for g in db.games(run)
                  if g.key in index and g.record is not None]

        def commit(record: GameRecord) -> None:
            tag(record, run, pairing)
            db.add(run, keys[record.index], record.index, labels[s.a], labels[s.b], record)
            if on_game is not None:
                on_game(record)

        a, b = players if players is not None else (s.a, s.b)
        game = s.game_settings()
        result = run_match(a, b, s.games, workers, s.seed, progress=progress, seats=s.seats, openings=openings,
                           on_game=commit, settings=game, stored=stored)
    return result, chosen

