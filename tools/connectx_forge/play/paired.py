"""Paired comparison: two agents' games against the same opponents, from the same openings and seeds.

Two versions of an agent that play the same games (``cxforge match NEW OPP
--save ...`` and ``cxforge match BASE OPP --save ...`` with the same flags)
differ only where the versions' moves differ, so the difference of their
scores game by game has far less noise than the two scores apart: a small
gain that two separate win rates cannot show, a paired mean does.  A game
pairs with the one whose opponent, seat, seed and opening moves are the same;
scores are wins plus half the draws, for the compared agent (player A of
each match).  A game saved twice (its stable key, ``records.game_key``, its moves and its
end the same) counts once.  A paired game counts as evidence only when it differs from every earlier one
against the same opponent in the same seat and opening (``play.evidence``): with deterministic agents,
games of other seeds from the same opening are the same games again.
The interval is the toolkit's score interval (``stats.score_interval``) of the
differences mapped to 0..1: right at a few games (a normal interval would give six tied games ``[+0.0, +0.0]``;
this one gives about +-0.4) and within -1 to 1, the range a mean difference can take.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from connectx_forge.errors import UserError
from connectx_forge.play.evidence import counted, play_of
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import game_key
from connectx_forge.stats import mean_and_interval

Key = tuple[str, int, int, tuple[int, ...]]  # opponent, A's seat, seed, opening moves


def score(rec: GameRecord) -> float:
    """Player A's score in ``rec``: 1 a win, 0.5 a draw, 0 a loss (a broken rule counts as its result)."""
    return {"win": 1.0, "draw": 0.5, "loss": 0.0}[rec.result(rec.a_seat)]


def key(rec: GameRecord) -> Key:
    """What a game pairs on: its opponent (player B), A's seat, its seed and its opening moves."""
    return rec.players[2 - rec.a_seat], rec.a_seat, rec.seed, tuple(rec.moves[:rec.opening])


def agent_of(records: Sequence[GameRecord]) -> str:
    """The one player A of ``records``; ``UserError`` if they hold none or several."""
    names = {rec.players[rec.a_seat - 1] for rec in records}
    if len(names) != 1:
        raise UserError(f"each side of a comparison must be one agent's games; found {len(names)} "
                        f"({', '.join(sorted(names)) or 'no games'})")
    return names.pop()


class PairedJson(TypedDict):
    """A ``Paired`` row as ``cxforge compare --json`` prints it: its fields."""

    opponent: str
    games: int
    new_score: float
    base_score: float
    difference: float
    low: float
    high: float
    better: int
    worse: int
    distinct_games: int
    paired_games: int


@dataclass(frozen=True)
class Paired:
    """One opponent's (or, with ``opponent`` "all", every opponent's) paired games: those counted (``games``),
    the distinct ones among all ``paired_games`` (every one counts once a repeat differed: stochastic agents)."""

    opponent: str
    games: int
    new_score: float  # mean score of NEW in the paired games
    base_score: float
    difference: float  # mean of NEW's score minus BASE's, game by game
    low: float  # its 95% interval
    high: float
    better: int  # games NEW scored more in
    worse: int
    distinct_games: int
    paired_games: int

    def to_json(self) -> PairedJson:
        return PairedJson(opponent=self.opponent, games=self.games, new_score=self.new_score,
                          base_score=self.base_score, difference=self.difference, low=self.low, high=self.high,
                          better=self.better, worse=self.worse, distinct_games=self.distinct_games,
                          paired_games=self.paired_games)


def summarise(opponent: str, pairs: Sequence[tuple[float, float]], distinct: int | None = None,
              paired: int | None = None) -> Paired:
    """The paired summary of the ``(new, base)`` scores counted (at least one pair), ``distinct`` of the
    ``paired`` games found distinct (default: each pair counted, all distinct)."""
    n = len(pairs)
    diffs = [a - b for a, b in pairs]
    _, low, high = mean_and_interval([(d + 1) / 2 for d in diffs])  # a difference in [-1, 1] as a score in [0, 1]
    return Paired(opponent, n, sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n, sum(diffs) / n,
                  2 * low - 1, 2 * high - 1, sum(d > 0 for d in diffs), sum(d < 0 for d in diffs),
                  n if distinct is None else distinct, n if paired is None else paired)


def _played(rec: GameRecord) -> tuple[object, ...]:
    """What makes two records one game: its stable key, its moves and how it ended."""
    return game_key(rec), rec.moves, rec.outcome, rec.winner, rec.culprit


def _by_key(records: Iterable[GameRecord], side: str) -> dict[Key, GameRecord]:
    """``side``'s games by what they pair on; one game saved twice (the same stable key, ``records.game_key``,
    and the same play) counts once, two different games that would pair alike are refused."""
    out: dict[Key, GameRecord] = {}
    for rec in records:
        k = key(rec)
        if k in out and _played(out[k]) == _played(rec):
            continue
        if k in out:
            raise UserError(f"{side} holds two games against {k[0]} with seed {k[2]} from the same opening: "
                            "give each match's games once")
        out[k] = rec
    return out


def compare(new: Sequence[GameRecord], base: Sequence[GameRecord]) -> list[Paired]:
    """One ``Paired`` per opponent (in the order NEW's games first meet them), then "all" when there are several.

    Games without a partner on the other side are left out; ``UserError`` when none pair at all.  Each row
    counts its distinct paired games (``play.evidence``: the opponent is the scope, A's seat and the opening
    the key, NEW's and BASE's games together the play).
    """
    a, b = _by_key(new, "NEW"), _by_key(base, "BASE")
    common = [k for k in a if k in b]
    if not common:
        raise UserError("no game of NEW pairs with one of BASE: play both with the same opponents, --seats, "
                        "--openings and --seed")
    kept, seen = counted((k[0], (k[1], k[3]), (play_of(a[k]), play_of(b[k])), k) for k in common)
    opponents = list(dict.fromkeys(k[0] for k in common))
    rows = [summarise(o, [(score(a[k]), score(b[k])) for k in kept if k[0] == o],
                      seen.distinct_in(o),
                      sum(k[0] == o for k in common)) for o in opponents]
    if len(rows) > 1:
        rows.append(summarise("all", [(score(a[k]), score(b[k])) for k in kept], seen.distinct, len(common)))
    return rows
