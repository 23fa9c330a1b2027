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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from connectx_forge.arena import elo
from connectx_forge.arena.pentanomial import Pentanomial
from connectx_forge.arena.store import StoredGame

FAILURES = ("invalid", "error", "timeout", "crash", "memory", "protocol", "load")
SEATS = {1: "first", 2: "second"}


@dataclass
class WDL:
    """Wins, draws and losses."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, score: float) -> None:
        if score == 1:
            self.wins += 1
        elif score == 0:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def to_json(self) -> dict[str, int]:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses}


@dataclass
class PairingTable:
    """One pairing's results from A's side."""

    a: str
    b: str
    overall: WDL = field(default_factory=WDL)
    by_seat: dict[int, WDL] = field(default_factory=lambda: {1: WDL(), 2: WDL()})
    penta: Pentanomial = field(default_factory=Pentanomial)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "games": self.overall.games, **self.overall.to_json(),
                "score": round(self.overall.score, 4),
                "a_first": self.by_seat[1].to_json(), "a_second": self.by_seat[2].to_json(),
                "pentanomial": self.penta.to_json(), "elo": elo.pentanomial_elo(self.penta).to_json()}


def pairs_of(games: Sequence[StoredGame]) -> list[tuple[float, float]]:
    """A's two scores in each complete pair (both colours played), in schedule order."""
    by_pair: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    for g in games:
        by_pair[(g.key.pairing, g.slot)][g.key.colour] = g.a_score
    return [(v[1], v[2]) for _, v in sorted(by_pair.items(), key=lambda kv: (kv[0][1], kv[0][0])) if len(v) == 2]


def pairing_tables(games: Sequence[StoredGame]) -> list[PairingTable]:
    """Each pairing's table, in the order pairings first appear in the schedule."""
    tables: dict[str, PairingTable] = {}
    grouped: dict[str, list[StoredGame]] = defaultdict(list)
    for g in games:
        table = tables.setdefault(g.key.pairing, PairingTable(g.a, g.b))
        table.overall.add(g.a_score)
        table.by_seat[g.key.colour].add(g.a_score)
        grouped[g.key.pairing].append(g)
    for pairing, table in tables.items():
        table.penta = Pentanomial.of(pairs_of(grouped[pairing]))
    return list(tables.values())


def seats(games: Sequence[StoredGame], players: Sequence[str]) -> dict[str, dict[str, WDL]]:
    """Each player's W/D/L in each seat, over all its games."""
    out = {p: {"first": WDL(), "second": WDL()} for p in players}
    for g in games:
        out[g.a][SEATS[g.key.colour]].add(g.a_score)
        out[g.b][SEATS[3 - g.key.colour]].add(1 - g.a_score)
    return out


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
    return elo.fit(list(players), [elo.Game(index[g.a], index[g.b], g.a_score, (g.key.pairing, g.slot))
                                   for g in games], anchor=anchor)


def ratings_json(r: elo.Ratings, games: Sequence[StoredGame]) -> list[dict[str, Any]]:
    """The rating table, best first: Elo, its 95% interval, games, score, and LOS over the next one down."""
    played: dict[str, WDL] = defaultdict(WDL)
    for g in games:
        played[g.a].add(g.a_score)
        played[g.b].add(1 - g.a_score)
    order = r.order()
    rows = []
    for rank, i in enumerate(order):
        lo, hi = r.interval(i)
        nxt = order[rank + 1] if rank + 1 < len(order) else None
        name = r.players[i]
        rows.append({"player": name, "elo": round(r.elo[i], 1), "elo_lo": round(lo, 1), "elo_hi": round(hi, 1),
                     "games": played[name].games, "score": round(played[name].score, 4),
                     "los_next": None if nxt is None else round(r.los(i, nxt), 4)})
    return rows
