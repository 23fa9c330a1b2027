"""The files ``cxforge new`` writes: a small, working agent project to grow your own agent from.

Layout (``PACKAGE`` is the folder's name as a Python name)::

    cxforge.toml            name, entry, floors
    conftest.py             puts the project root on pytest's import path
    PACKAGE/__init__.py
    PACKAGE/main.py         the entry, act(obs, config): win, block, keep safe, else the preferred column
    PACKAGE/tactics.py      a helper module (reached by a relative import)
    data/columns.json       a data file, read through connectx_forge.runtime.read_data
    tests/test_agent.py     legal moves on Hypothesis-drawn positions, and the floors, with connectx_forge.testing
    tests/test_regressions.py  the losing moves of lost games kept in tests/regressions.json (cxforge regress add)
    .gitignore              submissions/

With ``--native``, ``tactics.wins`` also has a C twin, ``native/tactics.c``, declared in
``cxforge.toml`` and loaded with ``connectx_forge.runtime.load_native``; the
Python code stays as the fallback, and a test checks that both agree.
"""

from __future__ import annotations

import json
import keyword
import re

from connectx_forge.leaderboard.regress.data import TEST as REGRESSION_TEST

SETTINGS = '''\
# connectx-forge settings of this agent project (see docs/your-agent.md)
name = {name_toml}
entry = "{package}.main:act"      # module:function, from this folder

[floors]                          # cxforge check passes when it shows the agent at or above these win rates
random = 0.85                     # with no loss, shown in 32 games (0.9 would take 64)
"kaggle:negamax" = 0.5
'''

CONFTEST = '''\
"""pytest: this folder holds cxforge.toml; its root conftest puts it on the import path (``{package}.main``)."""
'''

INIT = '''\
"""{name}: a ConnectX agent (entry: {package}.main:act)."""
'''

MAIN = '''\
"""{name}'s entry point: ``act(obs, config) -> column``, the function Kaggle calls each turn.

It wins when it can, blocks the opponent's win, avoids a column that hands the
opponent a win on top, and otherwise plays the column it prefers most
(``data/columns.json``).  Everything here goes into the submission: use the
standard library, numpy and your own modules only.
"""

import json

from connectx_forge.runtime import read_data

from .tactics import Position

# read once, when the submission loads; the bundler embeds the file
PREFERENCE = json.loads(read_data("data/columns.json"))["preference"]


def preferred(columns: int) -> list[int]:
    """The columns, most preferred first (centre first on a board the data file does not cover)."""
    if sorted(PREFERENCE) == list(range(columns)):
        return list(PREFERENCE)
    return sorted(range(columns), key=lambda c: (abs(2 * c - (columns - 1)), c))


def act(obs, config):
    position = Position.from_obs(obs, config)
    legal = position.legal_moves()
    for column in legal:
        if position.wins(column, position.mark):
            return column
    for column in legal:
        if position.wins(column, position.opponent):
            return column
    safe = [c for c in legal if not position.gives_away(c)] or legal
    return next(c for c in preferred(position.columns) if c in safe)
'''

TACTICS = '''\
"""A ConnectX position as a grid, and the few questions {name}'s agent asks of it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    grid: tuple  # row 0 at the top, 0 empty, 1 and 2 the players' stones
    rows: int
    columns: int
    inarow: int
    mark: int

    @classmethod
    def from_obs(cls, obs, config):
        return cls(tuple(obs["board"]), config["rows"], config["columns"], config["inarow"], obs["mark"])

    @property
    def opponent(self):
        return 3 - self.mark

    def legal_moves(self):
        return [c for c in range(self.columns) if self.grid[c] == 0]

    def landing_row(self, column):
        return max(r for r in range(self.rows) if self.grid[r * self.columns + column] == 0)

    def drop(self, column, mark):
        grid = list(self.grid)
        grid[self.landing_row(column) * self.columns + column] = mark
        return Position(tuple(grid), self.rows, self.columns, self.inarow, 3 - self.mark)

    def wins(self, column, mark):
        """Whether ``mark`` playing ``column`` makes a line of ``inarow``."""
        row = self.landing_row(column)
        after = self.drop(column, mark).grid
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            count = 1
            for sign in (1, -1):
                r, c = row + sign * dr, column + sign * dc
                while 0 <= r < self.rows and 0 <= c < self.columns and after[r * self.columns + c] == mark:
                    count += 1
                    r, c = r + sign * dr, c + sign * dc
            if count >= self.inarow:
                return True
        return False

    def gives_away(self, column):
        """Whether playing ``column`` lets the opponent win on top of it."""
        after = self.drop(column, self.mark)
        if after.grid[column] != 0:
            return False
        return after.wins(column, self.opponent)
'''

COLUMNS = '''\
{"preference": [3, 2, 4, 1, 5, 0, 6]}
'''

TEST = '''\
"""{name}'s tests: legal moves on any position, and the floors of cxforge.toml.

Run them with ``pytest`` in the project folder.  ``connectx_forge.testing`` is the
toolkit's public test helpers (see docs/your-agent.md).
"""

from hypothesis import given, settings

from connectx_forge import testing
from {package}.main import act


@settings(max_examples=100, deadline=None)
@given(testing.positions())
def test_plays_a_legal_column_on_any_position(position):
    testing.assert_legal_move(act, position)


@settings(max_examples=25, deadline=None)
@given(testing.positions(rows=5, columns=8, inarow=4))
def test_plays_a_legal_column_on_another_board_size(position):
    testing.assert_legal_move(act, position)


def test_meets_its_floors_as_cxforge_check_judges_them():
    testing.assert_floors(".", games=8)
'''

NATIVE_SETTINGS = '''
[native]                          # C libraries, compiled for Kaggle's runtime by cxforge build
tactics = ["native/tactics.c"]
'''

NATIVE_C = '''\
/* The C twin of tactics.Position.wins: whether `mark` playing `column` makes a line of `inarow`.
   grid: rows * columns ints, row 0 at the top, 0 empty (Kaggle's obs.board). */
int wins(const int *grid, int rows, int columns, int inarow, int column, int mark) {
    int row = -1;
    for (int r = rows - 1; r >= 0; r--) {
        if (grid[r * columns + column] == 0) { row = r; break; }
    }
    if (row < 0) return 0;
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int d = 0; d < 4; d++) {
        int count = 1;
        for (int sign = -1; sign <= 1; sign += 2) {
            int r = row + sign * dirs[d][0], c = column + sign * dirs[d][1];
            while (r >= 0 && r < rows && c >= 0 && c < columns && grid[r * columns + c] == mark) {
                count++;
                r += sign * dirs[d][0];
                c += sign * dirs[d][1];
            }
        }
        if (count >= inarow) return 1;
    }
    return 0;
}
'''

NATIVE_TACTICS = '''

# --- the C twin of Position.wins (native/tactics.c), with this file's Python as the fallback -----------------
import ctypes  # noqa: E402

from connectx_forge.runtime import load_native  # noqa: E402

NATIVE = load_native("tactics")  # a ctypes library, or None: then the Python code above runs
if NATIVE is not None:
    NATIVE.wins.argtypes = [ctypes.POINTER(ctypes.c_int)] + [ctypes.c_int] * 5
    NATIVE.wins.restype = ctypes.c_int
    python_wins = Position.wins

    def native_wins(self, column, mark):
        grid = (ctypes.c_int * len(self.grid))(*self.grid)
        return bool(NATIVE.wins(grid, self.rows, self.columns, self.inarow, column, mark))

    Position.wins = native_wins
'''

NATIVE_TEST = '''

@settings(max_examples=100, deadline=None)
@given(testing.positions())
def test_the_c_twin_agrees_with_the_python_code(position):
    from {package} import tactics

    if tactics.NATIVE is None:
        return  # no C toolchain here (pip install 'connectx-forge[native]'): the Python code ran
    pos = tactics.Position.from_obs(position.obs, position.config)
    for column in pos.legal_moves():
        for mark in (1, 2):
            assert tactics.native_wins(pos, column, mark) == tactics.python_wins(pos, column, mark)
'''

GITIGNORE = '''\
submissions/
__pycache__/
.pytest_cache/
.hypothesis/
'''


def package_name(folder_name: str) -> str:
    """The folder's name as a Python package name: ``my-bot`` -> ``my_bot``; ``2bot`` -> ``bot_2bot``."""
    name = re.sub(r"\W", "_", folder_name.strip().lower()).strip("_") or "bot"
    if name[0].isdigit() or keyword.iskeyword(name) or name in {"agents", "connectx_forge", "tests", "data"}:
        name = f"bot_{name}"
    return name


def files(name: str, package: str, native: bool = False) -> dict[str, str]:
    """The project's files, path (relative to the project folder) -> text; ``native`` adds a C twin."""
    values = {"name": name, "package": package, "name_toml": json.dumps(name)}
    out = {
        "cxforge.toml": SETTINGS.format(**values) + (NATIVE_SETTINGS if native else ""),
        "conftest.py": CONFTEST.format(**values),
        f"{package}/__init__.py": INIT.format(**values),
        f"{package}/main.py": MAIN.replace("{name}", name),
        f"{package}/tactics.py": TACTICS.replace("{name}", name) + (NATIVE_TACTICS if native else ""),
        "data/columns.json": COLUMNS,
        "tests/test_agent.py": TEST.replace("{name}", name).replace("{package}", package)
        + (NATIVE_TEST.replace("{package}", package) if native else ""),
        "tests/regressions.json": "[]\n",  # cxforge regress add fills it; test_regressions.py checks it
        "tests/test_regressions.py": REGRESSION_TEST,
        ".gitignore": GITIGNORE,
    }
    if native:
        out["native/tactics.c"] = NATIVE_C
    return out
