"""What the games of a run share (``GameSettings``), and one game of a run as a job (``GameJob``).

``GameSettings`` is one frozen value in place of the long parameter lists that
``play_game``, ``run_match``, the arena's tournaments and SPRTs passed down:

* ``size``: rows, columns, inarow (``agents.board.Size``, default ``STANDARD``, 6x7x4);
* ``act_timeout``, ``overage``: Kaggle's clock (2 s a move, a 60 s bank);
* ``limits``: the agent hosts' limits (``tools/connectx_forge/sandbox/limits.Limits``: ``--memory``,
  ``--slowdown``, ...; None: the defaults); ``slowdown`` reads it;
* ``isolate``: every player given by a spec plays in an agent host too (files always do);
* ``game``: which game (``games.catalog``): ConnectX, or another two-player game of kaggle-environments, played
  by its own interpreter under its own clock (``size``, ``act_timeout`` and ``overage`` are ConnectX's).

Every run (``Match``, ``Tournament``, ``Sprt``, ``Ladder``: ``tools/connectx_forge/arena/run.Run``) holds one; the
command line builds it from the flags (``arena/flags.game_of``), the notebook API takes it (``game=``) or
builds it from the same keywords (``of``).  Its checks are here, once: a bad value is one ``UserError``.
``run_key`` gives what a run's name hashes of it (a ``GameKey``).

A ``GameJob`` is one seeded game under those settings: players A and B, A's mark
(``colour``), the game's own seed, its place in the schedule (``slot``: a match's
game index, a run's pair), the opening as 0-based columns (``opening``; ``digits``
gives Pons' 1-based notation the arena's store keys use) and, in a tournament or
SPRT, the pairing's name.  ``cxforge match`` and the arena make the same jobs; a job
is what is sent to a worker (a process pool's or Dask's) and replays alone with
``game.play_job(job)``.

The opening and the seed are per game, so they are the job's, not the settings'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from agents.board import STANDARD, Size
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE, kaggle_number
from connectx_forge.players.player import PlayerLike
from connectx_forge.sandbox.limits import DEFAULT_MEMORY, MIB, Limits

MIN_MEMORY = 64 * MIB  # Python itself needs it


def host_limits(memory: int | None, slowdown: float = 1.0) -> Limits | None:
    """The agent hosts' ``Limits`` of ``--memory`` (bytes; None: the default) and ``--slowdown``; None when both
    are the defaults."""
    if memory is None and slowdown == 1.0:
        return None
    return Limits(memory=DEFAULT_MEMORY if memory is None else memory, slowdown=slowdown)


@dataclass(frozen=True)
class GameSettings:
    """The board size, Kaggle's clock and the agent hosts' limits that every game of a run is played under."""

    size: Size = STANDARD
    act_timeout: float = ACT_TIMEOUT
    overage: float = OVERAGE
    limits: Limits | None = None  # None: the hosts' defaults (Limits())
    isolate: bool = False  # every player given by a spec in an agent host (only a host can be slowed down)
    game: str = catalog.CONNECTX  # the game's name (games.catalog)

    def __post_init__(self) -> None:
        catalog.get(self.game)  # one line for a game that is not known, or cannot be played here
        rows, columns, inarow = self.size  # a list or any 3-sequence is kept as the one tuple type
        object.__setattr__(self, "size", (int(rows), int(columns), int(inarow)))
        if not self.act_timeout > 0:
            raise UserError(f"--act-timeout must be positive, got {self.act_timeout:g}")
        if not self.overage >= 0:
            raise UserError(f"--overage must not be negative, got {self.overage:g}")
        if not 1 <= self.slowdown <= 100:
            raise UserError(f"--slowdown takes a factor from 1 to 100 (2: twice as slow), got {self.slowdown:g}")
        if self.limits is not None and self.limits.memory < MIN_MEMORY:
            raise UserError(f"--memory must be at least 64 MiB (Python itself needs it), got {self.limits.memory} "
                            "bytes")

    @classmethod
    def of(cls, size: Size = STANDARD, act_timeout: float = ACT_TIMEOUT, overage: float = OVERAGE,
           memory: int | None = None, slowdown: float = 1.0, isolate: bool = False,
           game: str = catalog.CONNECTX) -> GameSettings:
        """The settings of the flags (``--act-timeout``, ``--overage`` as Kaggle's numbers, ``--memory`` in bytes,
        ``--slowdown``, ``--isolate``): a slowed-down run plays every player in an agent host (only a host can
        be slowed down)."""
        if not 1 <= slowdown <= 100:  # before Limits takes it
            raise UserError(f"--slowdown takes a factor from 1 to 100 (2: twice as slow), got {slowdown:g}")
        return cls(size, kaggle_number(act_timeout), kaggle_number(overage), host_limits(memory, slowdown),
                   isolate or slowdown > 1, game)

    @property
    def slowdown(self) -> float:
        """The agent hosts' slowdown (``--slowdown``): 1 unless ``limits`` say otherwise."""
        return 1.0 if self.limits is None else self.limits.slowdown

    @property
    def memory(self) -> int | None:
        """The agent hosts' address space (``--memory``, bytes): None unless ``limits`` say otherwise."""
        return None if self.limits is None else self.limits.memory

    def to_json(self) -> GameSettingsJson:
        """The settings as a run stores them (its flags' values)."""
        out = GameSettingsJson(size=list(self.size), act_timeout=self.act_timeout, overage=self.overage,
                               memory=self.memory, slowdown=self.slowdown, isolate=self.isolate, game=self.game)
        if self.game == catalog.CONNECTX:  # the settings of ConnectX's runs stay as they were
            del out["game"]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSettings:
        """The settings ``to_json`` wrote, as stored (``stored_settings.checked`` checks what this makes)."""
        return cls.of(tuple(data["size"]), data["act_timeout"], data["overage"], data["memory"], data["slowdown"],
                      data["isolate"], data.get("game", catalog.CONNECTX))

    def run_key(self) -> GameKey:
        """What a run's name hashes of these settings: the host limits only where not the defaults."""
        out = GameKey(size=list(self.size), act_timeout=self.act_timeout, overage=self.overage, memory=self.memory,
                      slowdown=self.slowdown, isolate=self.isolate)
        if self.memory in (None, DEFAULT_MEMORY):
            del out["memory"]
        if self.slowdown == 1.0:
            del out["slowdown"]
        if self.game != catalog.CONNECTX:  # a ConnectX run keeps its name
            out["game"] = self.game
        return out


class GameSettingsJson(TypedDict):
    """``GameSettings`` as a run stores them (``GameSettings.to_json``): the flags' values."""

    size: list[int]
    act_timeout: float
    overage: float
    memory: int | None
    slowdown: float
    isolate: bool
    game: NotRequired[str]


class GameKey(TypedDict):
    """A run's ``GameSettings`` as its name hashes them (``GameSettings.run_key``): ``memory`` and ``slowdown``
    only where not the defaults, so that a run at the default limits has the name of one that gives none."""

    size: list[int]
    act_timeout: float
    overage: float
    memory: NotRequired[int | None]
    slowdown: NotRequired[float]
    isolate: bool
    game: NotRequired[str]


@dataclass(frozen=True)
class GameJob:
    """One game of a run: A with mark ``colour`` against B from ``opening`` (0-based columns), seeded alone.

    ``a`` and ``b`` are players as ``play_game`` takes them: the arena sends specs
    (a Dask worker resolves them itself), ``cxforge match`` resolved ``Player``s.
    """

    a: PlayerLike  # a spec (the arena's jobs: ``arena.run.spec_of``), a Player or a callable that pickles
    b: PlayerLike
    colour: int  # A's mark: 1 moves first
    seed: int
    slot: int  # the game's place in the schedule: a match's game index, a tournament's or SPRT's pair
    opening: tuple[int, ...] = ()
    settings: GameSettings = field(default_factory=GameSettings)
    pairing: str = ""  # a tournament's or SPRT's pairing, as its store keys the game

    def __post_init__(self) -> None:
        object.__setattr__(self, "opening", tuple(int(c) for c in self.opening))

    @property
    def digits(self) -> str:
        """The opening in Pons' notation (1-based column digits), as opening suites and the arena's store write it."""
        return "".join(str(c + 1) for c in self.opening)

    @property
    def limits(self) -> Limits | None:
        return self.settings.limits

    @property
    def isolate(self) -> bool:
        return self.settings.isolate

    def seats(self) -> tuple[PlayerLike, PlayerLike]:
        """The players in mark order: (first, second)."""
        return (self.a, self.b) if self.colour == 1 else (self.b, self.a)


def from_digits(digits: str) -> tuple[int, ...]:
    """Pons' 1-based column digits (``"4453"``) as 0-based columns."""
    return tuple(int(ch) - 1 for ch in digits)
