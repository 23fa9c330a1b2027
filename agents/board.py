"""The one ConnectX game core: rules, win and draw detection, position encoding.

Every agent, the bundler's checks, the game loop and the tools use this module;
there is no second copy of the rules.  It is bundle-safe (standard library only).
The threat logic lives here too, as Pascal Pons keeps it in his ``Position``:
raw-int functions on a ``Geometry`` (``winning_cells``, ``non_losing_moves``,
``mirror_bits``, ...) for search loops that must allocate nothing, and ``Board``
methods built on them.  It is not in a sibling module, although that would keep
this file shorter, because ``Board`` needs it and it needs ``Geometry``: the two
modules would import each other, a cycle the bundler refuses.

A position is a bitboard in Pascal Pons' layout, for any rows x columns x inarow
(Python integers have no width limit):

* column ``c`` owns bits ``c*H .. c*H + rows - 1`` with ``H = rows + 1``; the bit
  above each column is an always-empty sentinel, so shifts never wrap;
* ``mask`` holds every stone, ``current`` the stones of the side to move;
* ``current + mask`` is a unique key for the position.

Marks follow Kaggle: player 1 moves first, so the side to move has mark 1 after
an even number of stones and mark 2 after an odd number.  ``obs.board`` is a
flat list of ``rows * columns`` ints, row 0 at the top.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

Size = tuple[int, int, int]  # rows, columns, inarow: the one board-size type (tools and build import it)
STANDARD: Size = (6, 7, 4)  # the Kaggle leaderboard's board; the one definition of it


class BoardError(ValueError):
    """A position or move that the rules do not allow; the message says why."""


class Geometry(NamedTuple):
    """Bit masks for one board size, computed once per size."""

    rows: int
    columns: int
    inarow: int
    height: int  # bits per column, including the sentinel
    bottom: int  # the lowest cell of every column
    full: int  # every playable cell
    column_masks: tuple[int, ...]
    top_masks: tuple[int, ...]
    bottom_masks: tuple[int, ...]
    directions: tuple[int, ...]


@lru_cache(maxsize=64, typed=True)  # typed: 6.0 must not hit the cached 6
def geometry(rows: int, columns: int, inarow: int) -> Geometry:
    """The masks for a ``rows x columns`` board where ``inarow`` stones win."""
    if not (isinstance(rows, int) and isinstance(columns, int) and isinstance(inarow, int)):
        raise BoardError(f"rows, columns and inarow must be ints, got {rows!r}, {columns!r}, {inarow!r}")
    if rows < 1 or columns < 1 or inarow < 1:
        raise BoardError(f"rows, columns and inarow must be positive, got {rows}x{columns}x{inarow}")
    h = rows + 1
    col = (1 << rows) - 1
    column_masks = tuple(col << (c * h) for c in range(columns))
    top_masks = tuple(1 << (rows - 1 + c * h) for c in range(columns))
    bottom_masks = tuple(1 << (c * h) for c in range(columns))
    return Geometry(
        rows, columns, inarow, h, sum(bottom_masks), sum(column_masks),
        column_masks, top_masks, bottom_masks, (1, h, h - 1, h + 1),
    )


def has_alignment(bits: int, geo: Geometry) -> bool:
    """Whether ``bits`` holds ``inarow`` stones in a line, in any direction."""
    k = geo.inarow
    if k == 4:
        for d in geo.directions:
            m = bits & (bits >> d)
            if m & (m >> (2 * d)):
                return True
        return False
    for d in geo.directions:
        m = bits
        for i in range(1, k):
            m &= bits >> (i * d)
            if not m:
                break
        if m:
            return True
    return False


# -- threats: raw-int functions on a Geometry (Pons keeps these in ``Position``) ----------------------------
def winning_cells(stones: int, mask: int, geo: Geometry) -> int:
    """The empty cells where one more stone would give ``stones`` a line of ``inarow`` through that cell.

    A cell completes a line in direction ``d`` when ``a`` cells on one side of it
    and ``inarow - 1 - a`` on the other hold stones; shifts test every cell at
    once.  Cells that are not playable yet are included (future threats).  The
    sentinel bit above each column is never a stone, so lines cannot wrap.  While
    ``stones`` hold no line yet (any game still on), these are exactly the empty
    cells ``c`` with ``has_alignment(stones | c)``.

    The board's extent is read only through ``geo.full``: with ``full`` copied
    into several lanes of one int, far enough apart that no shift carries a stone
    from one into another, one call gives every lane's threat cells (the solver's
    move sorter scores all children of a position so).
    """
    full = geo.full
    k = geo.inarow
    if k == 4:  # the common case, unrolled
        s = stones
        r = (s << 1) & (s << 2) & (s << 3)  # vertical: only from below
        d = geo.height  # horizontal, then the two diagonals
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        d -= 1
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        d += 2
        p = (s << d) & (s << 2 * d)
        r |= p & ((s << 3 * d) | (s >> d))
        p = (s >> d) & (s >> 2 * d)
        r |= p & ((s << d) | (s >> 3 * d))
        return r & (full ^ mask)
    r = full
    for i in range(1, k):
        r &= stones << i  # vertical: the k - 1 cells below
    for d in geo.directions[1:]:
        back, ahead = [full], [full]  # back[a]: the a cells behind hold stones; ahead[b] likewise
        for i in range(1, k):
            back.append(back[-1] & (stones << i * d))
            ahead.append(ahead[-1] & (stones >> i * d))
        for a in range(k):
            r |= back[a] & ahead[k - 1 - a]
    return r & (full ^ mask)


def playable_cells(mask: int, geo: Geometry) -> int:
    """The cell each non-full column would receive next, as one bitboard."""
    return (mask + geo.bottom) & geo.full


def can_win_next(current: int, mask: int, geo: Geometry) -> bool:
    """Whether the side to move has a move that completes a line at once."""
    return bool(winning_cells(current, mask, geo) & playable_cells(mask, geo))


def non_losing_moves(current: int, mask: int, geo: Geometry) -> int:
    """The playable cells after which the opponent cannot complete a line at once (Pons' rule).

    When the opponent threatens one playable cell, only that block is kept, and
    nothing when it threatens two; a move right under an opponent's threat cell
    is dropped.  Assumes the side to move cannot win at once (a winning move may
    be missing from the result).
    """
    return safe_moves(playable_cells(mask, geo), winning_cells(current ^ mask, mask, geo))


def safe_moves(playable: int, threats: int) -> int:
    """``non_losing_moves`` from the playable cells and the opponent's threat cells, when known.

    A search that already has the opponent's ``winning_cells`` (it ordered its
    moves by them) calls this instead of recomputing them.
    """
    forced = playable & threats
    if forced:
        if forced & (forced - 1):
            return 0
        playable = forced
    return playable & ~(threats >> 1)


def cell_columns(cells: int, geo: Geometry) -> list[int]:
    """The columns that hold at least one cell of ``cells``, left to right."""
    return [c for c, col in enumerate(geo.column_masks) if cells & col]


def mirror_bits(bits: int, geo: Geometry) -> int:
    """``bits`` reflected left to right (column ``c`` to ``columns - 1 - c``, sentinels included)."""
    h, last = geo.height, geo.columns - 1
    col = (1 << h) - 1
    out = 0
    for c in range(geo.columns):
        out |= ((bits >> (c * h)) & col) << ((last - c) * h)
    return out


def canonical_key(current: int, mask: int, geo: Geometry) -> int:
    """The smaller of the position's key (``current + mask``) and its mirror's: one key per symmetric pair."""
    key = current + mask
    return min(key, mirror_bits(key, geo))


def config_value(obj: Any, name: str, default: object = None) -> Any:
    """Read ``name`` from a Kaggle ``Struct``, a dict or any object.

    ``obj`` is probed, not trusted (indexed, then read as an attribute), and the value is returned unchecked
    (an int, a list, whatever ``obj`` holds): hence untyped both ways; the callers convert it (``int``,
    ``float``, ``list``) as they read it.  ``obs`` and ``config`` are typed ``object`` everywhere else: Kaggle
    hands ``Struct``s (dicts whose keys are also attributes), the tools plain dicts, a test any object."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    try:
        return obj[name]
    except (KeyError, TypeError, IndexError):
        return getattr(obj, name, default)


def config_size(config: object) -> Size:
    """``(rows, columns, inarow)`` from a ConnectX configuration (defaults 6, 7, 4)."""
    rows, columns, inarow = (int(config_value(config, k, d))
                             for k, d in zip(("rows", "columns", "inarow"), STANDARD, strict=True))
    return rows, columns, inarow


def standard_board(obs: object, config: object, who: str) -> Board:
    """The position from ``obs``, for an agent (``who``) that plays only the 6x7x4 board."""
    board = Board.from_obs(obs, config)
    if (board.rows, board.columns, board.inarow) != STANDARD:
        raise ValueError(f"{who} plays only 6x7x4, got {board.rows}x{board.columns}x{board.inarow}")
    return board


class Board:
    """An immutable ConnectX position.  ``play`` returns a new board."""

    __slots__ = ("geo", "current", "mask", "moves")

    def __init__(self, rows: int = 6, columns: int = 7, inarow: int = 4,
                 current: int = 0, mask: int = 0, moves: int = 0) -> None:
        self.geo = geometry(rows, columns, inarow)
        self.current = current
        self.mask = mask
        self.moves = moves

    # -- construction -------------------------------------------------------
    @classmethod
    def _from(cls, geo: Geometry, current: int, mask: int, moves: int) -> Board:
        b = cls.__new__(cls)
        b.geo, b.current, b.mask, b.moves = geo, current, mask, moves
        return b

    @classmethod
    def from_moves(cls, moves: Iterable[int], rows: int = 6, columns: int = 7, inarow: int = 4) -> Board:
        """Play 0-based ``moves`` from the empty board; raises ``BoardError`` on an illegal one."""
        board = cls(rows, columns, inarow)
        for i, col in enumerate(moves):
            if board.winner() is not None:
                raise BoardError(f"move {i + 1} ({col}) comes after the game was won")
            if not board.can_play(col):
                raise BoardError(f"move {i + 1}: column {col} is not playable")
            board = board.play(col)
        return board

    @classmethod
    def from_pons(cls, moves: str) -> Board:
        """A 6x7x4 board from a Pons move string of columns ``1``-``7``."""
        if not all(ch in "1234567" for ch in moves):
            raise BoardError(f"a move string holds only the digits 1-7, got {moves!r}")
        return cls.from_moves([int(ch) - 1 for ch in moves])

    @classmethod
    def from_grid(cls, grid: Sequence[int], rows: int = 6, columns: int = 7, inarow: int = 4,
                  mark: int | None = None) -> Board:
        """A board from a flat Kaggle grid (row 0 at the top, 0 empty, marks 1 and 2).

        Checks the grid's length, cell values, gravity and stone counts.  ``mark``,
        when given, must be the mark whose turn the counts say it is.
        """
        geo = geometry(rows, columns, inarow)
        if len(grid) != rows * columns:
            raise BoardError(f"board has {len(grid)} cells, expected {rows}x{columns} = {rows * columns}")
        stones = {1: 0, 2: 0}
        bits = {1: 0, 2: 0}
        for c in range(columns):
            seen_empty = False
            for h in range(rows):  # bottom up
                v = grid[(rows - 1 - h) * columns + c]
                if v == 0:
                    seen_empty = True
                    continue
                if v not in (1, 2) or isinstance(v, bool):
                    raise BoardError(f"cell (row {rows - 1 - h}, column {c}) holds {v!r}; cells hold 0, 1 or 2")
                if seen_empty:
                    raise BoardError(f"column {c} has a stone floating above an empty cell")
                stones[v] += 1
                bits[v] |= 1 << (c * geo.height + h)
        if stones[1] - stones[2] not in (0, 1):
            raise BoardError(f"board has {stones[1]} stones of mark 1 and {stones[2]} of mark 2; "
                             "mark 1 moves first, so it has as many as mark 2 or one more")
        to_move = 1 if stones[1] == stones[2] else 2
        if mark is not None and mark != to_move:
            raise BoardError(f"it is mark {to_move}'s turn on this board, but the mark given is {mark!r}")
        mask = bits[1] | bits[2]
        return cls._from(geo, bits[to_move], mask, stones[1] + stones[2])

    @classmethod
    def from_obs(cls, obs: object, config: object) -> Board:
        """The position an agent sees, from Kaggle's ``obs`` and ``config``."""
        rows, columns, inarow = config_size(config)
        grid = config_value(obs, "board")
        if grid is None:
            raise BoardError("obs has no 'board'")
        mark = config_value(obs, "mark")
        return cls.from_grid(list(grid), rows, columns, inarow, None if mark is None else int(mark))

    # -- queries -------------------------------------------------------------
    @property
    def rows(self) -> int:
        return self.geo.rows

    @property
    def columns(self) -> int:
        return self.geo.columns

    @property
    def inarow(self) -> int:
        return self.geo.inarow

    @property
    def mark(self) -> int:
        """The mark (1 or 2) of the side to move."""
        return 1 + (self.moves & 1)

    @property
    def opponent(self) -> int:
        """The mark of the side that just moved."""
        return 2 - (self.moves & 1)

    def key(self) -> int:
        """A unique integer for this position (Pons' ``current + mask``)."""
        return self.current + self.mask

    def can_play(self, col: int) -> bool:
        """Whether ``col`` is a plain int naming a column that is not full."""
        return (type(col) is int and 0 <= col < self.geo.columns
                and not self.mask & self.geo.top_masks[col])

    def legal_moves(self) -> list[int]:
        """The playable columns, left to right."""
        tops, mask = self.geo.top_masks, self.mask
        return [c for c in range(self.geo.columns) if not mask & tops[c]]

    def height(self, col: int) -> int:
        """How many stones column ``col`` holds."""
        return bin(self.mask & self.geo.column_masks[col]).count("1")

    def play(self, col: int) -> Board:
        """The board after the side to move drops a stone in ``col`` (not checked; see ``can_play``)."""
        mask = self.mask
        return Board._from(self.geo, self.current ^ mask,
                           mask | (mask + self.geo.bottom_masks[col]), self.moves + 1)

    def is_winning_move(self, col: int) -> bool:
        """Whether playing the legal column ``col`` makes ``inarow`` for the side to move."""
        geo = self.geo
        drop = (self.mask + geo.bottom_masks[col]) & geo.column_masks[col]
        return has_alignment(self.current | drop, geo)

    # -- threats (the functions above) -----------------------------------------
    def winning_cells(self, mark: int | None = None) -> int:
        """The empty cells where one more stone of ``mark`` (default: the side to move) completes a line."""
        return winning_cells(self.current if mark is None else self.stones(mark), self.mask, self.geo)

    def playable_cells(self) -> int:
        """The cell each non-full column would receive next, as one bitboard."""
        return playable_cells(self.mask, self.geo)

    def winning_moves(self) -> list[int]:
        """The legal columns that win at once for the side to move."""
        return cell_columns(self.winning_cells() & self.playable_cells(), self.geo)

    def opponent_winning_moves(self) -> list[int]:
        """The legal columns where the opponent would win if it moved there now: the ones to block."""
        return cell_columns(self.winning_cells(self.opponent) & self.playable_cells(), self.geo)

    def non_losing_moves(self) -> list[int]:
        """The columns after which the opponent cannot win at once, left to right.

        Pons' rule (the function ``non_losing_moves``): a lone threat must be blocked,
        two cannot be, and a stone right under an opponent's threat cell loses.
        Assumes the side to move cannot win at once (see ``winning_moves``).
        """
        return cell_columns(non_losing_moves(self.current, self.mask, self.geo), self.geo)

    def canonical_key(self) -> int:
        """The smaller of ``key()`` and the mirror image's key: one key per symmetric pair."""
        return canonical_key(self.current, self.mask, self.geo)

    def stones(self, mark: int) -> int:
        """The bitboard of ``mark``'s stones."""
        return self.current if mark == self.mark else self.current ^ self.mask

    def winner(self) -> int | None:
        """The mark with ``inarow`` stones in a line, or ``None``."""
        if has_alignment(self.current ^ self.mask, self.geo):
            return self.opponent
        if has_alignment(self.current, self.geo):
            return self.mark
        return None

    def is_full(self) -> bool:
        return self.mask == self.geo.full

    def is_over(self) -> bool:
        """Whether the game has ended: a line of ``inarow`` or a full board."""
        return self.is_full() or self.winner() is not None

    def cell(self, row: int, col: int) -> int:
        """The mark at ``row`` (0 at the top, as in ``obs.board``) and ``col``; 0 if empty."""
        bit = 1 << (col * self.geo.height + self.geo.rows - 1 - row)
        if not self.mask & bit:
            return 0
        return self.mark if self.current & bit else self.opponent

    def to_grid(self) -> list[int]:
        """The flat Kaggle ``obs.board`` list for this position."""
        return [self.cell(r, c) for r in range(self.geo.rows) for c in range(self.geo.columns)]

    def mirror(self) -> Board:
        """The same position reflected left to right."""
        geo = self.geo
        return Board._from(geo, mirror_bits(self.current, geo), mirror_bits(self.mask, geo), self.moves)

    def __iter__(self) -> Iterator[int]:
        return iter(self.to_grid())

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Board) and self.geo == other.geo
                and self.current == other.current and self.mask == other.mask)

    def __hash__(self) -> int:
        return hash((self.geo[:3], self.current, self.mask))

    def __repr__(self) -> str:
        return f"Board({self.rows}x{self.columns}x{self.inarow}, moves={self.moves}, key={self.key()})"

    def __str__(self) -> str:
        sym = {0: ".", 1: "X", 2: "O"}
        lines = [" ".join(sym[self.cell(r, c)] for c in range(self.columns)) for r in range(self.rows)]
        return "\n".join(lines + [" ".join(str(c % 10) for c in range(self.columns))])
