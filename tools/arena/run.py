"""What a tournament and an SPRT run share: a run's name and store, the live bar, and playing into the store.

A run plays jobs (``schedule``) and commits each game to the store (``store``)
the moment it comes back (``play_run``); ``RunResult`` is what it hands back.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connectx_forge.tools import options, paths
from connectx_forge.tools.arena.schedule import GameJob, Workers, run_jobs
from connectx_forge.tools.arena.store import Key, Store, StoredGame
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.game import GameRecord
from connectx_forge.tools.sandbox.limits import DEFAULT_MEMORY, MIB, Limits

STORE_DIR = paths.RUNS / "arena"


def run_name(kind: str, settings: dict[str, Any]) -> str:
    """A run's name: its kind and a hash of the settings that decide its games.

    A suite's order and labels never change (exact scores, a fixed hash order),
    so the settings name the openings too; M is left out of a tournament's, so
    that a run asked for more openings later goes on in the same run.
    """
    text = json.dumps(settings, sort_keys=True)
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def host_limits(memory: int | None, slowdown: float) -> tuple[Limits | None, bool]:
    """A run's agent-host limits (``--memory``, ``--slowdown``) and whether every player plays in a host.

    As in ``cxforge match``: a slowed-down run plays every player in an agent
    host (only a host can be slowed down); otherwise registered agents play in
    the worker's process and only files in hosts.  ``UserError`` for values the
    flags refuse.
    """
    if not 1 <= slowdown <= 100:
        raise UserError(f"--slowdown takes a factor from 1 to 100 (2: twice as slow), got {slowdown:g}")
    if memory is not None and memory < 64 * MIB:
        raise UserError(f"--memory must be at least 64 MiB (Python itself needs it), got {memory} bytes")
    return options.limits(memory, slowdown), slowdown > 1


def limits_key(memory: int | None, slowdown: float) -> dict[str, Any]:
    """The host limits as part of a run's name: nothing at the defaults, so that a run named before these
    settings existed keeps its name (and its stored games)."""
    out: dict[str, Any] = {}
    if memory is not None and memory != DEFAULT_MEMORY:
        out["memory"] = memory
    if slowdown != 1.0:
        out["slowdown"] = slowdown
    return out


def file_versions(specs: Sequence[str]) -> dict[str, str]:
    """The sha256 of the file each file player plays (a project's or source file's build included).

    Part of a run's name, so that a tournament or SPRT of an agent whose
    sources changed starts a new run instead of resuming the old agent's games.
    """
    from connectx_forge.tools.play.players import resolve

    out = {}
    for spec in specs:
        player = resolve(spec)
        if player.kind == "file":
            out[spec] = hashlib.sha256(Path(player.file).read_bytes()).hexdigest()
    return out


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a tournament or SPRT; every game that ended is in the store at ``store``."""

    def __init__(self, store: Path) -> None:
        super().__init__(f"interrupted; the finished games are in {store}")
        self.store = store


@contextmanager
def interruptible(store: Path) -> Iterator[None]:
    """Turn Ctrl-C inside a run into ``RunInterrupted``, which names the store to resume from."""
    try:
        yield
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(store) from None


def resume_hint(kind: str, store: Path) -> str:
    """The one line that says how to resume an interrupted run of ``kind``."""
    return (f"cxforge {kind}: interrupted: every finished game is in {store}; resume with: "
            f"cxforge {kind} --resume --store {shlex.quote(str(store))}")


def default_store(run: str) -> Path:
    return STORE_DIR / f"{run}.sqlite"


@dataclass
class Live:
    """What a run shows while it plays: a bar with the current leader's rating, refreshed at most once a second."""

    bar: Any
    describe: Callable[[], str]
    last: float = field(default=0.0)

    def update(self) -> None:
        self.bar.update(1)
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            self.bar.set_postfix_str(self.describe(), refresh=False)


def key_of(job: GameJob) -> Key:
    return Key(job.pairing, job.opening, job.colour, job.seed)


def play_run(store: Store, run: str, todo: Iterable[GameJob], workers: Workers, live: Live | None,
             stop: Callable[[], bool] = lambda: False,
             on_game: Callable[[GameJob, GameRecord], None] | None = None,
             may_start: Callable[[GameJob], bool] = lambda job: True) -> int:
    """Play ``todo``, committing each game to the store as it ends; returns how many the store did not have."""
    played = 0

    def done(job: GameJob, record: GameRecord) -> bool:
        nonlocal played
        if store.add(run, key_of(job), job.slot, job.a, job.b, record):
            played += 1
        if on_game is not None:
            on_game(job, record)
        if live is not None:
            live.update()
        return stop()

    if not stop():
        run_jobs(todo, workers, done, may_start)
    return played


@dataclass(frozen=True)
class RunResult:
    """A finished run: its report (a JSON-ready dict) and its stored games, in schedule order."""

    report: dict[str, Any]
    games: list[StoredGame]

    def records(self) -> list[GameRecord]:
        """The games as ``GameRecord``s (what ``--save`` writes)."""
        return [g.record for g in self.games if g.record is not None]


def store_path(store: Path | str | None, run: str, require: bool) -> Path:
    """The run's store: the one given, else ``runs/arena/<run>.sqlite``; with ``require``, it must exist."""
    path = Path(store) if store is not None else default_store(run)
    if require and not path.is_file():
        raise UserError(f"nothing to resume: no results store at {path}")
    return path
