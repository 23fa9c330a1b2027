"""The gymnasium environment: API conformance, masks, rewards, opponents, seats."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from agents.board import Board  # noqa: E402
from connectx_forge.errors import UserError  # noqa: E402
from connectx_forge.train.rl_env import ConnectXEnv, Rewards  # noqa: E402


def _leftmost(obs, config) -> int:
    return Board.from_obs(obs, config).legal_moves()[0]


@pytest.mark.parametrize("obs", ["features", "grid"])
def test_passes_the_gymnasium_checker(obs: str) -> None:
    check_env(ConnectXEnv(opponent="random", obs=obs), skip_render_check=True)


def test_masks_follow_the_board() -> None:
    env = ConnectXEnv(opponent=_leftmost, seat=1)
    _, info = env.reset(seed=0)
    for _ in range(3):  # we fill column 0 with the opponent's help (it plays leftmost)
        assert np.array_equal(info["action_mask"], env.action_masks())
        _, _, done, _, info = env.step(0)
        assert not done
    assert env.board.height(0) == 6
    assert not env.action_masks()[0] and env.action_masks()[1:].all()
    assert not info["action_mask"][0]


def test_rewards_as_configured() -> None:
    r = Rewards(win=5.0, loss=-3.0, invalid=-7.0, move=0.25, draw=0.5)
    env = ConnectXEnv(opponent=_leftmost, seat=1, rewards=r)
    env.reset(seed=1)
    # we stack column 3; leftmost stacks column 0 and cannot stop us
    rewards = [env.step(3)[1] for _ in range(3)]
    assert rewards == [0.25, 0.25, 0.25]
    _, reward, done, _, info = env.step(3)
    assert (reward, done, info["outcome"]) == (5.0, True, "win")

    env.reset(seed=1)
    for _ in range(3):  # column 6 three times: leftmost then wins in column 0
        env.step(6)
    _, reward, done, _, info = env.step(5)
    assert (reward, done, info["outcome"]) == (-3.0, True, "loss")

    env.reset(seed=1)
    for _ in range(3):
        env.step(0)
    _, reward, done, _, info = env.step(0)  # column 0 is full now
    assert (reward, done, info["invalid"]) == (-7.0, True, True)


def test_course_defaults() -> None:
    r = Rewards()
    assert (r.win, r.loss, r.invalid, r.move) == (1.0, -1.0, -10.0, 1 / 42)


@pytest.mark.parametrize("opponent", ["random", "leftmost", "kaggle:negamax", _leftmost])
def test_opponents_plug_in(opponent) -> None:
    env = ConnectXEnv(opponent=opponent, seat=2)
    obs, info = env.reset(seed=3)
    assert env.board.moves == 1 and env.board.mark == 2  # the opponent opened
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, _, done, _, info = env.step(int(legal[0]))
        assert env.observation_space.contains(obs)


def test_seat_and_opponent_draws_are_seeded() -> None:
    env = ConnectXEnv(opponent=["random", _leftmost], seat="random")
    first = [(env.reset(seed=s)[1]["seat"], env.board.key()) for s in range(8)]
    again = [(env.reset(seed=s)[1]["seat"], env.board.key()) for s in range(8)]
    assert first == again
    assert {seat for seat, _ in first} == {1, 2}


def test_grid_observation_is_from_the_learners_side() -> None:
    env = ConnectXEnv(opponent=_leftmost, seat=2, obs="grid")
    obs, _ = env.reset(seed=0)
    assert obs[35] == 2.0 and obs.sum() == 2.0  # the opponent's stone, bottom-left


def test_bad_arguments_raise_user_errors() -> None:
    with pytest.raises(UserError):
        ConnectXEnv(seat=3)
    with pytest.raises(UserError):
        ConnectXEnv(obs="pixels")
    with pytest.raises(UserError):
        ConnectXEnv(opponent="no-such-agent")
