"""Promise: the referee trusts no byte an agent's process sends, nor any time it reports.

An agent's code runs in its host and, for a templated file (``match``), in the template that loads it; so
everything those processes send is the attacker's: the channel's replies and ready line, and a template's
answers on its control socket.  Promised here, through ``HostedAgent`` as ``match`` plays it and through
``cxforge match`` in a process of its own (exit 0, no traceback, every game counted against the agent):

* a reply nested 200,000 deep, with a 400-digit number, NaN, Infinity or a float that overflows, in any field,
  is that agent's ``protocol`` error, named in one line;
* move 1 is charged the template's load on the warden's clock: an agent whose load replaces
  ``time.perf_counter``, ``time.monotonic`` and ``time.time``, or forges the template's report of its load,
  or delays its host's ready line, still times out;
* a template whose load forges answers on its control socket (a load of ``-1e400``, deep nesting, a pid of
  1, not an object) is dropped and the file is loaded afresh: the game goes on;
* the referee's handle on the warden and the warden's on a template refuse malformed answers without a
  traceback; a warden that fails twice is the agent's crash, not the run's.
"""

from __future__ import annotations

import os
import socket
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectx_forge.play.records import load_records
from connectx_forge.play.resolve import resolve
from connectx_forge.play.rules import is_timeout
from connectx_forge.sandbox import protocol, template, warden
from connectx_forge.sandbox.limits import SeatBudget
from connectx_forge.sandbox.seat import MARGIN, HostedAgent, Reply
from tests.harness import run_cxforge

ACT, OVERAGE = 1.0, 1.0  # move 1 may take 2 s in all; the clock attacks below spend more than that
OBS = {"board": [0] * 42, "mark": 1, "remainingOverageTime": OVERAGE, "step": 0}
CONFIG = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": ACT}


@pytest.fixture(autouse=True)
def fresh_warden() -> Iterator[None]:
    """Each test with a warden of its own (an attack must not reach the next test's)."""
    warden.reset()
    yield
    warden.reset()


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def first_move(path: Path, template: bool) -> Reply:
    """Move 1 of the agent in ``path``, hosted as ``match`` hosts it (``template``: forked from its template)."""
    host = HostedAgent(resolve(str(path)), 1, SeatBudget.of_board((6, 7, 4), ACT, OVERAGE), template=template)
    try:
        return host.move(OBS, CONFIG, ACT + OVERAGE + MARGIN)
    finally:
        host.close()


def match_counts_against(path: Path, tmp_path: Path, outcomes: set[str]) -> None:
    """``cxforge match`` of the agent against kaggle:random: exit 0, no traceback, and every game ends with the
    agent breaking a rule in one of ``outcomes``."""
    games = tmp_path / "games.jsonl"
    run = run_cxforge(dict(os.environ), "match", str(path), "kaggle:random", "-n", "2", "-w", "1", "--no-progress",
                      "--act-timeout", str(ACT), "--overage", str(OVERAGE), "--save", str(games), timeout=180)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.text
    records = load_records(games)
    assert len(records) == 2, run.text
    for record in records:
        assert record.outcome in outcomes and record.culprit == record.a_seat, (record, run.text)


# -- (a) forged replies on the channel ---------------------------------------------------------------------

# reply 1 as a host would send it, ``@`` where a field's value goes
REPLIES = {"id": '{"id":@,"kind":"ok","action":{"int":3}}', "kind": '{"id":1,"kind":@,"action":{"int":3}}',
           "int": '{"id":1,"kind":"ok","action":{"int":@}}', "detail": '{"id":1,"kind":"error","detail":@}',
           "float": '{"id":1,"kind":"ok","action":{"type":"float","repr":"0.5","float":@}}'}

# name -> (a Python expression for the line written instead of a reply, a word the protocol error names)
FORGED: dict[str, tuple[str, str]] = {
    "nested": ('b"[" * 200_000 + b"]" * 200_000', "nested"),
    "digits": ("""b'{"id":1,"kind":"ok","action":{"int":' + b'9' * 400 + b'}}'""", "digits"),
    **{f"{field}-{token}": (repr(reply.replace("@", token).encode()), word)
       for field, reply in REPLIES.items()
       for token, word in (("NaN", "NaN"), ("-Infinity", "Infinity"), ("1e400", "out of range"))},
}

WRITES_CHANNEL = """
import os, time

def agent(obs, config):
    line = {expression} + b"\\n"
    while line:
        line = line[os.write({fd}, line):]
    time.sleep(30)
"""


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_reply_is_the_agents_protocol_error(name: str, tmp_path: Path) -> None:
    expression, word = FORGED[name]
    path = write(tmp_path, name, WRITES_CHANNEL.format(expression=expression, fd=protocol.CHANNEL_FD))
    reply = first_move(path, template=False)
    assert reply.kind == "protocol", reply
    assert reply.detail is not None and "\n" not in reply.detail and word in reply.detail, reply


@pytest.mark.parametrize("name", ["nested", "digits", "float-1e400"])
def test_match_counts_a_forged_reply_against_the_agent(name: str, tmp_path: Path) -> None:
    path = write(tmp_path, name, WRITES_CHANNEL.format(expression=FORGED[name][0], fd=protocol.CHANNEL_FD))
    match_counts_against(path, tmp_path, {"protocol"})


# -- (b) the clock of a template's load ---------------------------------------------------------------------

LOAD, MOVE = 1.6, 0.6  # within move 1's 2.5 s budget alone, beyond ACT + OVERAGE together
FREEZES_CLOCKS = """
import time

FROZEN = {frozen}
for name in ("perf_counter", "monotonic", "time"):
    setattr(time, name, lambda: FROZEN)
time.sleep({load})

def agent(obs, config):
    time.sleep({move})
    return 3
"""
TAKES_CONTROL = """
import os, socket, stat, time

def control():
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                return int(name)
        except OSError:
            pass

sock = socket.socket(fileno=control())  # its only socket: a template's control socket, or a host's channel
"""
FORGES_REPORT = TAKES_CONTROL + """
if sock.type == socket.SOCK_SEQPACKET:  # the template's control socket: its load is over, it says now
    sock.send(b'{{"load": 0.0}}')
    send = socket.socket.send  # and the template's own report of its load is never sent
    socket.socket.send = lambda self, data, *more: (len(data) if bytes(data).startswith(b'{{"load"')
                                                   else send(self, data, *more))
sock.detach()
time.sleep({load})

def agent(obs, config):
    time.sleep({move})
    return 3
"""
DELAYS_READY = """
import sys, time, types

frame = sys._getframe()
while frame is not None:  # up to the template's code, to the host module its spares run: they seed, then say ready
    host = frame.f_globals.get("host")
    if isinstance(host, types.ModuleType) and hasattr(host, "seed"):
        seed = host.seed
        host.seed = lambda value: (time.sleep(4.5), seed(value))[1]
        break
    frame = frame.f_back

def agent(obs, config):
    time.sleep({move})
    return 3
"""
CLOCKS = {
    "frozen-clock": FREEZES_CLOCKS.format(frozen="time.perf_counter()", load=LOAD, move=MOVE),
    "zero-clock": FREEZES_CLOCKS.format(frozen="0.0", load=LOAD, move=MOVE),
    "forged-report": FORGES_REPORT.format(load=LOAD, move=MOVE),
    "late-ready": DELAYS_READY.format(move=MOVE),
}


@pytest.mark.parametrize("name", sorted(CLOCKS))
def test_move_1_is_charged_the_load_on_the_referees_clock(name: str, tmp_path: Path) -> None:
    reply = first_move(write(tmp_path, name, CLOCKS[name]), template=True)
    assert reply.kind == "timeout" or (reply.kind == "ok" and is_timeout(reply.duration, ACT, OVERAGE)), reply


@pytest.mark.parametrize("name", ["frozen-clock", "forged-report"])
def test_match_counts_a_clock_attack_as_the_agents_timeout(name: str, tmp_path: Path) -> None:
    match_counts_against(write(tmp_path, name, CLOCKS[name]), tmp_path, {"timeout"})


# -- (c) forged answers on a template's control socket ------------------------------------------------------

FORGES_CONTROL = TAKES_CONTROL + """
if sock.type == socket.SOCK_SEQPACKET:  # the template's control socket (a fresh host's channel is a stream)
    for message, fd in {messages!r}:
        socket.send_fds(sock, [message], [] if fd is None else [fd])
    send = socket.socket.send  # the template's own report of its load is never sent: the forged one stands
    socket.socket.send = lambda self, data, *more: (len(data) if bytes(data).startswith(b'{{"load"')
                                                   else send(self, data, *more))
sock.detach()

def agent(obs, config):
    raise RuntimeError("played from a fresh load")
"""
LOADED = (b'{"load": 0.1}', None)  # a well-formed first answer: what follows is read as the first spare's
CONTROL: dict[str, list[tuple[bytes, int | None]]] = {
    "load-overflow": [(b'{"load": -1e400}', None)],
    "load-minus-infinity": [(b'{"load": -Infinity}', None)],
    "load-digits": [(b'{"load": ' + b"9" * 400 + b"}", None)],
    "load-string": [(b'{"load": "x"}', None)],
    "not-an-object": [(b"[1, 2]", None)],
    "nested": [(b"[" * 60_000, None)],
    "spare-nested": [LOADED, (b'{"pid": ' + b"[" * 60_000, 0)],
    "spare-pid-1": [LOADED, (b'{"pid": 1}', 0)],
    "spare-pid-negative": [LOADED, (b'{"pid": -5}', 0)],
    "spare-pid-overflow": [LOADED, (b'{"pid": 1e400}', 0)],
    "spare-status": [LOADED, (b'{"status": "x"}', 0)],
}


@pytest.mark.parametrize("name", sorted(CONTROL))
def test_a_template_that_forges_its_answers_is_dropped(name: str, tmp_path: Path) -> None:
    reply = first_move(write(tmp_path, name, FORGES_CONTROL.format(messages=CONTROL[name])), template=True)
    assert reply.kind == "error" and "played from a fresh load" in (reply.detail or ""), reply


@pytest.mark.parametrize("name", ["load-minus-infinity", "spare-nested", "spare-pid-overflow"])
def test_match_goes_on_past_a_forged_template_answer(name: str, tmp_path: Path) -> None:
    path = write(tmp_path, name, FORGES_CONTROL.format(messages=CONTROL[name]))
    match_counts_against(path, tmp_path, {"error"})


# -- (d) the answers of a template and of the warden, as their readers check them ---------------------------

@pytest.mark.parametrize("answer", [b'{"status": "x"}', b'{"status": 70000}', b'{"status": -1}', b'{"status": NaN}',
                                    b"[" * 60_000, b"[]", b"\xff"])
def test_a_templates_malformed_status_drops_it(answer: bytes) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    handle = template.Template(1 << 21, ours, 0.0)  # never closed: no pid is killed
    try:
        theirs.send(answer)
        assert handle.end(123456, 1.0) is None and handle.gone
    finally:
        ours.close()
        theirs.close()


def fake_warden(*answers: bytes) -> tuple[warden.Warden, socket.socket]:
    """A referee's handle on a warden whose ``answers`` wait on its socket (and the warden's end of it)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    handle = object.__new__(warden.Warden)
    handle.pid, handle.sock, handle.owner, handle.root = 1 << 21, ours, os.getpid(), None
    handle.templates, handle._lock = {}, threading.Lock()
    for answer in answers:
        theirs.send(answer)
    return handle, theirs


@pytest.mark.parametrize("answer", [b'{"pid": -1}', b'{"pid": 1}', b'{"pid": 2097152}', b'{"pid": "7"}',
                                    b'{"pid": true}', b'{"pid": 7, "load": -1}', b'{"pid": 7, "load": 1e400}',
                                    b'{"pid": 7, "slowed": 3}', b"[" * 60_000, b'"x"', b'{"pid": 7, "load": NaN}'])
def test_a_wardens_malformed_spawn_answer_is_refused(answer: bytes) -> None:
    handle, theirs = fake_warden(answer)
    read, written = os.pipe()
    try:
        with pytest.raises(warden.WardenGone):
            handle.spawn(read, written, {})
    finally:
        for fd in (read, written):
            os.close(fd)
        handle.sock.close()
        theirs.close()


def test_a_wardens_answers_are_checked_field_by_field() -> None:
    handle, theirs = fake_warden(b'{"pid": 4242, "load": 0.5, "slowed": "cgroup"}', b'{"status": 9}',
                                 b'{"status": 9, "oom": "yes"}', b'{"status": 9, "oom": true}', b'{"status": "x"}')
    read, written = os.pipe()
    try:
        assert handle.spawn(read, written, {}) == {"pid": 4242, "load": 0.5, "slowed": "cgroup", "fresh": False}
        assert handle.end(4242, 1.0) == (9, False)
        assert handle.end(4242, 1.0) == (9, False)  # only ``true`` says the memory limit killed
        assert handle.end(4242, 1.0) == (9, True)
        with pytest.raises(warden.WardenGone):
            handle.end(4242, 1.0)
    finally:
        for fd in (read, written):
            os.close(fd)
        handle.sock.close()
        theirs.close()


def test_a_warden_that_fails_twice_is_the_agents_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    handle, theirs = fake_warden(b'{"pid": [[[]]]}', b'{"pid": 1e400}')
    monkeypatch.setattr(warden, "get", lambda: handle)
    monkeypatch.setattr(warden, "reset", lambda: None)
    host = HostedAgent(resolve("kaggle:random"), 1, SeatBudget.of_board((6, 7, 4), ACT, OVERAGE))
    try:
        reply = host.move(OBS, CONFIG, ACT + OVERAGE + MARGIN)
        assert reply.kind == "crash" and "could not be started" in (reply.detail or ""), reply
    finally:
        host.close()
        handle.sock.close()
        theirs.close()


# -- the decoder itself -------------------------------------------------------------------------------------

@given(st.binary(max_size=200))
def test_decode_gives_an_object_or_a_protocol_error(data: bytes) -> None:
    try:
        assert isinstance(protocol.decode(data), dict)
    except protocol.ProtocolError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize(("depth", "ok"), [(16, True), (17, False)])  # protocol.MAX_DEPTH
def test_nesting_is_bounded_outside_strings_only(depth: int, ok: bool) -> None:
    nested = '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + ', "b": "[[[[[[[[[[[[[[[[[[[[\\"{{{{{{{{{{{{"}'
    if ok:
        assert protocol.decode(nested.encode())["b"].startswith("[[[")
    else:
        with pytest.raises(protocol.ProtocolError, match="nested deeper"):
            protocol.decode(nested.encode())


def test_huge_ints_cross_as_invalid_actions_not_as_numbers() -> None:
    assert protocol.encode_action(10 ** 400)["type"] == "int"
    assert protocol.decode(protocol.encode({"action": protocol.encode_action(-(1 << 63) + 1)}))["action"] == {
        "int": -(1 << 63) + 1}
