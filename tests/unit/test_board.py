"""The game core (agents/board.py) against a plain reference grid, brute force and kaggle_environments."""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from agents.board import (
    STANDARD,
    Board,
    BoardError,
    can_win_next,
    canonical_key,
    cell_columns,
    geometry,
    has_alignment,
    mirror_bits,
    non_losing_moves,
    playable_cells,
    safe_moves,
    winning_cells,
)
from tests.strategies import positions, sizes, threats

DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
DRAWISH = [(4, 4, 4), (4, 5, 4), (5, 5, 5), (4, 6, 4)]  # small boards where random games often draw


# -- the reference: a 2-D list, row 0 at the top, naive scans -----------------
def ref_drop(grid: list[list[int]], col: int, mark: int) -> None:
    row = max(r for r in range(len(grid)) if grid[r][col] == 0)
    grid[row][col] = mark


def ref_has_line(grid: list[list[int]], mark: int, inarow: int) -> bool:
    rows, columns = len(grid), len(grid[0])
    for r in range(rows):
        for c in range(columns):
            for dr, dc in DIRECTIONS:
                cells = [(r + i * dr, c + i * dc) for i in range(inarow)]
                if all(0 <= rr < rows and 0 <= cc < columns and grid[rr][cc] == mark for rr, cc in cells):
                    return True
    return False


def ref_winner(grid: list[list[int]], inarow: int) -> int | None:
    winners = [m for m in (1, 2) if ref_has_line(grid, m, inarow)]
    assert len(winners) <= 1, "the reference game went on after a win"
    return winners[0] if winners else None


def ref_legal(grid: list[list[int]]) -> list[int]:
    return [c for c in range(len(grid[0])) if grid[0][c] == 0]


def flat(grid: list[list[int]]) -> list[int]:
    return [v for row in grid for v in row]


class BoardMachine(RuleBasedStateMachine):
    """Plays random games on Board and on the reference side by side; ``undo`` goes back in history."""

    def __init__(self) -> None:
        super().__init__()
        self.board: Board
        self.grid: list[list[int]]
        self.history: list[tuple[Board, list[int], int, int]] = []  # board, grid, key, moves
        self.moves: list[int] = []

    @initialize(size=st.one_of(sizes(), st.sampled_from(DRAWISH)))
    def start(self, size: tuple[int, int, int]) -> None:
        self.rows, self.columns, self.inarow = size
        self.board = Board(*size)
        self.grid = [[0] * self.columns for _ in range(self.rows)]

    def over(self) -> bool:
        return ref_winner(self.grid, self.inarow) is not None or not ref_legal(self.grid)

    @rule(data=st.data())
    def play(self, data: st.DataObject) -> None:
        if self.over():  # only undo moves on (no precondition: Hypothesis gives up on filtered rules)
            return
        col = data.draw(st.integers(0, self.columns - 1), label="column")
        legal = ref_legal(self.grid)
        assert self.board.can_play(col) == (col in legal)
        if col not in legal:
            return
        mark = self.board.mark
        after = [row[:] for row in self.grid]
        ref_drop(after, col, mark)
        assert self.board.is_winning_move(col) == ref_has_line(after, mark, self.inarow)
        self.history.append((self.board, flat(self.grid), self.board.key(), self.board.moves))
        self.board = self.board.play(col)
        self.grid = after
        self.moves.append(col)
        assert self.board.key() not in {k for _, _, k, _ in self.history}, "key repeated within a game"
        if self.over():
            event("game won" if ref_winner(self.grid, self.inarow) else "board full, a draw")

    @rule(steps=st.integers(1, 5))
    def undo(self, steps: int) -> None:
        """Go back to an earlier Board object: it must be exactly as it was."""
        for _ in range(min(steps, len(self.history))):
            board, grid, key, moves = self.history.pop()
            self.moves.pop()
            assert board.to_grid() == grid
            assert board.key() == key and board.moves == moves
            self.board = board
            self.grid = [grid[r * self.columns:(r + 1) * self.columns] for r in range(self.rows)]

    @invariant()
    def same_position(self) -> None:
        if not hasattr(self, "grid"):
            return
        b, grid = self.board, self.grid
        assert b.to_grid() == flat(grid)
        assert b.legal_moves() == ref_legal(grid)
        assert b.winner() == ref_winner(grid, self.inarow)
        assert b.is_full() == (not ref_legal(grid))
        assert b.is_over() == self.over()
        assert b.moves == len(self.moves) == sum(v != 0 for v in flat(grid))
        assert b.mark == 1 + len(self.moves) % 2

    @invariant()
    def encodings_round_trip(self) -> None:
        if not hasattr(self, "grid"):
            return
        b = self.board
        again = Board.from_grid(b.to_grid(), self.rows, self.columns, self.inarow, mark=b.mark)
        assert again == b and again.key() == b.key() and again.moves == b.moves
        assert Board.from_moves(self.moves, self.rows, self.columns, self.inarow) == b
        assert b.mirror().mirror() == b
        assert b.mirror().to_grid() == [v for row in self.grid for v in reversed(row)]
        if not b.is_over():
            assert b.winning_moves() == [c for c in b.legal_moves() if b.is_winning_move(c)]


BoardMachine.TestCase.settings = settings(stateful_step_count=60)  # examples: the loaded profile
TestBoardMachine = BoardMachine.TestCase


# -- Kaggle inputs and bad boards ------------------------------------------------
def kaggle_structs(board: Board) -> tuple[object, object]:
    from kaggle_environments.utils import structify

    obs = {"remainingOverageTime": 60, "step": board.moves, "board": board.to_grid(), "mark": board.mark}
    config = {"rows": board.rows, "columns": board.columns, "inarow": board.inarow, "episodeSteps": 1000,
              "actTimeout": 2, "runTimeout": 1200, "agentTimeout": 60, "timeout": 2}
    return structify(obs), structify(config)


@given(positions())
def test_from_obs_reads_kaggle_structs(board: Board) -> None:
    obs, config = kaggle_structs(board)
    got = Board.from_obs(obs, config)
    assert got == board and got.moves == board.moves and got.mark == board.mark


def test_from_obs_reads_the_environments_own_observations() -> None:
    """Inside env.run, every obs an agent gets decodes to the position of the moves so far."""
    from kaggle_environments import make

    rng = random.Random(7)
    moves: list[int] = []
    seen: list[Board] = []

    def agent(obs, config):  # type: ignore[no-untyped-def]
        board = Board.from_obs(obs, config)
        assert board.mark == obs.mark
        seen.append(board)
        col = rng.choice(board.legal_moves())
        moves.append(col)
        return col

    env = make("connectx", configuration={"rows": 5, "columns": 6, "inarow": 4})
    env.run([agent, agent])
    assert len(seen) == len(moves) >= 7
    for k, board in enumerate(seen):
        assert board == Board.from_moves(moves[:k], 5, 6, 4) and board.moves == k


def test_from_obs_defaults_to_the_standard_size() -> None:
    board = Board.from_obs({"board": [0] * 42, "mark": 1}, {})
    assert (board.rows, board.columns, board.inarow) == STANDARD


@pytest.mark.parametrize("grid, kwargs, message", [
    ([0] * 41, {}, r"board has 41 cells, expected 6x7 = 42"),
    ([0] * 16, {"rows": 4, "columns": 5, "inarow": 3}, r"board has 16 cells, expected 4x5 = 20"),
    ([1] + [0] * 41, {}, r"column 0 has a stone floating above an empty cell"),
    ([0] * 35 + [3] + [0] * 6, {}, r"cell \(row 5, column 0\) holds 3; cells hold 0, 1 or 2"),
    ([0] * 35 + [-1] + [0] * 6, {}, r"holds -1"),
    ([0] * 35 + [True] + [0] * 6, {}, r"holds True"),
    ([0] * 35 + ["1"] + [0] * 6, {}, r"holds '1'"),
    ([0] * 35 + [1, 1] + [0] * 5, {}, r"2 stones of mark 1 and 0 of mark 2"),
    ([0] * 35 + [2] + [0] * 6, {}, r"0 stones of mark 1 and 1 of mark 2"),
    ([0] * 35 + [1] + [0] * 6, {"mark": 1}, r"it is mark 2's turn on this board, but the mark given is 1"),
    ([0] * 42, {"mark": 2}, r"it is mark 1's turn"),
])
def test_from_grid_rejects_bad_boards(grid: list, kwargs: dict, message: str) -> None:
    with pytest.raises(BoardError, match=message):
        Board.from_grid(grid, **kwargs)


def test_from_obs_rejects_a_mark_mismatch_and_a_missing_board() -> None:
    from kaggle_environments.utils import structify

    config = structify({"rows": 6, "columns": 7, "inarow": 4})
    with pytest.raises(BoardError, match="mark 1's turn"):
        Board.from_obs(structify({"board": [0] * 42, "mark": 2}), config)
    with pytest.raises(BoardError, match="no 'board'"):
        Board.from_obs(structify({"mark": 1}), config)


@pytest.mark.parametrize("moves, message", [
    ([0, 0, 0, 0, 0, 0, 0], "column 0 is not playable"),
    ([7], "column 7 is not playable"),
    ([-1], "column -1 is not playable"),
    ([0, 1, 0, 1, 0, 1, 0, 1], r"move 8 \(1\) comes after the game was won"),
])
def test_from_moves_rejects_illegal_sequences(moves: list[int], message: str) -> None:
    with pytest.raises(BoardError, match=message):
        Board.from_moves(moves)


@pytest.mark.parametrize("bad", ["0", 3.0, True, None])
def test_can_play_wants_a_plain_int(bad: object) -> None:
    assert not Board().can_play(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [(0, 7, 4), (6, 0, 4), (6, 7, 0), (6.0, 7, 4)])
def test_bad_sizes(size: tuple) -> None:
    with pytest.raises(BoardError):
        Board(*size)


def test_from_pons() -> None:
    assert Board.from_pons("4453") == Board.from_moves([3, 3, 4, 2])
    with pytest.raises(BoardError, match="digits 1-7"):
        Board.from_pons("408")


# -- the core's outcomes equal the Kaggle interpreter's --------------------------
KAGGLE_SIZES = [(6, 7, 4), (4, 4, 3), (4, 4, 4), (5, 6, 4), (4, 5, 3), (7, 9, 5), (10, 10, 5), (6, 7, 3)]


@pytest.mark.parametrize("size", KAGGLE_SIZES, ids=lambda s: "x".join(map(str, s)))
def test_outcomes_equal_kaggle_interpreter(size: tuple[int, int, int]) -> None:
    """Random games stepped through connectx's interpreter and through Board agree at every ply."""
    from kaggle_environments import make

    rows, columns, inarow = size
    env = make("connectx", configuration={"rows": rows, "columns": columns, "inarow": inarow})
    rng = random.Random(hash(size) & 0xFFFF)
    outcomes = set()
    for _ in range(12):
        env.reset()
        board = Board(rows, columns, inarow)
        while not env.done:
            col = rng.choice(board.legal_moves())
            env.step([col, None] if board.mark == 1 else [None, col])
            board = board.play(col)
            assert board.to_grid() == list(env.state[0].observation.board)
            assert board.is_over() == env.done
        rewards = [s.reward for s in env.state]
        assert [s.status for s in env.state] == ["DONE", "DONE"]
        winner = board.winner()
        expected = [0, 0] if winner is None else ([1, -1] if winner == 1 else [-1, 1])
        assert rewards == expected
        assert winner is not None or board.is_full()
        outcomes.add(winner)
    if size == (4, 4, 3):
        assert outcomes >= {1, 2}, "both marks should win some of these games"
    if size == (4, 4, 4):
        assert None in outcomes, "some of these games should be draws"


# -- the threat functions against brute force -------------------------------------
# inarow 3, 4 (the unrolled formula) and 5 on several sizes, plus edge cases: lines of 1 and 2, and a line
# longer than the columns are high (only horizontal and no diagonal lines then)
THREAT_SIZES = [(4, 4, 3), (6, 7, 3), (5, 8, 3), (6, 7, 4), (4, 5, 4), (9, 7, 4), (7, 9, 5), (10, 10, 5),
                (6, 6, 5), (3, 3, 2), (2, 3, 1), (5, 7, 6)]
threat_positions = st.sampled_from(THREAT_SIZES).flatmap(lambda size: positions(size=size))


def brute_winning_cells(stones: int, mask: int, board: Board) -> int:
    """Each empty cell, one at a time: does a stone there give ``stones`` a line (the rules' has_alignment)?"""
    out = 0
    for c in range(board.columns):
        for h in range(board.rows):
            bit = 1 << (c * board.geo.height + h)
            if not mask & bit and has_alignment(stones | bit, board.geo):
                out |= bit
    return out


@given(threat_positions)
def test_winning_cells_equal_brute_force(board: Board) -> None:
    geo, mask = board.geo, board.mask
    for mark in (1, 2):
        stones = board.stones(mark)
        expected = brute_winning_cells(stones, mask, board)
        assert winning_cells(stones, mask, geo) == expected
        assert board.winning_cells(mark) == expected
    assert board.winning_cells() == winning_cells(board.current, mask, geo)
    event(f"inarow {board.inarow}, threat cells {'found' if board.winning_cells() else 'none'}")


def through_cell_winning_cells(stones: int, board: Board) -> int:
    """Each empty cell: do the stones next to it, both ways along some direction, number ``inarow - 1``?"""
    geo, out = board.geo, 0

    def stone(c: int, r: int) -> bool:
        return 0 <= c < board.columns and 0 <= r < board.rows and bool(stones >> (c * geo.height + r) & 1)

    for c in range(board.columns):
        for r in range(board.rows):
            bit = 1 << (c * geo.height + r)
            if board.mask & bit:
                continue
            for dc, dr in DIRECTIONS:
                run = 1
                for sign in (1, -1):
                    i = 1
                    while stone(c + sign * i * dc, r + sign * i * dr):
                        run, i = run + 1, i + 1
                if run >= board.inarow:
                    out |= bit
    return out


@given(st.sampled_from(THREAT_SIZES).flatmap(lambda size: positions(size=size, finished=True)))
def test_winning_cells_on_finished_games_are_lines_through_the_cell(board: Board) -> None:
    """Once ``stones`` hold a line, a cell counts only if a line runs through it (not every empty cell)."""
    geo = board.geo
    for stones in (board.current, board.current ^ board.mask):
        cells = winning_cells(stones, board.mask, geo)
        assert not cells & board.mask and not cells & ~geo.full
        assert cells == through_cell_winning_cells(stones, board)
    event("game won" if board.winner() else "game on")


@given(threat_positions)
def test_playable_cells_and_winning_moves(board: Board) -> None:
    geo = board.geo
    playable = playable_cells(board.mask, geo)
    assert board.playable_cells() == playable
    assert cell_columns(playable, geo) == board.legal_moves()
    for c in board.legal_moves():  # exactly the lowest empty cell of each open column
        assert playable & geo.column_masks[c] == 1 << (c * geo.height + board.height(c))
    assert board.winning_moves() == [c for c in board.legal_moves() if board.is_winning_move(c)]
    assert board.opponent_winning_moves() == threats(board)
    assert can_win_next(board.current, board.mask, geo) == bool(board.winning_moves())


@given(threat_positions)
def test_non_losing_moves_are_the_moves_after_which_the_opponent_cannot_win(board: Board) -> None:
    """Pons' rule equals trying each move, whenever the side to move cannot win at once."""
    if board.winning_moves():
        return
    safe = [c for c in board.legal_moves() if not board.play(c).winning_moves()]
    assert board.non_losing_moves() == safe
    cells = non_losing_moves(board.current, board.mask, board.geo)
    assert cell_columns(cells, board.geo) == safe and not cells & ~playable_cells(board.mask, board.geo)
    theirs = winning_cells(board.current ^ board.mask, board.mask, board.geo)
    assert safe_moves(playable_cells(board.mask, board.geo), theirs) == cells
    event("some move loses" if len(safe) < len(board.legal_moves()) else "no move loses")


def test_non_losing_moves_drop_a_block_under_a_second_threat() -> None:
    board = Board.from_pons("357376477772534")  # O must block column 6, but X then wins right above it
    assert board.opponent_winning_moves() == [5]
    assert board.play(5).winning_moves() == [5]
    assert board.non_losing_moves() == [] and non_losing_moves(board.current, board.mask, board.geo) == 0
    assert Board.from_pons("4455").non_losing_moves() == [0, 1, 2, 3, 4, 5, 6]
    lone = Board.from_pons("11223")  # X on 1, 2, 3 of the bottom row: O must block column 4
    assert lone.non_losing_moves() == [3] == lone.opponent_winning_moves()
    double = Board.from_pons("44556")  # X on 4, 5, 6: two threats, O cannot block both
    assert double.non_losing_moves() == [] and double.opponent_winning_moves() == [2, 6]


@given(threat_positions, st.integers(min_value=0))
def test_mirror_is_an_involution_and_reflects_threats(board: Board, noise: int) -> None:
    geo = board.geo
    bits = noise % (1 << (geo.columns * geo.height))  # any bits of the board's columns, sentinels included
    assert mirror_bits(mirror_bits(bits, geo), geo) == bits
    assert mirror_bits(bits, geo).bit_count() == bits.bit_count()
    mirrored = board.mirror()
    assert mirrored.current == mirror_bits(board.current, geo) and mirrored.mask == mirror_bits(board.mask, geo)
    assert mirrored.mirror() == board
    assert mirrored.to_grid() == [board.cell(r, board.columns - 1 - c)
                                  for r in range(board.rows) for c in range(board.columns)]
    assert mirrored.winning_cells() == mirror_bits(board.winning_cells(), geo)
    assert mirrored.non_losing_moves() == sorted(board.columns - 1 - c for c in board.non_losing_moves())
    key = board.canonical_key()
    assert key == canonical_key(board.current, board.mask, geo) == min(board.key(), mirrored.key())
    assert key == mirrored.canonical_key()


@given(st.sampled_from([(6, 7, 4), (4, 5, 3), (5, 6, 5)]).flatmap(
    lambda size: st.lists(positions(size=size), min_size=1, max_size=7)))
def test_winning_cells_on_boards_packed_in_lanes(boards: list[Board]) -> None:
    """A geometry whose ``full`` is copied into every lane gives each lane's threat cells (the move sorter's use)."""
    geo = boards[0].geo
    width = geo.columns * geo.height + (geo.inarow - 1) * (geo.height + 1) + 1
    repl = sum(1 << (i * width) for i in range(len(boards)))
    wide = geo._replace(full=geo.full * repl)
    stones = sum(b.current << (i * width) for i, b in enumerate(boards))
    mask = sum(b.mask << (i * width) for i, b in enumerate(boards))
    cells = winning_cells(stones, mask, wide)
    lane = (1 << width) - 1
    assert [(cells >> (i * width)) & lane for i in range(len(boards))] == [b.winning_cells() for b in boards]
    assert cells >> (len(boards) * width) == 0


def test_threat_cells_of_a_known_position() -> None:
    board = Board.from_pons("4455")  # X to move: 3 or 6 makes two threats at once
    geo = geometry(6, 7, 4)
    assert board.winning_cells() == 0 and board.winning_cells(board.opponent) == 0
    after = board.play(2)  # X: 3, 4, 5 on the bottom row; threats at columns 2 and 6 (1-based)
    assert after.winning_cells(1) == (1 << (1 * geo.height)) | (1 << (5 * geo.height))
    assert after.opponent_winning_moves() == [1, 5]
