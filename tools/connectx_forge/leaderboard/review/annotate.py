"""A game annotated move by move with the solver's verdicts: values before and after, best moves, marks.

For every move, from the mover's side: ``before`` (the position's value),
``after`` (the value of the move played), ``best`` (the moves that keep the
position's exact score, or its class where the score is unknown), and a
``tag``: ``blunder`` when the value drops (win to draw or loss, draw to
loss), ``slower-win`` when a win stays a win but a faster one was there, else
none.  A side's **first losing move** is its first move from a won or drawn
position to a lost one.  Moves of an opening suite (a saved game's leading
``opening`` moves) are annotated but never tagged: the players did not choose
them.  A value the solver could not reach in time is ``None`` (unlabelled),
and so is any tag that depends on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agents.board import Board
from connectx_forge import table
from connectx_forge.leaderboard.review.games import Game
from connectx_forge.leaderboard.review.labeller import Labeller, PositionValues
from connectx_forge.progress import count

WDL = {1: "win", 0: "draw", -1: "loss"}


def wdl_name(wdl: int | None) -> str | None:
    """``win``, ``draw``, ``loss``, or None when unlabelled."""
    return None if wdl is None else WDL[wdl]


@dataclass(frozen=True)
class MoveNote:
    """One move and its verdict; ``ply`` counts from 1, ``column`` from 0, ``mark`` is the mover's (1 or 2)."""

    ply: int
    mark: int
    column: int
    best: list[int]
    before: int | None
    after: int | None
    score_before: int | None
    score_after: int | None
    tag: str | None
    opening: bool = False
    first_losing: bool = False
    unknown: list[int] = field(default_factory=list)  # moves whose class is unlabelled

    def to_json(self) -> dict[str, object]:
        return {"ply": self.ply, "mark": self.mark, "column": self.column, "best": self.best,
                "before": wdl_name(self.before), "after": wdl_name(self.after), "tag": self.tag,
                "score_before": self.score_before, "score_after": self.score_after, "opening": self.opening,
                "first_losing": self.first_losing, "unlabelled": self.unknown}


def tag_of(before: int | None, after: int | None, score_before: int | None, score_after: int | None) -> str | None:
    """``blunder``, ``slower-win`` or None (also None when a value it needs is unlabelled)."""
    if before is None or after is None:
        return None
    if after < before:
        return "blunder"
    if before == after == 1 and score_before is not None and score_after is not None and score_after < score_before:
        return "slower-win"
    return None


def note(ply: int, mark: int, column: int, position: PositionValues, opening: bool = False) -> MoveNote:
    """The verdict on playing ``column`` in ``position``."""
    after = position.moves[column]
    before = position.before
    tag = None if opening else tag_of(before.wdl, after.wdl, before.score, after.score)
    return MoveNote(ply, mark, column, position.best(), before.wdl, after.wdl, before.score, after.score, tag,
                    opening=opening, unknown=position.unknown())


@dataclass(frozen=True)
class Review:
    """A game and its move notes; ``first_losing``: each mark's first losing move's ply (None: none)."""

    game: Game
    moves: list[MoveNote]
    engine: str
    time_limit: float

    @property
    def first_losing(self) -> dict[int, int | None]:
        found: dict[int, int | None] = {1: None, 2: None}
        for m in self.moves:
            if m.first_losing:
                found[m.mark] = m.ply
        return found

    def losing_note(self, mark: int) -> MoveNote | None:
        """The first losing move of ``mark``, if it made one."""
        return next((m for m in self.moves if m.first_losing and m.mark == mark), None)

    def blunders(self, mark: int) -> int:
        """How many of ``mark``'s moves were blunders (a move down a win/draw/loss class)."""
        return sum(1 for m in self.moves if m.mark == mark and m.tag == "blunder")

    def unlabelled(self) -> int:
        """Moves whose verdict is incomplete (before or after unknown)."""
        return sum(1 for m in self.moves if m.before is None or m.after is None)

    def to_json(self) -> dict[str, object]:
        g = self.game
        return {"source": g.source, "episode_id": g.episode_id, "players": list(g.names), "size": list(g.size),
                "outcome": g.outcome, "winner": g.winner, "culprit": g.culprit, "opening": g.opening,
                "first_losing_move": {str(k): v for k, v in self.first_losing.items()},
                "blunders": {str(k): self.blunders(k) for k in (1, 2)},
                "unlabelled_moves": self.unlabelled(), "engine": self.engine, "time_limit_s": self.time_limit,
                "moves": [m.to_json() for m in self.moves]}


def review_game(game: Game, labeller: Labeller, tick: Callable[[], None] | None = None) -> Review:
    """Annotate every move of ``game``; ``tick`` is called after each."""
    board = Board(*game.size)
    notes: list[MoveNote] = []
    losing_seen = {1: False, 2: False}
    for i, col in enumerate(game.moves):
        mark = board.mark
        opening = i < game.opening
        n = note(i + 1, mark, col, labeller.position(board, col), opening)
        if not opening and not losing_seen[mark] and n.before is not None and n.before >= 0 and n.after == -1:
            n = replace(n, first_losing=True)
            losing_seen[mark] = True
        notes.append(n)
        board = board.play(col)
        if tick is not None:
            tick()
    return Review(game, notes, labeller.engine_used, labeller.time_limit)


MOVE_HEADERS = ("ply", "mover", "column", "value before", "value after", "best", "note")


def move_row(m: MoveNote) -> list[object]:
    """A move as a row under ``MOVE_HEADERS``: ply, mover, column, values, best moves and the mark."""
    def value(wdl: int | None, score: int | None) -> str:
        name = wdl_name(wdl) or "?"
        return name if score is None else f"{name} ({score:+d})"

    best = ",".join(str(c) for c in m.best) or "?"
    mark = m.tag or ""
    if m.first_losing:
        mark = (mark + ", " if mark else "") + "first losing move"
    if m.opening:
        mark = "opening"
    return [m.ply, f"p{m.mark}", m.column, value(m.before, m.score_before), value(m.after, m.score_after), best, mark]


def format_review(review: Review) -> str:
    """A game's review as text: its result, every move, and each side's first losing move."""
    g = review.game
    lines = [f"== {g.source}: {g.describe()}"]
    if review.moves:
        lines.append(table.render(MOVE_HEADERS, [move_row(m) for m in review.moves], "rule", align="rlrllll"))
    for mark in (1, 2):
        losing = review.losing_note(mark)
        if losing is not None:
            best = ",".join(str(c) for c in losing.best) or "?"
            lines.append(f"first losing move of {g.names[mark - 1]} (mark {mark}): ply {losing.ply}, "
                         f"column {losing.column}; best {best}")
    if review.unlabelled():
        lines.append(f"{count(review.unlabelled(), 'move')} unlabelled (?) within {review.time_limit:g} s a position")
    return "\n".join(lines)
