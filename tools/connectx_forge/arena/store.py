"""The results store: every finished game committed to SQLite the moment it ends, so no crash loses one.

One database file can hold several runs.  A run is registered once with its
settings (``runs``); each game is one row of ``games``, keyed by the natural key
``(run, pairing, opening, colour, seed)``, where ``colour`` is the mark player A
played.  Rows go in with ``INSERT OR IGNORE`` in autocommit mode: a game played
twice (a rescheduled Dask task, a resumed run) is stored once, and a game is on
disk as soon as ``add`` returns.

The database runs in WAL mode with ``synchronous=NORMAL``: a committed game
survives the process being killed at any moment (``kill -9``); a power cut may
lose the last few, which a resumed run plays again.  Only the standard library
is used.

A store is data from anyone (``sqlite_file``: its schema compared with ``SCHEMA``,
every query under a deadline).  A game's row keeps no result of its own: every
score, W/D/L and rating is computed from the game's record, whose result is
checked against its moves (``records.record_of``), and a row whose key, slot or
players disagree with its record is refused in one line, as is a run's settings
JSON that is not what cxforge writes (``RunConfig.run_of``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeGuard

from connectx_forge import boundedread
from connectx_forge.arena.sqlite_file import QUERY_SECONDS, SqliteFile
from connectx_forge.arena.stored_settings import R, checked
from connectx_forge.errors import UserError
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import game_key, record_of
from connectx_forge.safe_write import check_database

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    run TEXT NOT NULL,
    pairing TEXT NOT NULL,
    opening TEXT NOT NULL,
    colour INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run, pairing, opening, colour, seed)
);
"""
KINDS = ("match", "tournament", "sprt", "ladder")  # the kinds of run a store holds
MAX_RUNS = 10_000  # runs one store may register
MAX_GAMES = boundedread.MAX_GAMES  # games one run may hold
VS = " vs "  # between a pairing's two players: "A vs B"


@dataclass(frozen=True)
class Key:
    """A game's natural key within a run: pairing ``"A vs B"``, opening moves, A's mark, seed."""

    pairing: str
    opening: str
    colour: int
    seed: int


@dataclass(frozen=True)
class RunConfig:
    """What the store keeps of a run: its settings (the run's ``to_json``, paths absolute: raw JSON here, which
    the run's ``from_json`` checks), the name of those settings (``settings_run``: a run of new versions of the
    same settings is named apart), the players' labels and source digests, and which players' versions are
    mixed in it.  ``to_json`` is the stored JSON object: the settings with the rest beside them."""

    settings: Mapping[str, object]  # a JSON object
    settings_run: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    mixed: tuple[str, ...] = ()
    where: str = field(default="the run's settings", compare=False)  # the store and run it was read from

    def to_json(self) -> dict[str, object]:
        return {**self.settings, "settings_run": self.settings_run, "labels": self.labels,
                "versions": self.versions, "mixed": list(self.mixed)}

    @classmethod
    def from_json(cls, data: Mapping[str, object], where: str) -> RunConfig:
        """The config ``to_json`` wrote (one stored before runs kept their labels and versions has none);
        ``UserError`` naming ``where`` when what it adds to the settings is not what ``to_json`` writes."""
        settings = {k: v for k, v in data.items() if k not in EXTRAS}
        run = data.get("settings_run")
        labels, versions, mixed = data.get("labels", {}), data.get("versions", {}), data.get("mixed", [])
        if not (run is None or isinstance(run, str)) or not _strings(labels) or not _strings(versions) \
                or not isinstance(mixed, list) or not all(isinstance(m, str) for m in mixed):
            raise UserError(f"{where}: its settings_run, labels, versions or mixed are not what cxforge writes")
        return cls(settings, run, labels, versions, tuple(mixed), where)

    def run_of(self, cls: type[R]) -> R:
        """The settings as a run of kind ``cls`` (``Tournament``, ``Sprt``, ``Match``, ``Ladder``), checked as
        strictly as the flags that made them (``stored_settings.checked``): what ``--resume`` alone plays."""
        return checked(cls, self.settings, self.where)


EXTRAS = ("settings_run", "labels", "versions", "mixed")  # a stored config's keys beside the run's settings


def _strings(value: object) -> TypeGuard[dict[str, str]]:
    """Whether ``value`` (parsed JSON: its keys are strings) is a JSON object of strings."""
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


class StoredRun(NamedTuple):
    """A run registered in a store: its name, its kind (``match``, ``tournament``, ``sprt``, ``ladder``) and
    its config."""

    run: str
    kind: str
    config: RunConfig


@dataclass(frozen=True)
class StoredGame:
    """One stored game: its key, its place in the schedule (``slot``: the pair), players and record."""

    key: Key
    slot: int
    a: str
    b: str
    record: GameRecord

    @property
    def a_score(self) -> float:
        """Player A's points in the game, from its record (whose result its moves decide)."""
        return a_score(self.record, self.key.colour)


def a_score(record: GameRecord, colour: int) -> float:
    """Player A's points (1, 0.5 or 0) in a game where A had mark ``colour``."""
    return {"win": 1.0, "draw": 0.5, "loss": 0.0}[record.result(colour)]


class Store:
    """A results database (``with Store(path) as store: ...``); ``UserError`` when it cannot be opened, is no
    results store, or holds what the toolkit does not make (``sqlite_file``).  ``seconds``: each query's
    deadline."""

    def __init__(self, path: Path | str | None, seconds: float = QUERY_SECONDS) -> None:
        """The store at ``path``; None: one in memory, gone when closed."""
        self.path = Path(path if path is not None else ":memory:")
        if path is not None:
            check_database(self.path)  # no link where SQLite writes (its folders made)
        self.file = SqliteFile(None if path is None else self.path, SCHEMA, seconds)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.file.close()

    # -- runs ----------------------------------------------------------------------
    def register(self, run: str, kind: str, config: RunConfig) -> None:
        """Record a run's settings, the latest ones asked for (what ``--resume`` alone replays)."""
        self.file.run("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                      (run, kind, json.dumps(config.to_json(), sort_keys=True), time.time()))

    def runs(self, kind: str | None = None) -> list[StoredRun]:
        """Every run, the most recently registered last (only ``kind``'s, if given)."""
        rows = self.file.rows("SELECT run, kind, config, created FROM runs ORDER BY created, run LIMIT ?",
                              (MAX_RUNS + 1,))
        if len(rows) > MAX_RUNS:
            raise UserError(f"store {self.path}: more than {MAX_RUNS:,} runs; refusing it")
        out = []
        for r, k, c, created in rows:
            where = f"store {self.path}, run {r!r}"
            if type(r) is not str or k not in KINDS or type(created) not in (int, float):
                raise UserError(f"{where}: its row is not one cxforge writes (kind {k!r}); refusing the store")
            if kind is None or k == kind:
                out.append(StoredRun(r, k, _config(c, where)))
        return out

    # -- games ---------------------------------------------------------------------
    def add(self, run: str, key: Key, slot: int, a: str, b: str, record: GameRecord) -> bool:
        """Commit one finished game; False when the store already had it (the copy is dropped)."""
        return self.file.run(
            "INSERT OR IGNORE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run, key.pairing, key.opening, key.colour, key.seed, slot, a, b,
             json.dumps(record.to_json(), sort_keys=True))) == 1

    def keys(self, run: str) -> set[Key]:
        """The keys of the games a run already has."""
        rows = self.file.rows("SELECT pairing, opening, colour, seed FROM games WHERE run = ? LIMIT ?",
                              (run, MAX_GAMES + 1))
        self._bounded(rows, run)
        return {Key(*row) for row in rows}

    def games(self, run: str) -> list[StoredGame]:
        """A run's games in schedule order (slot, pairing, colour), each checked against its record
        (``_game``) and its players against the run's (``_players_of``)."""
        rows = self.file.rows(
            "SELECT pairing, opening, colour, seed, slot, a, b, record FROM games WHERE run = ? "
            "ORDER BY slot, pairing, colour, opening, seed LIMIT ?", (run, MAX_GAMES + 1))
        self._bounded(rows, run)
        where = f"store {self.path}, run {run!r}"
        games = [_game(row, run, where) for row in rows]
        if games:
            players = self._players(run, where)
            for game in games:
                _players_of(game, players, where)
        return games

    def _players(self, run: str, where: str) -> frozenset[str]:
        """The labels of ``run``'s players as the run registered them (``RunConfig.labels``; none for a run
        that is not registered)."""
        rows = self.file.rows("SELECT config FROM runs WHERE run = ?", (run,))
        return frozenset(_config(rows[0][0], where).labels.values()) if rows else frozenset()

    def count(self, run: str) -> int:
        """How many games ``run`` holds."""
        return int(self.file.rows("SELECT COUNT(*) FROM games WHERE run = ?", (run,))[0][0])

    def _bounded(self, rows: Sized, run: str) -> None:
        if len(rows) > MAX_GAMES:
            raise UserError(f"store {self.path}, run {run!r}: more than {MAX_GAMES:,} games; refusing the store")


def _game(row: Sequence[object], run: str, where: str) -> StoredGame:
    """One row of ``games`` as a ``StoredGame``; ``UserError`` naming the row when a column is not of its type
    or disagrees with the game's record: its run, pairing (and so players A and B), opening, A's mark, seed or
    slot.  (The record's own result is checked against its moves by ``record_of``.)"""
    pairing, opening, colour, seed, slot, a, b, text = row
    game = f"{where}, game ({pairing!r}, opening {opening!r}, A's mark {colour!r}, seed {seed!r})"
    if not (type(pairing) is str and type(opening) is str and type(a) is str and type(b) is str
            and type(colour) is int and type(seed) is int and type(slot) is int):
        raise UserError(f"{game}: its row is not one cxforge writes; refusing the store")
    record = _record(text, game)
    why = _disagreement(record, run, Key(pairing, opening, colour, seed), slot, (a, b))
    if why is not None:
        raise UserError(f"{game}: {why}; refusing the store")
    return StoredGame(Key(pairing, opening, colour, seed), slot, a, b, record)


def _players_of(game: StoredGame, players: frozenset[str], where: str) -> None:
    """``UserError`` naming the row unless its A and B are two of the run's ``players`` and its pairing names them
    in one way only: a label may hold " vs ", so "x vs y vs z" could be forged into players "x" and "y vs z"
    that the run never had."""
    pairing = game.key.pairing
    splits = [(pairing[:i], pairing[i + len(VS):]) for i in range(len(pairing)) if pairing.startswith(VS, i)]
    ways = [split for split in splits if split[0] in players and split[1] in players]
    if (game.a, game.b) not in ways or len(ways) != 1:
        raise UserError(f"{where}, game ({pairing!r}, opening {game.key.opening!r}, A's mark {game.key.colour!r}, "
                        f"seed {game.key.seed!r}): its pairing is not \"A vs B\" for two of the run's players "
                        f"in one way ({game.a!r}, {game.b!r}); refusing the store")


def _disagreement(record: GameRecord, run: str, key: Key, slot: int, players: tuple[str, str]) -> str | None:
    """How a row's columns disagree with its game's record (the record's stable key, ``records.game_key``, and
    its place in the schedule), or None."""
    rec_run, rec_pairing, rec_opening, rec_seat, rec_seed = game_key(record)
    if f"{players[0]} vs {players[1]}" != key.pairing:
        return f"its players {players[0]!r} and {players[1]!r} are not its pairing's"
    for what, stored, recorded in (("run", run, rec_run), ("pairing", key.pairing, rec_pairing),
                                   ("opening", key.opening, rec_opening), ("A's mark", key.colour, rec_seat),
                                   ("seed", key.seed, rec_seed), ("slot", slot, record.index)):
        if stored != recorded:
            return f"its {what} is {stored!r}, its record's {recorded!r}"
    return None


def _record(text: object, where: str) -> GameRecord:
    """A stored record, read within bounds (``_stored``) and checked as a games file's line is (its result
    against its moves: ``records.record_of``); ``UserError`` naming ``where`` otherwise."""
    return record_of(_stored(text, where), where)


def _stored(text: object, where: str) -> object:
    """A stored JSON value read back within ``boundedread``'s bounds (a store file may be anyone's): text of at
    most ``MAX_LINE`` characters, nesting and numbers bounded; ``UserError`` naming ``where`` otherwise."""
    if not isinstance(text, str) or len(text) > boundedread.MAX_LINE:
        raise UserError(f"{where}: not JSON text of at most {boundedread.MAX_LINE:,} characters")
    return boundedread.parse_json(text, where)


def _config(text: object, where: str) -> RunConfig:
    """A run's stored config (``_stored``): a JSON object."""
    config = _stored(text, f"{where}, its settings")
    if not isinstance(config, dict):
        raise UserError(f"{where}, its settings: not a JSON object")
    return RunConfig.from_json(config, f"{where}, its settings")
