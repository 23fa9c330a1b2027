"""Players: a player argument (``reference.py`` decides what it names) resolved into agents to play.

What each kind of reference plays:

* a registered agent (``random``, ``lookahead``... see ``cxforge agents``): its function, in this process;
* ``kaggle:random`` or ``kaggle:negamax``: kaggle_environments' built-in agents (plain ``negamax`` is refused
  with a "did you mean"; plain ``random`` is the course's agent, registered as ``random``);
* ``negamax-fast``: a bitboard clone of Kaggle's negamax with the same move
  distribution, several times faster (tools/play/fast_negamax.py), for training and quick runs;
* a submission file, a built ``.py`` or ``.tar.gz`` (or any ``.py``
  Kaggle could run as it is): loaded the way Kaggle loads a submission (exec in
  a fresh globals dict, last callable), afresh for every game and inside the
  first move, so load time counts against move 1 as it does on Kaggle.  The game
  loop plays a file in an agent host, a child process (``tools/sandbox``), never
  in its own process;
* an agent project folder, or a ``.py`` file that needs its
  project (``build/cache.py``): built on the fly into the user cache, then
  played as its built file, labelled with the project's name.

Specs are strings so they can cross process boundaries: a player made by
``resolve`` pickles as its spec and is resolved again on the other side
(``resolve`` caches per process), so even an agent that cannot be pickled (a
closure such as ``negamax-fast``) can be played by worker processes.  A player
wrapping a Python function (``from_callable``) pickles with its function.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from agents import registry
from connectx_forge import archive, kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.play.reference import (
    ANY,
    CALLABLE,
    FAST,
    FAST_NEGAMAX,  # noqa: F401  (re-exported: the names are reference.py's)
    FILE,
    GHOST_PREFIX,
    KAGGLE,
    KAGGLE_BUILTINS,  # noqa: F401
    KAGGLE_PREFIX,  # noqa: F401
    NO_GHOSTS,
    PROJECT,
    REGISTERED,
    Ghosts,
    reference,
)

Agent = Callable[..., Any]


@dataclass(frozen=True)
class Player:
    """A resolved player: its spec, a display name, and how to get an agent for one game.

    ``fresh`` players (submission files) are loaded anew for each game, as on
    Kaggle where every episode starts from the file; the others are plain
    functions, shared by every game a process plays.
    """

    spec: str
    name: str
    kind: str  # the reference's vocabulary (tools/play/reference.py): REGISTERED, KAGGLE, FAST, FILE or CALLABLE
    _agent: Agent | None = None
    by_spec: bool = False  # made by ``resolve``: pickles as its spec
    path: str | None = None  # the submission file a FILE player plays (default: the spec)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle a resolved player as ``resolve(spec)`` (keeping its label); others field by field."""
        if self.by_spec:
            return (resolve_labelled, (self.spec, self.name))
        return (Player, (self.spec, self.name, self.kind, self._agent, False, self.path))

    @property
    def fresh(self) -> bool:
        return self.kind == FILE

    @property
    def file(self) -> str:
        """The submission file a FILE player plays."""
        return self.path or self.spec

    def new_agent(self) -> Agent:
        """The agent function for one new game."""
        if self.kind == FILE:
            return file_agent(self.file)
        assert self._agent is not None
        return self._agent


def kaggle_builtin(name: str) -> Agent:
    """kaggle_environments' own ConnectX agent ``name`` (``random`` or ``negamax``)."""
    kaggle_env.load()
    from kaggle_environments.envs.connectx.connectx import agents as builtins

    return builtins[name]


def file_agent(path: str) -> Agent:
    """A submission file as Kaggle runs it: loaded lazily, inside the first call.

    This is ``kaggle_environments.agent.build_agent``: the source is exec'd in an
    empty globals dict, the last callable is the agent, the file's folder is on
    ``sys.path`` while it loads, and ``config.__raw_path__`` is set.
    """
    kaggle_env.load()
    from kaggle_environments.agent import build_agent

    if path.endswith(".tar.gz"):
        path = _unpacked(path)
    agent, _ = build_agent(path, {}, "connectx")
    return agent


@cache
def _unpacked(path: str) -> str:
    """A ``.tar.gz`` submission unpacked once per process into a temporary folder; its ``main.py``."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="cxforge-targz-")
    return str(archive.unpack(Path(path), Path(folder)))


def _check_source(path: str) -> None:
    """Fail early, with one line, on a file that cannot be read.

    A file that does not compile is not refused here: it is played, in an agent
    host, and loses each game with a ``load`` failure, as it would on Kaggle.
    """
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise UserError(f"cannot read player file {path}: {exc.strerror or exc}") from None
    if path.endswith(".tar.gz"):
        archive.check(Path(path))


def canonical(spec: str, ghosts: Ghosts = NO_GHOSTS) -> str:
    """The spec as a run stores it, valid from any folder and in any process (``PlayerRef.canonical``: a
    project's own name, a path and a ghost as the absolute path, anything else as given); a spec that names no
    player as given (``resolve`` refuses it as the user wrote it)."""
    try:
        return reference(spec, ghosts=ghosts).canonical
    except UserError:
        return spec


class _Resolve:
    """``resolve``: cached per spec, a project's own name first turned into its root (the name means the
    project only inside its folder, so the cache never holds it)."""

    def __call__(self, spec: str, ghosts: Ghosts = NO_GHOSTS) -> Player:
        """The player a spec names (a ghost's from ``ghosts``); ``UserError`` with the accepted forms otherwise
        (``reference``)."""
        from connectx_forge.build.project import own_project

        own = own_project(spec)
        if own is not None:
            spec = str(own)
        elif spec.startswith(GHOST_PREFIX):  # its agent file: the player pickles as the file's path
            spec = reference(spec, ghosts=ghosts).spec
        return _resolve_spec(spec)

    def cache_clear(self) -> None:
        _resolve_spec.cache_clear()


resolve = _Resolve()


@cache
def _resolve_spec(spec: str) -> Player:
    player = _resolve(spec)
    return Player(player.spec, player.name, player.kind, player._agent, by_spec=True, path=player.path)


def resolve_labelled(spec: str, name: str) -> Player:
    """``resolve(spec)`` shown as ``name`` (how a relabelled player crosses a process boundary)."""
    player = resolve(spec)
    return player if player.name == name else replace(player, name=name)


def distinct(players: Sequence[Player]) -> list[Player]:
    """The players, those of different specs that share a label relabelled by their specs as written.

    Two files named ``agent.py`` in different folders become ``a/agent.py`` and ``b/agent.py``.
    """
    names = [p.name for p in players]
    out = []
    for p in players:
        clash = names.count(p.name) > 1 and len({q.spec for q in players if q.name == p.name}) > 1
        out.append(replace(p, name=p.spec) if clash else p)
    return out


def _resolve(spec: str) -> Player:
    """The player ``reference(spec)`` names, ready to play: a registered agent or a built-in loaded, a project
    or a source file built on the fly (``build.cache.playable_of``), a file checked readable."""
    ref = reference(spec)
    if ref.kind == KAGGLE:
        return Player(spec, ref.label, KAGGLE, kaggle_builtin(str(ref.name)))
    if ref.kind == REGISTERED:
        try:
            agent = registry.get(spec).load()
        except Exception as exc:  # a broken module, or a data file it reads at import is missing or bad
            raise UserError(f"agent {spec!r} is registered but cannot be loaded: {type(exc).__name__}: {exc}") from None
        return Player(spec, spec, REGISTERED, agent)
    if ref.kind == FAST:
        from connectx_forge.play.fast_negamax import agent as fast_negamax_agent

        return Player(spec, spec, FAST, fast_negamax_agent)
    if ref.kind == FILE and ref.path is not None:
        _check_source(str(ref.path))
    from connectx_forge.build.cache import playable_of
    from connectx_forge.build.errors import BuildError

    try:
        file = playable_of(ref)
    except BuildError as exc:
        raise UserError(f"player {spec}: {exc}") from None
    return Player(ref.spec, file.label, FILE, path=str(file.path))  # a ghost: its file's path


def label_of(spec: str) -> str:
    """The label games record for ``spec``: a project's or file's label (``PlayerRef.label``: a project's own
    name, inside its folder, is its label), else the name as given (a name that is no player included)."""
    try:
        ref = reference(spec)
    except UserError:
        return spec
    return ref.label if ref.kind in (FILE, PROJECT) else spec


def from_callable(agent: Agent, name: str | None = None) -> Player:
    """A player wrapping a Python function (API use, in-process only)."""
    label = str(name or getattr(agent, "__name__", "agent"))
    return Player(label, label, CALLABLE, agent)


PlayerLike = Player | str | Agent


def as_player(p: PlayerLike | os.PathLike[str], ghosts: Ghosts = NO_GHOSTS) -> Player:
    """A player from a spec (a string or a path; a ghost's from ``ghosts``), a ``Player`` or an agent function;
    anything else is ``reference``'s one ``UserError`` line."""
    if isinstance(p, Player):
        return p
    if isinstance(p, (str, os.PathLike)):
        return resolve(os.fspath(p), ghosts)
    ref = reference(p, allow=ANY)  # a function: the one kind that is neither a name nor a path
    assert ref.agent is not None
    return from_callable(ref.agent)
