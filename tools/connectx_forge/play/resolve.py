"""The resolver of player arguments: the one place that decides what a player argument names.

Every command that takes a player (``match``, ``tournament``, ``sprt``, ``winrates``, ``mistakes``, ``review
--us``, ``logs --agent``, ``build``, ``check``, ``upload``, check's ``--opponents``) and the notebook API
(``connectx_forge.match``...) turn it into a ``Player`` (``tools/connectx_forge/players/player.py``) with ``reference``;
to play
it, ``resolve`` (or ``as_player``) gives it what it plays: a registered agent loaded, a project or a source
file built into the cache (``cache.playable``).  It lives beside the bundler because most of what an argument
may name is a thing to build.  A player argument is, in this order:

* inside a project (its folder or one below it), the project's own name (``project.own_project``);
* ``ghost:TEAM``, a Kaggle team replayed from downloaded replays: it becomes the ghost's agent file, made by
  the ``ghosts`` the caller gives (``tools/connectx_forge/leaderboard/ghosts``: the one case where resolving writes),
  and
  plays as a file wherever a file does;
* ``kaggle:random`` or ``kaggle:negamax``, kaggle_environments' built-in agents (where only they are taken,
  as by check's ``--opponents`` and a project's floors, also ``random`` and ``negamax``);
* something that looks like a path (a ``/``, a ``.py`` or ``.tar.gz`` ending, ``.``, ``..``): a project
  folder or a file, which must exist;
* a registered agent's name (``cxforge agents``), then ``negamax-fast`` (where the caller takes them: elsewhere
  they are unknown names; ``players.named``);
* a bare name that is an existing folder or file (``mybot``, from the folder above it);
* a Python function ``agent(obs, config)`` (the API's ``match``).

Anything else is one ``UserError``: ``unknown player 'x' (did you mean 'y'?); use ...``, the forms listed
being those the caller allows (``allow``).  A Kaggle built-in, a path or a function where the caller does not
take one is refused in the same shape (``player 'kaggle:random' is Kaggle's built-in agent, not a submission;
use ...``).  ``reference`` builds nothing, loads no agent and reads no more than a file's first bytes and a
project's settings: it is cheap, and it never caches (a path's kind is what the disk says now).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from pathlib import Path

from agents.registry import strongest
from connectx_bundler import project as projects
from connectx_bundler.builder import (
    Target,
    default_root,
    target_for_file,
    target_for_module,
    target_for_project,
    target_of,
)
from connectx_bundler.cache import is_built, playable, source_needs_build
from connectx_bundler.errors import BuildError
from connectx_forge.boundedread import open_unlinked
from connectx_forge.errors import UserError
from connectx_forge.players import player as players
from connectx_forge.players.player import (
    CALLABLE,
    FILE,
    GHOST_PREFIX,
    KAGGLE,
    PLAYERS,
    PROJECT,
    SUBMISSIONS,
    GhostFiles,
    Player,
    PlayerLike,
    forms,
    named,
    named_agent,
    taken,
    team_of,
    unknown,
)


def looks_like_path(spec: str) -> bool:
    """Whether a player argument is written as a path (so it is never taken as a name)."""
    return spec.endswith((".py", ".tar.gz")) or os.sep in spec or "/" in spec or spec in (".", "..")


def reference(spec: object, *, allow: Iterable[str] = PLAYERS, role: str = "player",
              ghosts: GhostFiles | None = None) -> Player:
    """The player ``spec`` names (a string, a path, or a function where ``allow`` takes one); ``UserError``,
    one line, for anything else: ``unknown {role} 'x' (did you mean 'y'?); use`` the forms ``allow`` takes.

    ``allow``: the kinds the caller takes (``PLAYERS``, ``ANY``, ``SUBMISSIONS``, ``OPPONENTS``); a
    kind it does not take is refused in the same shape.  ``role``: the noun of the messages (``opponent``).
    ``ghosts``: where a ``ghost:TEAM`` comes from (None: the caller takes no ghost).
    """
    allowed = frozenset(allow)
    return taken(_decide(spec, allowed, role, ghosts), allowed, role)


def _decide(spec: object, allowed: frozenset[str], role: str, ghosts: GhostFiles | None) -> Player:
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        if callable(spec):
            label = str(getattr(spec, "__name__", "agent"))
            return Player(CALLABLE, label, label, agent=spec)
        raise UserError(f"a {role} is a name or a path, got {type(spec).__name__} {spec!r}; use {forms(allowed)}")
    if PROJECT in allowed:
        own = projects.own_project(spec)  # inside a project, its own name means it
        if own is not None:
            return Player(PROJECT, spec, projects.name_of(own), own)
    if spec.startswith(GHOST_PREFIX) and FILE in allowed:
        return _ghost(spec, ghosts, role)
    paths = FILE in allowed or PROJECT in allowed
    if spec.strip() and looks_like_path(spec) and (paths or os.path.exists(Path(spec).expanduser())):
        return _path(spec, role)
    player = named(spec, allowed)
    if player is not None:
        return player
    if paths and spec.strip() and os.path.exists(Path(spec).expanduser()):
        return _path(spec, role)
    raise unknown(spec, allowed, role)


def _ghost(spec: str, ghosts: GhostFiles | None, role: str) -> Player:
    """``ghost:TEAM``: the ghost's agent file (made by ``ghosts``: see ``tools/connectx_forge/leaderboard/ghosts``),
    as a file
    player labelled ``ghost:TEAM`` (its file says so: the label holds wherever the file goes, a stored run's
    path included)."""
    if ghosts is None:
        raise UserError(f"{role} {spec!r}: a ghost plays in match, tournament, sprt and ladder (with --replays), "
                        "not here; give its agent file (cxforge ghosts --write)")
    path = ghosts.file(spec[len(GHOST_PREFIX):]).resolve()
    return Player(FILE, str(path), spec, path)


def _path(spec: str, role: str) -> Player:
    """A player written as a path (or a bare name that exists): a project folder or a file."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if not projects.is_project_folder(path):
            raise UserError(f"{role} {spec}: not an agent project: no {projects.SETTINGS_FILE} (or pyproject.toml "
                            "with [tool.cxforge]) and no main.py; create one with cxforge new")
        root = path.resolve()
        return Player(PROJECT, spec, projects.name_of(root), root)
    if path.is_file():
        os.close(open_unlinked(path))  # no link to it, nor in a folder on its path: boundedread.open_unlinked
        return Player(FILE, spec, _file_label(path.resolve()), path.resolve())
    raise UserError(f"{role} {spec}: no such file or folder")


def _file_label(path: Path) -> str:
    """A file's label: ``ghost:TEAM`` for a ghost's agent file, its name, or, for a source ``.py`` that is built
    first, what it builds (its project's name when it is the project's entry, else its stem)."""
    team = team_of(path) if path.suffix == ".py" else None
    if team is not None:
        return GHOST_PREFIX + team
    if path.suffix != ".py" or is_built(path) or not source_needs_build(path):
        return path.name
    try:
        return target_for_file(path, default_root()).name
    except BuildError:  # a broken project: the build that comes next says what is wrong
        return path.stem


class _Resolve:
    """``resolve``: cached per spec in this process, a project's own name first turned into its root (the name
    means the project only inside its folder, so the cache never holds it), a ghost into its file."""

    def __call__(self, spec: str, ghosts: GhostFiles | None = None) -> Player:
        """The player a spec names, ready to play (a ghost's from ``ghosts``): a registered agent or a built-in
        loaded, a project or a source file built on the fly (``cache.playable``), a file checked readable;
        ``UserError`` with the accepted forms otherwise (``reference``)."""
        own = projects.own_project(spec)
        if own is not None:
            spec = str(own)
        elif spec.startswith(GHOST_PREFIX):
            spec = reference(spec, ghosts=ghosts).spec
        return _resolved(spec)

    def cache_clear(self) -> None:
        """Forget what this process resolved and loaded (as a new command would: projects are built again)."""
        _resolved.cache_clear()
        named_agent.cache_clear()


resolve = _Resolve()


@cache
def _resolved(spec: str) -> Player:
    player = reference(spec)
    if not player.fresh:
        if player.kind != KAGGLE:  # a Kaggle built-in is its game's (the game checks it); kaggle_environments is sound
            named_agent(player.kind, str(player.name))  # a broken registered agent: one line now
        return player
    if player.kind == FILE and player.path is not None:
        players.check_source(str(player.path))
    try:
        return playable(player)
    except BuildError as exc:
        raise UserError(f"player {spec}: {exc}") from None


def canonical_spec(spec: str, ghosts: GhostFiles | None = None) -> str:
    """The spec as a run stores it, valid from any folder and in any process (``Player.canonical``: a
    project's own name, a path and a ghost as the absolute path, anything else as given); a spec that names no
    player as given (``resolve`` refuses it as the user wrote it)."""
    try:
        return reference(spec, ghosts=ghosts).canonical
    except UserError:
        return spec


def label_of(spec: str) -> str:
    """The label games record for ``spec``: a project's or file's label (a project's own name, inside its
    folder, is its label), else the name as given (a name that is no player included)."""
    try:
        player = reference(spec)
    except UserError:
        return spec
    return player.label if player.kind in (FILE, PROJECT) else spec


def as_player(p: PlayerLike | os.PathLike[str], ghosts: GhostFiles | None = None) -> Player:
    """A player ready to play from a spec (a string or a path; a ghost's from ``ghosts``), a ``Player`` (a
    project or source file built) or an agent function; anything else is ``reference``'s one ``UserError``."""
    if isinstance(p, Player):
        return p if not p.fresh or p.submission is not None else replace(resolve(p.canonical), label=p.label)
    if isinstance(p, (str, os.PathLike)):
        return resolve(os.fspath(p), ghosts)
    return reference(p, allow=players.ANY)  # a function: the one kind that is neither a name nor a path


def resolve_target(name: str | None, root: Path | None = None, module: str | None = None,
                   function: str | None = None) -> Target:
    """The target ``cxforge build`` builds: a project folder, a ``.py`` path or a registered name (``reference``,
    allowing what a submission can be), or a module; ``BuildError`` for a name that is none of them.

    ``name`` None: the project in the working folder when it has settings, else the strongest registered agent.
    ``module``: a module of the shipped agents (``weighted`` or ``agents.weighted``), or of the project at
    ``root`` (default: the shipped agents' folder).
    """
    shipped = default_root() if root is None else root
    if module is not None:
        return target_for_module(module, shipped, function)
    if name is None and root is None and projects.settings_file(Path.cwd()) is not None:
        return target_for_project(projects.load(Path.cwd(), function))
    try:
        player = named(strongest().name, SUBMISSIONS) if name is None else reference(name, allow=SUBMISSIONS)
    except UserError as exc:
        raise BuildError(str(exc)) from None
    assert player is not None
    return target_of(player, shipped, function)
