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
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from connectx_forge import boundedread
from connectx_forge.errors import UserError
from connectx_forge.play.game import GameRecord
from connectx_forge.play.records import record_of

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
    a_score REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run, pairing, opening, colour, seed)
);
"""


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

    settings: dict[str, Any]
    settings_run: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    mixed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**self.settings, "settings_run": self.settings_run, "labels": self.labels,
                "versions": self.versions, "mixed": list(self.mixed)}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> RunConfig:
        """The config ``to_json`` wrote (one stored before runs kept their labels and versions has none);
        ``UserError`` naming ``where`` when what it adds to the settings is not what ``to_json`` writes."""
        settings = {k: v for k, v in data.items() if k not in EXTRAS}
        run = data.get("settings_run")
        labels, versions, mixed = data.get("labels", {}), data.get("versions", {}), data.get("mixed", [])
        if not (run is None or isinstance(run, str)) or not _strings(labels) or not _strings(versions) \
                or not isinstance(mixed, list) or not all(isinstance(m, str) for m in mixed):
            raise UserError(f"{where}: its settings_run, labels, versions or mixed are not what cxforge writes")
        return cls(settings, run, labels, versions, tuple(mixed))


EXTRAS = ("settings_run", "labels", "versions", "mixed")  # a stored config's keys beside the run's settings


def _strings(value: Any) -> bool:
    """Whether ``value`` is a JSON object of strings."""
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


class StoredRun(NamedTuple):
    """A run registered in a store: its name, its kind (``match``, ``tournament``, ``sprt``, ``ladder``) and
    its config."""

    run: str
    kind: str
    config: RunConfig


@dataclass(frozen=True)
class StoredGame:
    """One stored game: its key, its place in the schedule (``slot``: the pair), players and A's score."""

    key: Key
    slot: int
    a: str
    b: str
    a_score: float
    record: GameRecord | None  # None when read with ``records=False``


def a_score(record: GameRecord, colour: int) -> float:
    """Player A's points (1, 0.5 or 0) in a game where A had mark ``colour``."""
    return {"win": 1.0, "draw": 0.5, "loss": 0.0}[record.result(colour)]


class Store:
    """A results database (``with Store(path) as store: ...``); ``UserError`` when it cannot be opened."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=60)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"cannot open the results store {self.path}: {exc}") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- runs ----------------------------------------------------------------------
    def register(self, run: str, kind: str, config: RunConfig) -> None:
        """Record a run's settings, the latest ones asked for (what ``--resume`` alone replays)."""
        self.db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                        (run, kind, json.dumps(config.to_json(), sort_keys=True), time.time()))

    def runs(self, kind: str | None = None) -> list[StoredRun]:
        """Every run, the most recently registered last (only ``kind``'s, if given)."""
        rows = self.db.execute("SELECT run, kind, config FROM runs ORDER BY created, run").fetchall()
        return [StoredRun(r, k, _config(c, f"{self.path}: run {r!r}")) for r, k, c in rows
                if kind is None or k == kind]

    # -- games ---------------------------------------------------------------------
    def add(self, run: str, key: Key, slot: int, a: str, b: str, record: GameRecord) -> bool:
        """Commit one finished game; False when the store already had it (the copy is dropped)."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run, key.pairing, key.opening, key.colour, key.seed, slot, a, b, a_score(record, key.colour),
             json.dumps(record.to_json(), sort_keys=True)))
        return cur.rowcount == 1

    def keys(self, run: str) -> set[Key]:
        """The keys of the games a run already has."""
        rows = self.db.execute("SELECT pairing, opening, colour, seed FROM games WHERE run = ?", (run,))
        return {Key(*row) for row in rows}

    def games(self, run: str, records: bool = True) -> list[StoredGame]:
        """A run's games in schedule order (slot, pairing, colour); ``records=False`` skips the move lists."""
        column = "record" if records else "NULL"
        rows = self.db.execute(
            f"SELECT pairing, opening, colour, seed, slot, a, b, a_score, {column} FROM games WHERE run = ? "
            "ORDER BY slot, pairing, colour, opening, seed", (run,))
        where = f"{self.path}: run {run!r}"
        return [StoredGame(Key(p, o, c, s), slot, a, b, score, None if rec is None else _named(rec, run, p, where))
                for p, o, c, s, slot, a, b, score, rec in rows]

    def count(self, run: str) -> int:
        """How many games ``run`` holds."""
        return int(self.db.execute("SELECT COUNT(*) FROM games WHERE run = ?", (run,)).fetchone()[0])


def _named(text: Any, run: str, pairing: str, where: str) -> GameRecord:
    """A stored record, named by its run and pairing where it was stored without them (before games carried
    their stable key); read within bounds (``_stored``), ``UserError`` naming ``where`` otherwise."""
    game = f"{where}, a game of {pairing!r}"
    record = record_of(_stored(text, game), game)
    record.run = record.run or run
    record.pairing = record.pairing or pairing
    return record


def _stored(text: Any, where: str) -> Any:
    """A stored JSON value read back within ``boundedread``'s bounds (a store file may be anyone's): text of at
    most ``MAX_LINE`` characters, nesting and numbers bounded; ``UserError`` naming ``where`` otherwise."""
    if not isinstance(text, str) or len(text) > boundedread.MAX_LINE:
        raise UserError(f"{where}: not JSON text of at most {boundedread.MAX_LINE:,} characters")
    return boundedread.parse_json(text, where)


def _config(text: Any, where: str) -> RunConfig:
    """A run's stored config (``_stored``): a JSON object."""
    config = _stored(text, f"{where}, its settings")
    if not isinstance(config, dict):
        raise UserError(f"{where}, its settings: not a JSON object")
    return RunConfig.from_json(config, f"{where}, its settings")
