"""Where our agent loses, across many reviewed games: move numbers, seats, and the positions themselves.

"Our agent" is every player named with ``--us``; without it, the one name
that plays in every game (one agent's episodes, or one side of a match); when
no single name does, there is no "our agent" and the summary asks for
``--us``: both sides of a game are never ours.  For each game we lost, the first losing move (``annotate.py``) says
where the game was thrown away; a loss with none was lost before our first
move could change it (the second player against perfect play), by a broken
rule, or in moves the solver could not label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from agents.board import STANDARD
from connectx_forge import table
from connectx_forge.leaderboard.review.annotate import Review
from connectx_forge.progress import count

SEATS = {1: "first", 2: "second"}


def our_names(reviews: Sequence[Review], us: Sequence[str] = ()) -> list[str]:
    """The names counted as ours: ``us``; else the one name every game has (when exactly one does); else none,
    and the summary asks for ``--us``: counting both sides of a game as ours would say nothing."""
    if us:
        return list(us)
    sets = [set(r.game.names) for r in reviews]
    common = set.intersection(*sets) if sets else set()
    return sorted(common) if len(common) == 1 else []


def pons_moves(moves: Sequence[int]) -> str:
    """A move list as Pons' string of columns counted from 1 (how ``cxforge solve`` takes a position)."""
    return "".join(str(c + 1) for c in moves)


def solve_moves(size: Sequence[int], moves: Sequence[int]) -> str | None:
    """The position as ``cxforge solve`` takes it (``pons_moves``), on the 6x7 board it solves; else None."""
    return pons_moves(moves) if tuple(size) == STANDARD else None


@dataclass(frozen=True)
class LostPosition:
    """Where a lost game was thrown away: the game (``source``, ``episode_id``), our seat, the ply of our first
    losing move, the position before it (``moves`` as ``cxforge solve`` takes it, None off the 6x7 board;
    ``columns`` from 0), the ``column`` played and the ``best`` ones."""

    source: str
    episode_id: int | None
    seat: str
    ply: int
    moves: str | None
    columns: list[int]
    column: int
    best: list[int]


@dataclass(frozen=True)
class Summary:
    """Our games, by seat and result, and where the lost ones were lost."""

    us: list[str]
    games: int = 0
    by_seat: dict[str, Counter[str]] = field(default_factory=lambda: {"first": Counter(), "second": Counter()})
    first_losing_plies: Counter[int] = field(default_factory=Counter)
    lost_without_losing_move: int = 0
    broke: Counter[str] = field(default_factory=Counter)
    blunders: int = 0
    positions: list[LostPosition] = field(default_factory=list)
    players: list[str] = field(default_factory=list)  # every name in the games (to say whom --us may name)

    @property
    def losses(self) -> int:
        return sum(c["loss"] for c in self.by_seat.values())

    def to_json(self) -> dict[str, object]:
        return {"us": self.us, "games": self.games, "losses": self.losses,
                "by_seat": {s: {k: c[k] for k in ("games", "win", "draw", "loss")} for s, c in self.by_seat.items()},
                "first_losing_plies": {str(k): v for k, v in sorted(self.first_losing_plies.items())},
                "lost_without_losing_move": self.lost_without_losing_move, "broke": dict(self.broke),
                "blunders": self.blunders, "positions": [asdict(p) for p in self.positions],
                "players": self.players}


def summarise(reviews: Sequence[Review], us: Sequence[str] = ()) -> Summary:
    """The summary of ``reviews`` for the players named ``us`` (see ``our_names``)."""
    ours = our_names(reviews, us)
    by_seat: dict[str, Counter[str]] = {"first": Counter(), "second": Counter()}
    plies: Counter[int] = Counter()
    broke: Counter[str] = Counter()
    positions: list[LostPosition] = []
    games = blunders = unexplained = 0
    for r in reviews:
        g = r.game
        for mark in (1, 2):
            if g.names[mark - 1] not in ours:
                continue
            games += 1
            result = g.result(mark)
            by_seat[SEATS[mark]].update(("games", result))
            blunders += r.blunders(mark)
            if result != "loss":
                continue
            if g.culprit == mark:
                broke[g.outcome] += 1
            losing = r.losing_note(mark)
            if losing is None:
                unexplained += 1
                continue
            plies[losing.ply] += 1
            before = g.moves[:losing.ply - 1]
            positions.append(LostPosition(g.source, g.episode_id, SEATS[mark], losing.ply, solve_moves(g.size, before),
                                          list(before), losing.column, losing.best))
    return Summary(ours, games, by_seat, plies, unexplained, broke, blunders, positions,
                   sorted({n for r in reviews for n in r.game.names}))


def format_summary(s: Summary, show: int = 10, color: bool | None = None) -> str:
    """The summary as text, our games by seat as a table (``connectx_forge.table``); ``show`` positions at most."""
    if not s.us:
        return ("where we lose: give --us NAME to say which player is ours (the players are "
                f"{', '.join(s.players) or 'none'})")
    lines = [f"our agent ({', '.join(s.us)}): {count(s.games, 'game')}, {s.losses} lost, "
             f"{count(s.blunders, 'blunder')}"]
    seats = [[seat, c["games"], c["win"], c["draw"], c["loss"]] for seat, c in s.by_seat.items() if c["games"]]
    if seats:
        by_seat = table.render([table.SEAT, table.GAMES, table.W, table.D, table.L], seats, "rule", color=color)
        lines.extend("  " + line for line in by_seat.splitlines())
    if s.first_losing_plies:
        plies = ", ".join(f"{p} ({n}x)" if n > 1 else str(p) for p, n in sorted(s.first_losing_plies.items()))
        lines.append(f"  first losing move at ply: {plies}")
    if s.lost_without_losing_move:
        lines.append(f"  {s.lost_without_losing_move} lost with no losing move of ours labelled "
                     "(lost from the start, by a broken rule, or unlabelled)")
    if s.broke:
        lines.append("  broke a rule: " + ", ".join(f"{k} {v}" for k, v in sorted(s.broke.items())))
    for p in s.positions[:show]:
        best = ",".join(str(c) for c in p.best) or "?"
        after = ",".join(str(c) for c in p.columns) or "(none)"
        solve = f"; cxforge solve {p.moves or repr('')}" if p.moves is not None else ""
        lines.append(f"  {p.source}: going {p.seat}, ply {p.ply}, after columns {after}: played column "
                     f"{p.column}, best {best} (columns from 0, as Kaggle's actions{solve})")
    if len(s.positions) > show:
        lines.append(f"  ... and {len(s.positions) - show} more positions (--json lists them all)")
    return "\n".join(lines)
