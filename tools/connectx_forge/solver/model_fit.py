"""Which opponent model fits the moves opponents really played: the practical search's models
(agents/solver/opponents.py) scored on the opponents' moves in saved games.

A model's fit is the mean log-likelihood of the moves an opponent chose
(natural log, per move; higher is better, 0 would be certainty), each
position's exact classes from the solver (a position it cannot solve within
``seconds`` is passed over, and counted).  The moves of the opening, and a
move where a win in one was on the board, are not the opponent's choice and
are left out.  ``NearPerfect`` models are also fitted over ``SLIPS``, their
chance of a slip: the report names the best slip for each guide.  This is how
``Policy.opponent``'s default was chosen (docs/solver.md, "The practical
search"); on games against the teams a user meets (``ghost:TEAM``), it says
which model their search should assume.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.board import STANDARD, Board
from agents.net.agent import policy_prior
from agents.solver.engine import Engine
from agents.solver.opponents import MODELS, NEAR_PRIOR_SLIP, NEAR_SLIPS_SLIP, Model, NearPerfect, Prior, Slips, named
from agents.solver.search import Timeout
from connectx_forge import progress as progress_bars
from connectx_forge.play.game_record import GameRecord

SLIPS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)  # the slip chances a NearPerfect model is fitted over
FLOOR = 1e-9  # a move a model gives no chance scores log(FLOOR), not minus infinity


@dataclass(frozen=True)
class Sample:
    """One move an opponent chose: who, the position (as moves from the empty board) and the column."""

    opponent: str
    moves: tuple[int, ...]
    move: int


@dataclass(frozen=True)
class Labelled:
    """A ``Sample`` with its position's classes for the mover (1, 0, -1 per column; None: full)."""

    sample: Sample
    board: Board
    classes: tuple[int | None, ...]

    @property
    def mistake(self) -> bool:
        """Whether the move's class is below the position's best."""
        return self.classes[self.sample.move] != max(v for v in self.classes if v is not None)


@dataclass(frozen=True)
class Fit:
    """A model's mean log-likelihood over one opponent's moves (``opponent`` "all": every opponent's)."""

    model: str
    opponent: str
    moves: int
    log_likelihood: float

    def to_json(self) -> dict[str, object]:
        return {"model": self.model, "opponent": self.opponent, "moves": self.moves,
                "log_likelihood": round(self.log_likelihood, 4)}


@dataclass(frozen=True)
class FitReport:
    """Every model's fit, overall and per opponent; each opponent's mistake rate; positions passed over."""

    moves: int
    unsolved: int
    mistakes: dict[str, float]
    fits: list[Fit]

    @property
    def best(self) -> str:
        """The model of the highest mean log-likelihood over every opponent's moves."""
        return max((f for f in self.fits if f.opponent == "all"), key=lambda f: f.log_likelihood).model

    def to_json(self) -> dict[str, Any]:  # read back by the notebook API's ModelsResult
        return {"moves": self.moves, "unsolved": self.unsolved, "best": self.best if self.fits else None,
                "mistake_rates": {k: round(v, 4) for k, v in self.mistakes.items()},
                "fits": [f.to_json() for f in self.fits]}


def samples(games: Sequence[GameRecord]) -> list[Sample]:
    """The opponents' chosen moves in ``games`` (A's opponent in each; 6x7 four in a row only): after the
    opening, and never where the mover had a win in one."""
    out: list[Sample] = []
    for game in games:
        if tuple(game.size) != STANDARD:
            continue
        seat = 2 if game.a_seat == 1 else 1
        board = Board()
        for ply, move in enumerate(game.moves):
            if not board.can_play(move):
                break
            if ply >= game.opening and ply % 2 == seat - 1 and not board.winning_moves():
                out.append(Sample(game.players[seat - 1], tuple(game.moves[:ply]), move))
            board = board.play(move)
    return out


def label(solver: Engine, found: Sequence[Sample], seconds: float, progress: bool = False) -> list[Labelled]:
    """``found`` with their positions' classes (weak solves, ``seconds`` each at most; a position that does not
    solve in time is left out)."""
    out: list[Labelled] = []
    memo: dict[int, tuple[int | None, ...]] = {}
    with progress_bars.bar(len(found), "positions", unit="pos", enabled=progress,
                           plan=f"cxforge models: {progress_bars.count(len(found), 'position')} to solve, "
                                f"{seconds:g} s each at most") as bar:
        for s in found:
            board = Board.from_moves(s.moves)
            key = board.key()
            if key not in memo:
                try:
                    values = solver.analyze(board, weak=True, deadline=time.perf_counter() + seconds)
                except Timeout:
                    bar.update(1)
                    continue
                memo[key] = tuple(None if v is None else (v > 0) - (v < 0) for v in values)
            out.append(Labelled(s, board, memo[key]))
            bar.update(1)
    return out


def candidates(prior: Callable[[Board], Sequence[float]]) -> dict[str, Model]:
    """The models fitted: every named one, and each ``NearPerfect`` guide at each of ``SLIPS``."""
    models = {name: named(name, prior) for name in MODELS}
    for guide, model, named_slip in (("prior", Prior(prior), NEAR_PRIOR_SLIP), ("slips", Slips(), NEAR_SLIPS_SLIP)):
        for slip in SLIPS:
            if slip != named_slip:  # that one is near-GUIDE itself
                models[f"near-{guide}@{slip:g}"] = NearPerfect(slip, model)
    return models


def fit(labelled: Sequence[Labelled], models: dict[str, Model]) -> FitReport:
    """Each model's mean log-likelihood of the labelled moves, overall and per opponent."""
    opponents = sorted({x.sample.opponent for x in labelled})
    logs: dict[str, list[float]] = {name: [] for name in models}
    for x in labelled:
        for name, model in models.items():
            p = model.chances(x.board, x.classes)[x.sample.move]
            logs[name].append(math.log(max(FLOOR, p)))
    fits = []
    for name, values in logs.items():
        if values:
            fits.append(Fit(name, "all", len(values), sum(values) / len(values)))
        for opp in opponents:
            mine = [v for v, x in zip(values, labelled, strict=True) if x.sample.opponent == opp]
            fits.append(Fit(name, opp, len(mine), sum(mine) / len(mine)))
    mistakes = {opp: sum(x.mistake for x in labelled if x.sample.opponent == opp)
                / sum(1 for x in labelled if x.sample.opponent == opp) for opp in opponents}
    return FitReport(len(labelled), 0, mistakes, fits)


def fit_samples(found: Sequence[Sample], solver: Engine, seconds: float, progress: bool = False) -> FitReport:
    """The report for ``found``: the opponents' moves labelled by ``solver`` and fitted by every candidate."""
    labelled = label(solver, found, seconds, progress)
    return dataclasses.replace(fit(labelled, candidates(policy_prior)), unsolved=len(found) - len(labelled))
