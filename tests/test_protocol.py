"""The channel's shared random stream (tools/sandbox/protocol.py): after every exchange both sides hold the same
state of ``random`` and ``numpy.random``, and a part that did not change since the last exchange is not sent."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectx_forge.tools.sandbox import protocol


def snapshot() -> tuple[Any, Any]:
    _, keys, pos, has_gauss, cached = np.random.get_state()
    return random.getstate(), (keys.tobytes(), pos, has_gauss, cached)


class Side:
    """One end of a channel: its own copy of the global generators, swapped in while it runs."""

    def __init__(self, seed: int) -> None:
        random.seed(seed)
        np.random.seed(seed)
        self.saved, self.shared = snapshot(), protocol.SharedRandom()

    def run(self, draws: tuple[int, int], other: Any = None) -> dict[str, Any]:
        random.setstate(self.saved[0])
        keys, pos, has_gauss, cached = self.saved[1]
        np.random.set_state(("MT19937", np.frombuffer(keys, dtype=np.uint32).copy(), pos, has_gauss, cached))
        if other is not None:
            self.shared.adopt(other)
        for _ in range(draws[0]):
            random.random()
        for _ in range(draws[1]):
            np.random.random()
        sent = self.shared.state()
        self.saved = snapshot()
        return sent


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=8))
def test_both_sides_hold_one_stream_and_send_only_what_changed(turns: list[tuple[int, int]]) -> None:
    referee, host = Side(1), Side(2)
    message = referee.run((0, 0))
    assert set(message) == {"py", "np"}  # the first exchange carries everything
    sides = [host, referee]
    for i, draws in enumerate(turns):
        side = sides[i % 2]
        message = side.run(draws, message)
        assert ("py" in message) == (draws[0] > 0) and ("np" in message) == (draws[1] > 0), (draws, message)
        other = sides[(i + 1) % 2]
        other.run((0, 0), message)  # the other side takes it: both now hold the same
        assert referee.saved == host.saved


@pytest.mark.parametrize("bad", [[], {"py": [3, "not base64!", None]}, {"py": [3, "AAAA", None]},
                                 {"np": ["AAAA", 0, 0, 0.0]}])
def test_a_malformed_state_is_a_protocol_error(bad: Any) -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.SharedRandom().adopt(bad)
