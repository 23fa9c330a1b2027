"""Held-out sets: our own labelled test positions, beside Pons' six, never trained on.

Four sets of arbitrary positions (``SETS``): ``Random-Early`` and
``Centre-Early`` (7 to 12 stones), ``Random-Middle`` and ``Centre-Middle`` (13
to 26 stones).  Pons' sets came from his own games; these come from playouts,
so agents are also measured on positions nobody chose.

Drawing.  Draw ``i`` of a set is one playout from the empty board with its own
``random.Random`` (seeded from the seed, the set's name and ``i``), so no draw
depends on another.  A "random" playout picks uniformly among the legal
columns; a "centre" one weighs them by ``CENTRE_WEIGHTS`` (1 2 3 4 3 2 1: the
weight falls by one a column away from the centre, so the centre is four times
as likely as an edge, a crude model of how players favour the middle).  It
stops at a stone count drawn uniformly in the set's band.  A draw is kept when
the game is not over, it is not a duplicate of an earlier draw (mirrors
included), and neither it nor any of its children (mirrors included) is a
training position or a child of one (the label shards of ``TRAINING_DIRS``,
streamed) or a Pons position or a child of one.  So no network trained on
these labels saw a held-out position or one move on, and future training
leaves them out (``cxforge train``'s default ``--holdout`` reads
``tools/connectx_forge/datasets/heldout/*.txt``).

Labelling.  Every column is scored by the C engine's exact ``analyze``
from a cleared table.  The budget per position is CPU seconds, not the clock's:
a process paused (SIGSTOP) or starved by other work goes on with what is left
of it.  A position past the budget is recorded as skipped and the set draws on,
so the sets lean towards positions the solver settles within the budget; the
skipped count says how far.

Files, in ``tools/connectx_forge/datasets/heldout/`` by default: ``<Set-Name>.txt`` in Pons' format
(``<moves> <score>``, the exact score for the side to move) and
``<Set-Name>.scores.jsonl``: a header line (set, kind, stones, seed), then one
line per draw labelled or skipped, in draw order: ``{"i": i, "moves": ...,
"scores": [7 ints or null]}`` or ``{"i": i, "moves": ..., "skipped": budget}``.
Lines are appended as each position is labelled; a rerun continues after the
last draw recorded and gives the file an uninterrupted run would have written.
The command line is ``cxforge heldout build|info`` (tools/connectx_forge/solver/heldout_cmd.py);
``cxforge mistakes --sets Random-Middle`` measures agents on them.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from agents.board import Board
from agents.solver.engine import Engine
from agents.solver.search import Timeout, score_class
from connectx_forge import boundedread, paths, safe_write
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.tool_engines import CSolver
from connectx_forge.train.labels import Label, read_labels_file, shards
from connectx_forge.train.train import family_keys, holdout_keys


@dataclass(frozen=True)
class SetSpec:
    """How a set draws its positions: the playout kind and the band of stone counts (inclusive)."""

    kind: str  # "random" or "centre"
    lo: int
    hi: int


SETS: dict[str, SetSpec] = {"Random-Early": SetSpec("random", 7, 12), "Centre-Early": SetSpec("centre", 7, 12),
                            "Random-Middle": SetSpec("random", 13, 26), "Centre-Middle": SetSpec("centre", 13, 26)}
CENTRE_WEIGHTS = (1, 2, 3, 4, 3, 2, 1)
DEFAULT_SIZE = 200
DEFAULT_BUDGET = 60.0  # CPU seconds to label one position
TRAINING_DIRS = (paths.DATASETS / "labels", paths.CACHE / "labels")
MAX_FAILED_DRAWS = 100_000  # draws in a row that give nothing new: the band or the exclusions leave no position


class Header(TypedDict):
    """A scores file's first line: the set, its playout kind, its band of stone counts and the seed it was drawn
    with; a file continues only with the same."""

    set: str
    kind: str
    stones: list[int]
    seed: int


@dataclass(frozen=True)
class Record:
    """One draw recorded in a scores file: its index, moves, and column scores (None: skipped past the budget)."""

    index: int
    moves: str
    scores: tuple[int | None, ...] | None

    def to_json(self, budget_s: float) -> dict[str, object]:
        if self.scores is None:
            return {"i": self.index, "moves": self.moves, "skipped": budget_s}
        return {"i": self.index, "moves": self.moves, "scores": list(self.scores)}


@dataclass
class SetState:
    """A set's state: positions labelled and skipped, and CPU seconds spent labelling in this run."""

    name: str
    labelled: int = 0
    skipped: int = 0
    new: int = 0  # positions labelled in this run
    cpu_s: float = 0.0  # CPU seconds of this run's labelled positions
    contested: int | None = None  # positions where some move is a mistake (not every column in one class)

    def line(self) -> str:
        contested = f" ({self.contested} where a move can be a mistake)" if self.contested is not None else ""
        speed = f", {self.cpu_s / self.new:.2f} CPU-s a position over {self.new} new" if self.new else ""
        return f"{self.name}: {self.labelled} labelled{contested}, {self.skipped} skipped past the budget{speed}"


def set_files(folder: Path, name: str) -> tuple[Path, Path]:
    """A set's Pons-format file and its per-column scores file."""
    return Path(folder) / f"{name}.txt", Path(folder) / f"{name}.scores.jsonl"


def pons_score(scores: Sequence[int | None]) -> int:
    """A position's exact score: the best of its columns'."""
    return max(s for s in scores if s is not None)


# -- drawing -------------------------------------------------------------------
def playout(spec: SetSpec, rng: random.Random) -> str | None:
    """Pons digits of a playout stopped at a stone count drawn in the band; None when the game ends first."""
    target = rng.randint(spec.lo, spec.hi)
    board, moves = Board(), []
    while board.moves < target:
        legal = board.legal_moves()
        if spec.kind == "centre":
            col = rng.choices(legal, [CENTRE_WEIGHTS[c] for c in legal])[0]
        else:
            col = rng.choice(legal)
        if board.is_winning_move(col):
            return None
        board = board.play(col)
        moves.append(str(col + 1))
    return None if board.is_full() else "".join(moves)


def draw(name: str, seed: int, index: int) -> str | None:
    """Draw ``index`` of set ``name``: a playout with its own seeded generator."""
    return playout(SETS[name], random.Random(f"heldout:{seed}:{name}:{index}"))


def _candidates(name: str, seed: int, start: int, want: int, seen: set[int],
                exclude: set[int]) -> tuple[list[tuple[int, str]], int]:
    """Up to ``want`` draws from index ``start`` on that are new (``seen`` grows) and meet no ``exclude`` key.

    Returns them with their indexes, and the index after the last draw made.
    """
    out: list[tuple[int, str]] = []
    index, failed = start, 0
    while len(out) < want:
        moves = draw(name, seed, index)
        index += 1
        if moves is not None:
            board = Board.from_pons(moves)
            if board.canonical_key() not in seen and not family_keys(board) & exclude:
                seen.add(board.canonical_key())
                out.append((index - 1, moves))
                failed = 0
                continue
        failed += 1
        if failed > MAX_FAILED_DRAWS:
            raise UserError(f"{name}: {MAX_FAILED_DRAWS} draws in a row gave no new position")
    return out, index


# -- training overlap ------------------------------------------------------------
def training_files(folders: Iterable[Path]) -> list[Path]:
    """The label shards of the training folders that exist."""
    return [f for folder in folders if Path(folder).is_dir() for f in shards(Path(folder))]


def heights(moves: str) -> tuple[int, ...]:
    """The stones in each column after a Pons move string."""
    return tuple(moves.count(d) for d in "1234567")


def _near(moves: str) -> set[tuple[int, ...]]:
    """Column heights a training label must have for its family to meet this position's family (mirrors too).

    A family is a position and its children; a label's family member has its
    heights or one more stone, so it can only meet ours if its heights are one
    of ours or one of ours less a stone.
    """
    h = heights(moves)
    ours = {h} | {h[:c] + (h[c] + 1,) + h[c + 1:] for c in range(7) if h[c] < 6}
    ours |= {x[::-1] for x in ours}
    return ours | {x[:c] + (x[c] - 1,) + x[c + 1:] for x in ours for c in range(7) if x[c] > 0}


def overlapping(candidates: Sequence[str], files: Sequence[Path]) -> set[str]:
    """The candidates whose family (position and children, mirrors included) meets a training label's family.

    The shards are streamed; a label becomes a board only when its column
    heights could match, so memory holds the candidates, not the training set.
    """
    owners: dict[int, set[str]] = {}
    near: set[tuple[int, ...]] = set()
    for moves in candidates:
        for key in family_keys(Board.from_pons(moves)):
            owners.setdefault(key, set()).add(moves)
        near |= _near(moves)
    hit: set[str] = set()
    for path in files:
        for lab in read_labels_file(path):
            if heights(lab.moves) in near:
                for key in family_keys(Board.from_pons(lab.moves)) & owners.keys():
                    hit |= owners[key]
    return hit


# -- labelling -------------------------------------------------------------------
def label(solver: Engine, board: Board, budget_s: float) -> tuple[list[int | None] | None, float]:
    """Each column's exact score from a cleared table (None past ``budget_s`` CPU seconds), and the CPU seconds.

    ``solver`` is a solver engine (``agents.solver.engine``; the tools give the
    ``CSolver``).  Its deadline is a clock time, so a search cut short while
    the process was paused or starved is run again with the CPU time left, its
    table kept.
    """
    solver.reset()
    start = time.process_time()
    while True:
        left = budget_s - (time.process_time() - start)
        if left <= budget_s / 100:
            return None, time.process_time() - start
        try:
            return solver.analyze(board, deadline=time.perf_counter() + left), time.process_time() - start
        except Timeout:
            continue


# -- files -------------------------------------------------------------------------
def _header(name: str, seed: int) -> Header:
    spec = SETS[name]
    return Header(set=name, kind=spec.kind, stones=[spec.lo, spec.hi], seed=seed)


def _lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Each line that parses as a JSON object (a torn or unbounded one is passed over)."""
    for line in lines:
        try:
            rec = boundedread.parse_json(line, "a scores file's line")
        except UserError:
            continue  # a torn line from an interrupted run (or a line beyond bounds)
        if isinstance(rec, dict):
            yield rec


def read_records(path: Path) -> tuple[Header | None, list[Record]]:
    """A scores file's header (None for a new file) and its records in draw order."""
    if not Path(path).exists():
        return None, []
    header: Header | None = None
    out = []
    with open(path, encoding="utf-8") as fh:
        for rec in _lines(fh):
            if "set" in rec:
                header = cast(Header, rec)  # as the file says: compared whole with the settings asked for
            elif "moves" in rec and "i" in rec:
                scores = rec.get("scores")
                out.append(Record(int(rec["i"]), str(rec["moves"]), None if scores is None else tuple(scores)))
    return header, out


def _open_scores(path: Path, name: str, seed: int) -> list[Record]:
    """The records so far, after cutting a torn last line; a new file gets its header.  A file made with
    other settings is a ``UserError``."""
    safe_write.check_target(path)
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            safe_write.write_bytes(path, data[:data.rfind(b"\n") + 1], replace=True)
    header, records = read_records(path)
    want = _header(name, seed)
    if header is None:
        if records:
            raise UserError(f"{path} has records but no header line: remove it to build the set again")
        safe_write.write_text(path, json.dumps(want) + "\n", replace=True)
    elif header != want:
        raise UserError(f"{path} was built with {json.dumps(header)}, not {json.dumps(want)}: "
                        f"pass --seed {header.get('seed')} to continue it, or build into another --out")
    return records


def _write_txt(path: Path, records: Iterable[Record]) -> None:
    """The Pons-format file from the labelled records (written whole, then appended to as labels come)."""
    safe_write.write_text(path, "".join(f"{r.moves} {pons_score(r.scores)}\n" for r in records
                                        if r.scores is not None), replace=True)


def read_set(folder: Path, name: str) -> list[Label]:
    """The labelled positions of a built set; a missing set is a ``UserError`` that says how to build it."""
    if name not in SETS:
        raise UserError(f"no held-out set {name!r}; the sets are {', '.join(SETS)}")
    _, path = set_files(folder, name)
    if not path.is_file():
        raise UserError(f"held-out set {name} not found ({path} is missing): "
                        f"build it with cxforge heldout build --sets {name}")
    return [Label(r.moves, r.scores) for r in read_records(path)[1] if r.scores is not None]


def summary(folder: Path, name: str) -> SetState:
    """Labelled, contested and skipped counts of a set's scores file."""
    records = read_records(set_files(folder, name)[1])[1]
    classes = [{score_class(s) for s in r.scores if s is not None} for r in records if r.scores is not None]
    return SetState(name, len(classes), len(records) - len(classes), contested=sum(len(c) > 1 for c in classes))


# -- building ------------------------------------------------------------------------
def build_set(name: str, folder: Path, size: int = DEFAULT_SIZE, seed: int = 0, budget_s: float = DEFAULT_BUDGET,
              training: Sequence[Path] = TRAINING_DIRS, pons: Path | None = None, progress: bool = True,
              solver: Engine | None = None) -> SetState:
    """Label draws of set ``name`` until ``size`` positions are labelled, continuing its files in ``folder``.

    ``pons``: a folder of Pons' sets whose positions (and children) are left
    out; ``solver``: the labeller (a new ``CSolver`` by default).
    """
    txt, scores_path = set_files(folder, name)
    records = _open_scores(scores_path, name, seed)
    _write_txt(txt, records)
    done = SetState(name, sum(r.scores is not None for r in records), sum(r.scores is None for r in records))
    if done.labelled >= size:
        return done
    if solver is None:
        solver = CSolver()
    seen = {Board.from_pons(r.moves).canonical_key() for r in records}
    index = max((r.index for r in records), default=-1) + 1
    exclude = holdout_keys([pons]) if pons is not None else set()
    files = training_files(training)
    with safe_write.open_append(scores_path) as scores_fh, safe_write.open_append(txt) as txt_fh, \
            progress_bars.bar(size, name, unit="pos", enabled=progress,
                              plan=f"cxforge heldout build: {name}: "
                                   f"{progress_bars.count(size - done.labelled, 'position')} to label") as bar:
        bar.already(done.labelled)
        while done.labelled < size:
            batch, index = _candidates(name, seed, index, size - done.labelled + 8, seen, exclude)
            dropped = overlapping([moves for _, moves in batch], files)
            for i, moves in batch:
                if moves in dropped:
                    continue
                scores, cpu_s = label(solver, Board.from_pons(moves), budget_s)
                rec = Record(i, moves, None if scores is None else tuple(scores))
                scores_fh.write(json.dumps(rec.to_json(budget_s)) + "\n")
                scores_fh.flush()
                if rec.scores is None:
                    done.skipped += 1
                    bar.set_postfix(skipped=done.skipped)
                    continue
                txt_fh.write(f"{moves} {pons_score(rec.scores)}\n")
                txt_fh.flush()
                done.labelled, done.new, done.cpu_s = done.labelled + 1, done.new + 1, done.cpu_s + cpu_s
                bar.update()
                if done.labelled >= size:
                    break
    return done
