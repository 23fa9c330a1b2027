"""The referee of the games other than ConnectX (tools/connectx_forge/play/episode.py) and their records: the
result of every final status and reward, the trace, the seeded map, a record's round trip through a games
file's line, and a forged line refused in one line."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectx_forge import kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.play.episode import BROKE, builtin_name, configuration, episode_result, trace_of
from connectx_forge.play.game import play_job
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import STATUSES, record_of
from connectx_forge.play.resolve import as_player
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.sandbox import protocol

ALL = sorted(STATUSES)
rewards = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.integers(-10**6, 10**6).map(float))


# -- episode_result -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("first", "second"), list(itertools.product(ALL, ALL)))
def test_every_pair_of_statuses(first: str, second: str) -> None:
    """One seat broke: it loses, by its status's outcome; both broke: a draw; neither: the rewards decide."""
    for pair in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0], [None, 2.0], [2.0, None], [None, None]):
        outcome, winner, culprit = episode_result([first, second], pair)
        broke = [s in BROKE for s in (first, second)]
        if broke == [True, False]:
            assert (outcome, winner, culprit) == (BROKE[first], 2, 1)
        elif broke == [False, True]:
            assert (outcome, winner, culprit) == (BROKE[second], 1, 2)
        elif all(broke) or None in pair or pair[0] == pair[1]:
            assert (outcome, winner, culprit) == ("draw", None, None)
        else:
            assert pair[0] is not None and pair[1] is not None
            assert (outcome, winner, culprit) == ("win", 1 if pair[0] > pair[1] else 2, None)


def test_each_broken_status_names_its_outcome() -> None:
    assert episode_result(["ERROR", "DONE"], [None, 0.0]) == ("error", 2, 1)
    assert episode_result(["DONE", "TIMEOUT"], [3.0, None]) == ("timeout", 1, 2)
    assert episode_result(["INVALID", "DONE"], [None, 1.0]) == ("invalid", 2, 1)
    assert episode_result(["ERROR", "TIMEOUT"], [None, None]) == ("draw", None, None)


@given(rewards, rewards, st.sampled_from(["DONE", "ACTIVE", "INACTIVE"]), st.sampled_from(["DONE", "INACTIVE"]))
def test_rewards_decide_a_game_nobody_broke(a: float | None, b: float | None, s1: str, s2: str) -> None:
    outcome, winner, culprit = episode_result([s1, s2], [a, b])
    assert culprit is None
    if a is None or b is None or a == b:
        assert (outcome, winner) == ("draw", None)
    else:
        assert outcome == "win" and winner == (1 if a > b else 2)
    swapped = episode_result([s2, s1], [b, a])  # the seats swapped: the same game seen from the other side
    assert swapped[0] == outcome and swapped[1] == (None if winner is None else 3 - winner)


@given(rewards, rewards, st.sampled_from(sorted(BROKE)), st.sampled_from(["DONE", "ACTIVE", "INACTIVE"]),
       st.integers(0, 1))
def test_a_broken_seat_loses_whatever_the_rewards(a: float | None, b: float | None, broke: str, fine: str,
                                                  seat: int) -> None:
    statuses = [fine, fine]
    statuses[seat] = broke
    assert episode_result(statuses, [a, b]) == (BROKE[broke], 2 - seat, seat + 1)


# -- trace_of -----------------------------------------------------------------------------------------------
def test_the_trace_is_a_digest_of_every_step() -> None:
    steps: list[list[object]] = [[0, 1], [2, None], [{"a": [1, 2]}, "NORTH"]]
    trace = trace_of(steps)
    assert len(trace) == 64 and int(trace, 16) >= 0
    assert trace_of([list(s) for s in steps]) == trace
    assert trace_of([[{"a": [1, 2]}, "NORTH"], [0, 1], [2, None]]) != trace  # the order of the steps counts
    assert trace_of([[1, 0], [2, None], [{"a": [1, 2]}, "NORTH"]]) != trace  # and the order of the seats
    assert trace_of(steps[:-1]) != trace
    assert trace_of([[{"b": 1, "a": 2}]]) == trace_of([[{"a": 2, "b": 1}]])  # keys sorted: JSON's order is none
    assert len(trace_of([[{1, 2}, object()]])) == 64  # what is not JSON is digested by its repr, never a raise


# -- configuration and seeding ------------------------------------------------------------------------------
def test_the_configuration_seeds_the_games_map_only_where_it_has_one() -> None:
    assert configuration(catalog.GAMES["planet_wars"], 7) == {"seed": 7}
    assert configuration(catalog.GAMES["halite"], (1 << 31) + 5) == {"randomSeed": 5}
    assert configuration(catalog.GAMES["rps"], 7) == {}


def _planets(seed: int) -> Any:
    kaggle_env.load()
    from kaggle_environments import make

    env = make("planet_wars", configuration=configuration(catalog.GAMES["planet_wars"], seed))
    return json.dumps(env.reset()[0].observation.planets)


def test_the_same_seed_gives_the_same_planet_wars_map() -> None:
    assert _planets(3) == _planets(3)
    assert _planets(3) != _planets(4)


def _game(seed: int, game: str = "planet_wars", a: str = "kaggle:nearest_enemy",
          b: str = "kaggle:do_nothing") -> GameRecord:
    return play_job(GameJob(as_player(a), as_player(b), 1, seed, 0, settings=GameSettings(game=game)))


def test_the_same_seed_plays_the_same_game_and_another_seed_another() -> None:
    first, again, other = _game(1), _game(1), _game(2)
    assert first.trace == again.trace and first.rewards == again.rewards and first.statuses == again.statuses
    assert other.trace != first.trace
    assert first.game == "planet_wars" and first.moves == [] and first.seed == 1


# -- records ------------------------------------------------------------------------------------------------
def test_a_record_round_trips_through_its_line() -> None:
    rec = _game(5)
    rec.run, rec.pairing = "t1", "kaggle:nearest_enemy vs kaggle:do_nothing"
    line = json.dumps(rec.to_json())
    back = record_of(json.loads(line), "games.jsonl: line 1")
    assert back == rec
    assert json.dumps(back.to_json()) == line


def line(**changes: object) -> dict[str, Any]:
    """A games file's line of a game of Rock, Paper, Scissors that seat 2 won, with ``changes``."""
    data: dict[str, Any] = {
        "players": ["a.py", "kaggle:rock"], "size": [1, 1, 1], "seed": 7, "moves": [], "times": [],
        "outcome": "win", "winner": 2, "culprit": None, "bad_action": None, "error": None, "index": 0, "a_seat": 1,
        "game": "rps", "rewards": [-5.0, 5.0], "statuses": ["DONE", "DONE"], "trace": "0" * 64}
    data.update(changes)
    return data


def test_an_honest_line_is_read() -> None:
    rec = record_of(line(), "f: line 1")
    assert (rec.game, rec.winner, rec.rewards) == ("rps", 2, [-5.0, 5.0])
    assert record_of(line(statuses=["ERROR", "DONE"], rewards=[None, 1.0], outcome="error", winner=2, culprit=1),
                     "f: line 1").culprit == 1


@pytest.mark.parametrize(("changes", "said"), [
    ({"winner": 1}, "does not follow from its rewards and statuses"),
    ({"outcome": "draw", "winner": None}, "does not follow"),
    ({"statuses": ["ERROR", "DONE"]}, "does not follow"),  # seat 1 broke, yet it is no loss by error
    ({"outcome": "error", "winner": 2, "culprit": 1}, "does not follow"),  # an error nobody's status shows
    ({"rewards": [5.0, -5.0]}, "does not follow"),
    ({"game": "chess"}, "no game 'chess'"),
    ({"game": "connectx"}, "besides connectx"),
    ({"moves": [3, 3]}, "no ConnectX moves"),
    ({"statuses": ["DONE", "WON"]}, "statuses are not two of Kaggle's"),
    ({"statuses": ["DONE"]}, "statuses are not two"),
    ({"rewards": [1.0, "5"]}, "rewards are not two numbers"),
    ({"rewards": [True, 1.0]}, "rewards are not two numbers"),
    ({"rewards": [math.inf, 1.0]}, "rewards are not two numbers"),
    ({"trace": "abc"}, "trace is not a digest"),
    ({"trace": None}, "trace is not a digest"),
    ({"rewards": None}, "rewards are not two numbers"),
])
def test_a_forged_line_is_refused_in_one_line(changes: dict[str, object], said: str) -> None:
    with pytest.raises(UserError) as caught:
        record_of(line(**changes), "f: line 3")
    text = str(caught.value)
    assert said in text and text.startswith("f: line 3: ") and "\n" not in text, text


@given(st.sampled_from(["win", "draw", "error", "timeout", "invalid"]), st.sampled_from([None, 1, 2]),
       st.sampled_from([None, 1, 2]), st.sampled_from(ALL), st.sampled_from(ALL), rewards, rewards)
def test_only_the_result_the_statuses_and_rewards_give_is_read(outcome: str, winner: int | None,
                                                                culprit: int | None, s1: str, s2: str,
                                                                a: float | None, b: float | None) -> None:
    data = line(outcome=outcome, winner=winner, culprit=culprit, statuses=[s1, s2], rewards=[a, b])
    if (outcome, winner, culprit) == episode_result([s1, s2], [a, b]):
        assert record_of(data, "f: line 1").outcome == outcome
    else:
        with pytest.raises(UserError, match="does not follow"):
            record_of(data, "f: line 1")


# -- players ------------------------------------------------------------------------------------------------
def test_a_builtin_of_another_game_is_refused_in_one_line() -> None:
    assert builtin_name(as_player("kaggle:rock"), catalog.GAMES["rps"]) == "rock"
    with pytest.raises(UserError, match=r"kaggle:negamax is no built-in agent of rps; its agents are kaggle:rock"):
        builtin_name(as_player("kaggle:negamax"), catalog.GAMES["rps"])


def test_a_connectx_agent_is_refused_on_another_game() -> None:
    with pytest.raises(UserError, match="random is a ConnectX agent; rps plays files"):
        _game(1, "rps", "random", "kaggle:rock")


# -- the action's bound -------------------------------------------------------------------------------------
def _crossed(action: object, limit: int = 1 << 16) -> tuple[str | None, object]:
    """What the referee makes of ``action`` once it crossed the channel as a host sends it."""
    reply = protocol.decode(protocol.encode({"action": protocol.encode_action(action)}))
    return protocol.json_action(reply["action"], limit)


def test_an_action_over_the_bound_is_named_by_its_size_however_long() -> None:
    assert _crossed([[0, 1, 3]]) == (None, [[0, 1, 3]])
    assert _crossed({0, 1})[0] == "not JSON"
    for size in (70_000, protocol.SENT_ACTION + 10, 8 << 20):  # within a reply's line, and far past it
        problem, value = _crossed("x" * size)
        assert problem == f"an action of {size + 2} bytes, over the bound of {1 << 16}" and value is None


def test_a_forged_size_within_the_bound_breaks_the_protocol() -> None:
    with pytest.raises(protocol.ProtocolError, match="size"):
        protocol.json_action({"type": "list", "repr": "[]", "bytes": 100}, 1 << 16)
