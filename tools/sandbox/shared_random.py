"""The random stream a referee shares with its hosts: the state of ``random`` and ``numpy.random``, sent along
the channel (``protocol.py``) both ways.

The players of an in-process game draw from one global ``random`` and one
global ``numpy.random``; so that a file played in a host gives the very games
it gives in-process with the same seed, the referee and its hosts hand that
state back and forth, each part only when it changed since the last exchange
(most moves of most agents draw nothing).

A state crosses as its raw bytes: the generator's index and 624 words as they
sit in memory, base64, plus its cached Gaussian.  They are read and written in
place through ``ctypes``, at offsets found once by comparing memory with what
``getstate``/``get_state`` say; where the layout is not the one expected, the
same bytes are made and taken through those functions, which cost many times
more (a tuple of 625 Python ints, a copied array).  What arrives is checked
before it is written: its length, its index, its Gaussian's type.
"""

from __future__ import annotations

import base64
import binascii
import ctypes
import random
import struct
from array import array
from functools import cache
from typing import Any

WORDS = 624  # MT19937's state
RAW = 4 + WORDS * 4  # Python's: an int index, then the words; numpy's: the words, then an int index
_PROBE = (0.7853981633974483, -2.718281828459045)  # two Gaussians to find numpy's cache by


class StateError(ValueError):
    """A state that is not one ``SharedRandom.state`` made."""


class SharedRandom:
    """One side's view of the stream: ``state()`` is what to send, ``adopt`` takes the other side's."""

    def __init__(self) -> None:
        self._py_seen: bytes | None = None
        self._np_seen: bytes | None = None

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        raw, gauss = _py_read()
        seen = raw + repr(gauss).encode()
        if seen != self._py_seen:
            out["py"] = [base64.b64encode(raw).decode(), gauss]
            self._py_seen = seen
        raw, has_gauss, cached = _np_read()
        seen = raw + struct.pack("id", has_gauss, cached)
        if seen != self._np_seen:
            out["np"] = [base64.b64encode(raw).decode(), has_gauss, cached]
            self._np_seen = seen
        return out

    def adopt(self, state: Any) -> None:
        """Take the other side's state (``StateError`` when it is not one ``state`` made)."""
        try:
            if not isinstance(state, dict):
                raise TypeError("not an object")
            if "py" in state:
                encoded, gauss = state["py"]
                raw = _words(encoded, index_first=True)
                if not (gauss is None or isinstance(gauss, float)):
                    raise ValueError("bad gauss")
                _py_write(raw, gauss)
                self._py_seen = raw + repr(gauss).encode()
            if "np" in state:
                encoded, has_gauss, cached = state["np"]
                raw = _words(encoded, index_first=False)
                if has_gauss not in (0, 1) or not isinstance(cached, (int, float)) or isinstance(cached, bool):
                    raise ValueError("bad gauss")
                _np_write(raw, int(has_gauss), float(cached))
                self._np_seen = raw + struct.pack("id", int(has_gauss), float(cached))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise StateError(f"a malformed random state ({exc})") from None


def _words(encoded: Any, index_first: bool) -> bytes:
    """The raw state in ``encoded``, checked: its length and an index within the words."""
    if not isinstance(encoded, str):
        raise TypeError("not a string")
    raw = binascii.a2b_base64(encoded, strict_mode=True)  # binascii.Error is a ValueError
    if len(raw) != RAW:
        raise ValueError("bad length")
    index = struct.unpack_from("i", raw, 0 if index_first else RAW - 4)[0]
    if not 0 <= index <= WORDS:
        raise ValueError("bad index")
    return raw


def find_layouts() -> None:
    """Find both raw layouts now (once per process: a process forked after this inherits them)."""
    _py_offset()
    _np_gauss_offset()


# -- Python's random ------------------------------------------------------------------------------
@cache
def _py_offset() -> int:
    """Where ``random``'s index and words sit in its object (-1: not where getstate says they are)."""
    inst: Any = random._inst
    _, internal, _ = inst.getstate()
    expected = array("i", [internal[-1]]).tobytes() + array("I", internal[:-1]).tobytes()
    found = [off for off in (16, 24, 32) if ctypes.string_at(id(inst) + off, RAW) == expected]
    return found[0] if found else -1


def _py_read() -> tuple[bytes, float | None]:
    inst: Any = random._inst
    offset = _py_offset()
    if offset < 0:
        _, internal, gauss = inst.getstate()
        return array("i", [internal[-1]]).tobytes() + array("I", internal[:-1]).tobytes(), gauss
    return ctypes.string_at(id(inst) + offset, RAW), inst.gauss_next


def _py_write(raw: bytes, gauss: float | None) -> None:
    inst: Any = random._inst
    offset = _py_offset()
    if offset < 0:
        words = array("I")
        words.frombytes(raw[4:])
        inst.setstate((3, (*words, struct.unpack_from("i", raw)[0]), gauss))
        return
    ctypes.memmove(id(inst) + offset, raw, RAW)
    inst.gauss_next = gauss


# -- numpy.random ---------------------------------------------------------------------------------
def _np_address() -> int | None:
    """The address of the global generator's MT19937 words and index (None where it cannot be had)."""
    import numpy as np

    try:
        return int(np.random.mtrand._rand._bit_generator.ctypes.state_address)
    except Exception:
        return None


@cache
def _np_gauss_offset() -> int:
    """Where a ``RandomState`` keeps its cached Gaussian (an int flag, then 4 bytes, then the double), found on
    a scratch generator given two known caches in turn (-1: not found)."""
    import numpy as np

    scratch = np.random.RandomState(0)
    start: Any = scratch.get_state()
    keys, pos = start[1], start[2]
    spots: set[int] | None = None
    for has_gauss, value in ((1, _PROBE[0]), (0, _PROBE[1])):
        scratch.set_state(("MT19937", keys, pos, has_gauss, value))
        memory = ctypes.string_at(id(scratch), type(scratch).__basicsize__)
        pattern = struct.pack("i4xd", has_gauss, value)
        here = {i for i in range(0, len(memory) - len(pattern) + 1, 4) if memory[i:i + len(pattern)] == pattern}
        spots = here if spots is None else spots & here
    return min(spots) if spots else -1


def _np_read() -> tuple[bytes, int, float]:
    import numpy as np

    address, offset = _np_address(), _np_gauss_offset()
    if address is None or offset < 0:
        _, keys, pos, has_gauss, cached = np.random.get_state()
        return (np.asarray(keys, dtype=np.uint32).tobytes() + struct.pack("i", int(pos)), int(has_gauss),
                float(cached))
    has_gauss, cached = struct.unpack("i4xd", ctypes.string_at(id(np.random.mtrand._rand) + offset, 16))
    return ctypes.string_at(address, RAW), has_gauss, cached


def _np_write(raw: bytes, has_gauss: int, cached: float) -> None:
    import numpy as np

    address, offset = _np_address(), _np_gauss_offset()
    if address is None or offset < 0:
        keys = np.frombuffer(raw[:-4], dtype=np.uint32).copy()
        np.random.set_state(("MT19937", keys, struct.unpack_from("i", raw, RAW - 4)[0], has_gauss, cached))
        return
    ctypes.memmove(address, raw, RAW)
    ctypes.memmove(id(np.random.mtrand._rand) + offset, struct.pack("i4xd", has_gauss, cached), 16)
