"""``cxforge compare --new FILE... --base FILE...``: is NEW better than BASE, game by game, in games saved by
``cxforge match --save`` with the same opponents, seats, openings and seed (tools/connectx_forge/play/paired.py)?

Prints one row per opponent and one for all of them: each side's score, the
mean difference with its 95% interval, and the games each side did better in;
``--json`` prints the rows as JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from connectx_forge import options
from connectx_forge.play.comparison import Comparison
from connectx_forge.play.records import of_game, read_all

HELP = "is NEW better than BASE? their scores in the same saved games, paired game by game, with intervals"
EXAMPLE = """\
cxforge compare --new mybot.jsonl --base mybot-old.jsonl
cxforge compare --new runs/new-*.jsonl --base runs/base-*.jsonl --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge compare``."""
    parser.add_argument("--new", nargs="+", type=Path, required=True, metavar="FILE",
                        help="NEW's games: files saved by cxforge match NEW OPPONENT --save FILE, one agent as "
                             "player A (e.g. --seats second --openings 100 -n 100)")
    parser.add_argument("--base", nargs="+", type=Path, required=True, metavar="FILE",
                        help="BASE's games, played with the same opponents, --seats, --openings and --seed")
    options.add_game(parser)
    options.add_json(parser, "print the rows as JSON instead of the table")


def run(args: argparse.Namespace) -> int:
    """Print the comparison; 0."""
    new = of_game(read_all(args.new), args.game, "--new")
    base = of_game(read_all(args.base), args.game, "--base")
    found = Comparison.of(new, base)
    print(json.dumps(found.to_json(), indent=1) if args.json else found.text())
    return 0
