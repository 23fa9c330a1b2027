"""The channel's shared random stream (tools/sandbox/shared_random.py): after every exchange both sides hold the same
state of ``random`` and ``numpy.random`` (cached Gaussians included), and a part that did not change since the last
exchange is not sent; the same with the raw layouts unknown (the ``getstate`` path)."""

from __future__ import annotations

import base64
import contextlib
import random
import struct
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectx_forge.tools.sandbox import shared_random
from connectx_forge.tools.sandbox.shared_random import SharedRandom, StateError


def snapshot() -> tuple[Any, Any]:
    _, keys, pos, has_gauss, cached = np.random.get_state()
    return random.getstate(), (keys.tobytes(), pos, has_gauss, cached)


class Side:
    """One end of a channel: its own copy of the global generators, swapped in while it runs."""

    def __init__(self, seed: int) -> None:
        random.seed(seed)
        np.random.seed(seed)
        self.saved, self.shared = snapshot(), SharedRandom()

    def run(self, draws: tuple[int, int, int, int], other: Any = None) -> dict[str, Any]:
        """Take ``other``'s state, draw (Python's random, numpy's random, Python's gauss, numpy's normal),
        and give what to send."""
        random.setstate(self.saved[0])
        keys, pos, has_gauss, cached = self.saved[1]
        np.random.set_state(("MT19937", np.frombuffer(keys, dtype=np.uint32).copy(), pos, has_gauss, cached))
        if other is not None:
            self.shared.adopt(other)
        for _ in range(draws[0]):
            random.random()
        for _ in range(draws[1]):
            np.random.random()
        for _ in range(draws[2]):
            random.gauss()
        for _ in range(draws[3]):
            np.random.standard_normal()
        sent = self.shared.state()
        self.saved = snapshot()
        return sent


@contextlib.contextmanager
def layout(raw: bool) -> Iterator[None]:
    """The raw layouts as found (``raw``), or as if they were unknown."""
    if raw:
        assert shared_random._py_offset() >= 0 and shared_random._np_gauss_offset() >= 0
        yield
        return
    with mock.patch.object(shared_random, "_py_offset", lambda: -1), \
            mock.patch.object(shared_random, "_np_gauss_offset", lambda: -1):
        yield


draw = st.integers(0, 2)


@pytest.mark.parametrize("raw", [True, False], ids=["raw", "getstate"])
@settings(max_examples=30, deadline=None)
@given(turns=st.lists(st.tuples(draw, draw, draw, draw), min_size=1, max_size=8))
def test_both_sides_hold_one_stream_and_send_only_what_changed(raw: bool, turns: list[tuple[int, ...]]) -> None:
    with layout(raw):
        referee, host = Side(1), Side(2)
        message = referee.run((0, 0, 0, 0))
        assert set(message) == {"py", "np"}  # the first exchange carries everything
        sides = [host, referee]
        for i, draws in enumerate(turns):
            side = sides[i % 2]
            message = side.run(draws, message)
            assert ("py" in message) == (draws[0] + draws[2] > 0), (draws, message)
            assert ("np" in message) == (draws[1] + draws[3] > 0), (draws, message)
            other = sides[(i + 1) % 2]
            other.run((0, 0, 0, 0), message)  # the other side takes it: both now hold the same
            assert referee.saved == host.saved


def test_raw_and_getstate_paths_send_the_same() -> None:
    random.seed(5)
    np.random.seed(5)
    random.gauss()
    np.random.standard_normal()
    with layout(True):
        raw = SharedRandom().state()
    with layout(False):
        slow = SharedRandom().state()
    assert raw == slow


def words(index: int, index_first: bool = True) -> str:
    raw = struct.pack("i", index) + bytes(624 * 4) if index_first else bytes(624 * 4) + struct.pack("i", index)
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize("bad", [
    [], {"py": ["not base64!", None]}, {"py": ["AAAA", None]}, {"py": [words(625), None]},
    {"py": [words(-1), None]}, {"py": [words(3), "0.5"]}, {"py": [7, None]}, {"py": [words(3)]},
    {"np": ["AAAA", 0, 0.0]}, {"np": [words(625, False), 0, 0.0]}, {"np": [words(3, False), 2, 0.0]},
    {"np": [words(3, False), 0, "x"]}, {"np": [words(3, False), 0, True]}])
def test_a_malformed_state_is_refused_and_changes_nothing(bad: Any) -> None:
    before = snapshot()
    with pytest.raises(StateError):
        SharedRandom().adopt(bad)
    assert snapshot() == before
