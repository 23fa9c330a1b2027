"""The warden: a small fork server, one per referee thread, that starts agent hosts and kills them all.

Why a warden and not ``fork`` in the referee: an agent may start processes of
its own, and a referee killed with ``kill -9`` can clean up nothing.  So the
referee forks the warden once (it inherits numpy and kaggle_environments
already imported: a host costs one ``fork``, not one Python start) and asks it
over a ``SOCK_SEQPACKET`` socketpair to

* ``spawn``: fork a host (``host.run``) with the channel and log fds passed by
  ``SCM_RIGHTS``; it answers the host's pid, which is also its process group;
* ``end``: give the host ``grace`` seconds to exit on its own (to learn how it
  died), then ``killpg(pid, SIGKILL)`` its whole group and reap it; answers its
  wait status (without grace, ``quiet``, for all of a game's hosts at once: no
  answer, so the referee need not wait, and all are killed before any is waited for).

The warden dies with its referee: ``PR_SET_PDEATHSIG`` sends it ``SIGTERM``
when the referee's thread dies (even by ``kill -9``), and the channel's EOF
tells it when the referee exits normally.  Either way it kills every host's
group and, being a child subreaper (``PR_SET_CHILD_SUBREAPER``), every
orphaned descendant that escaped its group (``setsid`` and double fork), then
exits.  Hosts get ``SIGKILL`` as their own parent-death signal.  What is not
covered: a descendant that escapes both its group and the subreaper (none can
on Linux without privileges), and processes started through other services.
A jailed warden's shell gets that signal instead and kills the whole jail at
once (``jail.SHELL``), whatever the warden is doing; the referee waits for the
warden with deadlines only (``ANSWER_SECONDS``, ``CLOSE_SECONDS``).

This module is the referee's side; what runs in the warden is ``warden_process.py``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
import threading
import time
import weakref
from typing import NoReturn, NotRequired, TypedDict

from connectx_forge import trees
from connectx_forge.sandbox import cgroup, jail, limits, protocol, syscalls, warden_process
from connectx_forge.sandbox.protocol import HostSetup

_local = threading.local()
# standard modules that submissions (and the bundler's loader) import: imported once, shared by every host
PRELOAD = ("base64", "binascii", "bisect", "collections", "copy", "dataclasses", "enum", "functools", "hashlib",
           "heapq", "inspect", "io", "itertools", "json", "math", "operator", "pickle", "re", "statistics",
           "struct", "time", "types", "typing", "zlib", "lzma", "gzip", "numpy.random")


# the longest the referee waits for the warden beyond a template's load or an end's grace: the warden's own waits
# on agent code (template.ANSWER_SECONDS, twice: a spare replaced once) and its cleanup of a namespace
ANSWER_SECONDS = 30.0
CLOSE_SECONDS = 3.0  # the longest ``close`` waits for a warden to end by itself, then for its jail's cleanup


class WardenGone(RuntimeError):
    """The warden did not answer (it died): a new one is started for the next game."""


class Warden:
    """The referee's handle on its warden process."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent = os.getpid()
        self.jailed = jail.status()[0]
        self.root: str | None = None  # where game folders go: the jail's one writable folder (None: anywhere)
        self.groups = cgroup.make()  # where its hosts' cgroups go, where this machine allows them
        if self.jailed:  # a fresh Python in the jail (jail.py), serving the inherited channel
            import subprocess

            self.root = tempfile.mkdtemp(prefix="cxforge-jail-")
            env = {"PATH": jail.PATH}
            # a process group of its own: Ctrl-C (SIGINT to the terminal's group) must not kill the jail's shell
            # and bubblewrap before the warden has emptied its folder and the shell removed it (the channel's
            # end tells the warden the referee is gone)
            proc = subprocess.Popen(jail.command(theirs.fileno(), self.root, self.groups),
                                    pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, process_group=0)
            pid = proc.pid
            proc.returncode = 0  # reaped by close(), not by Popen's finaliser
        else:
            preload()
            pid = os.fork()
            if pid == 0:  # the warden
                ours.close()
                warden_process.serve(theirs, parent, None, self.groups)
        theirs.close()
        self.pid, self.sock, self.owner = pid, ours, parent
        # each file's template folder and staged path, by the key ``seat`` gives it (None: loaded afresh)
        self.templates: dict[str, tuple[str, str] | None] = {}
        self._lock = threading.Lock()
        # closed once: by close(), when the object goes (its thread ended), or at the interpreter's exit
        self._finalizer = weakref.finalize(self, shut, ours, pid, parent, self.templates, self.root, self.groups)

    def _ask(self, message: dict[str, object], seconds: float, fds: list[int] | None = None) -> dict[str, object]:
        """Send one request and read its answer within ``seconds`` (``WardenGone`` past them: the warden, beside
        the agents in the jail, is never waited on without a deadline)."""
        data = json.dumps(message).encode()
        with self._lock:
            try:
                self.sock.settimeout(seconds)
                if fds:
                    socket.send_fds(self.sock, [data], fds)
                else:
                    self.sock.send(data)
                answer = self.sock.recv(protocol.MAX_MESSAGE)
            except OSError as exc:
                raise WardenGone(str(exc)) from None
        if not answer:
            raise WardenGone("the warden closed its channel")
        try:  # our code, but beside the agents in the jail: what it says is checked as theirs is
            return protocol.decode(answer, protocol.MAX_MESSAGE, "an answer from the warden")
        except protocol.ProtocolError as exc:
            raise WardenGone(str(exc)) from None

    def spawn(self, channel: int, log: int, setup: HostSetup) -> Spawned:
        """Start a host: ``pid`` (also its process group), and for a templated file ``load`` (the seconds the
        template's load took, as the warden measured it) or ``fresh`` (it cannot have one: load it afresh in
        every game); ``WardenGone`` for an answer that is not one the warden gives."""
        shared = setup.get("template")
        budget = float(shared["budget"]) if shared is not None else 0.0  # a template's load is waited for
        answer = self._ask({"op": "spawn", "setup": setup}, budget + ANSWER_SECONDS, [channel, log])
        try:
            return spawned(answer, {self.pid, os.getpid()})
        except protocol.ProtocolError as exc:
            raise WardenGone(f"{exc} from the warden") from None

    def end(self, pid: int, grace: float = 0.0) -> tuple[int | None, bool]:
        """Kill host ``pid``'s group (after ``grace`` s to exit by itself): its wait status, and whether the
        kernel killed a process of its tree for the tree's memory limit meanwhile (``cgroup.oom_kills``).
        Without ``grace`` neither is asked for, nor waited for: the warden ends the host while the referee
        goes on."""
        if grace <= 0:
            self.end_all([pid])
            return None, False
        answer = self._ask({"op": "end", "pid": pid, "grace": grace}, grace + ANSWER_SECONDS)
        status = answer.get("status")
        try:
            return (None if status is None else protocol.integer(status, 0, protocol.MAX_STATUS, "a status"),
                    answer.get("oom") is True)
        except protocol.ProtocolError as exc:
            raise WardenGone(f"{exc} from the warden") from None

    def end_all(self, pids: list[int]) -> None:
        """Kill hosts ``pids`` (one game's) in one request, which the warden does not answer and the referee does
        not wait for: it kills every one before it waits for any to be gone, so that their ends overlap."""
        with self._lock:
            try:
                self.sock.settimeout(ANSWER_SECONDS)
                self.sock.send(json.dumps({"op": "end", "pids": pids, "quiet": True}).encode())
            except OSError as exc:
                raise WardenGone(str(exc)) from None

    def close(self) -> None:
        """End the warden (the channel's end tells it to), reap it, and remove its folders and cgroups."""
        self._finalizer()


def shut(sock: socket.socket, pid: int, owner: int, templates: dict[str, tuple[str, str] | None],
         root: str | None, groups: tuple[cgroup.Group, ...]) -> None:
    """A warden's close (``Warden.close``), also run when its thread's handle is dropped or at exit; in a
    process forked from the referee it only drops that process's copy of the channel."""
    sock.close()
    if os.getpid() != owner:
        return
    _reap(pid)
    for staged in templates.values():
        if staged is not None:
            trees.remove(staged[0])
    if root:  # the jail's folder, when its shell was killed before it could remove it
        trees.remove(root)
    for group in groups:
        cgroup.remove(group)


def _reap(pid: int) -> None:
    """Reap the warden (a jailed one: its jail's shell) within ``CLOSE_SECONDS``; past them, ``SIGTERM`` (a jail's
    shell then kills the jail and removes its folders), and past them again ``SIGKILL``."""
    for sig in (signal.SIGTERM, signal.SIGKILL, None):
        deadline = time.monotonic() + CLOSE_SECONDS
        while True:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] or sig is None and time.monotonic() >= deadline:
                    return
            except ChildProcessError:
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if sig is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


class Spawned(TypedDict):
    """The warden's answer to ``spawn``, checked (``spawned``)."""

    pid: int  # the host's (also its process group's)
    fresh: bool  # a templated file that cannot have a template: loaded afresh in every game
    load: NotRequired[float]  # a templated host's: the seconds its template's load took (charged to move 1)
    slowed: NotRequired[str]  # how --slowdown holds it (``throttle.method``)


def spawned(answer: dict[str, object], taken: set[int]) -> Spawned:
    """The warden's answer to ``spawn``, checked field by field (``ProtocolError`` naming what is wrong): a
    ``pid`` that is a possible pid, not one of ``taken`` (the warden's, the referee's); ``load`` seconds; a
    ``slowed`` line; a ``fresh`` flag."""
    pid = protocol.integer(answer.get("pid"), 2, protocol.MAX_PID, "a host's pid")
    if pid in taken:
        raise protocol.ProtocolError(f"a host's pid {pid} that is not a host's")
    checked: Spawned = {"pid": pid, "fresh": answer.get("fresh") is True}
    if "load" in answer:
        checked["load"] = protocol.seconds(answer["load"], "a load")
    slowed = answer.get("slowed")
    if slowed is not None:
        if not isinstance(slowed, str):
            raise protocol.ProtocolError("a slowdown that is not a line")
        checked["slowed"] = slowed[:200]
    return checked


def get() -> Warden:
    """This thread's warden, started on first use (and again after a fork or its death)."""
    w: Warden | None = getattr(_local, "warden", None)
    if w is None or w.owner != os.getpid():
        w = _local.warden = Warden()
    return w


def reset() -> None:
    """Forget a warden that stopped answering (it is closed; the next ``get`` starts another)."""
    w: Warden | None = getattr(_local, "warden", None)
    _local.warden = None
    if w is not None and w.owner == os.getpid():
        try:
            os.kill(w.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        w.close()


def preload() -> None:
    """What every host needs imported before the fork (so a host costs a fork, not imports)."""
    import importlib

    import numpy  # noqa: F401

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass

    from connectx_forge import kaggle_env  # kaggle_environments: preloaded here, once, for every host

    kaggle_env.load()
    import kaggle_environments.agent  # noqa: F401
    import kaggle_environments.utils  # noqa: F401

    limits.prctl(0, 0)  # finds libc now, once: finding it runs programs
    syscalls.program(), syscalls.program(False)  # compiled once: every host loads one (syscalls.sysv_capped)


def main(argv: list[str]) -> NoReturn:
    """``python -m connectx_forge.sandbox.warden CHANNEL_FD ROOT GROUPS``: a warden started in the jail
    (GROUPS: ``cgroup.to_arg``)."""
    sock = socket.socket(fileno=int(argv[0]))
    # what the referee holds before it forks a warden: the shipped agents first (kaggle_environments puts
    # folders of other games on sys.path, one of which has an agents.py), then the rest
    import connectx_forge.players.player  # noqa: F401  # before kaggle_environments: see above

    preload()
    warden_process.serve(sock, 0, argv[1], cgroup.from_arg(argv[2]))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
