"""Fitting the practical search's opponent models to saved games (tools/connectx_forge/solver/model_fit.py, ``cxforge
models``).

Only the opponent's own choices count (not the opening, not a forced win in
one); a model that gives the played moves certainty fits best; the command
prints the same verdict as its JSON, and one line for a file it cannot use.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agents.board import Board
from agents.solver.book import Book
from agents.solver.chooser import engine
from agents.solver.opponents import Slips
from connectx_forge.cli import main
from connectx_forge.play.game_record import GameRecord
from connectx_forge.solver.model_fit import Labelled, Sample, fit, label, samples

# an opening of two moves, then the opponent (seat 1) and A alternate; seat 1's move at ply 6 takes a win in one,
# which is no choice: its samples are plies 2 and 4
MOVES = [3, 3, 2, 4, 1, 5, 0]


def _game(a_seat: int = 2, opening: int = 2, moves: list[int] = MOVES) -> GameRecord:
    return GameRecord(players=("opp", "me") if a_seat == 2 else ("me", "opp"), size=(6, 7, 4), seed=1,
                      moves=list(moves), times=[0.0] * (len(moves) - opening), outcome="win", winner=1,
                      a_seat=a_seat, opening=opening)


def test_the_samples_are_the_opponents_own_choices() -> None:
    found = samples([_game()])
    plies = [len(s.moves) for s in found]
    assert plies == [2, 4] and all(s.opponent == "opp" for s in found)
    for s in found:
        assert not Board.from_moves(s.moves).winning_moves()  # a win in one is no choice
        assert s.move == MOVES[len(s.moves)]
    assert samples([_game(opening=4)]) == found[1:]
    assert all(s.opponent == "opp" and len(s.moves) % 2 == 1 for s in samples([_game(a_seat=1)]))


def test_a_model_that_is_certain_of_the_moves_fits_best() -> None:
    board = Board.from_moves([3, 3])
    classes = (0, 0, 0, 0, 0, 0, 0)
    labelled = [Labelled(Sample("x", (3, 3), 2), board, classes), Labelled(Sample("y", (3, 3), 2), board, classes)]

    class Sure:
        def chances(self, b: Board, c: object) -> list[float]:
            return [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]

    report = fit(labelled, {"sure": Sure(), "slips": Slips()})
    by = {(f.model, f.opponent): f.log_likelihood for f in report.fits}
    assert by[("sure", "all")] == 0.0 and by[("slips", "x")] == pytest.approx(math.log(1 / 7))
    assert report.best == "sure" and report.mistakes == {"x": 0.0, "y": 0.0} and report.moves == 2


def test_labels_are_the_solvers_classes_and_a_slow_position_is_left_out() -> None:
    solver = engine("auto", book=Book.load())  # as the command's: the opening's positions are in the book
    found = samples([_game()])
    labelled = label(solver, found, seconds=30)
    assert len(labelled) == len(found)
    for x in labelled:
        values = solver.analyze(x.board, weak=True)
        assert x.classes == tuple(None if v is None else (v > 0) - (v < 0) for v in values)
    assert label(engine("auto"), found[:1], seconds=0.05) == []  # two stones, no book: minutes of solving


def test_cxforge_models_prints_the_fit_and_its_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(_game().to_json()) + "\n")
    assert main(["models", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["moves"] == 2 and data["unsolved"] == 0 and data["mistake_rates"].keys() == {"opp"}
    assert main(["models", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"best: {data['best']}" in out and "opp" in out and "near-prior" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert main(["models", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and len(err.strip().splitlines()) == 1
    assert main(["models", str(path), "--seconds", "0"]) == 2
    assert "--seconds" in capsys.readouterr().err


@pytest.mark.parametrize("field", [{"moves": [3, "x"]}, {"moves": [3, True]}, {"a_seat": 7}, {"opening": -1},
                                   {"opening": 99}, {"players": ["a", {"b": 1}]}, {"players": ["a"]}])
def test_a_malformed_game_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      field: dict[str, object]) -> None:
    """A games file may be written by anyone: a field of the wrong kind is named in one line, never a traceback,
    by the games reader every command shares (``records.record_of``)."""
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps({**_game().to_json(), **field}) + "\n")
    for command in (["models", str(path)], ["logs", str(path)], ["compare", "--new", str(path), "--base", str(path)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "games.jsonl: line 1" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
