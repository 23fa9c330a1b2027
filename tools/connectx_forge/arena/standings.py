"""The tables of a run, computed from its stored games alone (so a resumed run gives the same ones).

Per pairing: games, W/D/L from A's side in all games and by A's seat, the
pentanomial counts of its complete pairs and their Elo (``elo.pentanomial_elo``).
Per player: W/D/L by seat, and how often it broke a rule (``invalid``,
``error``, ``timeout``, and for hosted agents ``crash``, ``memory``,
``protocol``, ``load``).  And the pool's ratings (``elo.fit``).

Seat ``first`` is mark 1: the player whose stones began the opening, and the
side to move after an opening of an even number of plies.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from connectx_forge.arena import elo
from connectx_forge.arena.elo import PairElo, pentanomial_elo
from connectx_forge.arena.pentanomial import Pentanomial
from connectx_forge.arena.store import StoredGame

FAILURES = ("invalid", "error", "timeout", "crash", "memory", "protocol", "load")


class WDLJson(TypedDict):
    """W/D/L as the reports hold them (``WDL.to_json``)."""

    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class WDL:
    """Wins, draws and losses."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def plus(self, score: float) -> WDL:
        """These counts and one more game, in which the side counted scored ``score`` (1, 0.5 or 0)."""
        if score == 1:
            return replace(self, wins=self.wins + 1)
        if score == 0:
            return replace(self, losses=self.losses + 1)
        return replace(self, draws=self.draws + 1)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def to_json(self) -> WDLJson:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses}

    @classmethod
    def from_json(cls, data: WDLJson) -> WDL:
        """The counts ``to_json`` wrote."""
        return cls(int(data["wins"]), int(data["draws"]), int(data["losses"]))


def tally(scores: Iterable[float]) -> WDL:
    """The W/D/L of these scores (1, 0.5 or 0 each)."""
    out = WDL()
    for score in scores:
        out = out.plus(score)
    return out


class PairingJson(TypedDict):
    """A pairing's table as a tournament's report holds it (``PairingTable.to_json``): A's side."""

    a: str
    b: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    a_first: WDLJson
    a_second: WDLJson
    pentanomial: dict[str, int]  # ``Pentanomial.to_json``
    elo: dict[str, float | int | str]  # ``PairElo.to_json``


@dataclass(frozen=True)
class PairingTable:
    """One pairing's results from A's side: in all games, with A first (mark 1) and second, the pentanomial
    counts of its complete pairs and A's Elo from them (``elo.pentanomial_elo``)."""

    a: str
    b: str
    overall: WDL
    first: WDL
    second: WDL
    penta: Pentanomial
    elo: PairElo

    def to_json(self) -> PairingJson:
        return {"a": self.a, "b": self.b, "games": self.overall.games, **self.overall.to_json(),
                "score": round(self.overall.score, 4),
                "a_first": self.first.to_json(), "a_second": self.second.to_json(),
                "pentanomial": self.penta.to_json(), "elo": self.elo.to_json()}

    @classmethod
    def from_json(cls, data: PairingJson) -> PairingTable:
        """The table ``to_json`` wrote (its games and score follow from the counts)."""
        return cls(str(data["a"]), str(data["b"]), WDL.from_json(data), WDL.from_json(data["a_first"]),
                   WDL.from_json(data["a_second"]), Pentanomial.from_json(data["pentanomial"]),
                   PairElo.from_json(data["elo"]))


@dataclass(frozen=True)
class Seats:
    """A player's W/D/L in each seat (first: mark 1)."""

    first: WDL
    second: WDL

    def to_json(self) -> dict[str, WDLJson]:
        return {"first": self.first.to_json(), "second": self.second.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, WDLJson]) -> Seats:
        return cls(WDL.from_json(data["first"]), WDL.from_json(data["second"]))


class RatingJson(TypedDict):
    """A row of the rating table as a tournament's report holds it (``RatingRow.to_json``): its fields."""

    player: str
    elo: float
    elo_lo: float
    elo_hi: float
    games: int
    score: float
    los_next: float | None


@dataclass(frozen=True)
class RatingRow:
    """A row of the rating table: a player's Elo and its 95% interval (one decimal), its games and score, and
    the likelihood that it is stronger than the next one down (None for the last)."""

    player: str
    elo: float
    elo_lo: float
    elo_hi: float
    games: int
    score: float
    los_next: float | None

    def to_json(self) -> RatingJson:
        return RatingJson(player=self.player, elo=self.elo, elo_lo=self.elo_lo, elo_hi=self.elo_hi,
                          games=self.games, score=self.score, los_next=self.los_next)

    @classmethod
    def from_json(cls, data: RatingJson) -> RatingRow:
        """The row ``to_json`` wrote."""
        los = data["los_next"]
        return cls(str(data["player"]), float(data["elo"]), float(data["elo_lo"]), float(data["elo_hi"]),
                   int(data["games"]), float(data["score"]), None if los is None else float(los))


def pairs_of(games: Sequence[StoredGame]) -> list[tuple[float, float]]:
    """A's two scores in each complete pair (both colours played), in schedule order."""
    by_pair: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    for g in games:
        by_pair[(g.key.pairing, g.slot)][g.key.colour] = g.a_score
    return [(v[1], v[2]) for _, v in sorted(by_pair.items(), key=lambda kv: (kv[0][1], kv[0][0])) if len(v) == 2]


def pairing_tables(games: Sequence[StoredGame]) -> list[PairingTable]:
    """Each pairing's table, in the order pairings first appear in the schedule."""
    grouped: dict[str, list[StoredGame]] = defaultdict(list)
    for g in games:
        grouped[g.key.pairing].append(g)
    return [_table(mine) for mine in grouped.values()]


def _table(games: Sequence[StoredGame]) -> PairingTable:
    """The table of one pairing's games."""
    penta = Pentanomial.of(pairs_of(games))
    return PairingTable(games[0].a, games[0].b, tally(g.a_score for g in games),
                        tally(g.a_score for g in games if g.key.colour == 1),
                        tally(g.a_score for g in games if g.key.colour == 2), penta, pentanomial_elo(penta))


def seats(games: Sequence[StoredGame], players: Sequence[str]) -> dict[str, Seats]:
    """Each player's W/D/L in each seat, over all its games."""
    scores: dict[tuple[str, int], list[float]] = defaultdict(list)
    for g in games:
        scores[(g.a, g.key.colour)].append(g.a_score)
        scores[(g.b, 3 - g.key.colour)].append(1 - g.a_score)
    return {p: Seats(tally(scores[(p, 1)]), tally(scores[(p, 2)])) for p in players}


def failures(games: Sequence[StoredGame], players: Sequence[str]) -> dict[str, dict[str, int]]:
    """How many games each player lost by breaking a rule, by kind (kinds that never happened left out)."""
    out: dict[str, dict[str, int]] = {p: {} for p in players}
    for g in games:
        rec = g.record
        if rec is not None and rec.outcome in FAILURES and rec.culprit is not None:
            who = g.a if rec.culprit == g.key.colour else g.b
            out[who][rec.outcome] = out[who].get(rec.outcome, 0) + 1
    return out


def ratings(games: Sequence[StoredGame], players: Sequence[str], anchor: str | None = None) -> elo.Ratings:
    """The pool's maximum-likelihood ratings, each colour-swapped pair one cluster for the intervals."""
    index = {p: i for i, p in enumerate(players)}
    return elo.fit(list(players), [elo.ScoredGame(index[g.a], index[g.b], g.a_score, (g.key.pairing, g.slot))
                                   for g in games], anchor=anchor)


def rating_table(r: elo.Ratings, games: Sequence[StoredGame]) -> list[RatingRow]:
    """The rating table, best first: Elo, its 95% interval, games, score, and LOS over the next one down."""
    scores: dict[str, list[float]] = defaultdict(list)
    for g in games:
        scores[g.a].append(g.a_score)
        scores[g.b].append(1 - g.a_score)
    order = r.order()
    rows = []
    for rank, i in enumerate(order):
        lo, hi = r.interval(i)
        nxt = order[rank + 1] if rank + 1 < len(order) else None
        name = r.players[i]
        played = tally(scores[name])
        rows.append(RatingRow(name, round(r.elo[i], 1), round(lo, 1), round(hi, 1), played.games,
                           round(played.score, 4), None if nxt is None else round(r.los(i, nxt), 4)))
    return rows
