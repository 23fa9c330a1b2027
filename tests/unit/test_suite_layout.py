"""The suite's layout: every test file in ``tests/unit`` (functions alone), ``tests/integration`` (commands and games
end to end) or ``tests/security`` (the jail and its attacks), so that its folder says what it needs; the attack
files, which the unprivileged re-run repeats, in ``tests/security``; and those in the one xdist group that
``make test`` runs on one worker (``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from tests import conftest

TESTS = Path(__file__).resolve().parents[1]
FOLDERS = ("unit", "integration", "security")


def test_every_test_file_is_in_one_of_the_three_folders() -> None:
    stray = sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
                   if p.relative_to(TESTS).parts[0] not in FOLDERS)
    assert stray == [], f"move these into tests/unit, tests/integration or tests/security (git mv): {stray}"
    assert all((TESTS / folder / "__init__.py").is_file() for folder in FOLDERS)


def test_the_attack_files_are_in_tests_security() -> None:
    attacks = sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_attack_*.py"))
    assert attacks and all(a.startswith("security/") for a in attacks), attacks


class _Item:
    """What the grouping hook reads and writes of a collected test: its path and its marks."""

    def __init__(self, path: Path, *marks: pytest.MarkDecorator) -> None:
        self.path = path
        self.marks = [m.mark for m in marks]

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.marks.append(marker.mark)


def test_the_attack_files_and_checkout_tests_share_one_group() -> None:
    items = [_Item(TESTS / "security" / "test_attack_jail.py"),
             _Item(TESTS / "security" / "test_attack_unprivileged.py"),
             _Item(TESTS / "integration" / "test_install.py", pytest.mark.checkout),
             _Item(TESTS / "security" / "test_jail.py"), _Item(TESTS / "integration" / "test_match.py"),
             _Item(TESTS / "unit" / "test_board.py")]
    conftest.pytest_collection_modifyitems(cast(list[pytest.Item], items))
    groups = [[m.args for m in item.marks if m.name == "xdist_group"] for item in items]
    assert groups == [[(conftest.MACHINE,)]] * 3 + [[]] * 3
