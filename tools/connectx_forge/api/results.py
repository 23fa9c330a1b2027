"""The result objects of ``connectx_forge.match``, ``check``, ``tournament``, ``sprt`` and ``review``.

Every result has

* ``.games``: the games, as dicts: the JSON lines ``--save`` writes (``GameRecord.to_json``) for a match, a
  tournament and an SPRT; each game's result as the checker judged it for a check; each game's review, the
  objects ``cxforge review --json`` prints, for a review;
* ``.report``: what the command prints with ``--json``; ``.text``: what it prints without;
* ``.tables()``: its tables as lists of rows (dicts), by name; ``.to_pandas(table)``: one of them as a
  ``pandas.DataFrame`` (pandas is imported only then, and is not a dependency);
* ``_repr_html_``: the tables as HTML, which Jupyter shows (once: making a result prints and displays
  nothing); a result of one game shows its replay too (a small board player in a sandboxed frame:
  ``tools/connectx_forge/leaderboard/review/board_player.py``), and ``.replay(i)`` gives any game's
  (``.replay(i).save(path)`` writes
  kaggle-environments' own player, offline: ``tools/connectx_forge/leaderboard/review/replay_page.py``).

Nothing here plays a game or writes a file unless asked (``.replay(i).save(path)``, ``ReviewResult.save_html``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from connectx_forge import outputs
from connectx_forge.api.html import MAX_ROWS, Replay, Row, html_table, lines_html, llr_svg, record_replay, review_replay
from connectx_forge.arena.sprt_run import evidence_line, more_openings, verdict
from connectx_forge.leaderboard.review.pages import PAGES, write_html
from connectx_forge.progress import count
from connectx_forge.stats import wilson

if TYPE_CHECKING:
    import pandas

    from connectx_forge.arena.elo import PairElo
    from connectx_forge.arena.match import MatchJson, PlayedMatch
    from connectx_forge.arena.sprt_run import SprtReport, SprtReportJson
    from connectx_forge.arena.standings import PairingTable
    from connectx_forge.arena.tournament import TournamentReport, TournamentReportJson
    from connectx_forge.leaderboard.review.annotate import Review
    from connectx_forge.play.tally import Tally
    from connectx_forge.submit.verdict import CheckReport


# -- the results -------------------------------------------------------------------------------------
def _run_replay(games: list[Row], i: int) -> Replay:
    """Game ``i`` of a run (tournament or SPRT) as an offline replay."""
    g = games[i]
    return record_replay(g, f"{g['players'][0]} vs {g['players'][1]}, game {i}")


class Result:
    """What every result has: ``games``, ``report``, ``text``, ``tables()``, ``to_pandas()`` and HTML."""

    games: list[Row]
    report: object  # what the command prints with --json: an object (a list of rows for mistakes)
    text: str
    default_table = "games"

    def tables(self) -> dict[str, list[Row]]:
        """The result's tables by name, each a list of rows."""
        return {"games": list(self.games)}

    def to_pandas(self, table: str | None = None) -> pandas.DataFrame:
        """The table ``table`` (default: the games, one row each) as a ``pandas.DataFrame``."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas needs pandas, which connectx-forge does not install: "
                              "pip install pandas") from None
        tables = self.tables()
        name = table or self.default_table
        if name not in tables:
            raise ValueError(f"no table {name!r}: this result has {', '.join(tables)}")
        return pandas.DataFrame(tables[name])

    def __str__(self) -> str:
        return self.text

    def _summary_html(self) -> str:
        return ""

    def _repr_html_(self) -> str:
        return f'<div class="cxforge-result">{self._summary_html()}</div>'


def _game_rows(games: Sequence[Row]) -> list[Row]:
    """The games table of a notebook: one line a game (the moves as Pons' digits, columns from 1)."""
    rows = []
    for i, g in enumerate(games):
        players = g.get("players") or ["", ""]
        winner = g.get("winner")
        rows.append({"game": g.get("index", i), "first": players[0], "second": players[1],
                     "outcome": g.get("outcome"), "winner": players[winner - 1] if winner in (1, 2) else None,
                     "moves": len(g.get("moves") or ()), "opening": g.get("opening", 0),
                     "seed": g.get("seed")})
    return rows


GAME_COLUMNS = ["game", "first", "second", "outcome", "winner", "moves"]
SEAT_COLUMNS = ["A plays", "games", "wins", "draws", "losses", "win_rate", "win_lo", "win_hi", "invalid", "errors",
                "timeouts", "crashes"]


@dataclass(frozen=True, repr=False)
class MatchResult(Result):
    """``cxforge match``: A's results over the games (both seats), and each game.

    ``wins``, ``draws``, ``losses``, ``score`` (A's points a game, a draw half), ``win_rate`` and
    ``win_interval`` (its 95% Wilson interval) are A's; ``seats`` has them by A's seat.
    """

    a: str
    b: str
    games: list[Row]
    played: PlayedMatch = field(repr=False)  # the match itself; ``report`` is its JSON
    report: MatchJson = field(repr=False)
    text: str = field(repr=False)
    saved: str | None = None  # the games file written (``save=``)

    @classmethod
    def of(cls, played: PlayedMatch, text: str, saved: str | None = None) -> MatchResult:
        """The result of the match ``played``, its text report ``text``."""
        return cls(played.a, played.b, [dict(rec.to_json()) for rec in played.records], played, played.to_json(),
                   text, saved)

    @property
    def overall(self) -> Tally:
        """A's results over all games: W/D/L, its rule breaks and B's."""
        return self.played.tally()

    @property
    def wins(self) -> int:
        return self.overall.wins

    @property
    def draws(self) -> int:
        return self.overall.draws

    @property
    def losses(self) -> int:
        return self.overall.losses

    @property
    def score(self) -> float:
        """A's points a game (1 a win, 1/2 a draw); 0.5 before any game."""
        n = self.wins + self.draws + self.losses
        return (self.wins + 0.5 * self.draws) / n if n else 0.5

    @property
    def win_rate(self) -> float:
        return self.wins / len(self.games) if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of A's win rate."""
        overall = self.overall
        return wilson(overall.wins, overall.games)

    def seats(self) -> list[Row]:
        """A's results going first, going second and overall."""
        rows: list[Row] = []
        for label, t in (("first", self.played.tally(1)), ("second", self.played.tally(2)),
                         ("overall", self.played.tally())):
            lo, hi = wilson(t.wins, t.games)
            rows.append({"A plays": label, "games": t.games, "wins": t.wins, "draws": t.draws,
                         "losses": t.losses, "win_rate": t.wins / t.games if t.games else None, "win_lo": lo,
                         "win_hi": hi, "invalid": t.invalid, "errors": t.errors, "timeouts": t.timeouts,
                         "crashes": t.crashes})
        return rows

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "seats": self.seats()}

    def replay(self, i: int = 0) -> Replay:
        """Game ``i`` (its place in ``games``) as an offline HTML replay."""
        return record_replay(self.games[i], f"{self.a} vs {self.b}, game {self.games[i].get('index', i)}")

    def __repr__(self) -> str:
        return (f"<MatchResult {self.a} vs {self.b}: {count(len(self.games), 'game')}, A {self.wins}-{self.draws}-"
                f"{self.losses}, score {self.score:.3f}>")

    def _summary_html(self) -> str:
        lo, hi = self.win_interval
        head = (f"<p><b>{html.escape(self.a)}</b> (A) vs <b>{html.escape(self.b)}</b> (B): "
                f"{count(len(self.games), 'game')}; "
                f"A won {self.wins}, drew {self.draws}, lost {self.losses} (score {self.score:.3f}; win rate "
                f"{100 * self.win_rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] 95% Wilson)</p>")
        out = head + html_table(self.seats(), SEAT_COLUMNS)
        out += html_table(_game_rows(self.games), GAME_COLUMNS, "games", limit=MAX_ROWS)
        if len(self.games) == 1:
            out += self.replay(0)._repr_html_()
        return out


@dataclass(frozen=True, repr=False)
class CheckResult(Result):
    """``cxforge check``: the verdict (``verdict``: PASS, FAIL or UNDECIDED; ``passed``, ``problems``,
    ``undecided``), the floors, the games by opponent and seat.  ``agent`` is the name (a project's name, a
    file's name), ``path`` the file checked.

    ``games`` are each game's result as the checker's referee (kaggle-environments) judged it: ``index``
    (-1: the validation episode), ``opponent``, ``seat`` (0: the file moved first), ``outcome`` (the file's),
    ``status``, ``kind``, ``error``, ``plies``, ``durations`` (the file's move times).  The check plays in
    agent hosts and keeps no moves, so there is no replay.
    """

    agent: str
    path: str
    games: list[Row]
    checked: CheckReport = field(repr=False)  # the checker's report; ``report`` is its JSON
    report: Mapping[str, object] = field(repr=False)
    text: str = field(repr=False)

    @classmethod
    def of(cls, agent: str, path: str, games: list[Row], checked: CheckReport, text: str) -> CheckResult:
        """The result of a check whose report is ``checked``."""
        return cls(agent, path, games, checked, checked.to_json(), text)

    @property
    def passed(self) -> bool:
        return self.checked.passed

    @property
    def verdict(self) -> str:
        """PASS, FAIL or UNDECIDED, as ``cxforge check`` prints it and its JSON says."""
        return self.checked.verdict

    @property
    def exit_code(self) -> int:
        """``cxforge check``'s exit status for this verdict: 0 PASS, 1 FAIL, 3 UNDECIDED."""
        return self.checked.exit_code

    @property
    def undecided(self) -> list[str]:
        """The floors neither met nor missed within ``max_games`` (why the verdict is UNDECIDED)."""
        return list(self.checked.undecided)

    @property
    def problems(self) -> list[str]:
        return list(self.checked.problems)

    @property
    def notes(self) -> list[str]:
        return list(self.checked.notes)

    @property
    def floors(self) -> list[Row]:
        """Each win-rate floor of the manifest: opponent, floor, games, wins, rate, upper, verdict."""
        return [asdict(f) for f in self.checked.floors]

    def seats(self) -> list[Row]:
        return [{"opponent": s.opponent, "seat": s.seat, "games": s.games, "wins": s.wins, "draws": s.draws,
                 "losses": s.losses, "win_lo": s.win_interval[0], "win_hi": s.win_interval[1],
                 "invalid": s.invalid, "errors": s.errors, "timeouts": s.timeouts} for s in self.checked.seats]

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "seats": self.seats(), "floors": self.floors}

    def __repr__(self) -> str:
        return f"<CheckResult {self.agent}: {self.verdict}, {count(len(self.games), 'game')}>"

    def _summary_html(self) -> str:
        colour = {"PASS": "#1a7f37", "UNDECIDED": "#9a6700"}.get(self.verdict, "#cf222e")
        out = f'<p><b style="color:{colour}">{self.verdict}</b> {html.escape(self.agent)}</p>'
        out += lines_html([f"FAIL: {p}" for p in self.problems] + [f"UNDECIDED: {u}" for u in self.undecided])
        out += html_table(self.seats(), caption="games by opponent and seat (the agent's side)")
        if self.floors:
            out += html_table(self.floors, ["opponent", "floor", "games", "wins", "rate", "upper", "verdict"],
                              "win-rate floors (fail when the upper 95% bound is below the floor)")
        return out + lines_html([f"note: {n}" for n in self.notes])


RATING_COLUMNS = ["rank", "player", "elo", "elo_lo", "elo_hi", "games", "score", "los_next"]
PAIR_COLUMNS = ["a", "b", "games", "wins", "draws", "losses", "score", "pentanomial", "elo", "elo_lo", "elo_hi"]


def _pair_rows(pairs: Sequence[PairingTable]) -> list[Row]:
    rows: list[Row] = []
    for p in pairs:
        e = p.elo.to_json()  # the figures as the JSON report rounds them
        rows.append({"a": p.a, "b": p.b, "games": p.overall.games, "wins": p.overall.wins,
                     "draws": p.overall.draws, "losses": p.overall.losses, "score": round(p.overall.score, 4),
                     "pentanomial": " ".join(str(v) for v in p.penta.to_json().values()),
                     "elo": e["elo"], "elo_lo": e["elo_lo"], "elo_hi": e["elo_hi"]})
    return rows


@dataclass(frozen=True, repr=False)
class TournamentResult(Result):
    """``cxforge tournament``: the ratings (best first), the pairings, and every game.

    ``store``: the results database, where one was asked for (``store=``); else the run played in a temporary
    one, removed at the end.
    """

    players: tuple[str, ...]
    games: list[Row]
    tournament: TournamentReport = field(repr=False)  # the report; ``report`` is its JSON
    report: TournamentReportJson = field(repr=False)
    text: str = field(repr=False)
    store: str | None = None
    saved: str | None = None

    @classmethod
    def of(cls, tournament: TournamentReport, games: list[Row], text: str, store: str | None,
           saved: str | None) -> TournamentResult:
        """The result of the tournament whose report is ``tournament``."""
        return cls(tournament.players, games, tournament, tournament.to_json(), text, store, saved)

    @property
    def ratings(self) -> list[Row]:
        """Best first: player, elo, elo_lo, elo_hi (95%), games, score, los_next (LOS over the next one down)."""
        return [{"rank": i, **r.to_json()} for i, r in enumerate(self.tournament.ratings, 1)]

    @property
    def pairs(self) -> tuple[PairingTable, ...]:
        """Each pairing's table from A's side (``to_json()``: a row of the report's ``pairs``)."""
        return self.tournament.pairs

    @property
    def leader(self) -> str:
        return self.tournament.ratings[0].player

    @property
    def distinct_games(self) -> int:
        """The games that differed move for move from every other of the same pairing, seats and opening."""
        return self.tournament.distinct_games

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "ratings": self.ratings, "pairs": _pair_rows(self.pairs)}

    def replay(self, i: int = 0) -> Replay:
        return _run_replay(self.games, i)

    def __repr__(self) -> str:
        return (f"<TournamentResult {count(len(self.players), 'player')}, {count(len(self.games), 'game')}, "
                f"leader {self.leader}>")

    def _summary_html(self) -> str:
        kind = "gauntlet" if self.tournament.gauntlet else "round robin"
        method = html.escape(self.tournament.rating_method)
        head = (f"<p>{kind} of {count(len(self.players), 'player')}, {count(len(self.games), 'game')}; Elo, 95% "
                f"intervals ({method})</p>")
        return (head + html_table(self.ratings, RATING_COLUMNS, "ratings")
                + html_table(_pair_rows(self.pairs), PAIR_COLUMNS, "pairings (A's side; pentanomial LL LD WL DD WD WW)")
                + html_table(_game_rows(self.games), GAME_COLUMNS, "games", limit=MAX_ROWS))


@dataclass(frozen=True, repr=False)
class SprtResult(Result):
    """``cxforge sprt``: the decision (``H1``: NEW is stronger by elo1; ``H0``: not by elo1; ``none``: the game
    limit came first, or the suite was exhausted: ``report["exhausted"]``), the LLR and its bounds, the Elo
    estimate, ``distinct_games``, and the games it played (repeats of deterministic agents too, not counted)."""

    new: str
    base: str
    games: list[Row]
    sprt: SprtReport = field(repr=False)  # the report; ``report`` is its JSON
    report: SprtReportJson = field(repr=False)
    text: str = field(repr=False)
    store: str | None = None
    saved: str | None = None

    @classmethod
    def of(cls, sprt: SprtReport, games: list[Row], text: str, store: str | None, saved: str | None) -> SprtResult:
        """The result of the SPRT whose report is ``sprt``."""
        return cls(sprt.new, sprt.base, games, sprt, sprt.to_json(), text, store, saved)

    @property
    def decision(self) -> str:
        return self.sprt.result

    @property
    def llr(self) -> float:
        return self.sprt.llr

    @property
    def distinct_games(self) -> int:
        """The games that differed move for move from every earlier one in the same seats and opening."""
        return self.sprt.distinct_games

    @property
    def bounds(self) -> tuple[float, float]:
        return self.sprt.lower, self.sprt.upper

    @property
    def llr_history(self) -> list[float]:
        return list(self.sprt.llr_history)

    @property
    def elo(self) -> PairElo:
        """NEW's pentanomial Elo estimate over BASE: ``elo``, its 95% interval ``lo``, ``hi``, ``nelo``, ``los``..."""
        return self.sprt.elo

    def summary(self) -> list[Row]:
        r, e = self.sprt, self.sprt.elo.to_json()
        wins, draws, losses = r.wdl
        return [{"new": r.new, "base": r.base, "decision": r.result, "llr": r.llr, "lower": r.lower,
                 "upper": r.upper, "games": 2 * r.pairs, "pairs": r.pairs, "distinct_games": r.distinct_games,
                 "games_played": r.distinct.games_played, "wins": wins, "draws": draws,
                 "losses": losses, "elo": e["elo"], "elo_lo": e["elo_lo"], "elo_hi": e["elo_hi"], "los": e["los"]}]

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "summary": self.summary(),
                "llr": [{"pair": i + 1, "llr": v} for i, v in enumerate(self.llr_history)]}

    def replay(self, i: int = 0) -> Replay:
        return _run_replay(self.games, i)

    def __repr__(self) -> str:
        return (f"<SprtResult {self.new} vs {self.base}: {self.decision}, LLR {self.llr:.2f}, "
                f"{count(len(self.games), 'game')}>")

    def _summary_html(self) -> str:
        s = self.sprt.settings
        notes = [line for line in (more_openings(self.sprt), evidence_line(self.sprt)) if line]
        return (f"<p><b>{html.escape(verdict(self.sprt))}</b> ({html.escape(s.model)} Elo, H0 {s.elo0:g}, "
                f"H1 {s.elo1:g}, alpha {s.alpha:g}, beta {s.beta:g})</p>" + lines_html(notes)
                + html_table(self.summary()) + llr_svg(self.llr_history, *self.bounds)
                + html_table(_game_rows(self.games), GAME_COLUMNS, "games", limit=MAX_ROWS))


MISTAKE_COLUMNS = ["game", "source", "first", "second", "outcome", "blunders_first", "blunders_second",
                   "first_losing_first", "first_losing_second", "unlabelled"]


@dataclass(frozen=True, repr=False)
class ReviewResult(Result):
    """``cxforge review``: every move of every game judged by the exact solver, and where ours loses.

    ``games``: one review a game, as ``cxforge review --json`` prints it (``moves`` holds each move's verdict);
    ``mistakes``: one row a game (blunders and the first losing move of each side); ``summary``: where our agent
    (``us``) loses.  ``to_pandas()`` is one row per move (the table ``moves``).
    """

    games: list[Row]
    summary: Mapping[str, object] = field(repr=False)
    summary_text: str = field(repr=False)
    # {"summary": ..., "games": ...}: review --json and --json --summary
    report: Mapping[str, object] = field(repr=False)
    text: str = field(repr=False)
    reviews: tuple[Review, ...] = field(repr=False)  # the reviews themselves (``games`` is their JSON)
    default_table = "moves"

    @property
    def mistakes(self) -> list[Row]:
        return [{"game": i, "source": r.game.source, "first": r.game.names[0], "second": r.game.names[1],
                 "outcome": r.game.outcome, "blunders_first": r.blunders(1), "blunders_second": r.blunders(2),
                 "first_losing_first": r.first_losing[1], "first_losing_second": r.first_losing[2],
                 "unlabelled": r.unlabelled()} for i, r in enumerate(self.reviews)]

    def moves(self) -> list[Row]:
        return [{"game": i, **m, "player": g["players"][m["mark"] - 1]}
                for i, g in enumerate(self.games) for m in g["moves"]]

    def tables(self) -> dict[str, list[Row]]:
        return {"games": list(self.games), "moves": self.moves(), "mistakes": self.mistakes}

    def replay(self, i: int = 0) -> Replay:
        """Game ``i`` as ``cxforge replay`` writes it: the player beside the move list, offline."""
        return review_replay(self.reviews[i])

    def save_html(self, folder: str | os.PathLike[str], force: bool = False) -> str:
        """A page per game and ``index.html`` in ``folder`` (``cxforge review --html``; one holding an earlier
        review's pages only with ``force``); the index's path."""
        outputs.check_folder(os.fspath(folder), outputs.named(*PAGES), force, None, "force=True")
        return str(write_html(list(self.reviews), Path(os.fspath(folder)), self.summary_text))

    def __repr__(self) -> str:
        blunders = sum(r.blunders(1) + r.blunders(2) for r in self.reviews)
        return f"<ReviewResult {count(len(self.games), 'game')}, {count(blunders, 'blunder')}>"

    def _summary_html(self) -> str:
        out = f"<pre>{html.escape(self.summary_text)}</pre>"
        out += html_table(self.mistakes, MISTAKE_COLUMNS, "mistakes per game (plies from 1)", limit=MAX_ROWS)
        if len(self.games) == 1:
            out += self.replay(0)._repr_html_()
        return out
