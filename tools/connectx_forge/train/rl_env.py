"""A gymnasium environment for ConnectX over the one game core (agents.board).

The learner plays one seat against an opponent: any player spec that
``connectx_forge.play.resolve.resolve`` accepts (a registered agent, ``kaggle:negamax``...), a
Python callable ``(obs, config) -> int``, or a list of these (one is drawn per
episode).  The opponent's moves happen inside ``step``, so each step is one
learner move followed by the opponent's reply.

* Observations: the network features of agents/net/features.py (``obs="features"``,
  float32, the learner's point of view) or the raw grid seen from the learner
  (``obs="grid"``: 0 empty, 1 own, 2 opponent, float32).
* Actions: ``Discrete(columns)``.  ``action_masks()`` (the sb3-contrib
  MaskablePPO convention) and ``info["action_mask"]`` give the legal columns.
* Rewards (``Rewards``): the Kaggle Learn course's defaults: +1 win, -1 loss,
  -10 for an illegal column (the episode ends), 1/42 for every move that does not
  end the game; a draw gives 0.  An opponent's illegal move ends the episode as a
  win for the learner, with ``info["opponent_invalid"]``.
"""

from __future__ import annotations

import random as _random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, SupportsInt, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.board import Board
from agents.net.features import encode, feature_size
from agents.registry import Agent
from connectx_forge.errors import UserError
from connectx_forge.play.resolve import resolve

Opponent = str | Agent  # a player spec, or an agent function ``(obs, config) -> column``


@dataclass(frozen=True)
class Rewards:
    """What each outcome is worth to the learner."""

    win: float = 1.0
    loss: float = -1.0
    draw: float = 0.0
    invalid: float = -10.0
    move: float = 1.0 / 42


def resolve_opponent(spec: Opponent) -> Agent:
    """An agent function for ``spec`` (a callable or a player spec string)."""
    if callable(spec):
        return spec

    player = resolve(spec)
    return player.new_agent()


class Struct(dict[str, object]):
    """A dict with attribute access, like the ``Struct`` Kaggle passes to agents."""

    def __getattr__(self, name: str) -> object:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class ConnectXEnv(gym.Env):
    """The learner against a fixed opponent; see the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponent: Opponent | Sequence[Opponent] = "random", seat: int | str = "random",
                 rewards: Rewards = Rewards(), rows: int = 6, columns: int = 7, inarow: int = 4,
                 obs: str = "features", render_mode: str | None = None) -> None:
        if seat not in (1, 2, "random"):
            raise UserError(f"seat must be 1, 2 or 'random', got {seat!r}")
        if obs not in ("features", "grid"):
            raise UserError(f"obs must be 'features' or 'grid', got {obs!r}")
        if render_mode not in (None, "ansi"):
            raise UserError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        specs: list[Opponent] = (list(opponent) if isinstance(opponent, (list, tuple))
                                 else [cast(Opponent, opponent)])  # a str is a Sequence too
        if not specs:
            raise UserError("no opponent given")
        self.opponents = [resolve_opponent(s) for s in specs]
        self.seat_choice = seat
        self.rewards = rewards
        self.size = (rows, columns, inarow)
        self.obs_kind = obs
        self.render_mode = render_mode
        n = feature_size(rows, columns) if obs == "features" else rows * columns
        high = 1.0 if obs == "features" else 2.0
        self.observation_space = spaces.Box(0.0, high, (n,), dtype=np.float32)
        self.action_space = spaces.Discrete(columns)
        self.board = Board(rows, columns, inarow)
        self.seat = 1
        self._opponent = self.opponents[0]
        self._rng = _random.Random()

    # -- helpers -------------------------------------------------------------
    def _observation(self) -> np.ndarray:
        if self.obs_kind == "features":
            return encode(self.board)
        grid = np.asarray(self.board.to_grid(), dtype=np.float32)
        if self.seat == 2:  # the learner's stones are 1, the opponent's 2
            grid = np.where(grid == 0, 0.0, 3.0 - grid).astype(np.float32)
        return grid

    def action_masks(self) -> np.ndarray:
        """A bool array: True for each legal column."""
        mask = np.zeros(self.size[1], dtype=bool)
        if not self.board.is_over():
            mask[self.board.legal_moves()] = True
        return mask

    def _info(self, **extra: object) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat, **extra}

    def _opponent_move(self) -> int:
        rows, columns, inarow = self.size
        obs = Struct(board=self.board.to_grid(), mark=self.board.mark, step=self.board.moves,
                     remainingOverageTime=60)
        config = Struct(rows=rows, columns=columns, inarow=inarow, actTimeout=2, timeout=2,
                        episodeSteps=1000)
        return self._opponent(obs, config)

    # -- gymnasium API -------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, object] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._rng.seed(seed)
            _random.seed(seed)  # agents that use the random module become reproducible too
        self.board = Board(*self.size)
        self.seat = self._rng.choice((1, 2)) if self.seat_choice == "random" else int(self.seat_choice)
        self._opponent = self._rng.choice(self.opponents)
        if self.seat == 2:
            move = self._opponent_move()
            if not self.board.can_play(move):
                raise UserError(f"the opponent's first move {move!r} is illegal")
            self.board = self.board.play(move)
        return self._observation(), self._info()

    def step(self, action: SupportsInt) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        r = self.rewards
        col = int(action)
        if not self.board.can_play(col):
            return self._observation(), r.invalid, True, False, self._info(invalid=True)
        win = self.board.is_winning_move(col)
        self.board = self.board.play(col)
        if win:
            return self._observation(), r.win, True, False, self._info(outcome="win")
        if self.board.is_full():
            return self._observation(), r.draw, True, False, self._info(outcome="draw")
        move = self._opponent_move()
        if not (type(move) is int and self.board.can_play(move)):
            return self._observation(), r.win, True, False, self._info(outcome="win", opponent_invalid=True)
        win = self.board.is_winning_move(move)
        self.board = self.board.play(move)
        if win:
            return self._observation(), r.loss, True, False, self._info(outcome="loss")
        if self.board.is_full():
            return self._observation(), r.draw, True, False, self._info(outcome="draw")
        return self._observation(), r.move, False, False, self._info()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return str(self.board)
        return None
