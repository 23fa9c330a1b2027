"""The channel (tools/connectx_forge/sandbox/protocol.py) carries no random state: a host's replies have no ``rng``
field, and a
request that carries one (as the referee's did when it shared one random stream with its hosts) changes nothing in
the host; the host's ``random`` and ``numpy.random`` are its own, moved only by its agent."""

from __future__ import annotations

import random
import socket
import threading
from typing import Any

import numpy as np

from connectx_forge.players.player import KAGGLE, REGISTERED
from connectx_forge.sandbox import host, protocol


def snapshot() -> tuple[Any, Any]:
    state: Any = np.random.get_state()
    _, keys, pos, has_gauss, cached = state
    return random.getstate(), (keys.tobytes(), pos, has_gauss, cached)


def serve_one(request: dict[str, Any], named: tuple[str, str]) -> dict[str, Any]:
    """The reply ``host.serve`` (in a thread of this process) gives ``request``, the agent being the named player
    ``named`` (its kind and name, as a seat sends them)."""
    ours, theirs = socket.socketpair()
    server = threading.Thread(target=host.serve, args=(theirs, {"kind": "spec", "named": list(named)}))
    server.start()
    try:
        ours.sendall(protocol.encode(request))
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = ours.recv(1 << 16)
            assert chunk, "the host closed the channel"
            reply += chunk
    finally:
        ours.close()
        server.join(10)
        theirs.close()
    return protocol.decode(reply.strip())


OBS = {"remainingOverageTime": 60, "step": 0, "board": [0] * 42, "mark": 1}
CONFIG = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2}


def test_a_reply_carries_no_random_state() -> None:
    reply = serve_one({"id": 1, "obs": OBS, "config": CONFIG}, (KAGGLE, "random"))
    assert reply["kind"] == "ok" and set(reply) == {"id", "kind", "action"}


def test_a_request_with_a_random_state_changes_nothing_in_the_host() -> None:
    random.seed(11)
    np.random.seed(11)
    before = snapshot()
    forged = {"py": ["AAAA", 0.5], "np": ["AAAA", 1, 0.5]}  # whatever it says, it is not read
    reply = serve_one({"id": 1, "obs": OBS, "config": CONFIG, "rng": forged}, (REGISTERED, "leftmost"))  # draws nothing
    assert reply["kind"] == "ok" and "rng" not in reply
    assert snapshot() == before


def test_the_rehearsal_touches_no_random_state() -> None:
    random.seed(12)
    before = snapshot()
    host.rehearse()
    assert snapshot() == before
