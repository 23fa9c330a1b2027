"""The private channel between the referee and an agent host: one JSON line each way per move.

A host forked from a template first sends ``READY`` (``{"ready":true}``), once.
Request (referee to host): ``{"id": N, "obs": {...}, "config": {...}}``.
Reply (host to referee): ``{"id": N, "kind": K, ...}`` where ``kind`` is

* ``ok`` with ``action`` (``{"int": 3}``, ``{"none": true}`` or ``{"type": "float", "repr": "3.0",
  "float": 3.0, "json": 3.0}``: only a plain ``int`` crosses as a value to ConnectX's referee; anything else
  arrives as its type and repr, and a ``float`` (which kaggle_environments' schema lets through, to crash its
  interpreter) also as its value, so that the checker's referee can judge it as Kaggle does; and, where it
  can cross as JSON (``json_of``: as Kaggle's agent server sends it, tuples as lists, within ``MAX_ACTION``
  bytes), as ``json``: the action of every other game, ``json_action``; a JSON action too long to cross, as
  ``bytes``, its size, so that the referee says it was over the bound, not that it was not JSON);
* ``error`` / ``memory`` / ``load`` with ``detail`` (one line: ``Type: message``).

No random state crosses the channel: a host's ``random`` and ``numpy.random``
are its own, seeded with its seat's seed (``tools/connectx_forge/play/seat_random.py``), as
each agent on Kaggle has a container of its own; what a reply carries beyond
its fields is ignored.

The referee never unpickles anything a host sends: replies are JSON, read with
a size cap, and checked field by field; a reply that is not one well-formed
line answering the pending ``id`` is a ``protocol`` violation.

Every message an agent's process sends (a host's replies and ready line, a
template's answers, which its load may forge) is read by ``decode``: bounded
in length, nesting (checked by a scan before json parses, so no message makes
the parser recurse deep) and integer digits, without NaN or Infinity.  Numbers
are then checked where they are used (``integer``, ``seconds``).
"""

from __future__ import annotations

import json
import math
import os
import socket
from collections.abc import Iterator
from typing import Any, Literal, NotRequired, TypedDict

from connectx_forge.boundedread import loads, one_line, too_deep
from connectx_forge.sandbox.limits import MAX_ACTION, LimitsJson

MAX_LINE = 1 << 20  # a reply longer than this is a protocol violation
MAX_MESSAGE = 1 << 16  # the longest message on a control channel (referee to warden, warden to template)
MAX_DEPTH = 16  # the deepest nesting of arrays and objects a message may have
MAX_PID = 1 << 22  # Linux's largest pid (PID_MAX_LIMIT)
MAX_STATUS = 0xFFFF  # a wait status fits 16 bits
MAX_INT = 1 << 63  # an int action beyond +-this crosses as its type and repr (always an invalid column)
REPR_CHARS = 200
SENT_ACTION = MAX_LINE - 4096  # the most bytes of a JSON action a host sends (within its reply's line)
ACTION_DEPTH = MAX_DEPTH - 3  # the deepest a JSON action may nest, inside its reply's own objects
READY = b'{"ready":true}\n'  # a host forked from a template says so once it has taken its game
CHANNEL_FD = 100  # where the channel lives in a host (far from the fds an agent may scribble on)


class ProtocolError(Exception):
    """A reply that breaks the protocol (charged to the agent)."""


class TemplateSetup(TypedDict):
    """A templated file's part of its host's setup: the template it shares (``key``), its HOME, its load's
    budget in seconds."""

    key: str
    home: str
    budget: float


class HostSetup(TypedDict):
    """What a host is started with: made by its seat (``seat.py``), sent to the warden in a ``spawn`` request,
    completed there (``warden_process._spawn``) and by a template (``template.py``), read by the host
    (``host.settle``, ``host.load``)."""

    kind: Literal["file", "spec"]  # a file loaded as Kaggle loads it, or a named (registered) agent
    named: list[str | None]  # the player's kind and name (a file's may have none: only a named player's is read)
    seed: int
    limits: LimitsJson
    cpu_seconds: int
    kaggle: NotRequired[bool]  # a .tar.gz's files go where Kaggle puts them (taken out by the warden)
    cwd: NotRequired[str]  # the game folder
    home: NotRequired[str]
    path: NotRequired[str]  # the staged file
    template: NotRequired[TemplateSetup]
    # the warden's
    project_modules: NotRequired[list[str]]
    project_path: NotRequired[list[str]]
    project_roots: NotRequired[list[str]]
    nproc: NotRequired[int]
    uid: NotRequired[int]
    # a template's
    alone: NotRequired[bool]
    spare_home: NotRequired[str]


class Action(TypedDict, total=False):
    """An action as it crosses back (``encode_action``): ``none``, or ``int``, or ``type`` and ``repr`` (with
    ``float`` for a finite float)."""

    none: bool
    int: int
    type: str
    repr: str
    float: float
    json: object
    bytes: int


def encode(message: dict[str, object]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def decode(data: bytes, limit: int = MAX_LINE, what: str = "a reply") -> dict[str, Any]:
    """``data`` (one message, ``what`` it is) as a JSON object, or ``ProtocolError`` naming what was wrong: longer
    than ``limit`` bytes, not UTF-8, nested deeper than ``MAX_DEPTH``, an integer of more than 20
    digits, NaN or Infinity (or a float that overflows to it), not JSON, not an object.  The bounds are checked
    before or while parsing, so that no message can make json recurse deep or build a huge number.

    Its values are JSON as parsed, unchecked: a reader of an agent's message takes it as ``dict[str, object]``
    and checks each field it reads (``integer``, ``seconds``, ``decode_action``); only the requests of our own
    code (``requests``) are read as what their sender wrote."""
    if len(data) > limit:
        raise ProtocolError(f"{what} longer than {limit} bytes")
    try:
        text = data.decode("utf-8")  # only UTF-8: json would also guess UTF-16 and UTF-32, which the scan cannot read
    except UnicodeDecodeError:
        raise ProtocolError(f"{what} that is not UTF-8") from None
    if too_deep(text, MAX_DEPTH):
        raise ProtocolError(f"{what} nested deeper than {MAX_DEPTH} levels")
    try:
        message = loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"{what} that is not JSON within bounds ({one_line(exc)})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"{what} that is not a JSON object")
    return message


def integer(value: object, low: int, high: int, what: str) -> int:
    """``value`` when it is an int (a bool is not) within ``low..high``; else ``ProtocolError`` naming ``what``."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ProtocolError(f"{what} that is not an integer in {low}..{high} ({str(value)[:20]!r})")
    return value


def seconds(value: object, what: str, high: float = 1e9) -> float:
    """``value`` when it is a finite number of seconds within ``0..high``; else ``ProtocolError``."""
    if (not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value)
            or not 0 <= value <= high):
        raise ProtocolError(f"{what} that is not a number of seconds ({str(value)[:20]!r})")
    return float(value)


def encode_action(action: object) -> Action:
    """An agent's return value as it crosses back: a plain int as itself, anything else as type and repr."""
    if action is None:
        return {"none": True}
    if isinstance(action, int) and not isinstance(action, bool) and -MAX_INT < action < MAX_INT:
        return {"int": int(action)}
    try:
        text = repr(action)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    out: Action = {"type": type(action).__name__, "repr": text[:REPR_CHARS]}
    if isinstance(action, float) and math.isfinite(action):
        out["float"] = float(action)
    as_json = _json_text(action)
    if as_json is not None and len(as_json) > SENT_ACTION:
        out["bytes"] = len(as_json)  # JSON, but too long to cross: its size alone
    else:
        sent = json_of(action, SENT_ACTION, as_json)
        if sent is not _UNSENDABLE:
            out["json"] = sent
    return out


_UNSENDABLE = object()


def _json_text(action: object) -> str | None:
    """``action`` as compact JSON, or None when it is no JSON value (a set, a numpy scalar, NaN, ...)."""
    try:
        return json.dumps(action, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def json_of(action: object, limit: int = MAX_ACTION, text: str | None = None) -> object:
    """``action`` as it crosses from an agent's container to Kaggle's referee (JSON: tuples as lists, no NaN),
    plain JSON values only; ``_UNSENDABLE`` when it cannot cross (a set, a numpy scalar, NaN, keys that are
    not strings or numbers), nests deeper than ``ACTION_DEPTH`` or is longer than ``limit`` bytes.  ``text``:
    its JSON, where the caller already made it."""
    if text is None:
        text = _json_text(action)
    if text is None or len(text) > limit or too_deep(text, ACTION_DEPTH):
        return _UNSENDABLE
    return json.loads(text)


def json_action(data: object, limit: int = MAX_ACTION) -> tuple[str | None, object]:
    """``(problem, value)`` of a reply's action for a game other than ConnectX: ``none`` as None, an ``int`` as
    itself, ``json`` as its value once re-measured (the host is the agent's: what it sends is checked here, not
    trusted), with ``problem`` None; else ``problem`` says why no value: ``"not JSON"`` (its type and repr
    alone crossed) or its size over ``limit`` bytes."""
    if not isinstance(data, dict):
        raise ProtocolError("a reply whose action is not an object")
    if data.get("none") is True:
        return None, None
    if "int" in data:
        return None, integer(data["int"], 1 - MAX_INT, MAX_INT - 1, "a reply whose action is an int")
    if "bytes" in data:  # JSON too long to cross: only a size over the bound is one
        size = integer(data["bytes"], max(limit, SENT_ACTION) + 1, MAX_INT - 1, "a reply whose action's size is")
        return f"an action of {size} bytes, over the bound of {limit}", None
    if "json" in data:
        value = json_of(data["json"], SENT_ACTION)
        if value is _UNSENDABLE:
            return "not JSON", None
        size = len(json.dumps(value, separators=(",", ":")))
        return (f"an action of {size} bytes, over the bound of {limit}", None) if size > limit else (None, value)
    if isinstance(data.get("repr"), str):
        return "not JSON", None
    raise ProtocolError("a reply with a malformed action")


def decode_action(data: object) -> tuple[bool, int | None, str | None]:
    """``(valid_kind, action, bad_repr)``: an int, None (Kaggle's column 0), or the repr of anything else."""
    if not isinstance(data, dict):
        raise ProtocolError("a reply whose action is not an object")
    if data.get("none") is True:
        return True, None, None
    if "int" in data:
        return True, integer(data["int"], 1 - MAX_INT, MAX_INT - 1, "a reply whose action is an int"), None
    if isinstance(data.get("repr"), str):
        return False, None, str(data["repr"])[:REPR_CHARS]
    raise ProtocolError("a reply with a malformed action")


def float_of(data: object) -> float | None:
    """The value of a ``float`` the agent returned (``None`` for anything else); ``ProtocolError`` for a value
    that is not a finite number (only a forged reply has one)."""
    value = data.get("float") if isinstance(data, dict) else None
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ProtocolError(f"a reply whose float action is not a finite number ({str(value)[:20]!r})")
    return float(value)


def requests(sock: socket.socket, size: int = MAX_MESSAGE) -> Iterator[tuple[dict[str, Any], list[int]]]:
    """The requests on a control channel (referee to warden, warden to template: one JSON object per
    ``SOCK_SEQPACKET`` message, with up to two fds beside it), until it closes; ``ProtocolError`` (the fds
    closed) for one that ``decode`` refuses.  Our own code sent them: their fields are read as it wrote them (a
    ``spawn``'s ``setup`` is a ``HostSetup``), unchecked."""
    while True:
        data, fds, _, _ = socket.recv_fds(sock, size, 2)
        if not data:
            return
        try:
            message = decode(data, size, "a request")
        except ProtocolError:
            for fd in fds:
                os.close(fd)
            raise
        yield message, fds
