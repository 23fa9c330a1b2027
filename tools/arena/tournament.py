"""A tournament: a round robin (or a gauntlet) over an opening suite, crash-safe and resumable.

Every pairing plays each of the suite's first M openings twice, A with each
mark, each game seeded on its own (``schedule``).  Games are played opening by
opening, so the ratings are balanced at every moment of the run, and each game
is committed to the store as it ends (``store``).  A run is named by a hash of
its settings, leaving out M: asking for more openings later extends the same
run.  Running it again with the same store plays only the
games the store lacks, and the report is always computed from the store's games
alone, so an interrupted run that is resumed reports exactly what an
uninterrupted one would (for agents whose moves do not depend on the clock).

API::

    from connectx_forge.tools.arena.tournament import Tournament, run_tournament
    report = run_tournament(Tournament(("lookahead", "random", "leftmost"), openings=10), workers=2)
    report["ratings"][0]        # the best player, its Elo and 95% interval
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from connectx_forge.tools import progress as bars
from connectx_forge.tools.arena import openings as suites
from connectx_forge.tools.arena import results
from connectx_forge.tools.arena.run import (
    Live,
    RunResult,
    canonical_specs,
    choose_run,
    file_versions,
    game_settings,
    host_limits,
    interruptible,
    key_of,
    labels_of,
    limits_key,
    play_run,
    run_config,
    run_name,
    settings_only,
    store_path,
)
from connectx_forge.tools.arena.schedule import GameJob, Workers, executor, pair_jobs
from connectx_forge.tools.arena.store import Key, Store
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.play.game import GameRecord
from connectx_forge.tools.play.players import resolve
from connectx_forge.tools.play.rules import ACT_TIMEOUT, OVERAGE


@dataclass(frozen=True)
class Tournament:
    """A tournament's settings: its players (specs), the gauntlet's player, the suite, the base seed, Kaggle's
    clock and the agent hosts' limits (``memory`` in bytes, ``None``: the default; ``slowdown``: each host on
    1/slowdown of a CPU, every player then in a host), as ``cxforge match`` takes them."""

    players: tuple[str, ...]
    gauntlet: str | None = None
    plies: int = suites.DEFAULT_PLIES
    openings: int | None = None  # the first M openings of the suite (None: all)
    seed: int = 0
    band: tuple[int, int] = suites.DEFAULT_BAND
    act_timeout: float = ACT_TIMEOUT
    overage: float = OVERAGE
    memory: int | None = None
    slowdown: float = 1.0

    def pairings(self) -> list[tuple[str, str]]:
        """Every pairing ``(A, B)``: all pairs of players in order, or the gauntlet's player against each other."""
        if self.gauntlet is not None:
            return [(self.gauntlet, p) for p in self.players if p != self.gauntlet]
        return [(a, b) for i, a in enumerate(self.players) for b in self.players[i + 1:]]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["players"], out["band"] = list(self.players), list(self.band)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tournament:
        data = settings_only(data)  # a stored run's config: its settings, less its labels and versions
        data["players"], data["band"] = tuple(data["players"]), tuple(data["band"])
        return cls(**data)  # a run stored before memory and slowdown existed lacks them: the defaults

    def run_key(self) -> dict[str, Any]:
        """The settings the run's name hashes: all but M, and the host limits only where not the defaults."""
        out = {k: v for k, v in self.to_json().items() if k not in ("memory", "slowdown")}
        return {**out, "openings": None, **limits_key(self.memory, self.slowdown)}


def settled(t: Tournament) -> tuple[Tournament, dict[str, str]]:
    """``t`` as a run stores it, and each player's label (``run.labels_of``): paths made absolute (inside a
    project, its own name means it), the gauntlet's player named by spec or label; ``UserError`` as
    ``validate``."""
    players = canonical_specs(t.players)
    t = replace(t, players=players)
    validate(t, gauntlet=False)
    labels = labels_of(players)
    if t.gauntlet is not None:
        (gauntlet,) = canonical_specs([t.gauntlet])
        by_label = [p for p in players if labels[p] == t.gauntlet]
        gauntlet = gauntlet if gauntlet in players else by_label[0] if len(by_label) == 1 else t.gauntlet
        t = replace(t, gauntlet=gauntlet)
    validate(t)
    return t, labels


def validate(t: Tournament, gauntlet: bool = True) -> None:
    """``UserError`` for settings that cannot make a tournament; resolves every player (a bad spec is one line)."""
    if len(t.players) < 2:
        raise UserError("a tournament needs at least two players")
    if len(set(t.players)) != len(t.players):
        dup = sorted({p for p in t.players if t.players.count(p) > 1})
        raise UserError(f"each player may appear once; repeated: {', '.join(dup)}")
    if gauntlet and t.gauntlet is not None and t.gauntlet not in t.players:
        raise UserError(f"the gauntlet's player {t.gauntlet!r} is not among the players ({', '.join(t.players)})")
    if t.openings is not None and t.openings < 1:
        raise UserError(f"--openings must be at least 1, got {t.openings}")
    host_limits(t.memory, t.slowdown)
    for p in t.players:
        resolve(p)


def suite_of(t: Tournament, progress: bool = True) -> list[suites.Opening]:
    """The openings the tournament plays: the suite's first M (a suite of M is built if the default is smaller)."""
    size = max(suites.DEFAULT_SIZE, t.openings or 0)
    suite = suites.load_suite(t.plies, t.band, size, progress=progress)
    if t.openings is not None and t.openings > len(suite):
        raise UserError(f"the {t.plies}-ply suite in {t.band[0]}:{t.band[1]} has only {len(suite)} openings; "
                        f"--openings {t.openings} asks for more")
    return suite[:t.openings] if t.openings is not None else suite


def jobs_of(t: Tournament, suite: Sequence[suites.Opening], labels: dict[str, str] | None = None) -> list[GameJob]:
    """Every game, opening by opening: slot ``o * pairings + p`` is pairing p's pair on opening o; a pairing is
    named by its players' labels (default: ``run.labels_of``), its games played by their specs."""
    pairings = t.pairings()
    names = labels if labels is not None else labels_of(t.players)
    game = game_settings(t.act_timeout, t.overage, t.memory, t.slowdown)
    return [job for o, opening in enumerate(suite) for p, (a, b) in enumerate(pairings)
            for job in pair_jobs(f"{names[a]} vs {names[b]}", a, b, opening.moves, o * len(pairings) + p, t.seed,
                                 settings=game)]


def run_tournament(t: Tournament, workers: int | None = None, store: Path | str | None = None,
                   dask: str | None = None, progress: bool = True, ex: Workers | None = None,
                   on_game: Callable[[GameJob, GameRecord], None] | None = None,
                   require_store: bool = False, max_games: int | None = None,
                   on_change: str | None = None) -> RunResult:
    """Play (or finish) a tournament; its report (``report.tournament_report``) and games.

    ``max_games``: the most games the run holds (``-n``): the schedule's first N, those the store lacks
    played, the rest left for a later run with a larger N (or none).

    ``workers``: processes (default all cores); ``dask``: ``"local"`` or a
    scheduler's address; ``ex``: an executor of your own instead.  ``store``: the
    results database (default ``runs/arena/<run>.sqlite``; ``require_store``: it
    must exist, as ``--resume`` asks).  ``on_game`` is called with each game as
    it comes back.  Players are named by their labels (a project's name) in the
    report and the store; the store keeps their specs as absolute paths and their
    sources' digests: ``on_change`` (``run.NEW_RUN`` or ``run.MIX``) says what to
    do when a player's sources changed since the stored games (``run.choose_run``).
    """
    t, labels = settled(t)
    suite = suite_of(t, progress)
    versions = file_versions(t.players)
    base = run_name("tournament", t.run_key())
    path = store_path(store, base, require_store)
    if max_games is not None and max_games < 1:
        raise UserError(f"-n/--games must be at least 1, got {max_games}")
    scheduled = jobs_of(t, suite, labels)
    jobs = scheduled[:max_games]
    wanted = {key_of(j) for j in jobs}
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    start = time.perf_counter()
    played, kind = 0, "none (all games were in the store)"
    with interruptible(path), Store(path) as db:
        chosen = choose_run(db, "tournament", base, versions, labels, require_store, on_change)
        run = chosen.run
        db.register(run, "tournament", run_config(t.to_json(), base, versions, labels, chosen))
        have = db.keys(run)
        todo = [j for j in jobs if key_of(j) not in have]
        with bars.bar(len(jobs), "tournament", "game", progress) as bar:
            bar.update(len(jobs) - len(todo))
            live = Live(bar, lambda: _leader(db, run, t, wanted, labels))
            if todo and ex is not None:
                played, kind = play_run(db, run, todo, ex, live, on_game=on_game, labels=labels), ex.kind
            elif todo:
                with executor(n_workers, dask) as made:
                    played = play_run(db, run, todo, made, live, on_game=on_game, labels=labels)
                    kind = made.kind
        games = [g for g in db.games(run) if g.key in wanted]
    from connectx_forge.tools.arena.report import tournament_report

    info = {"store": str(path), "seconds": round(time.perf_counter() - start, 3), "played_now": played,
            "executor": kind, "workers": n_workers if ex is None else None}
    report = tournament_report(t, run, suite, games, info, labels)
    report["scheduled"], report["max_games"] = len(scheduled), max_games
    report["mixed_versions"], report["run_note"] = list(chosen.mixed), chosen.note
    return RunResult(report, games)


def _leader(db: Store, run: str, t: Tournament, wanted: set[Key], labels: dict[str, str]) -> str:
    """The bar's live line: the leader and its rating so far."""
    games = [g for g in db.games(run, records=False) if g.key in wanted]
    if not games:
        return ""
    players = [labels[p] for p in t.players]
    seen = {g.a for g in games} | {g.b for g in games}
    if seen != set(players):
        return f"{len(games)} games"
    try:
        r = results.ratings(games, players, None if t.gauntlet is None else labels[t.gauntlet])
    except ValueError:
        return ""
    best = r.order()[0]
    lo, hi = r.interval(best)
    return f"leader {r.players[best]} {r.elo[best]:+.0f} [{lo:+.0f}, {hi:+.0f}]"
