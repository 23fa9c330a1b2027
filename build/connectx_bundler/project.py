"""An agent project: a folder of the user's, anywhere on disk, and its settings.

A project is a root folder holding the entry module, any helper modules and
packages, and data files.  Its settings live in ``cxforge.toml`` at the root,
or under ``[tool.cxforge]`` in its ``pyproject.toml``::

    name = "mybot"
    entry = "mybot.main:act"        # module:function, as Python entry points are written
    game = "connectx"               # the game it plays (games.catalog; default connectx)
    [floors]                        # the check's win-rate floors against each of the game's built-in agents
    random = 0.9
    "kaggle:negamax" = 0.5
    [native]                        # C libraries: name -> sources (build/connectx_bundler/native_libs.py)
    engine = ["native/engine.c"]

A folder with no settings file builds ``main:agent``; a single ``.py`` file
with none builds that file (its ``agent``, else its last top-level function, the
one Kaggle would call), with no floors.  ``load`` validates everything and
raises ``BuildError`` with one line naming the file and the fix.

A project never reaches past its own root, and its root is never a folder that holds more than an agent:
``/``, a home folder (or a folder above one) or a folder holding credentials (``credentials.exposes``) is
refused in one line (``refuse_root``), and the walk up from a file (``find_root``) stops below the home
folder and ``/``.  A lone ``.py`` (no project has it as its entry, even one inside a project's folder) is
built from a private copy in a folder holding only it (``alone``): neither the bundler nor its agent sees
the files beside it.  Name the project's folder to build the project.
"""

from __future__ import annotations

import ast
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agents.registry import did_you_mean
from connectx_bundler.errors import BuildError
from connectx_bundler.files import read_inside, read_text_inside
from connectx_forge import boundedread
from connectx_forge.credentials import exposes, homes
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.paths import user_cache
from connectx_forge.players.player import opponent as opponent_name
from connectx_forge.safe_write import make_folder, write_bytes

SETTINGS_FILE = "cxforge.toml"
PYPROJECT = "pyproject.toml"
KEYS = ("name", "entry", "floors", "native", "game")
DEFAULT_ENTRY = "main:agent"
OWN_FOLDER = "move your agent into a folder of its own (cxforge new mybot makes one)"
ALONE = "alone"  # the user cache's folder of lone files' private copies, one folder each
MAX_ALONE = boundedread.MAX_DOCUMENT  # the largest lone .py copied to be built


@dataclass(frozen=True)
class Project:
    """A user's agent project: where it is, what to build, and the check's floors."""

    root: Path
    name: str
    module: str
    function: str
    floors: dict[str, float] = field(default_factory=dict)
    settings: Path | None = None  # the file the settings came from
    entry_path: Path | None = None  # the entry file, when it is not found from the module name (a lone .py)
    native: dict[str, list[str]] = field(default_factory=dict)  # C library name -> its sources (root-relative)
    origin: Path | None = None  # a lone .py as given, built from its private copy at ``entry_path`` (``alone``)
    game: str = catalog.CONNECTX  # the game it plays (``game`` of its settings)

    @property
    def entry(self) -> str:
        return f"{self.module}:{self.function}"


def settings_file(folder: Path) -> Path | None:
    """The settings file of project folder ``folder``: cxforge.toml, or a pyproject.toml with [tool.cxforge]."""
    if (folder / SETTINGS_FILE).is_file():
        return folder / SETTINGS_FILE
    pyproject = folder / PYPROJECT
    if pyproject.is_file() and "[tool.cxforge" in pyproject.read_text(encoding="utf-8", errors="replace"):
        return pyproject
    return None


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that has a settings file, or None.  The walk stops below the
    home folder and ``/``: never a project (``refuse_root``), and a settings file there must not make every
    file below it a project's."""
    stops = {*homes(), os.path.realpath("/")}
    for folder in (start, *start.parents):
        if os.path.realpath(folder) in stops:
            return None
        if settings_file(folder) is not None:
            return folder
    return None


def refuse_root(root: Path) -> None:
    """``BuildError``, one line, where ``root`` may not be a project's folder (``credentials.exposes``: ``/``, a
    home folder or one above it, a folder holding credentials): the build and the agent may read all of it."""
    problem = exposes(root)
    if problem is not None:
        raise BuildError(f"{root}: {problem}, and a project's folder is what its build and its agent may read; "
                         f"{OWN_FOLDER}")


def own_project(spec: str, start: Path | None = None) -> Path | None:
    """The project a player spec names by its own name: the one rule for every command that takes a player.

    Inside a project (the folder with the settings file, or any folder below it;
    ``start``: default the working folder), the project's ``name`` (cxforge.toml's,
    or its folder's name when the settings give none) means the project itself,
    before a registered agent and before a file or folder of that name (such as the
    package ``mybot/`` inside project ``mybot``).  Its root folder, else None.
    """
    if not isinstance(spec, str) or not spec or "/" in spec or "\\" in spec or spec in (".", ".."):
        return None
    try:
        root = find_root((start if start is not None else Path.cwd()).resolve())
    except OSError:  # the working folder was removed
        return None
    if root is None or settings_file(root) is None:
        return None
    return root if name_of(root) == spec else None


def name_of(root: Path) -> str:
    """A project's name as reports show it: its settings' ``name``, else its folder's name; a broken settings
    file gives the folder's name (it is reported where the project is loaded, not here)."""
    settings = settings_file(root)
    try:
        name = read_settings(settings).get("name", root.name) if settings is not None else root.name
    except BuildError:
        return root.name
    return name if isinstance(name, str) and name.strip() else root.name


def read_settings(path: Path) -> dict[str, object]:
    """The raw settings table of ``path`` (cxforge.toml, or pyproject.toml's [tool.cxforge])."""
    try:
        text = read_text_inside(path.parent, path, str(path), boundedread.MAX_SETTINGS)
        data = boundedread.parse_toml(text, str(path))
    except UserError as exc:  # a bound broken, or not TOML
        raise BuildError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BuildError(f"{path}: cannot read it ({exc})") from None
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        section = tool.get("cxforge", {}) if isinstance(tool, dict) else None
        if not isinstance(section, dict):
            raise BuildError(f"{path}: [tool.cxforge] must be a table")
        return section
    return data


def parse_entry(entry: object, where: str) -> tuple[str, str]:
    """``module:function`` (or a bare ``module``, meaning its ``agent``) as its two parts."""
    if not isinstance(entry, str):
        raise BuildError(f"{where}: entry must be a string such as \"mybot.main:act\", not {entry!r}")
    module, _, function = entry.partition(":")
    function = function or "agent"
    if not all(part.isidentifier() for part in module.split(".")) or not function.isidentifier():
        raise BuildError(f"{where}: entry {entry!r} is not module:function (e.g. \"mybot.main:act\"); "
                         "use dotted module names and a function name")
    return module, function


def parse_game(game: object, where: str) -> str:
    """``game``: a game of the catalog (``games.catalog``), by name.  A known game whose packages this Python
    lacks is taken (building needs none of them); playing it names them in one line (``catalog.get``)."""
    if not isinstance(game, str):
        raise BuildError(f"{where}: game must be a string such as \"rps\", not {game!r}")
    if game not in catalog.known():
        try:
            catalog.get(game)
        except UserError as exc:
            raise BuildError(f"{where}: {exc}") from None
    return game


def floor_opponent(spec: object, game: str = catalog.CONNECTX, role: str = "opponent") -> str:
    """The bare name of the built-in agent a floor names in ``game``: ConnectX's ``random`` or ``negamax``
    (``players.opponent``), another game's built-in ``NAME`` or ``kaggle:NAME`` (``GameInfo.builtins``);
    ``UserError``, one line, for anything else."""
    builtins = catalog.known()[game].builtins
    name = opponent_name(str(spec), role) if game == catalog.CONNECTX else str(spec).removeprefix("kaggle:")
    if name not in builtins:
        raise UserError(f"unknown {role} {spec!r}{did_you_mean(name, list(builtins))}: {game}'s built-in agents "
                        "are " + ", ".join("kaggle:" + b for b in builtins))
    return name


def parse_floors(floors: object, where: str, game: str = catalog.CONNECTX) -> dict[str, float]:
    """The ``[floors]`` table as the check's opponents (the game's built-ins by their bare names: ConnectX's
    ``random``, ``negamax``; planet_wars' ``do_nothing``...) -> win rate in [0, 1]."""
    if not isinstance(floors, dict):
        raise BuildError(f"{where}: floors must be a table, e.g. [floors] random = 0.9")
    out: dict[str, float] = {}
    for opponent, rate in floors.items():
        try:
            name = floor_opponent(opponent, game)
        except UserError as exc:
            raise BuildError(f"{where}: floors: {exc}") from None
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise BuildError(f"{where}: floors: {opponent} = {rate!r} must be a win rate between 0 and 1")
        out[str(name)] = float(rate)
    return out


def parse_native(native: object, root: Path, where: str) -> dict[str, list[str]]:
    """The ``[native]`` table: library name -> its C sources, paths relative to the project root."""
    if not isinstance(native, dict):
        raise BuildError(f"{where}: native must be a table of libraries, e.g. [native] engine = [\"native/engine.c\"]")
    out: dict[str, list[str]] = {}
    for name, sources in native.items():
        if not name.isidentifier():
            raise BuildError(f"{where}: native: {name!r} is not a library name (use a Python name, e.g. engine)")
        if isinstance(sources, str):
            sources = [sources]
        if not isinstance(sources, list) or not sources or not all(isinstance(x, str) for x in sources):
            raise BuildError(f"{where}: native: {name} must list its C sources, e.g. [\"native/{name}.c\"]")
        for rel in sources:
            path = (root / rel).resolve()
            if not rel.endswith(".c") or ".." in Path(rel).parts or Path(rel).is_absolute():
                raise BuildError(f"{where}: native: {name}: {rel!r} must be a .c file inside the project")
            if not path.is_file():
                raise BuildError(f"{where}: native: {name}: no file {rel} in the project ({root})")
        out[name] = list(sources)
    return out


def from_settings(root: Path, path: Path) -> Project:
    """The project at ``root`` whose settings are in ``path``."""
    refuse_root(root)
    data = read_settings(path)
    for key in data:
        if key not in KEYS:
            raise BuildError(f"{path}: unknown setting {key!r}{did_you_mean(key, KEYS)}; "
                             f"the settings are {', '.join(KEYS)}")
    name = data.get("name", root.resolve().name)
    if not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\\n"):
        raise BuildError(f"{path}: name must be a non-empty string without slashes, not {name!r}")
    module, function = parse_entry(data.get("entry", DEFAULT_ENTRY), str(path))
    game = parse_game(data.get("game", catalog.CONNECTX), str(path))
    floors = parse_floors(data.get("floors", {}), str(path), game)
    native = parse_native(data.get("native", {}), root, str(path))
    return Project(root, name, module, function, floors, path, native=native, game=game)


def last_function(path: Path) -> str:
    """``agent`` if ``path`` defines it at top level, else its last top-level function (Kaggle's last callable)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return "agent"
    functions = [s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return "agent" if "agent" in functions or not functions else functions[-1]


def load(path: Path, function: str | None = None) -> Project:
    """The project a path names: a project folder, or a ``.py`` file (alone, or inside a project).

    A ``.py`` file inside a project whose entry it is builds that project; any other ``.py`` file builds alone,
    from a private copy in a folder holding only it (``alone``): its siblings are not importable, even inside
    a project.  ``function`` overrides the entry's function.
    """
    path = path.expanduser()
    if path.is_dir():
        root = path.resolve()
        settings = settings_file(root)
        if settings is not None:
            project = from_settings(root, settings)
        elif (root / "main.py").is_file():
            refuse_root(root)
            project = Project(root, root.name, "main", "agent")
        else:
            raise BuildError(f"{path}: not an agent project: no {SETTINGS_FILE} (or pyproject.toml with "
                             "[tool.cxforge]) and no main.py; create one with cxforge new")
        return _with_function(project, function)
    if not path.is_file():
        raise BuildError(f"{path}: no such file or folder")
    if path.suffix != ".py":
        raise BuildError(f"{path}: not a .py file or a project folder")
    file = path.resolve()
    found = find_root(file.parent)
    settings = settings_file(found) if found is not None else None
    if found is not None and settings is not None:
        owner = from_settings(found, settings)
        if module_file(owner.root, owner.module) == file:
            return _with_function(owner, function)
    stem = file.stem
    if not stem.isidentifier():
        raise BuildError(f"{path}: cannot be built as a module named {stem!r}; rename the file to a Python name")
    copy = alone(file)
    return Project(copy.parent, stem, stem, function or last_function(copy), entry_path=copy, origin=file)


def alone(file: Path) -> Path:
    """A private copy of the lone ``.py`` ``file``, in a folder that holds only it: the user cache's
    ``alone/DIGEST/`` (0700, named by the file's name and bytes, so that a rebuild finds it).  The file is read
    as a project file is (``files.read_inside``: a regular file of one name, not in a credentials folder) and
    bounded by ``MAX_ALONE``."""
    content = read_inside(file.parent, file, str(file), MAX_ALONE)
    digest = hashlib.sha256(file.name.encode() + b"\0" + content).hexdigest()[:32]
    folder = user_cache() / ALONE / digest
    try:
        make_folder(folder.parent)  # in the user cache: 0700, no link followed
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
        others = [n for n in os.listdir(folder) if n != file.name and not n.startswith(".")]  # but a write's temp
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077 or others:
            raise BuildError(f"{folder}: not a private folder holding only {file.name} (a lone .py is built from "
                             "one); remove it")
        copy = folder / file.name
        if copy.is_symlink() or not copy.is_file() or copy.read_bytes() != content:
            write_bytes(copy, content, replace=True)
    except OSError as exc:
        raise BuildError(f"cannot write the build cache {folder} ({exc.strerror}); set CXFORGE_CACHE to a "
                         "writable folder") from None
    return copy


def _with_function(project: Project, function: str | None) -> Project:
    if function is None:
        return project
    return Project(project.root, project.name, project.module, function, project.floors, project.settings,
                   project.entry_path, project.native, project.origin, project.game)


def module_file(root: Path, module: str) -> Path | None:
    """The file of ``module`` under ``root`` (``a/b.py`` or ``a/b/__init__.py``), or None."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def is_project_folder(path: Path) -> bool:
    """Whether ``path`` is a folder that ``load`` accepts as a project."""
    return path.is_dir() and (settings_file(path) is not None or (path / "main.py").is_file())
