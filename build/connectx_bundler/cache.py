"""Built on the fly: every command that plays or checks a project or a source file builds it first.

A project folder, a ``.py`` file that needs its project (it imports a module
beside it, reads data through ``read_data``, or belongs to a project with
settings) or a registered agent is built into the user cache
(``~/.cache/cxforge/builds/``), named by the built file's sha256, with its
manifest beside it; the same sources give the same file, so a rebuild is a
cache hit.  A built file (``.tar.gz``, or a ``.py`` that the bundler wrote) and
a self-contained ``.py`` (one Kaggle could run as it is) play as they are.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import replace
from pathlib import Path

from connectx_bundler import project as projects
from connectx_bundler.builder import Target, build, target_of
from connectx_bundler.bundle import HEADER
from connectx_bundler.embed import READER, called_name
from connectx_bundler.errors import BuildError
from connectx_bundler.manifest import dumps, manifest_path
from connectx_forge.paths import user_cache
from connectx_forge.players.player import FILE, PROJECT, REGISTERED, Player
from connectx_forge.safe_write import make_folder, write_bytes

BUILT_MARK = HEADER.splitlines()[0].split("{")[0].encode()  # the first line of every file the bundler writes


def cache_dir() -> Path:
    return user_cache() / "builds"


def is_built(path: Path) -> bool:
    """A ``.tar.gz``, or a ``.py`` the bundler wrote (its first line says so)."""
    if path.name.endswith(".tar.gz"):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(len(BUILT_MARK)) == BUILT_MARK
    except OSError:
        return False


def needs_build(player: Player) -> bool:
    """Whether playing or checking ``player`` builds it first: a project, a registered agent (for the commands
    that take files), a source ``.py`` that needs its project (``source_needs_build``)."""
    if player.kind in (PROJECT, REGISTERED):
        return True
    return player.kind == FILE and player.path is not None and player.path.suffix == ".py" \
        and source_needs_build(player.path)


def source_needs_build(path: Path) -> bool:
    """Whether a source ``.py`` needs its project: it belongs to one with settings, imports a module beside
    it (or relatively, or from ``connectx_forge``), or reads data files.  Anything else, a file that does
    not parse included, plays as it is: that is what Kaggle would run."""
    if is_built(path):
        return False
    if projects.find_root(path.resolve().parent) is not None:
        return True
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
        return False
    folder = path.resolve().parent
    return any(_needs_project(node, folder) for node in ast.walk(tree))


def _needs_project(node: ast.AST, folder: Path) -> bool:
    """Whether one node reads data or imports something that only the project (or the toolkit) has."""
    if isinstance(node, ast.Call):
        return called_name(node) == READER
    if isinstance(node, ast.ImportFrom) and node.level:
        return True
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) else []
    tops = {name.partition(".")[0] for name in names}
    return any(top == "connectx_forge" or (folder / f"{top}.py").is_file() or (folder / top).is_dir()
               for top in tops if top)


def build_cached(target: Target) -> Path:
    """Build ``target`` into the cache (if that file is not there yet); the built file, its manifest beside it."""
    built = build(target)
    folder = cache_dir()
    digest = hashlib.sha256(built.content).hexdigest()[:16]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in target.name)
    out = folder / f"{safe}-{digest}.py"
    try:
        make_folder(folder)
        if not out.is_file():
            write_bytes(out, built.content, replace=True)
        write_bytes(manifest_path(out), dumps(built.manifest).encode(), replace=True)
    except OSError as exc:
        raise BuildError(f"cannot write the build cache {folder} ({exc.strerror}); set CXFORGE_CACHE "
                         "to a writable folder") from None
    return out


def playable(player: Player) -> Player:
    """``player`` with the file it plays or is checked as (``Player.submission``): a project, a source ``.py`` that
    needs its project and a registered agent built into the cache (labelled as the build names them); any
    other file as it is."""
    if player.kind not in (FILE, PROJECT, REGISTERED) or (player.kind != REGISTERED and player.path is None):
        raise BuildError(f"{player.spec}: {player.kind} is no file to play or check")
    if needs_build(player):
        target = target_of(player)
        return replace(player, label=target.name, submission=str(build_cached(target)))
    return replace(player, submission=str(Path(player.spec).expanduser()))
