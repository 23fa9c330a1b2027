"""``weighted``: win or block in one, else the move onto the cell that lies in the most lines.

A cell's weight is the number of possible lines of ``inarow`` through it (the
classic 6x7 table 3 4 5 7 5 4 3 / 4 6 8 10 8 6 4 / 5 8 11 13 11 8 5, mirrored).
The standard table is read from agents/data/cell_weights.json, which also shows
how an agent ships a data file in its submission; other board sizes are counted
from the game core's geometry.
"""

from __future__ import annotations

import json
from functools import lru_cache

from agents.board import Board, Geometry, geometry
from connectx_forge.runtime import read_data

Table = tuple[tuple[int, ...], ...]  # [row][column], row 0 at the top as in obs.board


def stored_tables() -> dict[str, Table]:
    """The tables in agents/data/cell_weights.json, keyed ``"ROWSxCOLUMNSxINAROW"``."""
    raw = json.loads(read_data("agents/data/cell_weights.json"))["tables"]
    return {key: tuple(tuple(int(v) for v in row) for row in rows) for key, rows in raw.items()}


def lines(geo: Geometry) -> list[int]:
    """Every line of ``inarow`` cells, as a bitmask in the board's layout."""
    found = []
    for col in range(geo.columns):
        for row in range(geo.rows):
            start = 1 << (col * geo.height + row)
            for d in geo.directions:
                line = sum(start << (i * d) for i in range(geo.inarow))
                # the sentinel row keeps lines from wrapping: a line is real iff all its cells are
                if line & geo.full == line:
                    found.append(line)
    return found


def count_lines(rows: int, columns: int, inarow: int) -> Table:
    """How many lines of ``inarow`` pass through each cell (row 0 at the top)."""
    geo = geometry(rows, columns, inarow)
    all_lines = lines(geo)
    return tuple(tuple(sum(1 for line in all_lines if line >> (c * geo.height + rows - 1 - r) & 1)
                       for c in range(columns)) for r in range(rows))


_STORED = stored_tables()


@lru_cache(maxsize=16)
def weights(rows: int, columns: int, inarow: int) -> Table:
    """The weight table for a board size: the stored one, else counted."""
    return _STORED.get(f"{rows}x{columns}x{inarow}") or count_lines(rows, columns, inarow)


def choose(board: Board) -> int:
    """A win, else a block, else the legal column whose landing cell weighs most (ties: nearest the centre)."""
    wins = board.winning_moves()
    if wins:
        return wins[0]
    blocks = board.opponent_winning_moves()
    if blocks:
        return blocks[0]
    table = weights(board.rows, board.columns, board.inarow)
    centre2 = board.columns - 1  # twice the centre, to compare distances in integers
    return max(board.legal_moves(),
               key=lambda c: (table[board.rows - 1 - board.height(c)][c], -abs(2 * c - centre2), -c))


def agent(obs: object, config: object) -> int:
    """Kaggle entry point."""
    return choose(Board.from_obs(obs, config))
