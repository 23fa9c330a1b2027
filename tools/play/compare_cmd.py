"""``cxforge compare --new FILE... --base FILE...``: is NEW better than BASE, game by game, in games saved by
``cxforge match --save`` with the same opponents, seats, openings and seed (tools/play/paired.py)?

Prints one row per opponent and one for all of them: each side's score, the
mean difference with its 95% interval, and the games each side did better in;
``--json`` prints the rows as JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from connectx_forge import options
from connectx_forge.play.game import GameRecord
from connectx_forge.play.paired import Paired, PairedJson, agent_of, compare
from connectx_forge.play.records import read_all
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render

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
    options.add_json(parser, "print the rows as JSON instead of the table")


def _percent(x: float, signed: bool = False) -> str:
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}%"


def table(rows: list[Paired], new: str, base: str) -> str:
    """The rows as the text table ``cxforge compare`` prints."""
    body = [[escape(r.opponent, keep_newlines=False), r.games, _percent(r.new_score), _percent(r.base_score),
             f"{_percent(r.difference, True)} [{_percent(r.low, True)}, {_percent(r.high, True)}]",
             f"{r.better} / {r.worse}", f"{r.distinct_games} of {r.paired_games}"] for r in rows]
    heads = ["opponent", "games", escape(new, keep_newlines=False), escape(base, keep_newlines=False),
             "difference [95%]", "better / worse", "distinct"]
    return render(heads, body, align="lrrrrrr")


class ComparisonJson(TypedDict):
    """What ``cxforge compare --json`` prints (``Comparison.to_json``)."""

    new: str
    base: str
    rows: list[PairedJson]
    distinct_games: int


@dataclass(frozen=True)
class Comparison:
    """What ``cxforge compare`` reports: the two agents' names and one ``Paired`` row per opponent (and all)."""

    new: str
    base: str
    rows: list[Paired]

    @classmethod
    def of(cls, new: Sequence[GameRecord], base: Sequence[GameRecord]) -> Comparison:
        """NEW's games against BASE's, paired; ``UserError`` when a side is not one agent or nothing pairs."""
        names = agent_of(new), agent_of(base)
        return cls(*names, compare(new, base))

    def to_json(self) -> ComparisonJson:
        """What ``--json`` prints."""
        return {"new": self.new, "base": self.base, "rows": [r.to_json() for r in self.rows],
                "distinct_games": self.rows[-1].distinct_games}

    def text(self) -> str:
        """What the command prints without ``--json``."""
        return (table(self.rows, self.new, self.base) + "\nscore: wins + half the draws; difference: NEW's score "
                "minus BASE's, game by game, mean and 95% interval\ngames: those counted; distinct: the paired "
                "games that differ from every other against the same opponent in the same seat and opening; "
                "a repeat counts only once one differed (stochastic agents)")


def run(args: argparse.Namespace) -> int:
    """Print the comparison; 0."""
    found = Comparison.of(read_all(args.new), read_all(args.base))
    print(json.dumps(found.to_json(), indent=1) if args.json else found.text())
    return 0
