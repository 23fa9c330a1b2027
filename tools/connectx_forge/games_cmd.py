"""``cxforge games``: the games this toolkit plays, and what each needs.

A table, one row per game of ``games.catalog``: its seats, whether both seats act each step, its built-in
agents (``kaggle:NAME``), the seed that varies its map, and whether it plays here (else the packages it lacks
and the line that installs them).  ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import json

from connectx_forge import options, table
from connectx_forge.games.catalog import known, names

HEADERS = ("game", "seats", "moves", "built-in agents (kaggle:NAME)", "map seed", "here")
HELP = "list the two-player Kaggle games cxforge plays, their built-in agents, and what each needs"
EXAMPLE = """\
cxforge games
cxforge games --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge games``."""
    options.add_json(parser, "print the games as JSON instead of the table")


def run(args: argparse.Namespace) -> int:
    """Print the games."""
    rows, out = [], {}
    games = known()
    for name in names():
        info = games[name]
        missing = info.missing()
        here = (f"needs {', '.join(missing)}: {info.install_line()}" if missing else
                f"fails: {info.broken}" if info.broken else "plays")
        out[name] = {"title": info.title, "seats": list(info.seats), "simultaneous": info.simultaneous,
                     "builtins": list(info.builtins), "seed_key": info.seed_key, "playable": info.playable,
                     "missing": missing, "install": info.install_line() if missing else None,
                     "action": info.action_help, "competition": info.competition, "broken": info.broken}
        rows.append([name, ", ".join(map(str, info.seats)), "together" if info.simultaneous else "in turn",
                     ", ".join(info.builtins), info.seed_key or "none", here])
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(table.render(HEADERS, rows, "rule"))
    print("\ncxforge plays two seats of each; --game NAME (or game = \"NAME\" in cxforge.toml) picks the game.")
    return 0
