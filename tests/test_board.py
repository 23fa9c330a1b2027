"""The game core (agents/board.py) against a plain reference grid and against kaggle_environments."""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from agents.board import STANDARD, Board, BoardError
from tests.strategies import positions, sizes

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
