"""The two-player games of kaggle-environments this toolkit plays: what each allows, and what it needs.

``get(name)`` is a ``GameInfo``: the seats its specification allows, its built-in agents (played as
``kaggle:NAME``), whether both seats act each step, the configuration key that seeds its map, the packages
it needs beyond the runtime layer, and an example action for ``cxforge new --game``.  ConnectX is one entry
among them; its deeper tools (openings, the solver, ``mistakes``, ``review``'s labels) are ConnectX's alone
(``connectx_only``).

The table is data written from kaggle-environments 1.33.2's specifications (``docs/games.md`` shows it); a test
holds it against the installed specifications, so a new version that changes a game fails loudly.  Any other
game the installed kaggle-environments registers for two seats is found there (``discovered``): its seats,
built-ins, seed key and default action come from its specification, and whether both seats act from its first
state.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache

from agents.registry import did_you_mean
from connectx_forge import kaggle_env
from connectx_forge.errors import UserError

CONNECTX = "connectx"
CONNECTX_COMPETITION = "connectx"  # kaggle.com/competitions/connectx: upload's and submissions' default
INSTALL = 'pip install "connectx-forge[{extra}]"'


@dataclass(frozen=True)
class GameInfo:
    """One game as the toolkit plays it.

    ``seats``: the player counts its specification allows (the toolkit plays 2).  ``builtins``: its built-in
    agents, the first the one ``check`` measures floors against.  ``simultaneous``: both seats act every step.
    ``seed_key``: the configuration key that fixes its random map (None: the game has none, so two games of
    deterministic agents repeat).  ``requires``: import names it needs beyond the runtime layer, and ``extra``
    the pyproject extra that installs them.  ``action``: a legal action at step 0, for a new project's agent;
    ``action_help``: the action's shape in words.  ``max_action``: the most bytes of one action.
    ``competition``: its Kaggle competition (the name in kaggle.com/competitions/NAME) where the toolkit knows
    it; ``cxforge upload --competition NAME`` names any other."""

    name: str
    title: str
    seats: tuple[int, ...]
    builtins: tuple[str, ...]
    simultaneous: bool
    seed_key: str | None
    action: object
    action_help: str
    requires: tuple[str, ...] = ()
    extra: str | None = None
    max_action: int = 1 << 16
    competition: str | None = None
    broken: str | None = None  # why it cannot be played here, though its packages are installed

    @property
    def two_player(self) -> bool:
        return 2 in self.seats

    def missing(self) -> list[str]:
        """The packages it needs that this Python lacks (none: it plays here, unless it is ``broken``)."""
        return [name for name in self.requires if importlib.util.find_spec(name) is None]

    @property
    def playable(self) -> bool:
        """Whether it plays here: nothing missing, and not broken."""
        return self.broken is None and not self.missing()

    def install_line(self) -> str:
        """The command that installs what it lacks."""
        return INSTALL.format(extra=self.extra) if self.extra else "pip install " + " ".join(self.requires)


GAMES: dict[str, GameInfo] = {g.name: g for g in (
    GameInfo(CONNECTX, "ConnectX (Connect Four)", (2,), ("random", "negamax"), False, None, 3,
             "a column, 0 to columns - 1", competition=CONNECTX_COMPETITION),
    GameInfo("rps", "Rock, Paper, Scissors", (2,), ("rock", "paper", "scissors", "copy_opponent", "reactionary",
                                                     "counter_reactionary", "statistical"), True, None, 0,
             "a sign, 0 to signs - 1 (0 rock, 1 paper, 2 scissors)", competition="rock-paper-scissors"),
    GameInfo("mab", "Santa's multi-armed bandits", (2, 3, 4, 5, 6, 7, 8), ("random", "round_robin"), True, None, 0,
             "a bandit, 0 to banditCount - 1", competition="santa-2020"),
    GameInfo("planet_wars", "Planet Wars", (2,), ("do_nothing", "random", "nearest_enemy"), True, "seed", [],
             "a list of orders [from_planet, to_planet, ships]"),
    GameInfo("orbit_wars", "Orbit Wars", (2, 4), ("random", "starter"), True, "seed", [],
             "a list of fleet launches [from_planet_id, angle, ships]"),
    GameInfo("hungry_geese", "Hungry Geese", (1, 2, 3, 4, 5, 6, 7, 8), ("random", "greedy"), True, None, "NORTH",
             "a direction: NORTH, EAST, SOUTH or WEST", competition="hungry-geese"),
    GameInfo("halite", "Halite", (1, 2, 4), ("random",), True, "randomSeed", {},
             "an object: ship or shipyard id -> command (NORTH, CONVERT, SPAWN...)", competition="halite"),
    GameInfo("kore_fleets", "Kore Fleets", (1, 2, 4), ("random", "miner", "do_nothing", "balanced", "attacker"),
             True, "randomSeed", {}, "an object: shipyard id -> command (SPAWN_1, LAUNCH_2_N...)",
             competition="kore-2022"),
    GameInfo("reinforce_tactics", "Reinforce Tactics", (2,), ("random", "aggressive", "simple_bot", "noop"), False,
             "seed", [], "a list of unit commands"),
    GameInfo("crawl", "Crawl", (2,), ("random",), True, "randomSeed", {}, "an object: robot or factory id -> command"),
    GameInfo("lux_ai_s3", "Lux AI Season 3", (2,), ("random_agent",), True, None, {},
             "an object: unit actions, as Lux AI's kit describes", requires=("jax", "chex", "flax"), extra="lux",
             competition="lux-ai-season-3"),
    GameInfo("cabt", "Card Battle", (2,), ("random", "first"), True, None, [],
             "a list of option indexes (the deck, a list of card ids, where obs.select is None)"),
    GameInfo("lux_ai_2021", "Lux AI Challenge: 2021", (2,), ("random_agent", "simple_agent"), True, "seed", [],
             "a list of Lux command strings", competition="lux-ai-2021",
             broken="its referee (a node.js process) fails at its first step with kaggle-environments 1.33.2"),
)}


@cache
def discovered() -> dict[str, GameInfo]:
    """The two-player games the installed kaggle-environments registers that the table does not name, as their
    specifications describe them (a game that fails to load is left out, as kaggle-environments leaves it)."""
    environments = kaggle_env.load().environments
    found = {}
    for name in sorted(set(environments) - set(GAMES)):
        try:
            info = _described(name)
        except Exception:  # noqa: BLE001 - a game kaggle-environments cannot make is not one to play
            continue
        if info is not None:
            found[name] = info
    return found


def _described(name: str) -> GameInfo | None:
    """``name``'s entry from its specification, None where it does not seat two."""
    from kaggle_environments import make  # loaded quietly by kaggle_env.load (discovered)

    env = make(name)
    spec = env.specification
    seats = tuple(int(n) for n in spec.agents)
    if 2 not in seats:
        return None
    first = env.reset(2)
    simultaneous = all(str(s.status) == "ACTIVE" for s in first)
    config = env.configuration
    seed_key = next((key for key in ("seed", "randomSeed") if key in config), None)
    action = spec.action if isinstance(spec.action, dict) else {}
    default = json.loads(json.dumps(action.get("default")))  # plain data, as a new project's agent returns it
    described = str(action.get("description") or f"as kaggle_environments/envs/{name}/ describes it")
    return GameInfo(name, str(spec.get("title") or name), seats, tuple(env.agents), simultaneous, seed_key, default,
                    described.split(". ")[0][:200])


def known() -> dict[str, GameInfo]:
    """Every game: the table's, then those ``discovered``."""
    return {**GAMES, **discovered()}


def names() -> list[str]:
    """Every game, ConnectX first."""
    return [CONNECTX, *sorted(n for n in known() if n != CONNECTX)]


def is_builtin(name: str) -> bool:
    """Whether ``name`` is a built-in agent of some game (``kaggle:NAME``): the table's first, the installed
    games' only for a name the table lacks."""
    return any(name in game.builtins for game in GAMES.values()) or \
        any(name in game.builtins for game in discovered().values())


def get(name: str) -> GameInfo:
    """The game called ``name``; one line naming the games when there is none, and what to install when it
    cannot be played here."""
    info = GAMES.get(name) or known().get(name)
    if info is None:
        raise UserError(f"no game {name!r}{did_you_mean(name, known())}; cxforge games lists them: "
                        + ", ".join(names()))
    lacking = info.missing()
    if lacking:
        raise UserError(f"{name} needs {', '.join(lacking)}, which this Python lacks: {info.install_line()}")
    if info.broken is not None:
        raise UserError(f"{name} cannot be played here: {info.broken}")
    return info


def connectx_only(feature: str, game: str) -> None:
    """One line refusing a ConnectX feature (openings, the solver, mistakes, labels) asked of another game."""
    if game != CONNECTX:
        raise UserError(f"{feature} is ConnectX's alone; {game} has none (cxforge games lists what each game has)")
