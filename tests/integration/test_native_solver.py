"""The solver agent on its C engine: the committed library is the source's, builds need no toolchain, native and
Python agree with the book too, and the built file runs native, from a file, or pure Python (and says which)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agents.board import Board
from agents.solver.book import Book
from agents.solver.native import NativeSolver, native_solver
from agents.solver.search import Solver
from connectx_bundler import native_libs
from connectx_bundler.builder import build
from connectx_bundler.errors import BuildError
from connectx_forge.cli import main
from connectx_forge.paths import agents_root
from connectx_forge.play.resolve import resolve_target
from tests.integration.test_native import run_bundle
from tests.unit.test_solver import read_set, sample

COMMITTED = native_libs.prebuilt_path(agents_root(), "solver", native_libs.SHIPPED["solver"])
loads = pytest.mark.skipif(native_solver(entries=131101) is None, reason="the solver's C library does not load here")


@pytest.mark.long
def test_the_committed_library_is_the_source_compiled_with_the_pinned_toolchain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ziglang", reason="the pinned C toolchain is the native extra (make test installs it)")
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path))  # nothing cached: compiled here and now
    sources = native_libs.SHIPPED["solver"]
    rebuilt = native_libs.compile_library(agents_root(), "solver", sources, "test", prebuilt=False)
    assert rebuilt == COMMITTED.read_bytes(), "run make native and commit agents/solver/native/solver.so"
    key = native_libs.cache_key(native_libs.read_sources(agents_root(), "solver", sources, "test"))
    assert COMMITTED.with_name("solver.so.key").read_text().strip() == key


def test_without_the_toolchain_the_solver_builds_from_the_committed_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_CACHE", str(tmp_path))

    def no_toolchain() -> list[str]:
        raise BuildError("no toolchain in this test")

    monkeypatch.setattr(native_libs, "toolchain", no_toolchain)
    built = build(resolve_target("solver"))
    [entry] = [d for d in built.manifest["data"] if d["name"] == "native/solver.so"]
    import hashlib

    assert entry["sha256"] == hashlib.sha256(COMMITTED.read_bytes()).hexdigest()
    assert len(built.content) < 5_000_000


@loads
def test_with_the_book_native_and_python_agree(pons_dir: Path) -> None:
    book = Book.load()
    engine = native_solver(book)
    assert engine is not None and len(book) > 0
    for moves, expected in sample(read_set(pons_dir, "Test_L1_R1"), 30):
        board = Board.from_pons(moves)
        python = Solver(book=book)
        engine.reset()
        assert engine.solve(board) == python.solve(board) == expected, moves
        assert python.nodes <= engine.nodes <= 1.02 * python.nodes + 2, moves  # slot collisions only add work
        assert engine.best_move(board) == python.best_move(board), moves
    early = Board.from_pons("4453")  # in the book: answered without a search
    engine.reset()
    assert engine.solve(early, weak=True) == Solver(book=book).solve(early, weak=True) and engine.nodes < 100


@loads
def test_the_refutation_check_runs_on_the_native_engine() -> None:
    from agents.solver.agent import first_unrefuted

    board = Board.from_pons("522264452736756")  # won by columns 4 and 5; 1, 2, 6 and 7 lose
    engine = native_solver(entries=131101)
    assert isinstance(engine, NativeSolver)
    with pytest.raises(ValueError, match="odd number of entries above 2"):
        native_solver(entries=1 << 20)  # an even size would let two keys share a slot's bits
    assert first_unrefuted(engine, board, [0, 1, 3, 5], float("inf")) == (3, 2)
    hard = Board.from_pons("7114165755333")
    assert first_unrefuted(engine, hard, [0, 3], time.perf_counter() - 1) == (0, 0)  # no time: unchecked


@loads
@pytest.mark.parametrize("mode, said", [("on", "loaded from memory (memfd)"),
                                        ("file", "loaded from a temporary file in"),
                                        ("off", "off (CXFORGE_NATIVE=off); running the pure-Python code")])
def test_the_built_solver_runs_native_from_memory_or_a_file_or_in_python(
        tmp_path: Path, mode: str, said: str) -> None:
    path = tmp_path / "solver.py"
    path.write_bytes(build(resolve_target("solver")).content)
    move, err = run_bundle(path, mode, tmp_path)
    assert move == 3 and f"native library 'solver': {said}" in err
    assert not list(tmp_path.glob("cxforge-*"))  # the temporary file is gone once loaded


@loads
@pytest.mark.parametrize("mode, note", [("on", "loaded from memory"), ("off", "off (CXFORGE_NATIVE=off)")])
def test_check_names_the_engine_that_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], mode: str, note: str) -> None:
    path = tmp_path / "solver.py"
    path.write_bytes(build(resolve_target("solver")).content)
    monkeypatch.setenv("CXFORGE_NATIVE", mode)
    assert main(["check", str(path), "--games", "2", "--no-floors"]) == 0
    out = capsys.readouterr().out
    assert f"note: the agent's native library 'solver': {note}" in out and "PASS" in out
