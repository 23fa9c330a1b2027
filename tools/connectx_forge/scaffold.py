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

``cxforge new --game G`` writes a project of another game of kaggle-environments (``game_files``): the
entry ``PACKAGE/main.py`` names the game's observation keys (its specification's) and plays legally (rps and
planet_wars a simple strategy, any other game its catalog's example action), a helper module shows the
action's format, ``cxforge.toml`` names the game and a floor against its first built-in agent where one was
measured, and ``tests/test_agent.py`` plays whole episodes in either seat.

With ``--native``, ``tactics.wins`` also has a C twin, ``native/tactics.c``, declared in
``cxforge.toml`` and loaded with ``connectx_forge.runtime.load_native``; the
Python code stays as the fallback, and a test checks that both agree.
"""

from __future__ import annotations

import json
import keyword
import re
import textwrap

from connectx_forge.games.catalog import GameInfo
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


# --- a project for another game of kaggle-environments (cxforge new --game G) ---------------------------------

GAME_SETTINGS = '''\
# connectx-forge settings of this agent project (see docs/games.md)
name = {name_toml}
entry = "{package}.main:act"      # module:function, from this folder
game = "{game}"{game_pad}# {title}: cxforge games lists the games

[floors]                          # cxforge check passes when it shows the agent at or above these win rates
{floors}'''

GAME_INIT = '''\
"""{name}: a {title} agent (entry: {package}.main:act)."""
'''

OBSERVATION_LINE = "    obs[{key!r}]: {description}"

RPS_MAIN = '''\
"""{name}'s entry point: ``act(obs, config) -> sign``, the function Kaggle calls each step.

{title}: both agents show a sign each step, at once.  The observation it reads:

{observation}

It counts the opponent's signs and shows the one that beats the opponent's most
frequent sign, with a random sign one step in ten, so that an opponent cannot
read it back.  The action is an int, 0 to ``config["signs"] - 1`` (signs.py).
Everything here goes into the submission: use the standard library, numpy and
your own modules only.
"""

import random

from .signs import beating, random_sign

SEEN = {}  # the opponent's signs this episode: sign -> times shown


def act(obs, config):
    signs = config["signs"]
    last = obs.get("lastOpponentAction")
    if obs["step"] == 0:
        SEEN.clear()
    elif last is not None:
        SEEN[last] = SEEN.get(last, 0) + 1
    if not SEEN or random.random() < 0.1:
        return random_sign(signs)
    favourite = max(sorted(SEEN), key=SEEN.get)
    return beating(favourite, signs)
'''

RPS_HELPER = '''\
"""The action of {title}: {action_help}.

Kaggle takes a plain ``int`` from 0 to ``config["signs"] - 1``; anything else is
INVALID, and the episode is lost.
"""

import random

ROCK, PAPER, SCISSORS = 0, 1, 2


def score(mine, theirs):
    """+1 when sign ``mine`` beats ``theirs``, -1 when it loses, 0 for the same sign (kaggle-environments' rule,
    for any number of signs)."""
    delta = theirs - mine if (mine + theirs) % 2 == 0 else mine - theirs
    return (delta > 0) - (delta < 0)


def beating(sign, signs=3):
    """A sign that beats ``sign``."""
    return next(s for s in range(signs) if score(s, sign) > 0)


def random_sign(signs=3):
    """A legal sign, drawn at random."""
    return random.randrange(signs)
'''

PLANET_WARS_MAIN = '''\
"""{name}'s entry point: ``act(obs, config) -> orders``, the function Kaggle calls each turn.

{title}: both players give their orders each turn, at once.  The observation it reads:

{observation}

Each of its planets with ships to spare sends half of them to the nearest planet
it does not own that half of them outnumber.  The action is a list of orders
(orders.py); an empty list is a legal turn that does nothing.  Everything here
goes into the submission: use the standard library, numpy and your own modules only.
"""

from .orders import distance, order, planets_of

SPARE = 10  # a planet with fewer ships keeps them


def act(obs, config):
    me = obs["player"]
    planets = planets_of(obs)
    targets = [p for p in planets if p.owner != me]
    orders = []
    for source in planets:
        if source.owner != me or source.ships < SPARE:
            continue
        send = source.ships // 2
        within = [t for t in targets if t.ships < send]
        if within:
            target = min(within, key=lambda t: (distance(source, t), t.id))
            orders.append(order(source.id, target.id, send))
    return orders
'''

PLANET_WARS_HELPER = '''\
"""The action of {title}: {action_help}.

An order ``[source_planet_id, dest_planet_id, ships]`` sends ``ships`` (a whole
number, at most what the source planet has) from a planet you own.  The action is
a list of orders, ``[]`` to send none.
"""

import math
from collections import namedtuple

Planet = namedtuple("Planet", "id x y owner ships growth")  # obs["planets"]: [id, x, y, owner, ships, growth]
Fleet = namedtuple("Fleet", "owner ships source dest trip left")  # obs["fleets"]


def planets_of(obs):
    return [Planet(int(p[0]), p[1], p[2], int(p[3]), int(p[4]), p[5]) for p in obs["planets"]]


def fleets_of(obs):
    return [Fleet(*f) for f in obs["fleets"]]


def distance(a, b):
    return math.hypot(a.x - b.x, a.y - b.y)


def order(source, dest, ships):
    """One order: ``ships`` from planet ``source`` to planet ``dest``."""
    return [int(source), int(dest), int(ships)]
'''

CABT_MAIN = '''\
"""{name}'s entry point: ``act(obs, config) -> option indexes``, the function Kaggle calls each step.

Card Battle.  The observation it is given:

{observation}

Where ``obs["select"]`` is None (a game's start) it gives its deck (cards.py);
elsewhere ``obs["select"]`` offers options and how many to pick (``maxCount``),
and it picks the first ones: a legal action, not a good one.  Grow your strategy
here.  The action is {action_help}.  Everything here goes into the submission: use the standard library, numpy
and your own modules only.
"""

from .cards import DECK, first_options


def act(obs, config):
    select = obs["select"]
    if select is None:
        return list(DECK)
    return first_options(select)
'''

CABT_HELPER = '''\
"""Card Battle's actions: the deck an agent plays, and option indexes.

``DECK`` is the deck kaggle-environments' own cabt agents play (its card ids).
"""

DECK = {deck!r}


def first_options(select):
    """The first ``maxCount`` of the options ``select`` offers, by index."""
    return list(range(int(select["maxCount"])))
'''

GENERIC_MAIN = '''\
"""{name}'s entry point: ``act(obs, config) -> action``, the function Kaggle calls each step.

{title}.  The observation it is given:

{observation}

It plays the example action of actions.py each step: a legal action, not a good
one.  Grow your strategy here.  The action is {action_help}.
Everything here goes into the submission: use the standard library, numpy and
your own modules only.
"""

from .actions import example


def act(obs, config):
    return example()
'''

GENERIC_HELPER = '''\
"""The action of {title}: {action_help}.

``example()`` is a legal action (a fresh copy each call); kaggle-environments'
specification of the game says the rest (``make("{game}").specification.action``).
"""

import copy

EXAMPLE = {action!r}


def example():
    return copy.deepcopy(EXAMPLE)
'''

GAME_TEST = '''\
"""{name}'s tests: whole episodes of {game} against its built-in agent, and the floors of cxforge.toml.

Run them with ``pytest`` in the project folder.
"""

from connectx_forge import kaggle_env, testing
from {package}.main import act

FAILED = ("ERROR", "INVALID", "TIMEOUT")


def episode(seat, seed):
    """One episode in this process, kaggle-environments refereeing: the agent in ``seat`` (0 or 1) against
    kaggle:{builtin}; the agent's final state."""
    kaggle_env.load()
    from kaggle_environments import make

    env = make("{game}", configuration={configuration})
    env.run([act, "{builtin}"] if seat == 0 else ["{builtin}", act])
    return env.steps[-1][seat]


def test_plays_legal_actions_in_either_seat():
    for seat in (0, 1):
        final = episode(seat, seed=seat + 1)
        assert final.status not in FAILED, f"seat {{seat}}: the episode ended {{final.status}}"
'''

GAME_FLOORS_TEST = '''

def test_meets_its_floors_as_cxforge_check_judges_them():
    testing.assert_floors(".", games=8)
'''

GAME_GITIGNORE = GITIGNORE

STRATEGIES: dict[str, tuple[str, str, str]] = {  # game -> main module, helper module, the helper's file name
    "rps": (RPS_MAIN, RPS_HELPER, "signs"),
    "planet_wars": (PLANET_WARS_MAIN, PLANET_WARS_HELPER, "orders"),
    "cabt": (CABT_MAIN, CABT_HELPER, "cards"),
}

# The floors a new project starts with: against the game's first built-in agent, below what its agent was
# measured to win (docs/games.md shows the measurement), low enough for the check's first look to decide
# them when every game is won (a floor of f passes 8 won games of 8 when f <= 0.549).
FLOORS: dict[str, float] = {"rps": 0.5, "planet_wars": 0.5}


def observation_lines(game: str) -> str:
    """The observation keys an agent of ``game`` is given, each with the specification's description."""
    from connectx_forge import kaggle_env  # it loads kaggle-environments: not for cxforge --help

    kaggle_env.load()
    from kaggle_environments import make

    spec = make(game).specification.observation
    lines = []
    for key in sorted(spec):
        entry = spec[key]
        words = entry.get("description", "") if isinstance(entry, dict) else ""
        words = " ".join(str(words).split()) or "(no description)"
        lines.append(textwrap.fill(OBSERVATION_LINE.format(key=key, description=words[:300]), 100,
                                   subsequent_indent=" " * 8))
    return "\n".join(lines)


def game_files(name: str, package: str, info: GameInfo, observation: str) -> dict[str, str]:
    """The files of a project of ``info``'s game (not ConnectX): path -> text.  ``observation``: the lines
    naming the game's observation keys (``observation_lines``)."""
    builtin = info.builtins[0]
    main, helper, helper_name = STRATEGIES.get(info.name, (GENERIC_MAIN, GENERIC_HELPER, "actions"))
    floor = FLOORS.get(info.name)
    if floor is not None:
        floors = f'"kaggle:{builtin}" = {floor}\n'
    else:
        floors = (f'# "kaggle:{builtin}" = 0.5           # set one the agent meets (cxforge match . kaggle:{builtin} '
                  f'--game {info.name}); none: check plays validity alone\n')
    game_pad = " " * max(1, 34 - len(f'game = "{info.name}"'))
    values = {"name": name, "package": package, "title": info.title, "game": info.name,
              "action_help": info.action_help, "observation": observation}
    seeded = f'{{"{info.seed_key}": seed}}' if info.seed_key else "{}"
    test = GAME_TEST.format(name=name, game=info.name, package=package, builtin=builtin, configuration=seeded)
    return {
        "cxforge.toml": GAME_SETTINGS.format(name_toml=json.dumps(name), package=package, game=info.name,
                                             game_pad=game_pad, title=info.title, floors=floors),
        "conftest.py": CONFTEST.format(package=package),
        f"{package}/__init__.py": GAME_INIT.format(name=name, title=info.title, package=package),
        f"{package}/main.py": _fill(main, values),
        f"{package}/{helper_name}.py": _fill(helper, values).replace("{action!r}", repr(info.action))
                                                             .replace("{deck!r}", repr(_deck(info.name))),
        "tests/test_agent.py": test + (GAME_FLOORS_TEST if floor is not None else ""),
        ".gitignore": GAME_GITIGNORE,
    }


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{key}`` of ``values`` replaced (the code's own braces left as they are)."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _deck(game: str) -> list[int]:
    """The deck kaggle-environments' own agents of ``game`` play (cabt's), else none."""
    if game != "cabt":
        return []
    from kaggle_environments.envs.cabt.cabt import deck  # loaded quietly by observation_lines, called first

    return [int(card) for card in deck]
