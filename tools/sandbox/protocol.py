"""The private channel between the referee and an agent host: one JSON line each way per move.

Request (referee to host): ``{"id": N, "obs": {...}, "config": {...}, "rng": RNG}``.
Reply (host to referee): ``{"id": N, "kind": K, ...}`` where ``kind`` is

* ``ok`` with ``action`` (``{"int": 3}``, ``{"none": true}`` or ``{"type": "float", "repr": "3.0",
  "float": 3.0}``: only a plain ``int`` crosses as a value; anything else arrives as its type and repr,
  and a ``float`` (which kaggle_environments' schema lets through, to crash its interpreter) also as its
  value, so that the checker's referee can judge it as Kaggle does);
* ``error`` / ``memory`` / ``load`` with ``detail`` (one line: ``Type: message``).

``rng`` carries the state of ``random`` and ``numpy.random`` both ways (each
part only when it changed since the last exchange: most moves of most agents
draw nothing, and the state is 2.5 KB each): the referee and its hosts share
ONE random stream, as the players of an in-process game do, so a file played
in a host gives the very games it gives in-process with the same seed.

The referee never unpickles anything a host sends: replies are JSON, read with
a size cap, and checked field by field; a reply that is not one well-formed
line answering the pending ``id`` is a ``protocol`` violation.
"""

from __future__ import annotations

import base64
import json
import math
import random
import socket
from array import array
from collections.abc import Iterator
from typing import Any

MAX_LINE = 1 << 20  # a reply longer than this is a protocol violation
MAX_MESSAGE = 1 << 16  # the longest message on a control channel (referee to warden, warden to template)
REPR_CHARS = 200
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


# -- the shared random stream ---------------------------------------------------------------
class SharedRandom:
    """One side's view of the random stream shared with the other side of a channel.

    ``state()`` is what to send: the state of Python's ``random`` and of
    ``numpy.random``, each only when it changed since the last exchange (after
    which both sides hold the same), noticed by comparing the raw bytes of each
    generator's state (reading and setting a whole state costs far more).
    """

    def __init__(self) -> None:
        self._py_seen: bytes | None = None
        self._np_seen: bytes | None = None

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        raw = _py_raw()
        if raw is None or raw != self._py_seen:
            version, internal, gauss = random.getstate()
            out["py"] = [version, base64.b64encode(array("I", internal).tobytes()).decode(), gauss]
            self._py_seen = raw
        raw = _np_raw()
        if raw is None or raw != self._np_seen:
            out["np"] = _np_state()
            self._np_seen = raw
        return out

    def adopt(self, state: Any) -> None:
        """Take the other side's state (``ProtocolError`` when it is not one ``state`` made)."""
        try:
            if not isinstance(state, dict):
                raise TypeError("not an object")
            if "py" in state:
                version, internal, gauss = state["py"]
                words = array("I")
                words.frombytes(base64.b64decode(internal, validate=True))
                if len(words) != 625 or not (gauss is None or isinstance(gauss, float)):
                    raise ValueError("bad random state")
                random.setstate((int(version), tuple(words), gauss))
                self._py_seen = _py_raw()
            if "np" in state:
                _set_np_state(state["np"])
                self._np_seen = _np_raw()
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ProtocolError(f"a reply with a malformed random state ({exc})") from None


_PY_OFFSET: list[int] = []  # where ``random``'s index and words sit in its object (-1: not found), found once


def _py_raw() -> bytes | None:
    """The raw state of Python's global ``random`` (its index, 624 words and cached gauss), None where its
    layout is not the one checked against ``getstate`` once."""
    import ctypes

    inst: Any = random._inst
    if not _PY_OFFSET:
        _, internal, _ = inst.getstate()
        expected = array("i", [internal[-1]]).tobytes() + array("I", internal[:-1]).tobytes()
        found = [off for off in (16, 24, 32) if ctypes.string_at(id(inst) + off, len(expected)) == expected]
        _PY_OFFSET.append(found[0] if found else -1)
    if _PY_OFFSET[0] < 0:
        return None
    return ctypes.string_at(id(inst) + _PY_OFFSET[0], 4 + 624 * 4) + repr(inst.gauss_next).encode()


def _np_raw() -> bytes | None:
    """The raw MT19937 key and position of ``numpy.random``'s global generator (None where unreadable)."""
    import ctypes

    import numpy as np

    try:
        address = np.random.mtrand._rand._bit_generator.ctypes.state_address
        return ctypes.string_at(address, 624 * 4 + 4)
    except Exception:
        return None


def _np_state() -> list[Any]:
    import numpy as np

    _, keys, pos, has_gauss, cached = np.random.get_state()
    return [base64.b64encode(np.asarray(keys, dtype=np.uint32).tobytes()).decode(), int(pos), int(has_gauss),
            float(cached)]


def _set_np_state(state: Any) -> None:
    import numpy as np

    keys, pos, has_gauss, cached = state
    arr = np.frombuffer(base64.b64decode(keys, validate=True), dtype=np.uint32)
    if arr.shape != (624,) or not 0 <= int(pos) <= 624:
        raise ValueError("bad numpy state")
    np.random.set_state(("MT19937", arr.copy(), int(pos), int(has_gauss), float(cached)))


def requests(sock: socket.socket, size: int = MAX_MESSAGE) -> Iterator[tuple[dict[str, Any], list[int]]]:
    """The requests on a control channel (referee to warden, warden to template: one JSON object per
    ``SOCK_SEQPACKET`` message, with up to two fds beside it), until it closes."""
    while True:
        data, fds, _, _ = socket.recv_fds(sock, size, 2)
        if not data:
            return
        yield json.loads(data), fds
