"""tools/connectx_forge/solver/mistakes.py: one weak solve per move gives the verdict of labelling every move."""

from __future__ import annotations

import sys

import connectx_forge.runtime as runtime
from agents.board import Board
from agents.solver.search import Solver
from connectx_forge.boundedread import read_positions
from connectx_forge.cli import main
from connectx_forge.solver.mistakes import WeakCache, measure, sign, solver_mover


def leftmost(board: Board) -> tuple[int, str]:
    return board.legal_moves()[0], "leftmost"


def test_one_solve_per_move_matches_full_labelling(pons_dir) -> None:
    positions = read_positions(pons_dir / "Test_L2_R1")[:25]  # Middle-Easy
    res = measure("Middle-Easy", positions, {"leftmost": leftmost}, progress=False)["leftmost"]
    solver = Solver()
    expected = 0
    for moves, _ in positions:
        board = Board.from_pons(moves)
        classes = [sign(s) for s in solver.analyze(board, weak=True) if s is not None]
        expected += sign(solver.analyze(board, weak=True)[leftmost(board)[0]]) < max(classes)
    assert expected > 0  # the sample must hold mistakes for the count to mean anything
    assert (len(res.mistakes), res.judged, res.skipped) == (expected, 25, 0)


def test_solver_agent_makes_no_mistakes_at_the_end(pons_dir) -> None:
    positions = read_positions(pons_dir / "Test_L3_R1")[:40]  # End-Easy
    res = measure("End-Easy", positions, {"solver": solver_mover()}, progress=False)["solver"]
    assert res.judged == 40 and res.mistakes == []


def test_weak_cache_makes_a_rerun_solve_nothing(pons_dir, tmp_path, monkeypatch) -> None:
    positions = read_positions(pons_dir / "Test_L2_R1")[:10]
    path = tmp_path / "weak.jsonl"
    first = measure("Middle-Easy", positions, {"leftmost": leftmost}, progress=False,
                    cache=WeakCache(path))["leftmost"]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"k": 12')  # a torn last line, as an interrupted run leaves
    cache = WeakCache(path)
    assert len(cache.scores) == first.judged > 0

    def no_solving(*args, **kwargs):
        raise AssertionError("solved a position that was in the cache")

    monkeypatch.setattr(Solver, "solve", no_solving)
    again = measure("Middle-Easy", positions, {"leftmost": leftmost}, progress=False, cache=cache)["leftmost"]
    assert (again.judged, again.skipped, again.mistakes) == (first.judged, 0, first.mistakes)


def test_missing_weights_are_one_error_line(pons_dir, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(runtime, "data_path", lambda path, module, file: str(tmp_path / path))
    monkeypatch.delitem(sys.modules, "agents.net.agent", raising=False)
    from connectx_forge.play.resolve import resolve

    resolve.cache_clear()  # an earlier test may have resolved net with its weights
    try:
        assert main(["mistakes", "--agents", "net", "--pons", str(pons_dir), "--sample", "1"]) == 2
    finally:
        resolve.cache_clear()
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("cxforge mistakes: error: agent 'net' is registered but cannot be loaded")
    assert "net_weights.npz" in err[-1] and "Traceback" not in "\n".join(err)


def test_a_cache_path_that_is_a_folder_is_one_error_line(pons_dir, tmp_path, capsys) -> None:
    assert main(["mistakes", "--agents", "net", "--pons", str(pons_dir), "--sample", "1",
                 "--cache", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(f"--cache must be a file, {tmp_path} is a folder")


def test_json_goes_to_stdout_and_out_to_a_file(pons_dir, tmp_path, capsys) -> None:
    import json

    base = ["mistakes", "--agents", "leftmost", "--pons", str(pons_dir), "--sample", "3", "--sets", "End-Easy",
            "--no-cache"]
    assert main([*base, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [r["set"] for r in printed] == ["End-Easy"] and printed[0]["judged"] == 3
    assert len(printed[0]["mistake_positions"]) == printed[0]["mistakes"]  # every one, where examples has five
    out = tmp_path / "results.json"
    assert main([*base, "-o", str(out)]) == 0
    header, _, row = capsys.readouterr().out.splitlines()  # a table: header, rule, a row per agent and set
    assert header.split()[:3] == ["set", "agent", "mistakes"] and row.split()[:2] == ["End-Easy", "leftmost"]
    written = json.loads(out.read_text())
    assert [(r["mistakes"], r["judged"]) for r in written] == [(r["mistakes"], r["judged"]) for r in printed]


def test_an_invalid_move_is_a_mistake_not_a_crash() -> None:
    """An agent that plays a full column (``middle`` does, on purpose) is charged a mistake per such move."""
    full = "4444441"  # column 4 (Pons' 1-based; our column 3) is full, the game is not won
    board = Board.from_pons(full)
    assert not board.can_play(3)

    def middle(board: Board) -> tuple[int, str]:
        return 3, "middle"

    res = measure("made-up", [(full, 0)], {"middle": middle}, progress=False)["middle"]
    assert (len(res.mistakes), res.judged, res.skipped) == (1, 1, 0)
    assert "invalid" in res.mistakes[0]
    assert res.to_json()["mistake_positions"] == res.mistakes


def test_overage_gives_the_solver_its_game_time_on_a_hard_position() -> None:
    """With ``--overage`` each position is a fresh game: a hard one past EXTRA_FROM stones takes the extra time."""
    import time

    from agents.board import Board
    from agents.solver import agent as solver_agent

    # 10 stones (past both engines' EXTRA_FROM); its weak solve takes tens of millions of nodes, about a second of
    # the C engine: far past the 0.06 s (weak_share of 0.1 s) without overage and the 0.26 s with it
    board = Board.from_pons("3113336135")
    cpu, hows, long_moves = {}, {}, {}
    for overage in (0.0, 1.0):  # 1 s of overage: the agent may take 1 - 0.5 - 0.3 = 0.2 s of it
        move = solver_mover(budget=0.1, overage=overage)
        start = time.process_time()  # CPU time: a loaded machine slows the clock, not the search
        col, how = move(board)
        cpu[overage], hows[overage] = time.process_time() - start, how
        long_moves[overage] = solver_agent.state().long_moves  # the moves the agent says took overage
        assert board.can_play(col) and how
    assert cpu[0.0] < 0.25 and long_moves[0.0] == 0, (cpu, hows, long_moves)
    # with overage it either spent the extra time, or finished within it a solve it could not finish without
    # (the C engine's solve of this position ends near the extra time's end, sometimes before it)
    solved = ("weak", "exact")
    assert long_moves[1.0] == 1 or (hows[1.0] in solved and hows[0.0] not in solved), (cpu, hows, long_moves)
