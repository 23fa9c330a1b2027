"""A project's regression cases: ``tests/regressions.json``, and the pytest file that checks them.

One case a lost game: ``moves`` (the position, as Pons' string of columns 1-7 from the empty board, as
``cxforge solve`` takes it), ``bad_column`` (the move our agent played there, a column from 0 as the agent
returns it), ``holding_columns`` (the solver's moves that do not lose there), ``losing_columns`` (the moves
that lose), ``best_columns`` (the moves keeping the position's exact value, as ``cxforge review`` shows them),
``value`` (the position's value before the move: ``win`` or ``draw``), ``source``, ``episode_id``, ``us``.
Cases are unique by position: a position already kept is not added again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Required, TypedDict

from connectx_forge import boundedread, safe_write
from connectx_forge.errors import UserError

DATA_FILE = Path("tests") / "regressions.json"
TEST_FILE = Path("tests") / "test_regressions.py"

TEST = '''\
"""The first losing move of each lost game (``cxforge regress add``): the agent must no longer play it.

The cases are in regressions.json beside this file; with none, the test passes.
"""

from pathlib import Path

from connectx_forge import testing

ROOT = Path(__file__).resolve().parents[1]


def test_avoids_the_losing_moves_of_lost_games():
    agent = testing.entry_agent(ROOT)
    testing.assert_avoids(agent, testing.regressions(ROOT / "tests" / "regressions.json"))
'''


class Case(TypedDict, total=False):
    """One case, a record of the file (see above); only ``moves`` is sure to be there in a file read back."""

    moves: Required[str]
    bad_column: int
    holding_columns: list[int]
    losing_columns: list[int]
    best_columns: list[int]
    value: str | None
    source: str
    episode_id: int | None
    us: str


def read(path: Path) -> list[Case]:
    """The cases of ``path`` (none when it does not exist); ``UserError`` for a file that is not a list."""
    if not path.is_file():
        return []
    text = boundedread.read_text(path, boundedread.MAX_DOCUMENT)
    data = boundedread.parse_json(text or "[]", str(path))
    if not isinstance(data, list) or not all(isinstance(c, dict) and isinstance(c.get("moves"), str)
                                             for c in data):
        raise UserError(f"{path}: not a regressions file (a JSON list of cases, each with \"moves\")")
    return data


def write(path: Path, cases: list[Case]) -> None:
    """Write the cases, one a line inside a JSON list (small diffs when cases are added)."""
    body = ",\n".join("  " + json.dumps(c, sort_keys=True) for c in cases)
    safe_write.write_text(path, "[\n" + body + "\n]\n" if cases else "[]\n", replace=True)


def merge(old: list[Case], new: list[Case]) -> tuple[list[Case], int]:
    """``old`` then the cases of ``new`` whose position is not kept yet; the number added."""
    seen = {c["moves"] for c in old}
    out = list(old)
    for case in new:
        if case["moves"] not in seen:
            seen.add(case["moves"])
            out.append(case)
    return out, len(out) - len(old)


def ensure_test(root: Path) -> bool:
    """Write the pytest file into the project once (never replaced); whether it was written now."""
    path = root / TEST_FILE
    if path.exists():
        return False
    safe_write.write_text(path, TEST, replace=False)
    return True
