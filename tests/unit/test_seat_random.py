"""Each seat's own generators (tools/connectx_forge/play/seat_random.py): a seat played in the referee's process draws
exactly what
it would draw alone, from ``random`` and ``numpy.random`` seeded with its seat's seed, however the other seat
draws, reseeds or sets its state (cached Gaussians included); the referee's state is set back after the game;
the same with the raw layouts unknown (the ``getstate`` path)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectx_forge.play import seat_random
from connectx_forge.play.seat_random import SeatAgent, SeatRandoms, seat_seed


def snapshot() -> tuple[Any, Any]:
    """The process's state of both generators, comparable."""
    state: Any = np.random.get_state()
    _, keys, pos, has_gauss, cached = state
    return random.getstate(), (keys.tobytes(), pos, has_gauss, cached)


@contextlib.contextmanager
def layout(raw: bool) -> Iterator[None]:
    """The raw layouts as found (``raw``), or as if they were unknown."""
    if raw:
        assert seat_random.places() is not None
        yield
        return
    with mock.patch.object(seat_random, "places", lambda: None):
        yield


Draws = tuple[int, int, int, int, bool]  # random(), np.random.random(), gauss(), standard_normal(), then reseed


def draw(counts: Draws) -> list[float]:
    """Draw from the process's generators; with ``counts[4]``, then reseed both (what an attacker might do)."""
    out = [random.random() for _ in range(counts[0])] + [float(np.random.random()) for _ in range(counts[1])]
    out += [random.gauss() for _ in range(counts[2])] + [float(np.random.standard_normal()) for _ in range(counts[3])]
    if counts[4]:
        random.seed(0)
        np.random.seed(0)
    return out


def alone(seed: int, turns: list[Draws]) -> list[list[float]]:
    """What a seat draws in its own process, seeded with ``seed``."""
    random.seed(seed)
    np.random.seed(seed)
    return [draw(t) for t in turns]


few = st.integers(0, 2)
turn = st.tuples(st.integers(0, 1), st.tuples(few, few, few, few, st.booleans()))


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "getstate"])
@settings(max_examples=30, deadline=None)
@given(turns=st.lists(turn, min_size=1, max_size=10), game=st.integers(-(1 << 40), 1 << 40))
def test_each_seat_draws_what_it_would_alone(raw: bool, turns: list[tuple[int, Draws]], game: int) -> None:
    with layout(raw):
        random.seed(99)
        np.random.seed(99)
        random.gauss()
        np.random.standard_normal()  # a cached Gaussian in the referee's state too
        referee = snapshot()
        seeds = [seat_seed(game, seat) for seat in range(2)]
        got: list[list[list[float]]] = [[], []]
        with SeatRandoms(seeds) as randoms:
            for seat, counts in turns:
                randoms.turn(seat)
                got[seat].append(draw(counts))
        assert snapshot() == referee
        for seat in range(2):
            mine = [counts for s, counts in turns if s == seat]
            assert got[seat] == alone(seeds[seat], mine)


def test_a_seat_not_played_here_has_no_state() -> None:
    with SeatRandoms([None, 5]) as randoms:
        randoms.turn(1)
        with pytest.raises(AssertionError):
            randoms.turn(0)


def test_raw_and_getstate_paths_draw_the_same() -> None:
    runs = []
    for raw in (True, False):
        with layout(raw):
            agent = SeatAgent(lambda: draw((2, 2, 1, 1, False)), seat_seed(7, 1))
            runs.append([agent(), agent()])
    assert runs[0] == runs[1]


def test_a_seat_agent_sets_the_referee_state_back_even_when_its_agent_raises() -> None:
    def raises() -> None:
        random.random()
        raise ValueError("no")

    random.seed(3)
    before = snapshot()
    with pytest.raises(ValueError):
        SeatAgent(raises, 1)()
    assert snapshot() == before


def test_seat_seeds_are_fixed_by_the_game_seed_and_differ_by_seat() -> None:
    seeds = {(g, s): seat_seed(g, s) for g in (-1, 0, 1, 2, 1 << 70) for s in (0, 1)}
    assert seeds == {(g, s): seat_seed(g, s) for g, s in seeds}
    assert len(set(seeds.values())) == len(seeds)
    assert all(0 <= v < 1 << 32 for v in seeds.values())  # both random.seed and numpy.random.seed take it
