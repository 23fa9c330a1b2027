"""What ``cxforge compare`` reports: NEW's saved games against BASE's, paired game by game
(tools/connectx_forge/play/paired.py),
as a ``Comparison`` with its text table and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.paired import Paired, PairedJson, agent_of, compare
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render


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
