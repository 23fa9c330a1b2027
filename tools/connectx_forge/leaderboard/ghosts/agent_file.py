"""A ghost as a Kaggle agent file: the team's observed book embedded as data, the fallback agent embedded whole.

The file is what every command plays for ``ghost:TEAM`` (``Ghosts``, given to
``tools/connectx_forge/play/resolve.py``): one
self-contained ``.py``, loadable as Kaggle loads a submission (exec'd in empty globals, the last callable is the
agent), so it plays in match, tournament, sprt and the ladder like any built file.  Its first line is the bundler's
mark, so it plays as it is.  The fallback is built as ``cxforge build`` builds it and embedded as source text,
exec'd once in a namespace of its own.

On a recorded position it plays a move the team played there, drawn with ``random`` weighted by the counts:
each seat's ``random`` is seeded from the game's seed (``tools/connectx_forge/play/seat_random.py``), so a run replays
from
``--seed``.  Each move it prints ``ghost TEAM: on record R/T moves this game`` to its stdout (``cxforge logs``
shows it; the last line of a game is its tally).  Files are cached by content under the user cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from agents.registry import REGISTRY
from connectx_bundler.cache import playable
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.ghosts.observed_moves import TeamBook, load_books
from connectx_forge.paths import user_cache
from connectx_forge.play.resolve import reference
from connectx_forge.players.player import GHOST_MARK, REGISTERED, SUBMISSIONS
from connectx_forge.safe_write import make_folder, write_bytes

FALLBACK_ENV = "CXFORGE_GHOST_FALLBACK"
# A quick, pure-Python tactical player: it builds in a moment into a small file, needs no weights or native code,
# and never loses to a one-move threat, so a ghost off its record is neither a pushover nor a solver in disguise.
DEFAULT_FALLBACK = "lookahead"

# A ghost file's first line is GHOST_MARK and the team's repr (``players.team_of`` reads it back).
TEMPLATE = GHOST_MARK + '''{team_repr}.
# Plays the moves the team was seen playing ({positions} positions from {games} game(s)); elsewhere {fallback!r}.
# Self-contained: Kaggle takes the last callable in this file, `agent`, defined at the end.
import json as _json
import random as _random

_TEAM = {team_repr}
_BOOK = _json.loads({book!r})
_FALLBACK_SOURCE = {source!r}
_fallback = None
_tally = [0, 0]


def _load_fallback():
    global _fallback
    if _fallback is None:
        space = {{"__name__": "builtins"}}
        exec(compile(_FALLBACK_SOURCE, "<ghost fallback {fallback}>", "exec"), space)
        _fallback = [v for v in space.values() if callable(v)][-1]
    return _fallback


def agent(obs, config):
    board = list(obs["board"])
    if sum(1 for c in board if c) < 2:
        _tally[0] = _tally[1] = 0
    _tally[1] += 1
    seen = _BOOK.get("".join(str(c) for c in board)) if len(board) == 42 else None
    move = None
    if seen:
        columns = sorted(seen)
        pick = _random.random() * sum(seen[c] for c in columns)
        for c in columns:
            pick -= seen[c]
            if pick < 0:
                move = int(c)
                break
        move = int(columns[-1]) if move is None else move
        _tally[0] += 1
    else:
        move = int(_load_fallback()(obs, config))
    print("ghost %s: on record %d/%d moves this game" % (_TEAM, _tally[0], _tally[1]))
    return move
'''


def fallback_name(given: str | None = None) -> str:
    """The fallback agent: ``given``, else ``$CXFORGE_GHOST_FALLBACK``, else ``DEFAULT_FALLBACK``."""
    return given or os.environ.get(FALLBACK_ENV) or DEFAULT_FALLBACK


def fallback_source(name: str) -> str:
    """The fallback's built single-file source (a registered agent or a project or .py, as ``cxforge build``)."""
    player = reference(name, allow=SUBMISSIONS, role="ghost fallback")
    if player.kind == REGISTERED:
        if not REGISTRY[name].valid:
            raise UserError(f"ghost fallback {name!r} plays illegal moves on purpose; pick another agent")
    path = Path(playable(player).file)
    if not path.name.endswith(".py"):
        raise UserError(f"ghost fallback {name!r} builds to {path.name}, not one .py file; pick an agent "
                        "without native code")
    return path.read_text(encoding="utf-8")


def render(book: TeamBook, fallback: str) -> str:
    """The ghost's file text."""
    data = json.dumps(book.to_data(), separators=(",", ":"), sort_keys=True)
    return TEMPLATE.format(team_repr=repr(book.team).replace("\n", " "), positions=book.positions,
                           games=book.games, fallback=fallback, book=data, source=fallback_source(fallback))


def ghost_file(book: TeamBook, fallback: str | None = None, folder: Path | None = None) -> Path:
    """The ghost's agent file, written once into ``folder`` (default: the user cache's ``ghosts/``), named
    ``ghost-TEAM.py`` in a folder named by its content's sha256 (the same book and fallback, the same file)."""
    text = render(book, fallback_name(fallback))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", book.team)[:60] or "team"
    out = (folder if folder is not None else user_cache() / "ghosts" / digest) / f"ghost-{safe}.py"
    try:
        make_folder(out.parent)
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            write_bytes(out, text.encode(), replace=True)
    except OSError as exc:
        raise UserError(f"cannot write the ghost file {out} ({exc.strerror})") from None
    return out


@dataclass(frozen=True)
class Ghosts:
    """Where ``ghost:TEAM`` players come from (``--replays``, ``--fallback``, the API's ``replays=`` and
    ``fallback=``): replay files or folders (none: ``$CXFORGE_REPLAYS``, else ``./replays``) and the agent a
    ghost plays off its record (None: ``$CXFORGE_GHOST_FALLBACK``, else ``lookahead``).  Given to the players'
    resolver (``build.reference``), which plays a ghost as its agent file: a run's workers get the file's
    path, never the team's name."""

    replays: tuple[str, ...] = ()
    fallback: str | None = None

    def file(self, team: str) -> Path:
        """The agent file of ghost ``team`` (``ghost_file``)."""
        return ghost_file(load_books(list(self.replays) or None).team(team), self.fallback)
