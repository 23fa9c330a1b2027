"""``BookRun.settled``: the defaults and checks that ``book build`` and ``book fill`` share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from connectx_forge.errors import UserError
from connectx_forge.solver.book_builder import DEFAULT_PROGRESS, BookRun, build
from connectx_forge.solver.book_fill import DEFAULT_FILL_PROGRESS, fill

SHARED = "--seconds must be positive, --workers at least 1 and --easy-nodes at least 0"


def test_settled_fills_each_command_default_and_keeps_what_was_given() -> None:
    run = BookRun().settled(60.0, DEFAULT_PROGRESS)
    assert (run.seconds, run.progress) == (60.0, Path(DEFAULT_PROGRESS))
    given = BookRun(root="44", seconds=2.5, workers=3, progress=Path("p.jsonl"), out=Path("b.bin"),
                    easy_nodes=7, retry=True).settled(600.0, DEFAULT_FILL_PROGRESS)
    assert (given.root, given.seconds, given.workers, given.progress, given.out) == \
        ("44", 2.5, 3, Path("p.jsonl"), Path("b.bin"))
    assert given.easy_nodes == 7 and given.retry


@pytest.mark.parametrize("bad", [{"seconds": 0.0}, {"workers": 0}, {"easy_nodes": -1}])
def test_settled_rejects_bad_flags_with_one_message(bad: dict[str, float]) -> None:
    with pytest.raises(UserError, match=SHARED):
        BookRun(**bad).settled(60.0, DEFAULT_PROGRESS)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [lambda run: build(2, run), lambda run: fill(2, run)])
def test_build_and_fill_check_through_settled(command: Callable[[BookRun], int], tmp_path: Path) -> None:
    run = BookRun(seconds=-1.0, progress=tmp_path / "p.jsonl", out=tmp_path / "b.bin", dry_run=True)
    with pytest.raises(UserError, match=SHARED):
        command(run)
    assert not (tmp_path / "p.jsonl").exists()  # checked before anything is written
