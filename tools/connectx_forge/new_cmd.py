"""``cxforge new PATH``: scaffold an agent project of your own (scaffold.py), ready to build, check and test."""

from __future__ import annotations

import argparse
from pathlib import Path

from connectx_forge import options, safe_write, scaffold
from connectx_forge.errors import UserError
from connectx_forge.games import catalog

HELP = "create an agent project of your own: an entry module, a helper, a data file, cxforge.toml and tests"
EXAMPLE = """\
cxforge new mybot
cxforge new ~/bots/second --name second-bot
cxforge new fastbot --native
cxforge new fleet --game planet_wars             # another game of kaggle-environments (cxforge games lists them)"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge new``."""
    parser.add_argument("path", type=Path, metavar="PATH",
                        help="the project folder to create (new, or empty; with --force, the project's files "
                             "replace those of the same names in a folder that has files)")
    parser.add_argument("--name", help="the agent's name (default: the folder's name)")
    parser.add_argument("--native", action="store_true",
                        help="also a C twin of a helper (native/tactics.c), compiled into the submission, with the "
                             "Python code as its fallback (building needs the native extra: ziglang)")
    parser.add_argument("--game", default=catalog.CONNECTX, metavar="NAME",
                        help="the game the agent plays: connectx (the default), or another two-player game of "
                             "kaggle-environments (cxforge games lists them); written as game in cxforge.toml")
    options.add_force(parser)


def run(args: argparse.Namespace) -> int:
    """Write the project's files; refuse a folder that already has files, unless ``--force``."""
    folder: Path = args.path.expanduser()
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder}: is a file; give a new path")
    if folder.exists() and any(folder.iterdir()) and not args.force:
        raise UserError(f"{folder}: the folder exists and has files; add --force to replace it (the files of the "
                        "project's names), or give a new path")
    game = getattr(args, "game", catalog.CONNECTX)
    info = catalog.get(game)  # one line for an unknown game, or one whose packages this Python lacks
    if args.native:
        catalog.connectx_only("--native (a C twin of the ConnectX tactics)", game)
    name = args.name or folder.resolve().name
    if not name.strip() or any(c in name for c in "/\\\n\""):
        raise UserError(f"--name {name!r}: give a name without slashes or quotes")
    package = scaffold.package_name(folder.resolve().name)
    written = []
    try:
        chosen = (scaffold.files(name, package, args.native) if game == catalog.CONNECTX
                  else scaffold.game_files(name, package, info, scaffold.observation_lines(game)))
        for rel, text in chosen.items():
            path = folder / rel
            safe_write.write_text(path, text, replace=args.force)
            written.append(rel)
    except OSError as exc:
        raise UserError(f"cannot write {exc.filename}: {exc.strerror}") from None
    what = "" if game == catalog.CONNECTX else f"{info.title} "
    print(f"created {what}agent project {name!r} in {folder} (entry {package}.main:act):")
    for rel in written:
        print(f"  {rel}")
    rival = "kaggle:negamax" if game == catalog.CONNECTX else f"kaggle:{info.builtins[0]} --game {game}"
    print(f"next: cd {folder} && cxforge build && cxforge check && pytest && cxforge match . {rival}")
    return 0
