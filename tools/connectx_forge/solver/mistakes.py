"""Benchmark: mistake rates of any agent on Pascal Pons' six test sets and on our held-out sets.

A mistake is a move whose win/draw/loss class is below the best available one.
The best class is the sign of the set's exact score for the side to move; the
played move's class is minus the exact solver's weak score of the position it
leads to (the command's ``--engine auto``: the C engine of the solver,
``connectx_forge.tool_engines``, where it loads, fast enough for
Begin-Hard; ``python``: the same scores, much slower).
That is the verdict of labelling every move with ``perfect``, for one solve per
position instead of seven.  Positions whose labelling passes
``--solve-budget`` seconds are skipped and counted.  Weak scores are kept in a
cache file (``--cache``, default ``.cache/mistakes/weak.jsonl``), so measuring
a second network on the same positions solves only the moves the first did not
play.

The held-out sets (``Random-Early``, ``Centre-Early``, ``Random-Middle``,
``Centre-Middle``; tools/connectx_forge/solver/heldout.py, read from ``--heldout``, default
``tools/connectx_forge/datasets/heldout``, which the wheel ships as package data) store every
column's exact score, so their moves are judged from those scores
(``known_weak``): nothing is solved for them.  They are the default
(``--sets heldout``), so ``cxforge mistakes`` runs from a pip install.  Pons'
sets are not shipped: ``--sets pons`` (or their names) reads them from
``--pons DIR``, and where they are missing one line says where to get them.

The JSON results (``--json``, ``-o``) give, per set and agent, the counts,
five ``examples`` and every mistake in ``mistake_positions`` (``<moves>:
played <column> (<class>), best class <class>``), to study or replay.

The ``solver`` agent is measured at its normal per-move budget (``--budget``)
with fresh tables per position and no overage; other agents are called as
Kaggle calls them.  ``cxforge bench solver --agent`` uses this harness too.

The command line is ``cxforge mistakes`` (tools/connectx_forge/solver/mistakes_cmd.py), e.g.
``cxforge mistakes --agents net,net-search,solver --sample 100 --seed 0``
(the held-out sets) or ``... --sets pons --pons DIR`` (Pons' six).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from agents.board import Board
from agents.registry import did_you_mean
from agents.solver.engine import KINDS, Engine
from agents.solver.policy import POLICY, Fallback
from agents.solver.search import Timeout
from agents.solver.search import score_class as sign
from connectx_forge import boundedread, safe_write, table, tool_engines
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.paths import HELDOUT_DIR, PONS_DIR
from connectx_forge.play.game import MARGIN
from connectx_forge.play.resolve import reference, resolve
from connectx_forge.play.rules import ACT_TIMEOUT, kaggle_config
from connectx_forge.players.player import SUBMISSIONS, Player
from connectx_forge.sandbox.limits import SeatBudget
from connectx_forge.sandbox.seat import HostedAgent
from connectx_forge.solver import heldout
from connectx_forge.stats import format_rate
from connectx_forge.train.labels import Label

SETS = [("Test_L3_R1", "End-Easy"), ("Test_L2_R1", "Middle-Easy"), ("Test_L2_R2", "Middle-Medium"),
        ("Test_L1_R1", "Begin-Easy"), ("Test_L1_R2", "Begin-Medium"), ("Test_L1_R3", "Begin-Hard")]
SET_NAMES = dict(SETS)
HELDOUT_SETS = tuple(heldout.SETS)  # measured after Pons' sets, in this order
GROUPS = {"heldout": HELDOUT_SETS, "pons": tuple(SET_NAMES.values())}  # --sets heldout, --sets pons
DEFAULT_SETS = ("heldout",)  # shipped with cxforge (package data), so a pip install measures them as they are
PONS_URL = "http://blog.gamesolver.org/solving-connect-four/02-test-protocol/"
PONS_HELP = (f"Pons' test sets are not shipped: download the Test_L*_R* files from {PONS_URL} into a folder and "
             "pass --pons DIR, or measure on the held-out sets shipped with cxforge (--sets heldout, the default)")
HARD_SETS = ("Begin-Medium", "Begin-Hard")
DEFAULT_CACHE = Path(".cache/mistakes/weak.jsonl")

Mover = Callable[[Board], tuple[int, str]]  # the column played and how it was chosen


def solver_mover(budget: float | None = None, fallback: str | None = None, overage: float = 0.0) -> Mover:
    """The ``solver`` agent at ``budget`` s a move (its normal one by default), fresh tables;
    ``fallback`` (a ``agents.solver.policy.Fallback``: checked, net or heuristic) overrides what decides when no
    solve finishes; each position is a fresh game with ``overage`` seconds of Kaggle's overage left (none by
    default)."""
    from dataclasses import replace

    from agents.solver import agent as solver_agent  # loads the net's weights at import (its fallback's network)

    try:
        # a name: the policy's check makes it a Fallback, or one ValueError naming the choices
        policy = POLICY if fallback is None else replace(POLICY, fallback=cast(Fallback, fallback))
    except ValueError as exc:  # an unknown fallback, named with the choices
        raise UserError(str(exc)) from None
    budget = policy.move_budget if budget is None else budget

    def move(board: Board) -> tuple[int, str]:
        solver_agent.reset()
        st = solver_agent.state()
        st.overage_start = 0.0
        st.new_game(from_start=False)  # each position is a game of its own, begun off the book's tree
        start = time.perf_counter()
        extra = solver_agent.extra_time(overage, st, policy) if overage else 0.0
        col = solver_agent.choose(board, start, budget, extra, policy=policy)
        return col, solver_agent.state().last

    return move


def agent_mover(name: str) -> Mover:
    """An agent called with Kaggle's ``obs`` and ``config``: a registered one in this process; a file (a
    project built on the fly included) in an agent host, loaded afresh for each position as for a new game,
    never in this process.  A hosted move that breaks (error, timeout, crash...) is an invalid move."""
    player = resolve(name)
    if player.fresh:
        return _hosted_mover(player)
    fn = player.new_agent()

    def move(board: Board) -> tuple[int, str]:
        obs = {"board": board.to_grid(), "mark": board.mark, "remainingOverageTime": 0.0}
        config = {"rows": board.rows, "columns": board.columns, "inarow": board.inarow}
        return int(fn(obs, config)), "agent"

    return move


def _hosted_mover(player: Player) -> Mover:
    def move(board: Board) -> tuple[int, str]:
        size = (board.rows, board.columns, board.inarow)
        host = HostedAgent(player, 0, SeatBudget.of_board(size, ACT_TIMEOUT, 0.0))
        try:
            reply = host.move({"board": board.to_grid(), "mark": board.mark, "step": board.moves,
                               "remainingOverageTime": 0.0}, kaggle_config(size), ACT_TIMEOUT + MARGIN)
        finally:
            host.close()
        if reply.kind != "ok" or reply.bad_action is not None or reply.action is None:
            return -1, f"agent ({reply.kind if reply.kind != 'ok' else 'invalid'})"
        return int(reply.action), "agent"

    return move


def mover(name: str, budget: float | None = None, overage: float = 0.0) -> Mover:
    """The mover for agent ``name``; ``solver@FALLBACK`` is the solver with another fallback (``solver@heuristic``)."""
    if name == "solver" or name.startswith("solver@"):
        return solver_mover(budget, name.partition("@")[2] or None, overage)
    return agent_mover(name)


Labeller = Callable[[Board], "int | None"]  # the weak score of a position, None past the time limit


class WeakCache:
    """Weak scores already solved, by position key, appended to a JSON-lines file.

    Solver scores never change, so a rerun (another agent, another sample)
    reuses them.  A torn last line from an interrupted run is ignored.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.scores: dict[int, int] = {}
        if path is not None and path.exists():
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        rec = boundedread.parse_json(line, str(path))
                        self.scores[int(rec["k"])] = int(rec["w"])
                    except (UserError, ValueError, KeyError, TypeError):
                        continue

    def get(self, key: int) -> int | None:
        return self.scores.get(key)

    def put(self, key: int, weak: int) -> None:
        self.scores[key] = weak
        if self.path is not None:
            with safe_write.open_append(self.path) as fh:
                fh.write(json.dumps({"k": key, "w": weak}) + "\n")


def labeller(engine: str = "python", budget_s: float | None = None, cache: WeakCache | None = None) -> Labeller:
    """Weak scores by ``perfect``'s solver, or by its C engine (tools/connectx_forge/tool_engines: the same scores).

    Scores found in ``cache`` are not solved again; new ones are added to it.
    The solver is made at the first score not in ``cache`` (none for a
    held-out set, whose cache holds every score).
    """
    solvers: list[Engine] = []

    def solver() -> Engine:
        if not solvers:
            solvers.append(tool_engines.engine(engine))
        return solvers[0]

    def weak(board: Board) -> int | None:
        known = cache.get(board.key()) if cache is not None else None
        if known is not None:
            return known
        try:
            score = solver().solve(board, weak=True, deadline=None if budget_s is None else
                                   time.perf_counter() + budget_s)
        except Timeout:
            return None  # not cached: a larger budget may solve it
        if cache is not None:
            cache.put(board.key(), score)
        return score

    return weak


def known_weak(labels: Iterable[Label]) -> WeakCache:
    """An in-memory cache of the weak score of every child of ``labels``, from their exact column scores.

    A child's weak score is minus the sign of its column's score, so positions
    labelled column by column are judged with no solving.
    """
    cache = WeakCache()
    for lab in labels:
        board = lab.board()
        for col, score in enumerate(lab.scores):
            if score is not None and not board.is_winning_move(col):
                cache.scores[board.play(col).key()] = -sign(score)
    return cache


def move_class(board: Board, col: int, label: Labeller) -> int | None:
    """The win/draw/loss class of playing ``col`` for the side to move; None when unlabelled."""
    if board.is_winning_move(col):
        return 1
    child = board.play(col)
    if child.is_full():
        return 0
    weak = label(child)
    return None if weak is None else -weak


@dataclass
class Mistakes:
    """One agent's moves on one set of positions, judged against exact play."""

    agent: str
    set: str
    judged: int = 0
    skipped: int = 0
    mistakes: list[str] = field(default_factory=list)
    how: Counter[str] = field(default_factory=Counter)
    think_s: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return len(self.mistakes) / self.judged if self.judged else None

    def to_json(self) -> dict[str, object]:
        return {"set": self.set, "agent": self.agent, "mistakes": len(self.mistakes), "judged": self.judged,
                "skipped": self.skipped, "rate": self.rate, "examples": self.mistakes[:5],
                "mistake_positions": list(self.mistakes), "how": dict(self.how),
                "mean_move_s": sum(self.think_s) / max(len(self.think_s), 1),
                "max_move_s": max(self.think_s, default=0.0),
                "moves_over_2s": sum(t > 2.0 for t in self.think_s)}


def measure(set_name: str, positions: Sequence[tuple[str, int]], movers: dict[str, Mover],
            solve_budget: float | None = None, progress: bool = True, engine: str = "python",
            cache: WeakCache | None = None) -> dict[str, Mistakes]:
    """Each mover's mistakes on ``positions`` (``(moves, exact score)`` pairs); a bar unless ``progress`` is False."""
    label = labeller(engine, solve_budget, cache)
    out = {name: Mistakes(name, set_name) for name in movers}
    with progress_bars.bar(len(positions), set_name, unit="pos", enabled=progress) as bar:
        for moves, score in positions:
            _judge(moves, score, movers, label, out)
            bar.update()
    return out


def _judge(moves: str, score: int, movers: dict[str, Mover], label: Labeller, out: dict[str, Mistakes]) -> None:
    """Each mover's move on one position, and its verdict, added to ``out``."""
    board = Board.from_pons(moves)
    best = sign(int(score))
    for name, move in movers.items():
        res = out[name]
        start = time.perf_counter()
        col, how = move(board)
        res.think_s.append(time.perf_counter() - start)
        res.how[how] += 1
        if not (isinstance(col, int) and 0 <= col < board.columns and board.can_play(col)):
            res.judged += 1  # an invalid move loses at once: a mistake in any position
            res.mistakes.append(f"{moves}: played {col!r} (invalid: not a playable column)")
            continue
        cls = move_class(board, col, label)
        if cls is None:
            res.skipped += 1
            continue
        res.judged += 1
        if cls < best:
            res.mistakes.append(f"{moves}: played {col + 1} ({cls:+d}), best class {best:+d}")


MISTAKE_HEADERS = ("set", "agent", "mistakes", "rate [95% CI]", "skipped", "mean time", "max time")


def mistakes_row(res: Mistakes) -> list[object]:
    """One result as a row under ``MISTAKE_HEADERS``: mistakes of judged moves, their rate, the positions
    skipped past the budget, the mean and the longest time to move."""
    n = len(res.mistakes)
    think = res.think_s or [0.0]
    return [res.set, res.agent, f"{n}/{res.judged}", format_rate(n, res.judged), res.skipped,
            f"{sum(think) / len(think):.3f}s", f"{max(think):.2f}s"]


def mistakes_table(results: Sequence[Mistakes], color: bool | None = None) -> str:
    """The results as one table (``tools/connectx_forge/table``, style ``rule``), a row per agent and set."""
    return table.render(MISTAKE_HEADERS, [mistakes_row(r) for r in results], "rule", align="llrrrrr", color=color)


@dataclass(frozen=True)
class MistakeRun:
    """What ``run_sets`` measures and how: ``sample`` seeded positions a set (``hard_sample`` for Begin-Medium
    and Begin-Hard; None: ``sample``), drawn with ``seed``; the solver agent's ``budget`` a move (None: its
    policy's) and the ``overage`` each position starts with; ``solve_budget`` seconds to label a move (None:
    no limit) on ``engine``; Pons' sets read from ``pons``, ours from ``heldout_dir``."""

    sample: int = 200
    hard_sample: int | None = None
    seed: int = 0
    budget: float | None = None
    overage: float = 0.0
    solve_budget: float | None = 20.0
    engine: str = "python"
    pons: Path = PONS_DIR
    heldout_dir: Path = HELDOUT_DIR

    def __post_init__(self) -> None:
        """One ``UserError`` naming a field whose value no run can take (the command's flags check them too)."""
        for name in ("sample", "hard_sample"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise UserError(f"{name} must be a whole number of positions, at least 1: got {value!r}")
        for name, low in (("budget", False), ("solve_budget", False), ("overage", True)):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or not (value >= 0 if low else value > 0)):
                raise UserError(f"{name} must be {'at least 0' if low else 'positive'} seconds: got {value!r}")
        if self.engine not in KINDS:
            raise UserError(f"engine must be one of {', '.join(KINDS)}: got {self.engine!r}")


def run_sets(agents: Sequence[str], sets: Sequence[str], run: MistakeRun | None = None, *,
             cache: WeakCache | None = None, progress: bool = True,
             report: Callable[[Mistakes], None] | None = None) -> list[Mistakes]:
    """Each agent's mistakes on the positions ``run`` draws from each named set.

    Sets are measured in Pons' order, then the held-out sets' (judged from
    their stored scores); ``report`` sees each result as it is known.  Each
    agent is named by its label (a project by its name, never ``.``).  Bad
    input (an unknown agent or set, no Pons folder for a Pons set, a held-out
    set not built, an agent that cannot load, no C compiler for ``engine`` c)
    is a ``UserError`` before any solving.
    """
    run = run if run is not None else MistakeRun()
    sample, hard_sample, seed, engine = run.sample, run.hard_sample, run.seed, run.engine

    names = {a: a if a.startswith("solver@") else reference(a, allow=SUBMISSIONS).label for a in agents}
    if len(set(names.values())) < len(names):  # (reference: the one message for a name that is no agent)
        twice = next(n for n in names.values() if list(names.values()).count(n) > 1)
        raise UserError(f"--agents names {twice} twice: give each agent once")
    all_sets = [*SET_NAMES.values(), *HELDOUT_SETS]
    bad_sets = [s for s in sets if s not in all_sets and s not in GROUPS]
    if bad_sets:
        raise UserError(f"unknown set {bad_sets[0]!r}{did_you_mean(bad_sets[0], [*GROUPS, *all_sets])}; the sets "
                        f"are heldout (our {len(HELDOUT_SETS)}, shipped), pons (Pons' six) or one of "
                        f"{', '.join(all_sets)}")
    loaded = _load_sets(expand_sets(sets), run.pons, run.heldout_dir)
    if any(known is None for _, _, known in loaded):
        tool_engines.resolve(engine)  # loads now: one clear line if it cannot be
    movers = {names[a]: mover(a, run.budget, run.overage) for a in agents}  # one that cannot load: one line
    results: list[Mistakes] = []
    sizes = [min(hard_sample if hard_sample is not None and name in HARD_SETS else sample, len(positions))
             for name, positions, _ in loaded]
    if progress:
        print(f"cxforge mistakes: {', '.join(movers)} on {progress_bars.count(sum(sizes), 'position')} of "
              f"{', '.join(name for name, _, _ in loaded)}, each move labelled within {run.solve_budget:g} s; a line "
              "per agent and set as it is measured (a bar with its ETA on a terminal)", file=sys.stderr, flush=True)
    for (name, positions, known), n in zip(loaded, sizes, strict=True):
        picked = random.Random(seed).sample(positions, n)
        for res in measure(name, picked, movers, run.solve_budget, progress, engine,
                           cache if known is None else known).values():
            results.append(res)
            if report is not None:
                report(res)
    return results


def expand_sets(sets: Sequence[str]) -> list[str]:
    """The set names ``--sets`` means, groups (``heldout``, ``pons``) expanded, each once, in the order given."""
    return list(dict.fromkeys(name for s in sets for name in GROUPS.get(s, (s,))))


def _load_sets(sets: Sequence[str], pons: Path,
               heldout_dir: Path) -> list[tuple[str, list[tuple[str, int]], WeakCache | None]]:
    """``(name, positions, known weak scores)`` of each set asked for, in measuring order.

    Pons' sets have no known scores (None: the labeller solves); a held-out
    set's come from its per-column scores.
    """
    out: list[tuple[str, list[tuple[str, int]], WeakCache | None]] = []
    missing = [fname for fname, name in SETS if name in sets and not (Path(pons) / fname).is_file()]
    if missing:
        raise UserError(f"no Pons test set {missing[0]} in {pons}: {PONS_HELP}")
    for fname, name in SETS:
        if name in sets:
            out.append((name, boundedread.read_positions(Path(pons) / fname), None))
    for name in HELDOUT_SETS:
        if name in sets:
            labels = heldout.read_set(heldout_dir, name)
            out.append((name, [(lab.moves, heldout.pons_score(lab.scores)) for lab in labels], known_weak(labels)))
    return out
