"""Each seat's own random generators: what ``random`` and ``numpy.random`` give the agent of one seat.

On Kaggle every agent runs in a container of its own: nothing random is shared
between the two seats, nor with the referee.  So here each seat of a game has
its own generators, seeded with ``seat_seed(game seed, seat)``, so that a run
stays reproducible from ``--seed``:

* an agent host (``tools/connectx_forge/sandbox``) is a process of its own: it seeds its
  ``random`` and ``numpy.random`` with its seat's seed (``host.seed``) and keeps
  them to itself (nothing random crosses the channel);
* an agent that runs in the referee's own process (a registered agent, Kaggle's
  built-ins, a function) draws from the process's one ``random`` and one
  ``numpy.random``: ``SeatRandoms`` puts its seat's state in place for each of
  its calls (the state it replaces kept; after the game the referee's set
  back), so that no seat can read or steer the other seat's draws, nor the
  referee's.

Both ways give a seat the same numbers, so a file plays the games of the
registered agent it was built from, hosted or not.

A state is moved as its raw bytes, in place: Python's index and 624 words,
numpy's 624 words and index, and each one's cached Gaussian, at offsets found
once per process by comparing memory with what ``getstate``/``get_state`` say
(a swap costs a few copies of 2.5 KB, where those functions would build a
tuple of 625 Python ints or copy an array).  Where the layout is not the one
expected, the state goes through those functions instead.
"""

from __future__ import annotations

import ctypes
import hashlib
import random
import struct
from array import array
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

WORDS = 624  # MT19937's state
RAW = 4 + WORDS * 4  # Python's: an int index, then the words; numpy's: the words, then an int index
GAUSS = struct.calcsize("i4xd")  # numpy's cached Gaussian: a flag, padding, the value
_PROBE = (0.7853981633974483, -2.718281828459045)  # two Gaussians to find numpy's cache by
_PERSON = b"cxforge-seat"  # the hash of seat seeds is its own, unlike any other hash of the same text


def seat_seed(game_seed: int, seat: int) -> int:
    """The seed of seat ``seat`` (0: mark 1, 1: mark 2) in the game seeded ``game_seed``: a hash of both, so
    that the two seats' streams are unrelated and each is fixed by the game's seed (any int; a seed both
    ``random.seed`` and ``numpy.random.seed`` take)."""
    digest = hashlib.blake2b(f"{game_seed}/{seat}".encode(), digest_size=4, person=_PERSON).digest()
    return int.from_bytes(digest, "little")


class Slot:
    """One party's state of both generators, kept while another party's is in place."""

    __slots__ = ("np_gauss", "np_words", "py_gauss", "py_words", "slow")

    def __init__(self) -> None:
        self.py_words = memoryview(bytearray(RAW))
        self.py_gauss: float | None = None
        self.np_words = memoryview(bytearray(RAW))
        self.np_gauss = memoryview(bytearray(GAUSS))
        # getstate/get_state, where the raw layout is unknown
        self.slow: tuple[tuple[object, ...], NumpyState] | None = None


# what ``numpy.random.get_state`` returns (the legacy tuple; a dict where asked for) and ``set_state`` takes
NumpyState = dict[str, object] | tuple[str, npt.NDArray[np.uint32], int, int, float]


class Places(NamedTuple):
    """This process's generators' state where it sits: ``random``'s index and words, ``numpy.random``'s words
    and index, numpy's cached Gaussian (views of the live objects' memory: a copy is a ``memcpy``)."""

    py_words: memoryview
    np_words: memoryview
    np_gauss: memoryview


def places() -> Places | None:
    """Where this process's generators keep their state (None where a layout is not the one expected)."""
    rand = np.random.mtrand._rand
    return _places(random._inst, rand, rand._bit_generator)


@cache
def _places(inst: random.Random, rand: np.random.RandomState, bit_generator: object) -> Places | None:
    """``places`` for these generator objects (found once: they live as long as the process)."""
    py, gauss, address = _py_offset(), _np_gauss_offset(), _np_address()
    if py < 0 or gauss < 0 or address is None:
        return None
    return Places(_view(id(inst) + py, RAW), _view(address, RAW), _view(id(rand) + gauss, GAUSS))


def _view(address: int, size: int) -> memoryview:
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B")


def save(slot: Slot, where: Places | None) -> None:
    """Copy the generators' state now in place into ``slot``."""
    if where is None:
        slot.slow = (random.getstate(), np.random.get_state())
        return
    slot.py_words[:] = where.py_words
    slot.py_gauss = random._inst.gauss_next  # type: ignore[attr-defined]
    slot.np_words[:] = where.np_words
    slot.np_gauss[:] = where.np_gauss


def load(slot: Slot, where: Places | None) -> None:
    """Put the state ``slot`` holds in place (``save`` filled it, with the same ``where``)."""
    if where is None:
        assert slot.slow is not None
        random.setstate(slot.slow[0])
        np.random.set_state(slot.slow[1])
        return
    where.py_words[:] = slot.py_words
    random._inst.gauss_next = slot.py_gauss  # type: ignore[attr-defined]
    where.np_words[:] = slot.np_words
    where.np_gauss[:] = slot.np_gauss


class SeatRandoms:
    """The own generators of a game's seats that play in this process (the referee's).

    ``turn(seat)`` before each call of a seat's agent puts that seat's state in
    place, keeping the one it replaces (the referee's, or the other seat's) in its
    slot; a seat's first turn seeds both generators with its seed instead.
    Leaving the ``with`` block sets the referee's state back.  A seat's state
    stays in place between its calls (the referee draws nothing during a game),
    so a game with one seat played here swaps twice in all, and one with two
    swaps once a move.
    """

    def __init__(self, seeds: Sequence[int | None]) -> None:
        """``seeds``: each seat's seed (None: a seat not played in this process)."""
        self.where = places()
        self.seeds = list(seeds)
        self.slots: list[Slot | None] = [None] * len(self.seeds)  # a seat's, from its first turn on
        self.referee = Slot()
        self.current = -1  # whose state is in place: a seat, or -1 for the referee's

    def __enter__(self) -> SeatRandoms:
        return self

    def __exit__(self, *exc: object) -> None:
        self.turn(-1)

    def turn(self, seat: int) -> None:
        """Put seat ``seat``'s state in place (-1: the referee's)."""
        if seat == self.current:
            return
        seed = self.seeds[seat] if seat >= 0 else None
        assert seat < 0 or seed is not None, f"seat {seat} is not played in this process"
        held = self.referee if self.current < 0 else self.slots[self.current]
        assert held is not None
        save(held, self.where)
        self.current = seat
        if seat < 0:
            load(self.referee, self.where)
            return
        mine = self.slots[seat]
        if mine is not None:
            load(mine, self.where)
            return
        self.slots[seat] = Slot()
        random.seed(seed)
        np.random.seed(seed)


class SeatAgent:
    """An in-process agent that draws from its seat's own generators, for a referee that calls agents itself
    (kaggle_environments' interpreter: it calls an object without ``__code__`` with ``(obs, config)``); the
    referee's state is set back after each call."""

    def __init__(self, agent: Callable[..., object], seed: int) -> None:
        self.agent, self.randoms = agent, SeatRandoms([seed])

    def __call__(self, *args: object) -> object:
        with self.randoms:
            self.randoms.turn(0)
            return self.agent(*args)


# -- finding the raw layouts ------------------------------------------------------------------------
@cache
def _py_offset() -> int:
    """Where ``random``'s index and words sit in its object (-1: not where getstate says they are)."""
    inst = random._inst
    _, internal, _ = inst.getstate()
    expected = array("i", [internal[-1]]).tobytes() + array("I", internal[:-1]).tobytes()
    found = [off for off in (16, 24, 32) if ctypes.string_at(id(inst) + off, RAW) == expected]
    return found[0] if found else -1


def _np_address() -> int | None:
    """The address of the global generator's MT19937 words and index (None where it cannot be had, or where
    they are not what get_state says)."""
    try:
        address = int(np.random.mtrand._rand._bit_generator.ctypes.state_address)
    except Exception:
        return None
    return address if _np_matches(address) else None


@cache
def _np_matches(address: int) -> bool:
    """Whether the words and index at ``address`` are the ones get_state says (checked once per address)."""
    _, keys, pos, _, _ = np.random.get_state()
    expected = np.asarray(keys, dtype=np.uint32).tobytes() + struct.pack("i", int(pos))
    return ctypes.string_at(address, RAW) == expected


@cache
def _np_gauss_offset() -> int:
    """Where a ``RandomState`` keeps its cached Gaussian (an int flag, then 4 bytes, then the double), found on
    a scratch generator given two known caches in turn (-1: not found)."""
    scratch = np.random.RandomState(0)
    start: Any = scratch.get_state()  # the legacy tuple, which numpy's stubs type as a dict
    keys, pos = start[1], start[2]
    spots: set[int] | None = None
    for has_gauss, value in ((1, _PROBE[0]), (0, _PROBE[1])):
        scratch.set_state(("MT19937", keys, pos, has_gauss, value))
        memory = ctypes.string_at(id(scratch), type(scratch).__basicsize__)
        pattern = struct.pack("i4xd", has_gauss, value)
        here = {i for i in range(0, len(memory) - len(pattern) + 1, 4) if memory[i:i + len(pattern)] == pattern}
        spots = here if spots is None else spots & here
    return min(spots) if spots else -1
