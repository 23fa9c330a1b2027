"""The flags that several ``cxforge`` commands share, defined once so that each means one thing.

* ``-n/--games N``: games to play (or positions, where a command plays none);
* ``-w/--workers W``: worker processes (default: all cores; 1 runs in this process);
* ``--seed S``: the base seed, 0 unless given; the same seed gives the same run;
* ``--json``: print the result as JSON on stdout instead of the table;
* ``-o/--out PATH``: where a command writes its other output (a file or a folder, as its help says);
* ``--save FILE``: every game a command plays, one JSON line each, written as it finishes; an existing
  FILE is refused (one line, before any game) unless ``--append`` adds the games to its end;
* ``--force``: replace the outputs that exist, which every command that writes refuses without it
  (``tools/connectx_forge/outputs.py``: one rule for files and folders alike);
* ``--rows/--columns/--inarow``: the board size (Kaggle's leaderboard plays 6x7x4);
* ``--no-progress``: no progress bar (bars also switch off when stderr is not a terminal).

Every output flag is declared (``register_output``), and ``prepare`` makes its folder, checks it is
writable and refuses an existing output without ``--force`` before a command does any work.  The value types here
(``positive_int``, ``positive_float``, ...) turn a bad value into argparse's one-line error.

``cxforge --help`` imports this module (its help formatter) and no command, so the converters that build a
run's objects from the flags (the jail's limits, the game writer, the ghosts, the solver engine) import them
when called.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.board import STANDARD, Size
from agents.solver.engine import KINDS
from connectx_forge import outputs
from connectx_forge.errors import UserError
from connectx_forge.outputs import Written
from connectx_forge.safe_write import check_target, make_folder


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def nonnegative_float(text: str) -> float:
    """An argparse type: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of at least 0, got {text!r}")
    return value


_positive_int = positive_int  # the names of the first version
_seed = nonnegative_int


def add_games(parser: argparse.ArgumentParser, default: int | None, what: str = "games to play",
              required: bool = False) -> None:
    """``-n/--games N``."""
    suffix = f" (default {default})" if default is not None else ""
    parser.add_argument("-n", "--games", type=positive_int, default=default, metavar="N", help=what + suffix,
                        required=required)


def add_workers(parser: argparse.ArgumentParser, many: bool = False,
                what: str = "worker processes (default: all cores; 1 runs in this process)") -> None:
    """``-w/--workers W``: processes; ``None`` (all cores) unless given.

    ``many``: a benchmark's list of worker counts to measure (``-w 1 2``), also ``None`` unless given.
    ``what``: the help line, where a command's workers are of another kind (the checker's isolated processes).
    """
    if many:
        parser.add_argument("-w", "--workers", type=positive_int, nargs="+", default=None, metavar="W",
                            help="worker process counts to measure (default: 1 and all cores)")
        return
    parser.add_argument("-w", "--workers", type=positive_int, default=None, metavar="W", help=what)


def workers_of(args: argparse.Namespace) -> int:
    """The number of workers ``-w`` asked for, all cores when it was not given."""
    return args.workers if args.workers is not None else (os.cpu_count() or 1)


def add_memory(parser: argparse.ArgumentParser) -> None:
    """``--memory SIZE``: the address space each agent host may add (``tools/connectx_forge/sandbox/limits``)."""
    parser.add_argument("--memory", type=_memory, default=None, metavar="SIZE",
                        help="address space each agent host may add to what it starts with: MiB (512) or "
                             "with K/M/G (1.5G); default 2G")


def _memory(text: str) -> int:
    from connectx_forge.sandbox.limits import parse_memory  # as limits_of: the jail's modules, when a flag is read

    try:
        return parse_memory(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_slowdown(parser: argparse.ArgumentParser) -> None:
    """``--slowdown X``: each agent host gets 1/X of a CPU, as on a machine X times slower."""
    parser.add_argument("--slowdown", type=_slowdown, default=1.0, metavar="X",
                        help="run each agent host on 1/X of a CPU, as on a machine X times slower, while Kaggle's "
                             "clock stays wall time: does the agent still keep it? (default 1: full speed)")


def _slowdown(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"--slowdown takes a factor from 1 to 100 (2: twice as slow), got {text!r}")
    return value


def add_seed(parser: argparse.ArgumentParser, what: str = "base seed; the same seed replays the same run") -> None:
    """``--seed S``, default 0 in every command."""
    parser.add_argument("--seed", type=nonnegative_int, default=0, metavar="S", help=f"{what} (default 0)")


def add_json(parser: argparse.ArgumentParser, what: str = "print the result as JSON instead of the table") -> None:
    """``--json``: JSON on stdout.  Pair with ``add_out`` for a file."""
    parser.add_argument("--json", action="store_true", help=what)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written."""


class Parser(argparse.ArgumentParser):
    """Every ``cxforge`` parser: a long flag only by its whole name, never a prefix of it (``--game rps`` is no
    ``--games rps``: ``allow_abbrev`` is off whatever the caller asks), with help kept as written.  The parsers
    made under one (``add_subparsers().add_parser``) are of its class, so they refuse prefixes too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


OUTPUTS = "_outputs"  # the namespace attribute listing a parser's outputs: (dest, "file", "folder" or "update")
RULES = "_output_rules"  # dest -> (its flag, its default, the files a folder output would hold)


def add_out(parser: argparse.ArgumentParser, what: str, default: Path | str | None = None,
            kind: str = "file", shown: str | None = None, written: Written | None = None) -> None:
    """``-o/--out PATH``, a ``kind`` of output, as ``what`` says: "file" (one file), "folder" (``DIR``, files
    written into it: ``written`` names them) or "update" (a file the command adds to, such as a book ``book
    fill`` extends).  Its folder is made, and checked writable, and an existing output refused without
    ``--force``, before the command starts (``prepare``; the rule: ``tools/connectx_forge/outputs.py``).  ``shown``: the
    default as help shows it (instead of an absolute path that differs from machine to machine)."""
    suffix = f" (default {shown or default})" if default is not None else ""
    refused = ("; an existing PATH is refused unless --force" if kind == "file" else
               "; a DIR holding its files is refused unless --force" if written is not None else "")
    parser.add_argument("-o", "--out", type=Path, default=None if default is None else Path(default),
                        metavar="DIR" if kind == "folder" else "PATH", help=what + suffix + refused)
    register_output(parser, "out", kind, written)


def add_force(parser: argparse.ArgumentParser) -> None:
    """``--force``: replace the outputs that exist, the same in every command that writes (once a parser)."""
    if "--force" not in parser._option_string_actions:
        parser.add_argument("--force", action="store_true", help=outputs.FORCE_HELP)


SAVE_HELP = ("write {what} as a JSON line to FILE as it finishes (what review, replay and logs read); "
             "an existing FILE is refused unless --append or --force")
APPEND_HELP = "with --save: add the games to the end of an existing FILE instead of refusing it"


def add_save(parser: argparse.ArgumentParser, what: str = "every game") -> None:
    """``--save FILE`` and ``--append``: every game the command plays, one JSON line each, written as it
    finishes; ``what``: the games, as help names them
    (``"every game (the validation episode first)"``).  ``prepare`` refuses an existing FILE without
    ``--append`` or ``--force`` (``outputs.check_save``) before any game is played; open the file with
    ``writer_of(args)``."""
    parser.add_argument("--save", dest="save", type=Path, default=None, metavar="FILE",
                        help=SAVE_HELP.format(what=what))
    parser.add_argument("--append", action="store_true", help=APPEND_HELP)
    register_output(parser, "save", "file")
    parser.add_argument("--save-replays", type=Path, default=None, metavar="DIR",
                        help="with --save, also each game's Kaggle replay into DIR, for games other than connectx "
                             "(cxforge replay DIR/FILE.json shows one)")
    register_output(parser, "save_replays", "folder")  # added to, as a resumed run adds its games


def register_output(parser: argparse.ArgumentParser, dest: str, kind: str, written: Written | None = None) -> None:
    """Declare ``dest`` an output of the command: ``prepare`` makes its folder before any work and refuses, without
    ``--force`` (added here), a "file" that exists or a "folder" that holds one of the files ``written`` names.
    An "update" output, and a folder without ``written`` (a set or a cache the command continues), are added to,
    never replaced: they need no ``--force``."""
    assert kind in ("file", "folder", "update") and (written is None or kind == "folder")
    flag = next((a.option_strings[0] for a in parser._actions if a.dest == dest and a.option_strings), None)
    rule = (flag, parser.get_default(dest), written)
    parser.set_defaults(**{OUTPUTS: [*(parser.get_default(OUTPUTS) or []), (dest, kind)],
                           RULES: {**(parser.get_default(RULES) or {}), dest: rule}})
    if kind == "file" or written is not None:
        add_force(parser)


def add_ghosts(parser: argparse.ArgumentParser) -> None:
    """``--replays`` and ``--fallback``: where ``ghost:TEAM`` players come from
    (``tools/connectx_forge/leaderboard/ghosts``), the same
    in
    every command that plays games."""
    parser.add_argument("--replays", nargs="+", default=None, metavar="PATH",
                        help="for ghost:TEAM players: Kaggle replay files or folders of them (default "
                             "$CXFORGE_REPLAYS, else ./replays)")
    parser.add_argument("--fallback", default=None, metavar="NAME",
                        help="for ghost:TEAM players: the agent a ghost plays off its record (default "
                             "$CXFORGE_GHOST_FALLBACK, else lookahead)")


def prepare(args: argparse.Namespace) -> None:
    """Before any work: every output the command was given has its folder made and is writable, or one
    ``UserError`` line says why not, so that no run ends with nowhere to put its results."""
    for dest, kind in getattr(args, OUTPUTS, None) or ():
        if getattr(args, dest, None) is not None:  # a link on the way is refused first, whatever else is wrong
            _no_link(Path(getattr(args, dest)), kind)
        keep_existing(args, dest, kind)
        path = getattr(args, dest, None)
        if path is not None:
            prepare_output(Path(path), kind)


def keep_existing(args: argparse.Namespace, dest: str, kind: str) -> None:
    """The rule of ``tools/connectx_forge/outputs.py`` for the output ``dest``: ``UserError`` (one line) when it
    exists, or its
    folder holds a file the command would write, and ``--force`` was not given.  A dry run writes nothing; a
    resumed run (``--resume``) rewrites its own reports in its folder."""
    force = bool(getattr(args, "force", False))
    path = getattr(args, dest, None)
    flag, default, written = (getattr(args, RULES, None) or {}).get(dest, (None, None, None))
    what = "the default output" if path is not None and path == default else ""
    flag = None if what else flag  # a default is named by its path alone, not by a flag that was not given
    if dest == "save":
        outputs.check_save(path, bool(getattr(args, "append", False)), force)
    elif getattr(args, "dry_run", False):
        return
    elif kind == "file":
        outputs.check_output(path, force, flag, what)
    elif written is not None and not getattr(args, "resume", False):
        outputs.check_folder(path, written, force, flag)


def _no_link(path: Path, kind: str) -> None:
    """``UnsafeOutput`` (one line) when ``path`` or a folder it names is a symbolic link (``safe_write``); the
    folders it goes in are made.  Any other failure is left to the checks after it, which name it."""
    with contextlib.suppress(OSError):
        check_target(path, folder=kind == "folder")


def prepare_output(path: Path, kind: str = "file") -> None:
    """Make the folder ``path`` goes in (``kind`` "folder": ``path`` itself) and check it can be written."""
    if kind != "folder" and path.is_dir():
        raise UserError(f"{path}: is a folder; give a file name")
    if kind == "folder" and path.exists() and not path.is_dir():
        raise UserError(f"{path}: is a file; give a folder")
    folder = path if kind == "folder" else path.parent
    try:
        make_folder(folder)
    except OSError as exc:
        raise UserError(f"cannot create the folder {folder} for {path}: {exc.strerror or exc}") from None
    target = path if path.exists() else folder
    if not os.access(target, os.W_OK):
        raise UserError(f"cannot write {target}: permission denied; choose another path")


class _Names(argparse.Action):
    """A list flag: names separated by commas, spaces, or both (``--agents a,b c``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[object] | None, option_string: str | None = None) -> None:
        names = [n.strip() for v in values or () for n in str(v).split(",") if n.strip()]
        if not names:
            parser.error(f"{option_string} names nothing")
        setattr(namespace, self.dest, names)


def add_names(parser: argparse.ArgumentParser, flag: str, default: list[str] | None, what: str,
              metavar: str = "NAME") -> None:
    """A list flag that takes commas or spaces, as every list flag does (``--agents a,b`` or ``--agents a b``)."""
    shown = f" (default {','.join(default)})" if default else ""
    parser.add_argument(flag, nargs="+", action=_Names, default=default, metavar=metavar,
                        help=f"{what}, separated by commas or spaces{shown}")


def add_game(parser: argparse.ArgumentParser) -> None:
    """``--game NAME``: the game, in every command that plays or reads games (default: the players' projects'
    ``game``, else connectx)."""
    parser.add_argument("--game", default=None, metavar="NAME",
                        help="the game: connectx, or another two-player game of kaggle-environments (cxforge games "
                             "lists them; default: the game of the players' projects, else connectx)")


def add_index(parser: argparse.ArgumentParser) -> None:
    """``--index N``: the N-th game of the files given, counted from 1, in every command that reads games
    (``--game`` names the game: connectx, rps...)."""
    parser.add_argument("--index", type=positive_int, default=None, metavar="N",
                        help="only the N-th game of the file(s), counted from 1")


ENGINES = KINDS  # auto, c, python: agents.solver.chooser.engine() takes them


def add_engine(parser: argparse.ArgumentParser, default: str | None = "auto", what: str = "the solver") -> None:
    """``--engine auto|c|python``, the same choices in every command: c is the C engine of the solver,
    python the agent's own, auto the twin where it loads."""
    shown = "auto" if default is None else default
    parser.add_argument("--engine", choices=ENGINES, default=default,
                        help=f"{what}: c (the compiled solver, the agent's C engine), python (its pure-Python "
                             f"twin), or auto (c where it loads; default {shown})")


def engine_of(args: argparse.Namespace) -> str:
    """``--engine`` with auto resolved: c where the compiled solver loads, else python (a ``Kind``, a str)."""
    from connectx_forge import tool_engines  # the solvers' modules: not for ``cxforge --help``

    return tool_engines.resolve(getattr(args, "engine", None) or "auto", check=False)


def add_size(parser: argparse.ArgumentParser) -> None:
    """``--rows/--columns/--inarow``."""
    group = parser.add_argument_group("board size")
    for flag, default in zip(("--rows", "--columns", "--inarow"), STANDARD, strict=True):
        group.add_argument(flag, type=positive_int, default=None, metavar="N",
                           help=f"default {default}")


def size_of(args: argparse.Namespace) -> Size:
    """The board size from ``--rows/--columns/--inarow``."""
    given = [getattr(args, k, None) for k in ("rows", "columns", "inarow")]
    rows, columns, inarow = (v if v is not None else d for v, d in zip(given, STANDARD, strict=True))
    if inarow > max(rows, columns):
        raise UserError(f"--inarow {inarow} on a {rows}x{columns} board: no line of {inarow} fits, so no one can "
                        f"win; give --inarow {max(rows, columns)} or less")
    return rows, columns, inarow


def add_progress(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is shown when stderr is not a terminal)")


def progress_of(args: argparse.Namespace) -> bool:
    """Whether ``--no-progress`` left progress bars on (``progress.bar`` still checks for a terminal)."""
    return not getattr(args, "no_progress", False)

