"""One run: what a match, a tournament, an SPRT and a ladder share, as fastchess's ``BaseTournament``.

A run's settings (``Match``, ``Tournament``, ``Sprt``, ``Ladder``) implement ``Run``: the games' settings
(``game``, a ``GameSettings``), its players, the settings its name hashes, its JSON, and ``play``: the jobs
the store lacks, played into it, and the report.  ``execute`` is the one driver: it settles the players
(absolute paths, labels, source digests), picks the run in the store (``choose_run``: ``--resume``,
``--new-run``, ``--mix-versions``), registers it and hands the open store to ``play``.  How it is carried
out (workers, Dask, the store's path, progress, a callback per game) is an ``Execution``: nothing there
changes which games are played.  ``play_run`` commits each game to the store the moment it comes back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypedDict, TypeVar

from connectx_forge import paths
from connectx_forge import progress as bars
from connectx_forge.arena.dask_cluster import DaskTarget, dask_target
from connectx_forge.arena.schedule import GameJob, Workers, run_jobs
from connectx_forge.arena.store import Key, RunConfig, Store, StoredGame
from connectx_forge.errors import UsageError, UserError
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import tag
from connectx_forge.play.resolve import canonical_spec, resolve
from connectx_forge.play.settings import GameSettings
from connectx_forge.players.player import GhostFiles, Player, PlayerLike, distinct

STORE_DIR = paths.RUNS / "arena"
MEMORY = ":memory:"  # ``Execution.store``: the run's games kept in memory, nothing written
R_co = TypeVar("R_co", covariant=True)
Report = TypeVar("Report")


def run_name(kind: str, settings: Mapping[str, object]) -> str:
    """A run's name: its kind and a hash of the settings that decide its games.

    A suite's order and labels never change (exact scores, a fixed hash order),
    so the settings name the openings too; M is left out of a tournament's, so
    that a run asked for more openings later goes on in the same run.
    """
    text = json.dumps(settings, sort_keys=True)
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def file_versions(specs: Sequence[str], find: Callable[[str], Player] = resolve) -> dict[str, str]:
    """The sha256 of the file each file player plays (a project's or source file's build included); ``find``
    gives a spec's player (``Execution.player``).

    Kept with a run (``choose_run``), so that a tournament or SPRT of an agent
    whose sources changed never resumes the old agent's games unasked.
    """
    out = {}
    for spec in specs:
        player = find(spec)
        if player.fresh:
            out[spec] = hashlib.sha256(Path(player.file).read_bytes()).hexdigest()
    return out


def labels_of(specs: Sequence[str], find: Callable[[str], Player] = resolve) -> dict[str, str]:
    """Each player's label in a run's tables, files and store: a project's name, a file's name, a registered
    name; the path (the spec) only where two players' labels collide (``players.distinct``).  ``find`` gives
    a spec's player (``Execution.player``)."""
    unique = list(dict.fromkeys(specs))
    return {spec: p.label for spec, p in zip(unique, distinct([find(s) for s in unique]), strict=True)}


def canonical_specs(specs: Sequence[str], ghosts: GhostFiles | None = None) -> tuple[str, ...]:
    """The players as a run stores them: paths (and, inside a project, its own name) made absolute, a ghost
    its agent file's (its replays from ``ghosts``), so that ``--resume`` works from any folder and a worker
    plays what this process named (``reference.canonical``)."""
    return tuple(canonical_spec(s, ghosts) for s in specs)


# what --resume may do when a player's sources changed since the run's stored games (``--new-run``,
# ``--mix-versions``): start a new run in the same store, or go on with the old one
NEW_RUN, MIX = "new-run", "mix-versions"


@dataclass(frozen=True)
class Chosen:
    """The run a tournament or SPRT plays into: its name, the labels of players whose versions are mixed in it,
    and a note for the report when a changed player started a new run or was mixed into an old one."""

    run: str
    mixed: tuple[str, ...] = ()
    note: str | None = None


def versioned_name(base: str, versions: dict[str, str]) -> str:
    """The name of the run of settings ``base`` (a ``run_name``) played by these file versions."""
    if not versions:
        return base
    text = json.dumps(versions, sort_keys=True)
    return f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _short(digest: str | None) -> str:
    return digest[:8] if digest else "none"


def choose_run(db: Store, kind: str, base: str, versions: dict[str, str], labels: dict[str, str],
               resume: bool, on_change: str | None) -> Chosen:
    """Which run of settings ``base`` to play into, given the players' file ``versions`` now.

    The store's run of these settings and versions goes on (the latest one, when
    ``--mix-versions`` made several).  When there is none but a run of the same
    settings has games played by other versions of a player's sources: ``--resume``
    refuses, in one line naming the player, unless ``on_change`` is ``NEW_RUN``
    (a new run, in the same store, with the new version) or ``MIX`` (the old run
    goes on, its report saying which players' versions are mixed); without
    ``--resume`` a new run starts, as it always has, and the report says why.
    """
    runs = [(r, cfg) for r, _, cfg in db.runs(kind) if r == base or cfg.settings_run == base]
    same = [(r, cfg) for r, cfg in runs if cfg.versions == versions]
    if same:
        run, cfg = same[-1]
        return Chosen(run, cfg.mixed)
    fresh = versioned_name(base, versions)
    taken = {r for r, _, _ in db.runs()}
    n = 2
    while fresh in taken:  # an old run continued with --mix-versions kept the name of its first versions
        fresh, n = f"{versioned_name(base, versions)}-{n}", n + 1
    old = [(r, cfg) for r, cfg in runs if db.count(r) > 0]
    if not runs and resume and db.runs(kind):  # (a store written before runs kept absolute paths, for one)
        return Chosen(fresh, (), "--resume: the store held no run of these players and settings; a new run "
                                 "started in it")
    if not old:
        return Chosen(fresh)
    run, cfg = old[-1]
    stored = cfg.versions
    changed = [spec for spec in dict.fromkeys([*stored, *versions]) if stored.get(spec) != versions.get(spec)]
    what = "; ".join(f"{labels.get(spec, spec)} changed (sources {_short(stored.get(spec))} in the store, "
                     f"{_short(versions.get(spec))} now)" for spec in changed) or "a player's sources changed"
    if on_change == MIX:
        mixed = tuple(sorted({*cfg.mixed, *(labels.get(spec, spec) for spec in changed)}))
        return Chosen(run, mixed, f"{what}: versions mixed, as --mix-versions asked: the run's {db.count(run)} "
                                  "stored games were played by the old version, the new ones by this one")
    if on_change == NEW_RUN or not resume:
        why = "as --new-run asked" if on_change == NEW_RUN else "the stored games were played by the old version"
        return Chosen(fresh, (), f"{what}: a new run in the same store ({why}); the old run is {run}")
    raise UsageError(f"{what}: the {db.count(run)} stored games of run {run} were played by the old version; "
                    f"add --new-run to start a new run in the same store with this version, or --mix-versions "
                    f"to continue the old run with it (its report then says the versions are mixed)")


def version_lines(mixed: Sequence[str], note: str | None) -> list[str]:
    """What a text report says of the run it played: players' versions ``mixed`` in it, and why it is a new run
    (a changed player: ``note``, ``Chosen.note``) where it is one."""
    lines = []
    if mixed:
        lines.append(f"versions mixed: {', '.join(mixed)} played this run's games with more than one version of "
                     "its sources (--mix-versions)")
    if note:
        lines.append(f"note: {note}")
    return lines


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


def resume_hint(kind: str, store: Path, outputs: Sequence[str] = ()) -> str:
    """The one line that says how to resume an interrupted run of ``kind``, repeating the command's output
    flags (``outputs``: ``flags.output_flags``)."""
    again = shlex.join(["--resume", "--store", str(store), *outputs])
    return f"cxforge {kind}: interrupted: every finished game is in {store}; resume with: cxforge {kind} {again}"


def default_store(run: str) -> Path:
    return STORE_DIR / f"{run}.sqlite"


@dataclass
class Live:
    """What a run shows while it plays: a bar with the current leader's rating, refreshed at most once a second."""

    bar: bars.Bar
    describe: Callable[[], str]
    last: float = field(default=0.0)

    def update(self) -> None:
        self.bar.update(1)
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            self.bar.set_postfix_str(self.describe(), refresh=False)


def job_key(job: GameJob) -> Key:
    return Key(job.pairing, job.digits, job.colour, job.seed)


def spec_of(player: PlayerLike) -> str:
    """A run's job's player: its spec (a run's jobs hold specs, which cross to any worker; ``cxforge match``'s
    hold resolved players, and never reach a run's store)."""
    assert isinstance(player, str), f"a run's job holds its players' specs, not {player!r}"
    return player


def stored_label(job_player: PlayerLike, labels: Mapping[str, str]) -> str:
    """How a run's store names a job's player: its label (``labels``, by spec), else its spec."""
    spec = spec_of(job_player)
    return labels.get(spec, spec)


def play_run(store: Store, run: str, todo: Iterable[GameJob], workers: Workers, live: Live | None,
             stop: Callable[[], bool] = lambda: False,
             on_game: Callable[[GameJob, GameRecord], None] | None = None,
             may_start: Callable[[GameJob], bool] = lambda job: True,
             labels: dict[str, str] | None = None) -> int:
    """Play ``todo``, committing each game to the store as it ends (its players by their ``labels``, by spec
    where none is given; the record named by ``run`` and its pairing, its stable key's); returns how many the
    store did not have."""
    played = 0
    names = labels or {}

    def done(job: GameJob, record: GameRecord) -> bool:
        nonlocal played
        tag(record, run, job.pairing)
        if store.add(run, job_key(job), job.slot, stored_label(job.a, names), stored_label(job.b, names), record):
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
class RunResult(Generic[Report]):
    """A finished run: its report (a ``TournamentReport``, an ``SprtReport``) and its stored games, in schedule
    order."""

    report: Report
    games: list[StoredGame]

    def records(self) -> list[GameRecord]:
        """The games as ``GameRecord``s (what ``--save`` writes)."""
        return [g.record for g in self.games]


def store_path(store: Path | str | None, run: str, require: bool) -> Path:
    """The run's store: the one given, else ``runs/arena/<run>.sqlite`` (``run``: the settings' name, whatever
    the players' versions); with ``require``, it must exist."""
    path = Path(store) if store is not None else default_store(run)
    if require and not path.is_file():
        raise UserError(f"nothing to resume: no results store at {path}")
    return path


@dataclass(frozen=True)
class Execution:
    """How a run is carried out, nothing of which changes its games: ``workers`` processes (default all
    cores), on ``dask`` (a ``DaskTarget``: ``"local"`` or a scheduler's address, and its security; an address
    alone may be given as a string, checked here) or an executor of one's own (``ex``); the results
    ``store`` (default ``runs/arena/<run>.sqlite``), which must exist with ``resume`` (``--resume``);
    ``on_change`` (``NEW_RUN`` or ``MIX``) for a player whose sources changed since the stored games
    (``choose_run``); a bar unless ``progress`` is False; ``on_game`` sees each game played now as it ends;
    ``ghosts``: where ``ghost:TEAM`` players come from (``--replays``, ``--fallback``).

    ``store`` ``MEMORY`` keeps the games in memory only (a match without ``--store``, the notebook's
    ``match``).  ``players``: the run's players resolved already, by spec (the notebook's functions, the
    command's players resolved once as written): the run plays them as given, its specs taken as settled."""

    workers: int | None = None
    dask: DaskTarget | str | None = None
    ex: Workers | None = None
    store: Path | str | None = None
    resume: bool = False
    on_change: str | None = None
    progress: bool = True
    on_game: Callable[[GameRecord], None] | None = None
    ghosts: GhostFiles | None = None
    players: Mapping[str, Player] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dask", dask_target(self.dask))  # an unauthenticated scheduler refused now

    @property
    def n_workers(self) -> int:
        """The worker processes: those asked for, else all cores."""
        return self.workers if self.workers is not None else (os.cpu_count() or 1)

    def player(self, spec: str) -> Player:
        """The player a run's spec plays: the one given (``players``), else resolved from the spec."""
        given = self.players.get(spec)
        return given if given is not None else resolve(spec)

    def seen(self, job: GameJob, record: GameRecord) -> None:
        """``play_run``'s ``on_game``: hands the record to ``on_game``."""
        if self.on_game is not None:
            self.on_game(record)


@dataclass(frozen=True)
class RunInfo:
    """What a report says of how a run went, the one part of it that depends on this invocation: the store,
    the seconds, the games played now, the executor and its workers (None: an executor of one's own)."""

    store: str
    seconds: float
    played_now: int
    executor: str
    workers: int | None

    def to_json(self) -> RunInfoJson:
        return RunInfoJson(store=self.store, seconds=self.seconds, played_now=self.played_now,
                           executor=self.executor, workers=self.workers)


class RunInfoJson(TypedDict):
    """``RunInfo`` as a report's ``info`` holds it: its fields."""

    store: str
    seconds: float
    played_now: int
    executor: str
    workers: int | None


@dataclass(frozen=True)
class Opened:
    """A run open in its store, as ``execute`` hands it to ``Run.play``: the store, the run chosen in it, each
    player's label and the store's path."""

    db: Store
    chosen: Chosen
    labels: dict[str, str]
    path: Path

    @property
    def run(self) -> str:
        return self.chosen.run

    def info(self, played: int, kind: str, seconds: float, how: Execution) -> RunInfo:
        """What a report says of how the run went: the store, the time, the games played now, the executor."""
        return RunInfo(str(self.path), round(seconds, 3), played, kind, how.n_workers if how.ex is None else None)


class Run(Protocol[R_co]):
    """A run's settings, as ``execute`` plays them: ``Match``, ``Tournament``, ``Sprt``, ``Ladder``."""

    kind: ClassVar[str]  # the store's kind of run: "match", "tournament", "sprt", "ladder"

    @property
    def game(self) -> GameSettings:
        """What every game of the run is played under."""
        ...

    def specs(self) -> tuple[str, ...]:
        """Every player, as given."""
        ...

    def settled(self, ghosts: GhostFiles | None) -> Run[R_co]:
        """The run as a store keeps it (players' paths absolute, a ghost its file's: ``canonical_specs``),
        ``UserError`` for settings that make none."""
        ...

    def run_key(self) -> Mapping[str, object]:
        """The settings its name hashes: those that decide its games, less what only extends it (JSON identity:
        each run's own ``TypedDict``)."""
        ...

    def to_json(self) -> Mapping[str, object]:
        """The settings as the store keeps them (a JSON object; each run's own ``TypedDict``)."""
        ...

    def play(self, opened: Opened, how: Execution) -> R_co:
        """Play the games the store lacks into it; the report."""
        ...


def name_of(run: Run[object]) -> str:
    """The run's settings' name (``run_name``: its kind and the hash of ``run_key``)."""
    return run_name(run.kind, run.run_key())


def execute(run: Run[R_co], how: Execution | None = None) -> R_co:
    """Play (or finish, or extend) ``run`` as ``how`` says (default: all cores, ``runs/arena/<run>.sqlite``): its
    players settled, its run chosen and registered in the store, then its own ``play``.  Ctrl-C raises
    ``RunInterrupted`` naming the store."""
    how = how or Execution()
    run = run if how.players else run.settled(how.ghosts)
    specs = list(dict.fromkeys(run.specs()))
    labels = labels_of(specs, how.player)
    versions = file_versions(specs, how.player)
    base = name_of(run)
    if how.store == MEMORY:
        with Store(None) as db:
            chosen = Chosen(versioned_name(base, versions))
            db.register(chosen.run, run.kind, RunConfig(run.to_json(), base, labels, versions))
            return run.play(Opened(db, chosen, labels, Path(MEMORY)), how)
    path = store_path(how.store, base, how.resume)
    with interruptible(path), Store(path) as db:
        chosen = choose_run(db, run.kind, base, versions, labels, how.resume, how.on_change)
        db.register(chosen.run, run.kind, RunConfig(run.to_json(), base, labels, versions, chosen.mixed))
        return run.play(Opened(db, chosen, labels, path), how)
