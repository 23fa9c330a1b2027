"""The private channel between the referee and an agent host: one JSON line each way per move.

A host forked from a template first sends ``READY`` (``{"ready":true}``), once.
Request (referee to host): ``{"id": N, "obs": {...}, "config": {...}, "rng": RNG}``.
Reply (host to referee): ``{"id": N, "kind": K, ...}`` where ``kind`` is

* ``ok`` with ``action`` (``{"int": 3}``, ``{"none": true}`` or ``{"type": "float", "repr": "3.0",
  "float": 3.0}``: only a plain ``int`` crosses as a value; anything else arrives as its type and repr,
  and a ``float`` (which kaggle_environments' schema lets through, to crash its interpreter) also as its
  value, so that the checker's referee can judge it as Kaggle does);
* ``error`` / ``memory`` / ``load`` with ``detail`` (one line: ``Type: message``).

``rng`` carries the state of ``random`` and ``numpy.random`` both ways
(``shared_random.py``): the referee and its hosts share ONE random stream, as
the players of an in-process game do.

The referee never unpickles anything a host sends: replies are JSON, read with
a size cap, and checked field by field; a reply that is not one well-formed
line answering the pending ``id`` is a ``protocol`` violation.
"""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Iterator
from typing import Any

MAX_LINE = 1 << 20  # a reply longer than this is a protocol violation
MAX_MESSAGE = 1 << 16  # the longest message on a control channel (referee to warden, warden to template)
REPR_CHARS = 200
READY = b'{"ready":true}\n'  # a host forked from a template says so once it has taken its game
CHANNEL_FD = 100  # where the channel lives in a host (far from the fds an agent may scribble on)


class ProtocolError(Exception):
    """A reply that breaks the protocol (charged to the agent)."""


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> dict[str, Any]:
    """One line as a JSON object, or ``ProtocolError``."""
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"a reply that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError("a reply that is not a JSON object")
    return message


def encode_action(action: object) -> dict[str, Any]:
    """An agent's return value as it crosses back: a plain int as itself, anything else as type and repr."""
    if action is None:
        return {"none": True}
    if isinstance(action, int) and not isinstance(action, bool):
        return {"int": int(action)}
    try:
        text = repr(action)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    out: dict[str, Any] = {"type": type(action).__name__, "repr": text[:REPR_CHARS]}
    if isinstance(action, float) and math.isfinite(action):
        out["float"] = float(action)
    return out


def decode_action(data: Any) -> tuple[bool, int | None, str | None]:
    """``(valid_kind, action, bad_repr)``: an int, None (Kaggle's column 0), or the repr of anything else."""
    if not isinstance(data, dict):
        raise ProtocolError("a reply whose action is not an object")
    if data.get("none") is True:
        return True, None, None
    value = data.get("int")
    if isinstance(value, int) and not isinstance(value, bool):
        return True, value, None
    if isinstance(data.get("repr"), str):
        return False, None, str(data["repr"])[:REPR_CHARS]
    raise ProtocolError("a reply with a malformed action")


def float_of(data: Any) -> float | None:
    """The value of a ``float`` the agent returned (``None`` for anything else)."""
    value = data.get("float") if isinstance(data, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def requests(sock: socket.socket, size: int = MAX_MESSAGE) -> Iterator[tuple[dict[str, Any], list[int]]]:
    """The requests on a control channel (referee to warden, warden to template: one JSON object per
    ``SOCK_SEQPACKET`` message, with up to two fds beside it), until it closes."""
    while True:
        data, fds, _, _ = socket.recv_fds(sock, size, 2)
        if not data:
            return
        yield json.loads(data), fds
