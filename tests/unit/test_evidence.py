"""The distinct-evidence rule (tools/connectx_forge/arena/evidence.py): a unit counts when it is new under its key;
the repeats of a
pair of agents count only once that pair is shown stochastic, and then all of them."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st

from connectx_forge.play.evidence import Evidence, counted, distinct_games, play_of
from connectx_forge.play.game_record import GameRecord

# a unit: (scope, key, play); the item is its index in the sequence
UNITS = st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 3), st.integers(0, 2)), max_size=40)


def expected(units: list[tuple[str, int, int]]) -> set[int]:
    """The rule stated on the whole sequence: a scope whose keys each saw one play counts its first unit per key;
    a scope where some key saw two plays counts every unit."""
    plays: dict[tuple[str, int], set[int]] = defaultdict(set)
    for scope, key, play in units:
        plays[(scope, key)].add(play)
    stochastic = {scope for (scope, _), seen in plays.items() if len(seen) > 1}
    first: dict[tuple[str, int], int] = {}
    for i, (scope, key, _) in enumerate(units):
        first.setdefault((scope, key), i)
    return {i for i, (scope, key, _) in enumerate(units) if scope in stochastic or first[(scope, key)] == i}


@given(UNITS)
def test_the_units_counted_are_those_the_rule_names(units: list[tuple[str, int, int]]) -> None:
    kept, seen = counted((scope, key, play, i) for i, (scope, key, play) in enumerate(units))
    assert len(kept) == len(set(kept)) and set(kept) == expected(units)  # each once, and the right ones
    assert seen.distinct == len(set(units)) and seen.units == len(units)
    assert seen.repeats == len(units) - len(kept)  # what was held back is what did not count
    for scope in "ab":
        plays = {(k, p) for s, k, p in units if s == scope}
        assert seen.shown_stochastic(scope) == (len(plays) > len({k for k, _ in plays}))
        assert seen.distinct_in(scope) == len(plays)


@given(st.lists(st.integers(0, 5), max_size=30))
def test_a_deterministic_pair_counts_each_key_once(keys: list[int]) -> None:
    # the play is a function of the key: every replay repeats its game
    kept, seen = counted(("pair", k, ("moves", k), i) for i, k in enumerate(keys))
    assert [keys[i] for i in kept] == list(dict.fromkeys(keys)) and not seen.shown_stochastic("pair")


def test_the_first_difference_releases_the_repeats_held_before_it() -> None:
    ev: Evidence[str] = Evidence()
    assert ev.add("p", 0, "x", "first") == ["first"]
    assert ev.add("p", 0, "x", "repeat") == []  # held: the pair looks deterministic so far
    assert ev.add("p", 1, "y", "other key") == ["other key"]
    assert ev.add("p", 0, "z", "differs") == ["repeat", "differs"]  # shown stochastic: the repeat was real
    assert ev.add("p", 0, "x", "again") == ["again"] and ev.repeats == 0 and ev.distinct == 3


def test_two_games_are_one_when_their_moves_and_end_are() -> None:
    def game(moves: list[int], seed: int, winner: int | None = 1) -> GameRecord:
        return GameRecord(("a", "b"), (6, 7, 4), seed, moves, [], "win" if winner else "draw", winner=winner)

    same = game([3, 3, 2], 1), game([3, 3, 2], 2)  # another seed, the same game
    assert play_of(same[0]) == play_of(same[1]) != play_of(game([3, 3, 2], 1, None))
    assert distinct_games([("k", same[0]), ("k", same[1]), ("other seat", same[0])]) == 2
