"""A ladder played and rated (``cxforge ladder``): a new one, or the last one a store holds (``--resume``),
its games played by the arena's runner and its replicates rated into the report."""

from __future__ import annotations

from pathlib import Path

from connectx_forge.arena.ladder.ladder_report import LadderReport, ladder_report
from connectx_forge.arena.ladder.replicates import spread
from connectx_forge.arena.ladder.simulate import Ladder
from connectx_forge.arena.run import Execution, execute
from connectx_forge.arena.store import Store
from connectx_forge.errors import UserError


def stored_ladder(store: Path | None, days: int | None) -> Ladder:
    """The last ladder in ``store`` (``--resume`` without players), over ``days`` days where given."""
    from dataclasses import replace

    if store is None:
        raise UserError("--resume without players needs --store FILE (the store of the ladder to resume)")
    if not store.is_file():
        raise UserError(f"nothing to resume: no results store at {store}")
    with Store(store) as db:
        runs = db.runs("ladder")
    if not runs:
        raise UserError(f"nothing to resume: the store {store} holds no ladder")
    stored = runs[-1].config.run_of(Ladder)
    return replace(stored, days=days or stored.days)


def simulate(t: Ladder, how: Execution) -> LadderReport:
    """Play (or finish, or extend) ladder ``t`` as ``how`` says and rate its replicates: the report.
    ``RunInterrupted`` on Ctrl-C."""
    played = execute(t, how)
    return ladder_report(played, spread(played.process, played.days, played.scores, t.seed, t.replicates))
