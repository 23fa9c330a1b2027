"""Player references: the one place that decides what a player argument names.

Every command that takes a player (``match``, ``tournament``, ``sprt``, ``winrates``, ``mistakes``, ``review
--us``, ``logs --agent``, ``build``, ``check``, ``upload``, check's ``--opponents``) and the notebook API
(``connectx_forge.match``...) turn it into a ``PlayerRef`` with ``reference``; what they then do with it
(play it: ``players.resolve``; build it: ``build.builder.resolve_target``, ``build.cache.playable``;
check it: ``submit.check.submission_of``; name a check's opponent: ``submit.check.builtin_opponent``) starts
from that reference.  A player argument is, in this order:

* inside a project (its folder or one below it), the project's own name (``build.project.own_project``);
* ``kaggle:random`` or ``kaggle:negamax``, kaggle_environments' built-in agents (where only they are taken,
  as by check's ``--opponents`` and a project's floors, also ``random`` and ``negamax``:
  ``build.project.FLOOR_OPPONENTS``);
* something that looks like a path (a ``/``, a ``.py`` or ``.tar.gz`` ending, ``.``, ``..``): a project
  folder or a file, which must exist;
* a registered agent's name (``cxforge agents``), then ``negamax-fast`` (where the caller takes them: elsewhere
  they are unknown names);
* a bare name that is an existing folder or file (``mybot``, from the folder above it);
* ``ghost:TEAM``, a Kaggle team replayed from downloaded replays (``tools/leaderboard/ghosts``): it becomes the ghost's
  agent file, written into the user cache (the one case where ``reference`` writes), and plays as a file
  wherever a file does;
* a Python function ``agent(obs, config)`` (the API's ``match``).

Anything else is one ``UserError``: ``unknown player 'x' (did you mean 'y'?); use ...``, the forms listed
being those the caller allows (``allow``).  A Kaggle built-in, a path or a function where the caller does not
take one is refused in the same shape (``player 'kaggle:random' is Kaggle's built-in agent, not a submission;
use ...``).
``reference`` builds nothing, loads no agent and reads no more than a file's first bytes and a project's
settings: it is cheap, and it never caches (a path's kind is what the disk says now).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.registry import did_you_mean
from connectx_forge.errors import UserError

KAGGLE_PREFIX = "kaggle:"
GHOST_PREFIX = "ghost:"  # ghost:TEAM, tools/ghosts
KAGGLE_BUILTINS = ("random", "negamax")
FAST_NEGAMAX = "negamax-fast"

# the kinds of player
REGISTERED = "registered"  # a name of agents/registry.py
KAGGLE = "kaggle"  # kaggle_environments' built-in random or negamax
FAST = "fast"  # negamax-fast, tools/play/fast_negamax.py
FILE = "file"  # a .py or .tar.gz file (or any existing file)
PROJECT = "project"  # an agent project folder (or, inside it, the project's own name)
CALLABLE = "callable"  # a Python function agent(obs, config)

# what callers allow
PLAYERS = frozenset({REGISTERED, KAGGLE, FAST, FILE, PROJECT})  # what every command that plays takes, by name
ANY = PLAYERS | {CALLABLE}  # and a function: the API's match (a function cannot cross to worker processes)
SUBMISSIONS = frozenset({REGISTERED, FILE, PROJECT})  # what check, upload and build take (built first)
OPPONENTS = frozenset({KAGGLE})  # check's --opponents and a project's floors: Kaggle's built-ins, bare or prefixed



@dataclass(frozen=True)
class Ghosts:
    """Where ``ghost:TEAM`` players come from (``--replays``, ``--fallback``, the API's ``replays=`` and
    ``fallback=``): replay files or folders (none: ``$CXFORGE_REPLAYS``, else ``./replays``) and the agent a
    ghost plays off its record (None: ``$CXFORGE_GHOST_FALLBACK``, else ``lookahead``).  Passed to ``reference``,
    which makes a ghost its agent file: a run's workers get the file's path, never the team's name."""

    replays: tuple[str, ...] = ()
    fallback: str | None = None


NO_GHOSTS = Ghosts()

_WORDS = {REGISTERED: "a registered agent", KAGGLE: "Kaggle's built-in agent", FAST: "the fast negamax",
          FILE: "a file", PROJECT: "an agent project", CALLABLE: "a function"}
_NOUNS = {SUBMISSIONS: "a submission", OPPONENTS: "an opponent of the check"}


@dataclass(frozen=True)
class PlayerRef:
    """What a player argument names.

    ``kind``: one of the kinds above; ``spec``: the argument as given (a function's name for a function);
    ``label``: what tables, files and stores call it (a project's name, a file's name, a registered name,
    ``kaggle:NAME``); ``path``: the absolute path of a file or a project's root folder, else None; ``name``:
    the registered name, the Kaggle built-in's bare name (``random``) or ``negamax-fast``, else None;
    ``agent``: a function's agent.
    """

    kind: str
    spec: str
    label: str
    path: Path | None = None
    name: str | None = None
    agent: Callable[..., Any] | None = None

    @property
    def canonical(self) -> str:
        """The reference as a run stores it, valid from any folder and in any process: a project's root or a
        file as its absolute path, a Kaggle built-in as ``kaggle:NAME``, a name as given."""
        if self.path is not None:
            return str(self.path)
        if self.kind == KAGGLE:
            return KAGGLE_PREFIX + str(self.name)
        return self.spec

    @property
    def built(self) -> bool:
        """A file the bundler wrote (a ``.tar.gz``, or a ``.py`` whose first line says so): it plays as it is."""
        from connectx_forge.build.cache import is_built

        return self.kind == FILE and self.path is not None and is_built(self.path)

    @property
    def needs_build(self) -> bool:
        """Whether playing or checking it builds it first: a project, a registered agent (for the commands that
        take files), a source ``.py`` that needs its project (``build.cache.needs_build``)."""
        from connectx_forge.build.cache import needs_build

        if self.kind in (PROJECT, REGISTERED):
            return True
        return self.kind == FILE and self.path is not None and self.path.suffix == ".py" and needs_build(self.path)


def looks_like_path(spec: str) -> bool:
    """Whether a player argument is written as a path (so it is never taken as a name)."""
    return spec.endswith((".py", ".tar.gz")) or os.sep in spec or "/" in spec or spec in (".", "..")


def reference(spec: Any, *, allow: Iterable[str] = PLAYERS, role: str = "player",
              ghosts: Ghosts = NO_GHOSTS) -> PlayerRef:
    """The player ``spec`` names (a string, a path, or a function where ``allow`` takes one); ``UserError``,
    one line, for anything else: ``unknown {role} 'x' (did you mean 'y'?); use`` the forms ``allow`` takes.

    ``allow``: the kinds the caller takes (``PLAYERS``, ``ANY``, ``SUBMISSIONS``, ``OPPONENTS``); a
    kind it does not take is refused in the same shape.  ``role``: the noun of the messages (``opponent``).
    ``ghosts``: where a ``ghost:TEAM`` comes from.
    """
    allowed = frozenset(allow)
    ref = _decide(spec, allowed, role, ghosts)
    if ref.kind not in allowed:
        noun = _NOUNS.get(allowed, f"a {role} here")
        raise UserError(f"{role} {ref.spec!r} is {_WORDS[ref.kind]}, not {noun}; use {forms(allowed)}")
    return ref


def _decide(spec: Any, allowed: frozenset[str], role: str, ghosts: Ghosts) -> PlayerRef:
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        if callable(spec):
            label = str(getattr(spec, "__name__", "agent"))
            return PlayerRef(CALLABLE, label, label, agent=spec)
        raise UserError(f"a {role} is a name or a path, got {type(spec).__name__} {spec!r}; use {forms(allowed)}")
    if PROJECT in allowed:
        from connectx_forge.build.project import name_of, own_project

        own = own_project(spec)  # inside a project, its own name means it
        if own is not None:
            return PlayerRef(PROJECT, spec, name_of(own), own)
    if spec.startswith(GHOST_PREFIX) and FILE in allowed:
        return _ghost(spec[len(GHOST_PREFIX):], ghosts)
    if spec.startswith(KAGGLE_PREFIX) and spec[len(KAGGLE_PREFIX):] in KAGGLE_BUILTINS:
        return PlayerRef(KAGGLE, spec, spec, name=spec[len(KAGGLE_PREFIX):])
    if KAGGLE in allowed and REGISTERED not in allowed:  # the check's opponents: random is Kaggle's, not ours
        from connectx_forge.build.project import FLOOR_OPPONENTS

        if spec in FLOOR_OPPONENTS:
            return PlayerRef(KAGGLE, spec, KAGGLE_PREFIX + FLOOR_OPPONENTS[spec], name=FLOOR_OPPONENTS[spec])
    paths = FILE in allowed or PROJECT in allowed
    if spec.strip() and looks_like_path(spec) and (paths or os.path.exists(Path(spec).expanduser())):
        return _path(spec, role)
    from agents.registry import REGISTRY

    if spec in REGISTRY and REGISTERED in allowed:  # where no registered agent is taken, a name is unknown
        return PlayerRef(REGISTERED, spec, spec, name=spec)
    if spec == FAST_NEGAMAX and FAST in allowed:
        return PlayerRef(FAST, spec, spec, name=spec)
    if paths and spec.strip() and os.path.exists(Path(spec).expanduser()):
        return _path(spec, role)
    raise UserError(f"unknown {role} {spec!r}{_hint(spec, allowed)}; use {forms(allowed)}")


def _ghost(team: str, ghosts: Ghosts) -> PlayerRef:
    """``ghost:TEAM``: the ghost's agent file (its replays and fallback from ``ghosts``: see
    ``tools/leaderboard/ghosts``), as
    a file player labelled ``ghost:TEAM`` (its file says so: the label holds wherever the file goes, a stored
    run's path included)."""
    from connectx_forge.leaderboard.ghosts.agent_file import ghost_file
    from connectx_forge.leaderboard.ghosts.observed_moves import load_books

    path = ghost_file(load_books(list(ghosts.replays) or None).team(team), ghosts.fallback).resolve()
    return PlayerRef(FILE, str(path), GHOST_PREFIX + team, path)


def _path(spec: str, role: str) -> PlayerRef:
    """A player written as a path (or a bare name that exists): a project folder or a file."""
    from connectx_forge.build import project as projects

    path = Path(spec).expanduser()
    if path.is_dir():
        if not projects.is_project_folder(path):
            raise UserError(f"{role} {spec}: not an agent project: no {projects.SETTINGS_FILE} (or pyproject.toml "
                            "with [tool.cxforge]) and no main.py; create one with cxforge new")
        root = path.resolve()
        return PlayerRef(PROJECT, spec, projects.name_of(root), root)
    if path.is_file():
        return PlayerRef(FILE, spec, _file_label(path.resolve()), path.resolve())
    raise UserError(f"{role} {spec}: no such file or folder")


def _file_label(path: Path) -> str:
    """A file's label: ``ghost:TEAM`` for a ghost's agent file, its name, or, for a source ``.py`` that is built
    first, what it builds (its project's name when it is the project's entry, else its stem)."""
    from connectx_forge.build.cache import is_built, needs_build
    from connectx_forge.leaderboard.ghosts.agent_file import team_of

    team = team_of(path) if path.suffix == ".py" else None
    if team is not None:
        return GHOST_PREFIX + team
    if path.suffix != ".py" or is_built(path) or not needs_build(path):
        return path.name
    from connectx_forge.build.builder import default_root, target_for_file
    from connectx_forge.build.errors import BuildError

    try:
        return target_for_file(path, default_root()).name
    except BuildError:  # a broken project: the build that comes next says what is wrong
        return path.stem


def _names(allowed: frozenset[str]) -> list[str]:
    """The names ``allowed`` takes, for the did-you-mean."""
    from agents.registry import REGISTRY

    names = list(REGISTRY) if REGISTERED in allowed else []
    if KAGGLE in allowed:
        names += [KAGGLE_PREFIX + n for n in KAGGLE_BUILTINS]
        if REGISTERED not in allowed:
            names += list(KAGGLE_BUILTINS)
    if FAST in allowed:
        names.append(FAST_NEGAMAX)
    return names


def _hint(spec: str, allowed: frozenset[str]) -> str:
    if KAGGLE in allowed and spec in KAGGLE_BUILTINS:  # bare negamax where a registered name could be meant
        return f" (did you mean {KAGGLE_PREFIX + spec!r}?)"
    return did_you_mean(spec, _names(allowed))


def forms(allow: Iterable[str]) -> str:
    """The forms a caller takes, as the messages list them."""
    allowed = frozenset(allow)
    parts = []
    if REGISTERED in allowed:
        from agents.registry import REGISTRY

        parts.append(f"a registered agent ({', '.join(sorted(REGISTRY))})")
    if KAGGLE in allowed:
        kaggle = " or ".join(KAGGLE_PREFIX + n for n in KAGGLE_BUILTINS)
        parts.append(kaggle if REGISTERED in allowed else
                     f"Kaggle's built-in agents {kaggle} (or {', '.join(KAGGLE_BUILTINS)})")
    if FAST in allowed:
        parts.append(FAST_NEGAMAX)
    if PROJECT in allowed:
        parts.append("a project folder")
    if FILE in allowed:
        parts.append("a path to a .py or .tar.gz file")
    if CALLABLE in allowed:
        parts.append("a function agent(obs, config)")
    return ", or ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else "".join(parts)
