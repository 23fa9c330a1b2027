"""Players: the one ``Player`` type, what a player argument names and how to play it, and the names it may be.

``connectx_forge.play.resolve.reference`` decides what an argument names (a project, a file, a ghost: the
disk), using ``named`` here for the names that need no disk; ``build.cache.playable`` gives a project, a source
file that needs its project and a registered agent (for the commands that take files) the file it plays.  What
each kind of player plays:

* a registered agent (``random``, ``lookahead``... see ``cxforge agents``): its function, in this process;
* ``kaggle:random`` or ``kaggle:negamax``: kaggle_environments' built-in agents (plain ``negamax`` is refused
  with a "did you mean"; plain ``random`` is the course's agent, registered as ``random``);
* ``negamax-fast``: a bitboard clone of Kaggle's negamax with the same move distribution, several times
  faster (tools/connectx_forge/players/fast_negamax.py), for training and quick runs;
* a submission file, a built ``.py`` or ``.tar.gz`` (or any ``.py`` Kaggle could run as it is), and a project
  or a source file once built: loaded the way Kaggle loads a submission (exec in a fresh globals dict, last
  callable), afresh for every game and inside the first move, so load time counts against move 1 as it
  does on Kaggle.  The game loop plays a file in an agent host, a child process (``tools/connectx_forge/sandbox``);
* a Python function ``agent(obs, config)`` (the API's ``match``).

A ``Player`` pickles field by field: a file player as its file's path, a named one as its name (its agent is
loaded again, once per process, on the other side: even an agent that cannot be pickled, a closure such as
``negamax-fast``, plays in worker processes), a function player with its function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Protocol

from agents import registry
from agents.registry import did_you_mean
from connectx_forge import archive, kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.players.fast_negamax import agent as fast_negamax_agent

Agent = Callable[..., int]  # agent(obs, config) -> a column (what it really returns is judged: rules.py)

KAGGLE_PREFIX = "kaggle:"
GHOST_PREFIX = "ghost:"  # ghost:TEAM, tools/connectx_forge/leaderboard/ghosts
KAGGLE_BUILTINS = catalog.GAMES[catalog.CONNECTX].builtins  # ConnectX's: random, negamax
# every game's built-ins: kaggle:NAME is a player of the game whose built-in NAME is (episode.builtin_name)
FAST_NEGAMAX = "negamax-fast"
# the check's opponents (Kaggle's built-ins), as check's --opponents and a project's floors may name them
FLOOR_OPPONENTS = {"random": "random", "negamax": "negamax", "kaggle:random": "random", "kaggle:negamax": "negamax"}
# A ghost's agent file's first line starts so; the team's repr follows (``team_of`` reads it back).
GHOST_MARK = "# ConnectX submission for Kaggle, built by connectx-forge ghosts: ghost of team "
GHOST_LINE = 4096  # the most bytes of a ghost's first line (its mark) read: a team's repr is far shorter
# what follows the mark: the team's repr, one Python string literal in single or double quotes, then "."
# (no nesting, no recursion: a regex without ambiguity, linear in the line's length)
_TEAM_REPR = re.compile(r"""'((?:[^'\\\n]|\\[^\n])*)'\.?|"((?:[^"\\\n]|\\[^\n])*)"\.?""")

# the kinds of player
REGISTERED = "registered"  # a name of agents/registry.py
KAGGLE = "kaggle"  # kaggle_environments' built-in random or negamax
FAST = "fast"  # negamax-fast, tools/connectx_forge/players/fast_negamax.py
FILE = "file"  # a .py or .tar.gz file (or any existing file)
PROJECT = "project"  # an agent project folder (or, inside it, the project's own name)
CALLABLE = "callable"  # a Python function agent(obs, config)

# what callers allow
PLAYERS = frozenset({REGISTERED, KAGGLE, FAST, FILE, PROJECT})  # what every command that plays takes, by name
ANY = PLAYERS | {CALLABLE}  # and a function: the API's match (a function cannot cross to worker processes)
SUBMISSIONS = frozenset({REGISTERED, FILE, PROJECT})  # what check, upload and build take (built first)
OPPONENTS = frozenset({KAGGLE})  # check's --opponents and a project's floors: Kaggle's built-ins, bare or prefixed

_WORDS = {REGISTERED: "a registered agent", KAGGLE: "Kaggle's built-in agent", FAST: "the fast negamax",
          FILE: "a file", PROJECT: "an agent project", CALLABLE: "a function"}
_NOUNS = {SUBMISSIONS: "a submission", OPPONENTS: "an opponent of the check"}


class GhostFiles(Protocol):
    """Where ``ghost:TEAM`` players come from (``leaderboard.ghosts.agent_file.Ghosts``: ``--replays`` and
    ``--fallback``), given to the resolver by the commands that take ghosts."""

    def file(self, team: str) -> Path:
        """The agent file of ghost ``team``."""
        ...


@dataclass(frozen=True)
class Player:
    """A player: what its argument names, and how to play it.

    ``kind``: one of the kinds above; ``spec``: the argument as given (a function's name for a function);
    ``label``: what tables, files and stores call it (a project's name, a file's name, a registered name,
    ``kaggle:NAME``, ``ghost:TEAM``); ``path``: the absolute path of a file or a project's root folder, else
    None; ``name``: the registered name, the Kaggle built-in's bare name (``random``) or ``negamax-fast``, else
    None; ``agent``: a function's agent; ``submission``: the submission file a file or project plays (set by
    ``build.cache.playable``: a project's or source file's build, a file as it is), else None.
    """

    kind: str
    spec: str
    label: str
    path: Path | None = None
    name: str | None = None
    agent: Agent | None = None
    submission: str | None = None

    @property
    def canonical(self) -> str:
        """The player as a run stores it, valid from any folder and in any process: a project's root or a
        file as its absolute path, a Kaggle built-in as ``kaggle:NAME``, a name as given."""
        if self.path is not None:
            return str(self.path)
        if self.kind == KAGGLE:
            return KAGGLE_PREFIX + str(self.name)
        return self.spec

    @property
    def fresh(self) -> bool:
        """Whether it plays a submission file, loaded anew for each game (as on Kaggle, where every episode
        starts from the file); the others are functions shared by every game a process plays."""
        return self.kind in (FILE, PROJECT)

    @property
    def file(self) -> str:
        """The submission file it plays (a named player's spec: it plays none)."""
        return self.submission if self.submission is not None else self.spec

    @property
    def built_here(self) -> bool:
        """Whether the file it plays was built on the fly (into the cache), not the file it names."""
        return self.submission is not None and Path(self.submission) != Path(self.spec).expanduser()

    def new_agent(self) -> Agent:
        """The agent function for one new game."""
        if self.fresh:
            if self.submission is None:
                raise UserError(f"player {self.spec}: not built; resolve it with connectx_forge.play.resolve")
            return file_agent(self.submission)
        if self.kind == CALLABLE:
            assert self.agent is not None
            return self.agent
        return named_agent(self.kind, str(self.name))


PlayerLike = Player | str | Agent


@cache
def named_agent(kind: str, name: str) -> Agent:
    """The agent of a named player (a registered agent, a Kaggle built-in, the fast negamax), loaded once per
    process; ``UserError`` for a registered agent that cannot be loaded."""
    if kind == KAGGLE:
        return kaggle_builtin(name)
    if kind == FAST:
        return fast_negamax_agent
    try:
        return registry.get(name).load()
    except Exception as exc:  # a broken module, or a data file it reads at import is missing or bad
        raise UserError(f"agent {name!r} is registered but cannot be loaded: {type(exc).__name__}: {exc}") from None


def kaggle_builtin(name: str) -> Agent:
    """kaggle_environments' own ConnectX agent ``name`` (``random`` or ``negamax``); one line for another game's
    built-in."""
    if name not in KAGGLE_BUILTINS:
        raise UserError(f"kaggle:{name} is no built-in agent of connectx; its agents are "
                        + ", ".join(KAGGLE_PREFIX + n for n in KAGGLE_BUILTINS) + " (--game names another game)")
    kaggle_env.load()
    from kaggle_environments.envs.connectx.connectx import agents as builtins

    agent: Agent = builtins[name]  # kaggle_environments is untyped
    return agent


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
    agent: Agent  # kaggle_environments is untyped
    agent, _ = build_agent(path, {}, "connectx")
    return agent


@cache
def _unpacked(path: str) -> str:
    """A ``.tar.gz`` submission unpacked once per process into a temporary folder; its ``main.py``."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="cxforge-targz-")
    return str(archive.unpack(Path(path), Path(folder)))


def check_source(path: str) -> None:
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


def team_of(path: Path) -> str | None:
    """The team of a ghost's agent file (its first line says), else None: a ghost plays as ``ghost:TEAM`` in
    every table, store and filter, whatever its file is called.  A first line that starts with the mark but
    does not end in a quoted team name within ``GHOST_LINE`` bytes is refused in one line naming the file."""
    try:
        with path.open("rb") as fh:
            first = fh.readline(GHOST_LINE + 1)
    except OSError:
        return None
    if not first.startswith(GHOST_MARK.encode()):
        return None
    team = _team_in(first[len(GHOST_MARK):]) if len(first) <= GHOST_LINE else None
    if team is None:
        raise UserError(f"{path}: its first line is a ghost's mark without a quoted team name (UTF-8, within "
                        f"{GHOST_LINE} bytes); rebuild it with cxforge ghosts")
    return team


def _team_in(rest: bytes) -> str | None:
    """The team a ghost's mark names in ``rest`` (what follows ``GHOST_MARK``: the team's repr and "."), the
    repr's backslash escapes undone (``\\n``, ``\\xhh``, ``\\u4e2d``...); None when it is not one quoted string."""
    try:
        found = _TEAM_REPR.fullmatch(rest.decode("utf-8").rstrip("\r\n"))
        if found is None:
            return None
        body = found.group(1) if found.group(1) is not None else found.group(2)
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")  # a raw character stays itself
    except UnicodeError:
        return None


def named(spec: str, allowed: frozenset[str]) -> Player | None:
    """The player a name means where the kinds ``allowed`` are taken, reading no disk: ``kaggle:NAME``, a bare
    Kaggle built-in where only opponents are taken, a registered agent, ``negamax-fast``; None for any other."""
    if spec.startswith(KAGGLE_PREFIX) and catalog.is_builtin(spec[len(KAGGLE_PREFIX):]):
        return Player(KAGGLE, spec, spec, name=spec[len(KAGGLE_PREFIX):])
    if KAGGLE in allowed and REGISTERED not in allowed and spec in FLOOR_OPPONENTS:  # check's: random is Kaggle's
        return Player(KAGGLE, spec, KAGGLE_PREFIX + FLOOR_OPPONENTS[spec], name=FLOOR_OPPONENTS[spec])
    if spec in registry.REGISTRY and REGISTERED in allowed:  # where no registered agent is taken, it is unknown
        return Player(REGISTERED, spec, spec, name=spec)
    if spec == FAST_NEGAMAX and FAST in allowed:
        return Player(FAST, spec, spec, name=spec)
    return None


def taken(player: Player, allowed: frozenset[str], role: str) -> Player:
    """``player`` where its kind is ``allowed``; else ``UserError``: ``{role} 'x' is a file, not a submission;
    use`` the forms ``allowed`` takes."""
    if player.kind not in allowed:
        noun = _NOUNS.get(allowed, f"a {role} here")
        raise UserError(f"{role} {player.spec!r} is {_WORDS[player.kind]}, not {noun}; use {forms(allowed)}")
    return player


def unknown(spec: str, allowed: frozenset[str], role: str) -> UserError:
    """The one line for a name that is no player: ``unknown {role} 'x' (did you mean 'y'?); use ...``."""
    return UserError(f"unknown {role} {spec!r}{_hint(spec, allowed)}; use {forms(allowed)}")


def opponent(spec: str, role: str = "opponent") -> str:
    """The check's name (``random``, ``negamax``) of a Kaggle built-in written as a floor of ``cxforge.toml``
    may write it (``kaggle:random`` or ``random``); ``UserError`` for anything else."""
    player = named(spec, OPPONENTS)
    if player is None:
        raise unknown(spec, OPPONENTS, role)
    return str(taken(player, OPPONENTS, role).name)


def _names(allowed: frozenset[str]) -> list[str]:
    """The names ``allowed`` takes, for the did-you-mean."""
    names = list(registry.REGISTRY) if REGISTERED in allowed else []
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
        parts.append(f"a registered agent ({', '.join(sorted(registry.REGISTRY))})")
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


def from_callable(agent: Agent, name: str | None = None) -> Player:
    """A player wrapping a Python function (API use; it crosses to worker processes only where it pickles)."""
    label = str(name or getattr(agent, "__name__", "agent"))
    return Player(CALLABLE, label, label, agent=agent)


def player_of(p: PlayerLike) -> Player:
    """What a game takes: a ``Player``, an agent function, or a name (``named``); a project, a file or a ghost
    is resolved first (``build.reference.as_player``)."""
    if isinstance(p, Player):
        return p
    if isinstance(p, str):
        player = named(p, PLAYERS)
        if player is None:
            raise UserError(f"player {p!r}: a game takes a name or a resolved player; resolve a path or a "
                            "project with connectx_forge.play.resolve.as_player")
        named_agent(player.kind, str(player.name))  # a broken registered agent: one line now
        return player
    if callable(p):
        return from_callable(p)
    raise UserError(f"a player is a name or a path, got {type(p).__name__} {p!r}; use {forms(ANY)}")


def distinct(players: Sequence[Player]) -> list[Player]:
    """The players, those of different specs that share a label relabelled by their specs as written.

    Two files named ``agent.py`` in different folders become ``a/agent.py`` and ``b/agent.py``.
    """
    labels = [p.label for p in players]
    out = []
    for p in players:
        clash = labels.count(p.label) > 1 and len({q.spec for q in players if q.label == p.label}) > 1
        out.append(replace(p, label=p.spec) if clash else p)
    return out
