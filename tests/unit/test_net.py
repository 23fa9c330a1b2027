"""The network agents: features, the numpy forward pass against torch, the agents, training."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from agents.board import Board
from agents.net.features import encode, feature_size
from agents.net.mlp import load_mlp, masked_argmax, save_mlp
from connectx_forge.runtime import read_data
from tests.strategies import obs_config, positions, standard_positions

torch = pytest.importorskip("torch")


# -- features -----------------------------------------------------------------
@given(positions(size=None))
def test_encoding_planes_follow_the_grid(board: Board) -> None:
    x = encode(board)
    n = board.rows * board.columns
    assert x.shape == (feature_size(board.rows, board.columns),) and x.dtype == np.float32
    grid = np.array(board.to_grid())
    assert np.array_equal(x[:n], (grid == board.mark).astype(np.float32))
    assert np.array_equal(x[n:2 * n], (grid == board.opponent).astype(np.float32))
    playable = x[2 * n:3 * n].reshape(board.rows, board.columns)
    assert [int(playable[:, c].sum()) for c in range(board.columns)] == \
        [1 if board.can_play(c) else 0 for c in range(board.columns)]
    assert x[-1] == (1.0 if board.mark == 1 else 0.0)


# -- numpy forward pass vs torch -------------------------------------------------
def _torch_model(seed: int, outputs: int = 8):
    from connectx_forge.train.netlib import build_mlp

    torch.manual_seed(seed)
    return build_mlp(feature_size(6, 7), (64, 32), outputs)


@pytest.mark.parametrize("dtype,atol", [("float32", 1e-5), ("float16", 2e-2), ("int8", 1e-1)])
def test_numpy_forward_matches_torch(dtype: str, atol: float) -> None:
    from connectx_forge.train.netlib import export_bytes

    model = _torch_model(1)
    rng = np.random.default_rng(0)
    boards = []
    for _ in range(64):
        b = Board()
        for _ in range(int(rng.integers(0, 30))):
            moves = [c for c in b.legal_moves() if not b.is_winning_move(c)]
            if not moves:
                break
            b = b.play(int(rng.choice(moves)))
        boards.append(b)
    x = np.stack([encode(b) for b in boards])
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    mlp = load_mlp(export_bytes(model, "policy_value", dtype))
    got = mlp.forward(x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=atol, rtol=0)
    logits, value = mlp.policy_value(x)
    np.testing.assert_allclose(value, np.tanh(expected[:, 7]), atol=atol)


def test_weight_file_round_trip_keeps_meta() -> None:
    w = [np.arange(6, dtype=np.float32).reshape(2, 3)]
    b = [np.ones(3, dtype=np.float32)]
    mlp = load_mlp(save_mlp(w, b, {"kind": "q", "columns": 3, "features": 1}, dtype="float32"))
    assert mlp.meta["kind"] == "q" and mlp.meta["dtype"] == "float32"
    np.testing.assert_array_equal(mlp.forward(np.array([1.0, 1.0])), [[4.0, 6.0, 8.0]])


@pytest.mark.parametrize("name,kind", [("net_weights.npz", "policy_value"), ("dqn_weights.npz", "q")])
def test_committed_weights_load(name: str, kind: str) -> None:
    from agents.net.features import VERSION

    mlp = load_mlp(read_data(f"agents/data/{name}"))
    assert mlp.meta["kind"] == kind and mlp.meta["features"] == VERSION
    assert mlp.weights[0].shape[0] == feature_size(6, 7)
    out = mlp.forward(encode(Board.from_pons("4453")))
    assert out.shape == (1, 8 if kind == "policy_value" else 7) and np.isfinite(out).all()


def test_masked_argmax_never_picks_an_illegal_column() -> None:
    scores = np.array([9.0, 1.0, 9.5, 0.0, 3.0, 2.0, 8.0])
    assert masked_argmax(scores, [1, 3, 4]) == 4
    assert type(masked_argmax(scores, [0, 6])) is int


# -- the agents -------------------------------------------------------------------
@pytest.mark.parametrize("module", ["agents.net.agent", "agents.dqn"])
@given(board=standard_positions())
@settings(max_examples=30)
def test_network_agents_play_legal_ints(module: str, board: Board) -> None:
    import importlib

    agent = importlib.import_module(module).agent
    obs, config = obs_config(board)
    before = list(obs["board"])
    move = agent(obs, config)
    assert type(move) is int and board.can_play(move)
    assert obs["board"] == before


def test_net_masks_full_columns() -> None:
    from agents.net.agent import net_move

    # columns 0-5 full without a line; only column 6 is open
    board = Board.from_moves([0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 2, 3, 2, 3, 2, 3, 3, 2, 3, 2, 3, 2,
                              4, 5, 4, 5, 4, 5, 5, 4, 5, 4, 5, 4])
    assert board.legal_moves() == [6]
    assert net_move(board) == 6


def _tactic(board: Board) -> tuple[list[int], list[int]]:
    """(winning columns for the side to move, columns the opponent would win in)."""
    wins = board.winning_moves()
    flipped = Board._from(board.geo, board.current ^ board.mask, board.mask, board.moves + 1)
    return wins, [c for c in board.legal_moves() if flipped.is_winning_move(c)]


@given(standard_positions(min_moves=6))
@settings(max_examples=25)
def test_net_search_takes_wins_and_blocks_losses(board: Board) -> None:
    from agents.net.net_search import search_move

    wins, threats = _tactic(board)
    move = search_move(board, budget_s=0.05)
    assert board.can_play(move)
    if wins:
        assert move in wins
    elif len(threats) == 1 and not board.play(threats[0]).winning_moves():
        assert move == threats[0]  # (where the block only opens a win on top of it, every move loses)


def _minimax(board: Board, depth: int) -> float:
    """The network search's value by plain minimax: the same tactics, no pruning, no table."""
    from agents.net.agent import policy_value_net
    from agents.net.tree import forced_moves

    value, moves = forced_moves(board)
    if value is not None:
        return value
    if depth == 0:
        return float(policy_value_net().policy_value(encode(board))[1][0])
    return max(-_minimax(board.play(col), depth - 1) for col in moves)


@given(standard_positions(min_moves=4, max_moves=30))
@settings(max_examples=15, deadline=None)
def test_net_search_values_are_plain_minimax(board: Board) -> None:
    """Alpha-beta and the table (with the move order it keeps) change the work, never the value."""
    from agents.net.agent import policy_value_net
    from agents.net.tree import WIN, NetSearch

    for depth in (1, 2, 3):
        search = NetSearch(policy_value_net(), float("inf"))
        got = search.negamax(board, depth, -2 * WIN, 2 * WIN)
        assert abs(got - _minimax(board, depth)) < 1e-4, depth


def test_net_search_stays_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search stops at the first clock reading past its deadline, and a budget above Kaggle's is capped.

    The clock is a fake that moves 10 ms a reading, so the check is about the search, not the machine.
    """
    from agents.net.net_search import MAX_BUDGET_S, search_move

    board = Board.from_pons("4453")
    search_move(board, 0.01)  # load the weights
    step = 0.01
    readings = [0]

    def clock() -> float:
        readings[0] += 1
        return readings[0] * step

    monkeypatch.setattr(time, "perf_counter", clock)
    for budget, expected in ((0.05, 0.05), (0.2, 0.2), (60.0, MAX_BUDGET_S)):
        readings[0] = 0
        search_move(board, budget)
        assert readings[0] <= expected / step + 2, (budget, readings[0])  # start, then one reading past
        assert readings[0] >= expected / step - 1, (budget, readings[0])  # it used its time


@pytest.mark.parametrize("name", ["net", "net-search", "dqn"])
def test_registered(name: str) -> None:
    from agents import registry

    spec = registry.get(name)
    assert spec.sizes == "standard"
    obs, config = obs_config(Board.from_pons("44"))
    assert Board.from_pons("44").can_play(spec.load()(obs, config))


# -- training -------------------------------------------------------------------
def _tiny_labels(folder: Path) -> None:
    """Exact labels for a few late positions (cheap for the solver)."""
    import json

    from agents.solver.search import Solver

    rng = np.random.default_rng(3)
    solver = Solver()
    lines = []
    while len(lines) < 24:
        b = Board()
        moves = []
        while b.moves < 34:
            legal = [c for c in b.legal_moves() if not b.is_winning_move(c)]
            if not legal:
                break
            c = int(rng.choice(legal))
            b, moves = b.play(c), moves + [c]
        if b.moves < 34 or b.is_over():
            continue
        lines.append(json.dumps({"game": len(lines), "moves": "".join(str(c + 1) for c in moves),
                                 "scores": solver.analyze(b)}))
    folder.mkdir(parents=True)
    (folder / "labels-seed0.jsonl").write_text("\n".join(lines) + "\n")


def _train(tmp: Path, labels: Path, name: str, *extra: str) -> int:
    from connectx_forge.cli import main

    holdout = () if "--holdout" in extra else ("--no-holdout",)
    return main(["train", "--labels", str(labels), "--out", str(tmp), "--name", name, "--hidden", "32,16",
                 "--batch-size", "16", "--threads", "1", "--no-progress", "--device", "cpu", *holdout, *extra])


def test_train_is_seeded_and_resumes(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    _tiny_labels(labels)
    assert _train(tmp_path, labels, "a", "--epochs", "2", "--seed", "5") == 0
    assert _train(tmp_path, labels, "b", "--epochs", "2", "--seed", "5") == 0
    assert _train(tmp_path, labels, "c", "--epochs", "1", "--seed", "5") == 0
    assert _train(tmp_path, labels, "c", "--epochs", "2", "--seed", "5", "--resume") == 0
    assert _train(tmp_path, labels, "d", "--epochs", "2", "--seed", "6") == 0
    nets = {n: load_mlp((tmp_path / n / "net_weights.npz").read_bytes()) for n in "abcd"}
    for n in "bc":  # same seed: identical, resumed or not
        for w1, w2 in zip(nets["a"].weights, nets[n].weights, strict=True):
            np.testing.assert_array_equal(w1, w2)
    assert not np.array_equal(nets["a"].weights[0], nets["d"].weights[0])
    for n in "abcd":
        assert (tmp_path / n / "curves.png").stat().st_size > 1000
        assert (tmp_path / n / "checkpoint.pt").exists()


def test_train_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.cli import main

    assert _train(tmp_path, tmp_path / "nothing", "x", "--epochs", "1") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cxforge train: error:") and "\n" not in err
    with pytest.raises(SystemExit) as exc:
        main(["train", "--epochs", "zero"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert _train(tmp_path, tmp_path / "nothing", "y", "--resume") == 2
    assert "no checkpoint" in capsys.readouterr().err


def test_dqn_training_runs_end_to_end(tmp_path: Path) -> None:
    from connectx_forge.cli import main

    assert main(["train", "--method", "dqn", "--episodes", "12", "--out", str(tmp_path), "--name", "q",
                 "--hidden", "16", "--threads", "1", "--no-progress", "--opponents", "random,tactical"]) == 0
    mlp = load_mlp((tmp_path / "q" / "dqn_weights.npz").read_bytes())
    assert mlp.meta["kind"] == "q" and mlp.forward(encode(Board())).shape == (1, 7)
    assert (tmp_path / "q" / "checkpoint.pt").exists()


@settings(max_examples=20, deadline=None)
@given(standard_positions())
def test_dqn_warm_start_keeps_the_nets_choice(board: Board) -> None:
    from agents.net.agent import policy_value_net
    from connectx_forge.train.dqn_training import warm_start
    from connectx_forge.train.netlib import build_mlp

    net = policy_value_net()
    hidden = [w.shape[1] for w in net.weights[:-1]]
    q_net = build_mlp(feature_size(6, 7), hidden, 7)
    warm_start(q_net, net, 0.1)
    x = encode(board)[None, :]
    with torch.no_grad():
        q = q_net(torch.from_numpy(x))[0].numpy()
    logits, _ = net.policy_value(x)
    np.testing.assert_allclose(q, 0.1 * logits[0], rtol=1e-3, atol=1e-3)


def test_dqn_training_vs_fast_negamax_from_a_warm_start(tmp_path: Path) -> None:
    from connectx_forge.cli import main
    from connectx_forge.paths import agent_data

    assert main(["train", "--method", "dqn", "--episodes", "6", "--out", str(tmp_path), "--name", "w",
                 "--init", str(agent_data("net_weights.npz")), "--threads", "1", "--no-progress",
                 "--opponents", "negamax-fast"]) == 0
    mlp = load_mlp((tmp_path / "w" / "dqn_weights.npz").read_bytes())
    hidden = [w.shape[1] for w in load_mlp(Path(agent_data("net_weights.npz")).read_bytes()).weights[:-1]]
    assert [w.shape[1] for w in mlp.weights] == hidden + [7] and mlp.meta["init"]


def test_compiled_labels_match_the_python_labels(tmp_path: Path) -> None:
    from connectx_forge import tool_engines
    from connectx_forge.train import labels

    if not tool_engines.available():
        pytest.skip("the compiled solver does not load here")
    py, c = tmp_path / "py", tmp_path / "c"
    labels.generate(py, seed=5, games=3, budget_s=5.0, min_stones=24, progress=False)
    labels.generate(c, seed=5, games=3, budget_s=5.0, min_stones=24, progress=False, engine="c")
    assert (py / "labels-seed5.jsonl").read_text() == (c / "labels-seed5.jsonl").read_text()
    assert len(list(labels.read_labels(c))) > 0


def test_labels_are_exact_cached_and_resumable(tmp_path: Path) -> None:
    from agents.solver.search import Solver
    from connectx_forge.train import labels

    assert labels.generate(tmp_path, seed=4, games=2, budget_s=5.0, min_stones=30, progress=False) >= 0
    first = (tmp_path / "labels-seed4.jsonl").read_text().splitlines()
    labels.generate(tmp_path, seed=4, games=2, budget_s=5.0, min_stones=30, progress=False)
    assert (tmp_path / "labels-seed4.jsonl").read_text().splitlines() == first  # nothing redone
    labels.generate(tmp_path, seed=4, games=3, budget_s=5.0, min_stones=30, progress=False)
    lines = (tmp_path / "labels-seed4.jsonl").read_text().splitlines()
    assert lines[:len(first)] == first and len(lines) > len(first)
    assert [json.loads(x)["game"] for x in lines if "done" in x] == [0, 1, 2]
    solver = Solver()
    for lab in labels.read_labels(tmp_path):
        assert len(lab.moves) >= 30
        assert list(lab.scores) == solver.analyze(lab.board())


def test_book_progress_becomes_exact_labels(tmp_path: Path) -> None:
    """A book build's solved positions give full labels (the opponent's turns) and best moves."""
    import argparse

    from agents.solver.search import Solver
    from connectx_forge import tool_engines
    from connectx_forge.solver import book_builder, book_cmd
    from connectx_forge.train import labels

    root = "6614446666373154"  # a Middle-Medium position (as in test_book)
    progress = tmp_path / "progress.jsonl"
    parser = argparse.ArgumentParser()
    book_cmd.add_arguments(parser)
    args = parser.parse_args(["build", "--root", root, "--plies", str(len(root) + 2), "--side", "first",
                              "--easy-nodes", "0", "--workers", "1", "--progress", str(progress),
                              "--out", str(tmp_path / "book.bin"),
                              "--engine", "c" if tool_engines.available() else "python"])
    assert book_cmd.run(args) == 0
    found = list(book_builder.book_labels(progress))
    full = [r for r in found if isinstance(r, labels.Label)]
    best = [r for r in found if isinstance(r, labels.BestMove)]
    assert full and len(best) == len(book_builder.read_progress(progress))
    solver = Solver()
    for lab in full:
        assert list(lab.scores) == solver.analyze(lab.board())
    for bm in best:
        scores = solver.analyze(bm.board())
        assert scores[bm.move] == bm.score == max(s for s in scores if s is not None)
    shard = tmp_path / "labels" / "labels-book.jsonl.gz"
    assert labels.write_shard(shard, iter(found)) == len(found)
    assert list(labels.read_labels(shard.parent)) == found  # gzip and both record kinds round-trip


def test_held_out_positions_and_their_children_are_not_trained_on(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.train import labels
    from connectx_forge.train.train import build_arrays, holdout_keys

    folder = tmp_path / "labels"
    _tiny_labels(folder)
    found = list(labels.read_labels(folder))
    test_pos, parent = found[0].moves, found[1].moves[:-1]
    pons = tmp_path / "Test_X"
    pons.write_text(f"{test_pos} 0\n{parent} 0\n")
    keys = holdout_keys([tmp_path])
    assert Board.from_pons(test_pos).mirror().key() in keys and Board.from_pons(found[1].moves).key() in keys
    every = build_arrays(found)
    held = build_arrays(found, holdout=keys)

    def has(data: dict, moves: str) -> bool:
        x = encode(Board.from_pons(moves)).astype(np.uint8)
        return bool((data["x"] == x).all(axis=1).any())

    assert has(every, test_pos) and has(every, found[1].moves)
    assert not has(held, test_pos) and not has(held, found[1].moves)  # a position, and a child of one
    assert has(held, found[2].moves) and len(held["x"]) < len(every["x"])
    assert _train(tmp_path, folder, "h", "--epochs", "1", "--holdout", str(pons)) == 0
    assert "held out" in capsys.readouterr().out
    assert _train(tmp_path, folder, "m", "--epochs", "1", "--holdout", str(tmp_path / "missing")) == 2
    assert "--holdout: no such file" in capsys.readouterr().err


def test_bench_net_compares_precisions_on_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.cli import main

    folder = tmp_path / "labels"
    _tiny_labels(folder)
    assert _train(tmp_path, folder, "b", "--epochs", "1") == 0
    pons = tmp_path / "pons"
    pons.mkdir()
    (pons / "Test_L3_R1").write_text("".join(f"{m} 0\n" for m in ("4453", "4444", "1234567")))
    capsys.readouterr()
    assert main(["bench", "net", "--checkpoint", str(tmp_path / "b" / "checkpoint.pt"), "--pons", str(pons)]) == 0
    out = capsys.readouterr().out
    assert "float16:" in out and "/3 (" in out and "int8:" in out and "net move" in out
    assert main(["bench", "net", "--checkpoint", str(tmp_path / "none.pt"), "--pons", str(pons)]) == 2
    assert capsys.readouterr().err.strip() == f"cxforge bench: error: no checkpoint at {tmp_path / 'none.pt'} " \
                                              "(train one with cxforge train)"


def test_pack_makes_a_gzipped_dataset_with_the_same_labels(tmp_path: Path) -> None:
    from connectx_forge.train import labels

    src = tmp_path / "cache"
    _tiny_labels(src)
    with open(src / "labels-seed0.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"game": 99, "done": true}\n{"game": 100, "moves": "44')  # a marker, then a torn line
    (packed,) = labels.pack(src, tmp_path / "dataset")
    assert packed.name == "labels-seed0.jsonl.gz"
    assert list(labels.read_labels(tmp_path / "dataset")) == list(labels.read_labels(src))
    again = labels.pack(src, tmp_path / "dataset")[0].read_bytes()
    assert again == packed.read_bytes()  # reproducible bytes


def test_labels_command_line_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.cli import main

    for argv, status, why in ([["book"], 2, "required: PROGRESS"],
                              [["book", str(tmp_path / "none.jsonl")], 2, "no progress file"],
                              [["pack", str(tmp_path)], 2, "required: DST"],
                              [["pack", str(tmp_path), str(tmp_path / "o")], 2, "no labels-"],
                              [["generate", "--seed", "x", "-n", "3"], 2, "--seed: expected a whole number"],
                              [["generate", "-n", "0"], 2, "--games: must be at least 1"],
                              [["generate", "-n", "5", "--engine", "fortran"], 2, "invalid choice: 'fortran'"],
                              [["generate"], 2, "give the number of games with -n/--games"],
                              [["generate", "1", "5"], 2, "unrecognized arguments: 1 5"],
                              [[], 2, "required: ACTION"]):
        try:
            assert main(["labels", *argv]) == status
        except SystemExit as exc:
            assert exc.code == status
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("cxforge labels") and why in err[0], err


def test_labels_generate_passes_its_flags_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from connectx_forge.cli import main
    from connectx_forge.solver import labels_cmd

    calls = []
    monkeypatch.setattr(labels_cmd.os, "nice", lambda n: 0)  # not this test process
    monkeypatch.setattr(labels_cmd, "generate", lambda *a, **k: calls.append((a, k)) or 0)
    assert main(["labels", "generate", "--seed", "10", "-n", "20000", "--budget", "0.15", "--engine", "c",
                 "-o", str(tmp_path), "--no-progress"]) == 0
    assert main(["labels", "generate", "-n", "5"]) == 0
    assert calls == [((tmp_path, 10, 20000, 0.15), {"progress": False, "engine": "c"}),
                     ((labels_cmd.DEFAULT_DIR, 0, 5, 1.0), {"progress": True, "engine": "python"})]


@pytest.mark.parametrize("name,weights", [("net", "agents/data/net_weights.npz"),
                                          ("net-search", "agents/data/net_weights.npz")])
def test_each_network_agent_embeds_its_own_weights(name: str, weights: str) -> None:
    from connectx_bundler.builder import build, default_root
    from connectx_forge.play.resolve import resolve_target

    root = default_root()
    data = [d["name"] for d in build(resolve_target(name, root), root).manifest["data"]]
    assert weights in data and len([d for d in data if d.endswith(".npz")]) == 1
