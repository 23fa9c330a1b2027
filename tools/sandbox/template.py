"""The template: a submission file loaded once per worker and forked for every game it plays.

Loading the file is most of what an isolated game costs, and Kaggle loads it
afresh in every episode.  So for ``match``, ``tournament`` and ``sprt`` the warden
forks a template per file (and per limits): a process that prepares exactly
as a host does (``host.settle``: folder, environment, limits, the project out
of the import system), loads the file as Kaggle's loader does and never calls
its agent, then forks a host for every game.  Each game so starts from the
state right after the load, as on Kaggle, and the referee charges the load's
measured time to move 1.  ``check`` keeps loading afresh in every game.

A template is used only where a fork copies the load faithfully: after the
load it must have one thread, no child process and no open file beyond its
own (a thread would be missing in the copies; a process or a file offset would
be shared by all of them).  Otherwise, or when the load fails or takes longer
than move 1 may, the warden answers ``fresh`` and that file is loaded afresh
in every game, which reports the failure as before.  What stays different
from fresh loads: a worker's games of one file share its folder, randomness
drawn during the load (a generator seeded from the system at import) is the
same in every game, and the load's prints are copied into each game's log.

Hosts are the template's children, so it ends them (``end``, ``reap.py``) and
reads their statuses; they die with it, and it dies with the warden.  It forks
each host ahead of its game (a spare, named ``cxforge-spare`` until it is handed
its game's fds), so that the fork is not on a game's critical path.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

from connectx_forge.tools.sandbox import host, limits, namespace, protocol, reap

NAME = "cxforge-tmpl"  # what ``ps`` shows for a template
SPARE = "cxforge-spare"  # and for a host forked ahead, until it has its game
ANSWER_SECONDS = 10.0  # the longest a template may take to answer (beyond an end's grace) before it is dropped


class Template:
    """The warden's handle on one template process."""

    def __init__(self, pid: int, sock: socket.socket, load: float, init: int = 0) -> None:
        self.pid, self.sock, self.load, self.init = pid, sock, load, init  # init: its namespace's (0: none)
        self.gone = False  # it died or stopped answering: the warden drops it
        self.inner: dict[int, int] = {}  # each running host's pid as the template sees it, by the warden's

    def ask(self, message: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any] | None:
        """Send one request; its answer, or None when the template is gone (or stopped answering: the warden
        must never hang on one)."""
        try:
            self.sock.settimeout(ANSWER_SECONDS + float(message.get("grace", 0)))
            socket.send_fds(self.sock, [json.dumps(message).encode()], fds or [])
            data = self.sock.recv(protocol.MAX_MESSAGE)
        except OSError:  # socket.timeout included
            data = b""
        if not data:
            self.gone = True
            return None
        answer: dict[str, Any] = json.loads(data)
        return answer

    def fork(self, game: dict[str, Any], fds: list[int]) -> int | None:
        """A host for one game (``seed``) on the channel and log ``fds``: its pid as the warden sees
        it, None on failure."""
        answer = self.ask({"op": "fork", "game": game}, fds)
        if answer is None:
            return None
        inner = int(answer["pid"])  # as the template sees it: in its own namespace, if it has one
        pid = namespace.outer_pid(self.pid, inner) if self.init else inner
        if pid is None:
            self.gone = True
            return None
        self.inner[pid] = inner
        return pid

    def end(self, pid: int, grace: float) -> int | None:
        """End host ``pid`` (``reap.end``): its wait status, None when unknown (without ``grace`` it is not
        asked for: the template ends the host while the warden goes on)."""
        inner = self.inner.pop(pid, pid)
        if grace <= 0:
            try:
                self.sock.send(json.dumps({"op": "end", "pid": inner, "quiet": True}).encode())
            except OSError:
                self.gone = True
            return None
        answer = self.ask({"op": "end", "pid": inner, "grace": grace})
        status = None if answer is None else answer.get("status")
        return None if status is None else int(status)

    def close(self, hosts: reap.Hosts | None = None) -> None:
        """Kill the template (and so any host it still runs) and reap it (and ``hosts``' statuses meanwhile)."""
        reap.killpg(self.pid)
        self.sock.close()
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        namespace.end_init(self.init, hosts)


def start(setup: dict[str, Any], budget: float, warden: reap.Hosts,
          place: namespace.Place | None = None) -> Template | str:
    """Fork a template for ``setup`` (into ``place``: namespaces of its own, where the jail allows) and wait at
    most ``budget`` seconds for its load: the template, or why the file must be loaded afresh in every game.
    ``warden``: the warden's hosts (its throttle slows the load down, --slowdown)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    place = place or namespace.Place()
    me = os.getpid()
    gc.freeze()
    try:
        pid, init = place.fork()
    except OSError as exc:
        ours.close()
        theirs.close()
        return f"its namespaces could not be made ({exc})"
    if pid == 0:
        ours.close()
        _run(theirs, dict(setup, alone=place.alone), 0 if place.alone else me)
    theirs.close()
    warden.throttle.add(pid, float(setup["limits"].get("slowdown", 1.0)))
    ours.settimeout(budget)
    try:
        data = ours.recv(protocol.MAX_MESSAGE)
    except OSError:  # socket.timeout included
        data = b""
    ours.settimeout(None)
    warden.throttle.remove(pid)
    answer = json.loads(data) if data else {"why": f"its load took more than {budget:g} s or ended the process"}
    if "load" not in answer:
        Template(pid, ours, 0.0, init).close(warden)
        return str(answer.get("why", "no answer"))
    return Template(pid, ours, float(answer["load"]), init)


# -- the template process ----------------------------------------------------------------------
def _run(sock: socket.socket, setup: dict[str, Any], warden: int) -> NoReturn:
    try:
        host.detach(warden)
        limits.set_name(NAME)
        control = _take_fds(sock)
        host.settle(setup)
        log = sys.stdout  # the capped log, whatever the load puts in its place
        started = time.perf_counter()
        try:
            loaded = host.load(setup)
        except BaseException as exc:
            _say(control, {"why": f"its load failed ({type(exc).__name__})"})
            os._exit(0)
        seconds = time.perf_counter() - started
        output = _output()
        why = unforkable(control.fileno())
        if why:
            _say(control, {"why": why})
            os._exit(0)
        _say(control, {"load": seconds})
        gc.freeze()  # the loaded state: the hosts' collectors never walk it, so its pages stay shared
        _serve(control, setup, loaded, log, output)
    except BaseException:
        pass
    os._exit(0)


def _serve(control: socket.socket, setup: dict[str, Any], loaded: tuple[Callable[..., Any], int], log: Any,
           output: bytes) -> None:
    """Answer ``fork`` and ``end`` until the warden's channel closes.  A host is forked ahead of its game (a
    spare, waiting for the game's fds), so that a game's start costs no fork; hosts killed by ``end`` are
    reaped as they go (``SIGCHLD``), and before the next game starts at the latest."""
    hosts = reap.Hosts()
    homes: dict[int, str] = {}  # each host's HOME, a new folder: alone, in this namespace's own /tmp
    ended: list[int] = []  # hosts killed but maybe not yet reaped
    signal.signal(signal.SIGCHLD, lambda *_: _reap(ended, wait=False))
    spare: Spare | None = None
    for message, fds in protocol.requests(control):
        if message["op"] == "fork":
            _reap(ended)  # a new game's host never sees the last one, even as a zombie
            pid = _hand_over(spare, message["game"], fds)
            if pid is None:
                spare = _spare(setup, loaded, log, output)
                pid = _hand_over(spare, message["game"], fds)
            for fd in fds:
                os.close(fd)
            if pid is None or spare is None:
                raise OSError("no host could be forked")
            hosts.running.add(pid)
            homes[pid] = spare.home
            control.send(json.dumps({"pid": pid}).encode())
            spare = _spare(setup, loaded, log, output)  # the next game's, while this one plays
            continue
        pid = int(message["pid"])
        answer = {"status": reap.end(hosts, pid, float(message.get("grace", 0)))}
        shutil.rmtree(homes.pop(pid, ""), ignore_errors=True)
        ended.append(pid)
        if not message.get("quiet"):  # a quiet end is not answered
            control.send(json.dumps(answer).encode())


def _reap(pids: list[int], wait: bool = True) -> None:
    """Reap these killed hosts (``reap.end`` without grace does not); ``wait``: until they are gone."""
    for pid in list(pids):
        try:
            if os.waitpid(pid, 0 if wait else os.WNOHANG)[0] == 0:
                continue
        except ChildProcessError:
            pass
        if pid in pids:
            pids.remove(pid)


def _say(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _take_fds(sock: socket.socket) -> socket.socket:
    """The control socket kept, fds 1 and 2 a file that catches the load's output, 0 ``/dev/null``; every
    other fd closed."""
    keep = sock.fileno()
    out = os.memfd_create("cxforge-load")
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    return sock


def _output() -> bytes:
    """What the load printed (already cut at the log's cap); fds 1 and 2 then point at ``/dev/null``."""
    os.lseek(2, 0, os.SEEK_SET)
    parts = []
    while chunk := os.read(2, 1 << 16):
        parts.append(chunk)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    return b"".join(parts)


def unforkable(control: int) -> str:
    """Why a fork of this process would not copy its load faithfully ("" when it would)."""
    threads = len(os.listdir("/proc/self/task"))
    if threads > 1:
        return f"its load started {threads - 1} thread(s)"
    if reap.children():
        return "its load started a process"
    opened = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != control:
            try:
                opened.append(os.readlink(f"/proc/self/fd/{name}"))
            except OSError:
                pass  # the listing's own fd, closed by now
    if opened:
        return f"its load left {len(opened)} file(s) open"
    return ""


class Spare(NamedTuple):
    """A host forked ahead of its game: its pid, the socket that will hand it the game, its HOME."""

    pid: int
    sock: socket.socket
    home: str


def _spare(setup: dict[str, Any], loaded: tuple[Callable[..., Any], int], log: Any, output: bytes) -> Spare:
    """Fork a host ahead of its game, with a new empty folder for its HOME (alone: in this namespace's own
    ``/tmp``, which the referee's folders are not shown in; else beside the template's)."""
    home = tempfile.mkdtemp(prefix="cxforge-home-",
                            dir="/tmp" if setup.get("alone") else os.path.dirname(setup["home"]))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        limits.set_name(SPARE)  # at once: a host listing processes never takes a spare for a playing host
        ours.close()
        _host(theirs, setup, loaded, log, output, me)
    theirs.close()
    return Spare(pid, ours, home)


def _hand_over(spare: Spare | None, game: dict[str, Any], fds: list[int]) -> int | None:
    """Give a spare its game (``seed``) and the channel and log ``fds``: its pid, None when it is gone (the
    caller closes ``fds``)."""
    if spare is None:
        return None
    try:
        socket.send_fds(spare.sock, [json.dumps(dict(game, home=spare.home)).encode()], fds)
    except OSError:
        reap.killpg(spare.pid)
        shutil.rmtree(spare.home, ignore_errors=True)
        return None
    finally:
        spare.sock.close()
    return spare.pid


def _host(sock: socket.socket, setup: dict[str, Any], loaded: tuple[Callable[..., Any], int], log: Any,
          output: bytes, template: int) -> NoReturn:
    """A host forked from the template: it waits on ``sock`` for its game, then takes the game's channel, log,
    home and seed and serves (its rlimits are the template's, its CPU time counted from zero)."""
    def life() -> None:
        host.detach(template, SPARE)
        keep = sock.fileno()
        os.closerange(3, keep)  # none of the template's fds: the warden must see the template's end
        os.closerange(keep + 1, 1 << 16)
        host.rehearse()
        data, fds, _, _ = socket.recv_fds(sock, protocol.MAX_MESSAGE, 2)
        if not data or len(fds) != 2:  # the template ended before this spare had a game
            os._exit(0)
        game = json.loads(data)
        limits.set_name(host.NAME)
        channel = host.take_fds(fds[0], fds[1])
        os.environ["HOME"] = game["home"]
        if isinstance(log, host.CappedLog):  # the log's cap is per game; the load's output counts against it
            log.left = int(setup["limits"]["log_chars"])
            log.write(output.decode("utf-8", "replace"))
        host.seed(int(game["seed"]))
        host.serve(channel, setup, loaded)

    host.live(life)
