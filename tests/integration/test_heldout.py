"""Held-out sets (tools/connectx_forge/solver/heldout.py): seeded draws, kept out of training, exact labels, resumable
files,
and ``cxforge mistakes`` judging their moves from the stored scores."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agents.board import Board
from agents.solver.search import Solver, Timeout
from connectx_forge import paths, tool_engines
from connectx_forge.cli import main
from connectx_forge.solver import heldout
from connectx_forge.train.train import _holdout_paths, family_keys, holdout_keys

needs_cc = pytest.mark.skipif(not tool_engines.available(),
                              reason="the compiled solver does not load here: the held-out sets are labelled by "
                                     "the compiled solver")
SMALL = 131_101  # the smallest prime the table takes (above 2**17): plenty for middle positions


@pytest.fixture(scope="module")
def engine() -> Any:
    if not tool_engines.available():
        pytest.skip("the compiled solver (agents/solver/native) does not load here")
    return tool_engines.CSolver(entries=SMALL)


def build(folder: Path, engine: Any, size: int, name: str = "Random-Middle", **kwargs: Any) -> heldout.SetState:
    kwargs.setdefault("training", ())
    return heldout.build_set(name, folder, size, progress=False, solver=engine, **kwargs)


def draws(name: str, seed: int, n: int) -> list[str]:
    return [moves for _, moves in heldout._candidates(name, seed, 0, n, set(), set())[0]]


# -- drawing ----------------------------------------------------------------------
@pytest.mark.parametrize("name", list(heldout.SETS))
def test_draws_are_seeded_in_the_band_not_over_and_distinct_with_mirrors(name: str) -> None:
    spec = heldout.SETS[name]
    first = draws(name, 0, 60)
    assert first == draws(name, 0, 60) and first != draws(name, 1, 60)
    keys: set[int] = set()
    for moves in first:
        board = Board.from_pons(moves)
        assert spec.lo <= board.moves <= spec.hi and not board.is_over()
        assert not {board.key(), board.mirror().key()} & keys, moves
        keys |= {board.key(), board.mirror().key()}


def test_centre_playouts_favour_the_centre_and_random_ones_do_not() -> None:
    def share(name: str) -> float:
        moves = "".join(draws(name, 0, 150))
        return moves.count("4") / (moves.count("1") + moves.count("7"))

    assert share("Centre-Middle") > 1.5 and share("Random-Middle") < 1.5


def test_training_positions_their_children_and_parents_are_left_out(tmp_path: Path) -> None:
    cands = draws("Random-Middle", 0, 6)
    mirror = cands[1].translate(str.maketrans("1234567", "7654321"))
    child = mirror + str(Board.from_pons(mirror).legal_moves()[0] + 1)
    shard = tmp_path / "labels-seed0.jsonl"
    lines = [{"moves": cands[0], "scores": [0] * 7},  # the position itself
             {"moves": child, "best": 0, "score": 0},  # a child of its mirror
             {"moves": cands[2][:-1], "scores": [0] * 7}]  # its parent: it is a child of a training position
    shard.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"game": 0, "done": true}\n')
    assert heldout.overlapping(cands, [shard]) == set(cands[:3])
    assert heldout.overlapping(cands, []) == set()


@needs_cc
def test_a_built_set_leaves_out_training_and_pons_positions(tmp_path: Path, engine: Any) -> None:
    cands = draws("Random-Middle", 0, 8)
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "labels-x.jsonl").write_text(json.dumps({"moves": cands[0], "scores": [0] * 7}) + "\n")
    (tmp_path / "pons").mkdir()
    (tmp_path / "pons" / "Test_L9_R9").write_text(f"{cands[1]} 0\n")
    build(tmp_path / "sets", engine, 5, training=[tmp_path / "train"], pons=tmp_path / "pons")
    kept = [line.split()[0] for line in (tmp_path / "sets" / "Random-Middle.txt").read_text().splitlines()]
    assert kept == cands[2:7]
    for moves in kept:
        assert not family_keys(Board.from_pons(moves)) & holdout_keys([tmp_path / "pons"])


# -- labelling and files ---------------------------------------------------------------
@needs_cc
def test_labels_are_the_python_solvers_and_the_pons_file_their_best(tmp_path: Path, engine: Any) -> None:
    done = build(tmp_path, engine, 12, name="Centre-Middle", seed=3)
    assert (done.labelled, done.skipped, done.new) == (12, 0, 12)
    header, records = heldout.read_records(tmp_path / "Centre-Middle.scores.jsonl")
    assert header == {"set": "Centre-Middle", "kind": "centre", "stones": [13, 26], "seed": 3}
    lines = (tmp_path / "Centre-Middle.txt").read_text().splitlines()
    assert lines == [f"{r.moves} {max(s for s in r.scores or () if s is not None)}" for r in records]
    cheap = [r for r in records if len(r.moves) >= 18][:4]
    assert len(cheap) >= 2
    for rec in cheap:
        assert list(rec.scores or ()) == Solver().analyze(Board.from_pons(rec.moves)), rec.moves


@needs_cc
def test_builds_are_reproducible_and_resume_to_the_same_files(tmp_path: Path, engine: Any) -> None:
    build(tmp_path / "a", engine, 8)
    build(tmp_path / "b", engine, 8)
    files = ("Random-Middle.txt", "Random-Middle.scores.jsonl")
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    build(tmp_path / "c", engine, 3)  # an interrupted run: a torn line, the text file one position behind
    with open(tmp_path / "c" / files[1], "a") as fh:
        fh.write('{"i": 99, "moves": "4')
    txt = tmp_path / "c" / files[0]
    txt.write_text("".join(txt.read_text().splitlines(keepends=True)[:-1]))
    assert build(tmp_path / "c", engine, 8).new == 5
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "c" / f).read_bytes() for f in files)
    assert build(tmp_path / "c", engine, 8).new == 0  # nothing left to do


class Burner:
    """A stand-in solver that burns CPU until its deadline, then times out (a position past its budget)."""

    def reset(self) -> None:
        pass

    def analyze(self, board: Board, weak: bool = False, *, deadline: float = float("inf")) -> list[int | None]:
        while time.perf_counter() < deadline:
            pass
        raise Timeout


class Paused(Burner):
    """Stopped (SIGSTOP) past its deadline on the first attempt, using no CPU; then it labels at once."""

    paused = False

    def analyze(self, board: Board, weak: bool = False, *, deadline: float = float("inf")) -> list[int | None]:
        if not self.paused:
            self.paused = True
            time.sleep(max(0.0, deadline - time.perf_counter()) + 0.01)
            raise Timeout
        return [0] * 7


class BurnFirst(Burner):
    """Burns its budget on the first position (every attempt), then labels with the compiled solver."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.first = engine, None

    def reset(self) -> None:
        self.engine.reset()

    def analyze(self, board: Board, weak: bool = False, *, deadline: float = float("inf")) -> list[int | None]:
        self.first = self.first or board.key()
        if board.key() == self.first:
            return super().analyze(board, deadline=deadline)
        return self.engine.analyze(board)


def test_the_budget_is_cpu_time_so_a_pause_does_not_count() -> None:
    scores, cpu_s = heldout.label(Burner(), Board(), 0.05)
    assert scores is None and cpu_s >= 0.049
    assert heldout.label(Paused(), Board(), 0.2)[0] == [0] * 7


@needs_cc
def test_a_position_past_its_budget_is_recorded_as_skipped(tmp_path: Path, engine: Any) -> None:
    done = build(tmp_path, BurnFirst(engine), 2, budget_s=0.05)
    assert (done.labelled, done.skipped) == (2, 1)
    header, records = heldout.read_records(tmp_path / "Random-Middle.scores.jsonl")
    assert [r.scores is None for r in records] == [True, False, False]
    assert json.loads((tmp_path / "Random-Middle.scores.jsonl").read_text().splitlines()[1])["skipped"] == 0.05
    assert len((tmp_path / "Random-Middle.txt").read_text().splitlines()) == 2
    assert heldout.summary(tmp_path, "Random-Middle").skipped == 1
    assert [lab.moves for lab in heldout.read_set(tmp_path, "Random-Middle")] == [r.moves for r in records[1:]]


# -- cxforge heldout, cxforge mistakes and training -----------------------------------------
@needs_cc
def test_the_command_builds_and_describes_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["heldout", "build", "--sets", "Centre-Middle", "--size", "3", "-o", str(tmp_path), "--training",
            str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("Centre-Middle: 3 labelled, 0 skipped past the budget")
    assert main(["heldout", "info", "--heldout", str(tmp_path)]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}  # under the rule
    assert rows["Centre-Middle"][1] == "3" and rows["Centre-Middle"][-1] == "built"
    assert rows["Random-Early"][1:3] == ["not", "built"]


@pytest.mark.parametrize("argv, why", [
    (["heldout", "build", "--sets", "Random-Late"], "unknown held-out sets ['Random-Late']"),
    (["heldout", "build", "--pons", "/no/such/folder"], "--pons: no such folder"),
    (["heldout", "build", "--training", "/no/such/folder"], "--training: no such folder"),
])
def test_bad_build_input_is_one_line(argv: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and why in err[0]


def test_no_compiled_solver_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tool_engines, "library", lambda: None)  # as where the library cannot be loaded
    assert main(["heldout", "build", "-o", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "compiled solver, and it cannot be loaded" in err[0] and "--engine" not in err[0]
    assert not list(tmp_path.glob("*.jsonl"))


def plant(folder: Path, name: str, records: list[tuple[str, list[int | None]]]) -> None:
    """A hand-made set: the stored scores are the truth the harness must use."""
    lines = [{"set": name, "kind": "random", "stones": [13, 26], "seed": 0}]
    lines += [{"i": i, "moves": m, "scores": s} for i, (m, s) in enumerate(records)]
    (folder / f"{name}.scores.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_mistakes_judges_heldout_moves_from_their_stored_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # leftmost plays column 1: a mistake in the first position (a loss where column 2 wins, as stored),
    # the best class in the second; the scores are made up, so only the stored ones can give this verdict
    plant(tmp_path, "Random-Middle", [("4453", [-3, 2, 0, 1, 0, 0, 0]), ("4444", [5, -1, -1, None, 0, 0, 0])])

    def no_solving(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("made a solver for a held-out set")

    for cls in (Solver, tool_engines.CSolver):
        monkeypatch.setattr(cls, "__init__", no_solving)
    monkeypatch.setattr(tool_engines, "require", no_solving)  # not even the library is needed
    argv = ["mistakes", "--agents", "leftmost", "--sets", "Random-Middle", "--heldout", str(tmp_path), "--json"]
    for engine in ("python", "c"):
        assert main([*argv, "--engine", engine, "--cache", str(tmp_path / "weak.jsonl")]) == 0
        [row] = json.loads(capsys.readouterr().out)
        assert (row["set"], row["mistakes"], row["judged"], row["skipped"]) == ("Random-Middle", 1, 2, 0)
        assert row["examples"] == ["4453: played 1 (-1), best class +1"]
    assert not (tmp_path / "weak.jsonl").exists()  # nothing solved, nothing cached


def test_a_missing_heldout_set_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mistakes", "--agents", "leftmost", "--sets", "Centre-Early", "--heldout", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cxforge mistakes: error: held-out set Centre-Early not found")
    assert err[0].endswith("build it with cxforge heldout build --sets Centre-Early")


def test_training_holds_out_the_heldout_sets_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(tmp_path, "Random-Middle", [("4453", [0] * 7)])
    (tmp_path / "Random-Middle.txt").write_text("4453 0\n")
    monkeypatch.setattr(paths, "PONS_DIR", tmp_path / "no-pons")
    monkeypatch.setattr(paths, "HELDOUT_DIR", tmp_path)
    args = argparse.Namespace(no_holdout=False, holdout=None)
    assert _holdout_paths(args) == [tmp_path]
    assert holdout_keys(_holdout_paths(args)) == family_keys(Board.from_pons("4453"))
    monkeypatch.setattr(paths, "HELDOUT_DIR", tmp_path / "none")
    assert _holdout_paths(args) == []


# -- shipped: cxforge mistakes runs on them from a pip install -------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_ships_the_heldout_sets_where_paths_finds_them() -> None:
    """pyproject's package data holds every file of tools/connectx_forge/datasets/heldout, installed at
    connectx_forge/datasets/heldout:
    the folder ``paths.HELDOUT_DIR`` names in an installed wheel (``paths.DATASETS``: beside paths.py)."""
    import fnmatch
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = "connectx_forge.datasets"  # tools/connectx_forge/datasets, found under tools/
    assert (ROOT / "tools" / "connectx_forge" / "datasets" / "__init__.py").is_file()
    globs = setup["package-data"][package]
    data = ROOT / "tools" / "connectx_forge" / "datasets"
    shipped = sorted(p.relative_to(data).as_posix() for p in (data / "heldout").iterdir())
    assert {f"{name}{ext}" for name in heldout.SETS for ext in (".txt", ".scores.jsonl")} == {
        Path(p).name for p in shipped}
    assert all(any(fnmatch.fnmatch(p, g) for g in globs) for p in shipped), (shipped, globs)
    assert not any(fnmatch.fnmatch("labels/labels-seed1.jsonl.gz", g) for g in globs)  # not the training labels
    assert paths.HELDOUT_DIR == paths.DATASETS / "heldout"


def test_a_built_wheel_holds_the_heldout_sets(tmp_path: Path) -> None:
    """Build the wheel from a copy of the sources (never in the checkout) and look inside it."""
    import shutil
    import subprocess
    import sys
    import tomllib
    import zipfile

    pytest.importorskip("setuptools")
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "labels", "openings")
    for folder in sorted(set(setup["packages"]["find"]["where"]) - {"."}) + ["agents"]:
        shutil.copytree(ROOT / folder, src / folder, ignore=skip)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "out"), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = (tmp_path / "out").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in heldout.SETS:
        for ext in (".txt", ".scores.jsonl"):
            assert f"connectx_forge/datasets/heldout/{name}{ext}" in names


def test_mistakes_measures_the_shipped_heldout_sets_by_default(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """No Pons folder needed: the default sets are ours, judged from their stored scores."""
    assert main(["mistakes", "--agents", "leftmost", "--sample", "3", "--no-cache", "--json",
                 "--pons", str(tmp_path / "no-pons")]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["set"] for r in rows] == list(heldout.SETS) and all(r["judged"] == 3 for r in rows)


@pytest.mark.parametrize("sets", ["pons", "End-Easy", "heldout,Begin-Hard"])
def test_missing_pons_sets_are_one_line_saying_where_to_get_them(sets: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mistakes", "--agents", "leftmost", "--sets", sets, "--pons", str(tmp_path / "no-pons")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert "blog.gamesolver.org/solving-connect-four/02-test-protocol/" in err[0] and "Test_L*_R*" in err[0]


def test_set_groups_expand_in_order_once() -> None:
    from connectx_forge.solver.mistakes import SET_NAMES, expand_sets

    assert expand_sets(["heldout"]) == list(heldout.SETS)
    assert expand_sets(["pons"]) == list(SET_NAMES.values())
    assert expand_sets(["End-Easy", "pons", "Random-Early", "heldout"]) == [
        *SET_NAMES.values(), *heldout.SETS]


def test_pons_sets_are_measured_when_asked_for(pons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mistakes", "--agents", "leftmost", "--sets", "End-Easy,Random-Early", "--sample", "2",
                 "--no-cache", "--json", "--pons", str(pons_dir)]) == 0
    assert [r["set"] for r in json.loads(capsys.readouterr().out)] == ["End-Easy", "Random-Early"]
