"""The agent host: the child process that runs one untrusted agent for one game and answers move requests.

The warden (``warden.py``) forks it per game and calls ``run`` in the child,
which never returns.  Before any agent code runs, ``run``

* makes the child its own session and process group (``setsid``), set to be
  killed (``SIGKILL``) when the warden dies;
* moves the private channel to fd ``protocol.CHANNEL_FD``, points fds 1 and 2 at
  the game's output pipe (the referee reads it: ``output.py``) and 0 at
  ``/dev/null``, and closes every other fd;
* enters the empty game folder, drops every credential from the environment,
  sets ``HOME`` to an empty folder, applies the rlimits (``limits.py``);
* for a submission file, removes the project from the import system, so a file
  that imports ``agents.*`` fails here as it does on Kaggle;
* seeds ``random`` and ``numpy.random`` with its seat's seed (derived from the
  game's: ``tools/connectx_forge/play/seat_random.py``); they are the host's own, as an agent's
  are in its own container on Kaggle: no random state crosses the channel.

Then it serves requests (``protocol.py``).  A file is loaded as
kaggle_environments loads it (``get_last_callable``: exec in an empty globals
dict, the last callable is the agent, ``config.__raw_path__`` set) inside the
FIRST request, so the load counts against move 1 (a host forked from a template,
``template.py``, starts loaded: the referee charges the template's load to move 1).  Whatever the agent raises is
caught (``BaseException``, so ``sys.exit`` is an error of type SystemExit) and
reported; its prints go to the log, capped at ``Limits.log_chars`` characters.
"""

from __future__ import annotations

import io
import os
import random
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import NoReturn, TypedDict

from connectx_forge.sandbox import limits as limits_mod
from connectx_forge.sandbox import protocol, syscalls
from connectx_forge.sandbox.protocol import HostSetup

Loaded = tuple[Callable[..., object], int]  # an agent, and how many of ``(obs, config)`` it takes (``load``)
_HIDDEN: list[object] = []
NAME = "cxforge-host"  # what ``ps`` shows for a host (until its agent renames it)


def is_editable_hook(obj: object) -> bool:
    """True for the finders and path hooks that setuptools' editable installs add."""
    owner = obj if isinstance(obj, type) else type(obj)
    module = getattr(obj, "__module__", None) or getattr(owner, "__module__", "") or ""
    return module.startswith("__editable__")


class CappedLog(io.TextIOBase):
    """The agent's ``sys.stdout`` / ``sys.stderr``: written through to fd 2 until ``cap`` characters."""

    def __init__(self, cap: int) -> None:
        self.left = cap

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        if self.left > 0 and s:
            part = s[:self.left]
            self.left -= len(part)
            try:
                os.write(2, part.encode("utf-8", "replace"))
            except OSError:
                pass
        return len(s)


def _isolate(modules: list[str], path: list[str], roots: list[str]) -> None:
    """Remove the project from the import system: its modules, its folders on ``sys.path`` (the warden
    worked out ``path``, what is left; ``roots`` are the project's folders) and the editable install's hooks.
    What is removed is kept alive in ``_HIDDEN``: freeing it would cost milliseconds of copied pages."""
    _HIDDEN.extend(sys.modules.pop(name, None) for name in modules)
    sys.path[:] = path
    sys.meta_path[:] = [f for f in sys.meta_path if not is_editable_hook(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not is_editable_hook(h)]
    cache = sys.path_importer_cache
    env = os.path.realpath(sys.prefix) + os.sep
    stale = [k for k in cache if any(k.startswith(r) for r in roots) and not k.startswith(env) or k == ""]
    _HIDDEN.extend(cache.pop(k) for k in stale)


def take_fds(channel: int, log: int) -> socket.socket:
    """The channel at ``protocol.CHANNEL_FD`` (returned as a socket), fds 1 and 2 the log, 0 ``/dev/null``;
    every other fd closed."""
    os.dup2(channel, protocol.CHANNEL_FD)
    os.dup2(log, 1)
    os.dup2(log, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.closerange(3, protocol.CHANNEL_FD)
    os.closerange(protocol.CHANNEL_FD + 1, 1 << 16)
    return socket.socket(fileno=protocol.CHANNEL_FD)


def detach(parent: int, name: str = NAME, uid: int | None = None) -> None:
    """Its own session and process group, no capabilities (root's included), ``uid`` (a uid of its own, where
    the warden may give one), the syscall filter (``syscalls.py``), killed when ``parent`` dies (0: a host
    alone in its namespaces, whose first parent exits at once; the jail's end kills it), default signal
    handlers.  A spare, forked by its template, which already holds the filter (no ``setsid``), takes a group of
    its own in its template's session."""
    if syscalls.loaded():
        os.setpgid(0, 0)
    else:
        os.setsid()
    limits_mod.set_name(name)
    limits_mod.drop_capabilities(uid)
    syscalls.load(syscalls.program(syscalls.sysv_capped()))
    if parent:
        limits_mod.die_with_parent(signal.SIGKILL, parent)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def settle(setup: HostSetup) -> None:
    """The world the agent code runs in: its folder, a clean environment, the capped log, the limits, the
    project out of the import system, the seeds."""
    os.chdir(setup["cwd"])
    limits_mod.clean_environment(setup["home"])
    sys.stdout = CappedLog(int(setup["limits"]["log_chars"]))
    sys.stderr = sys.stdout
    limits_mod.apply(limits_mod.Limits(**setup["limits"]), int(setup["cpu_seconds"]), int(setup["nproc"]))
    if setup["kind"] == "file":
        _isolate(setup["project_modules"], setup["project_path"], setup["project_roots"])
    seed(int(setup["seed"]))


def seed(value: int) -> None:
    """Seed ``random`` and ``numpy.random`` with the seat's seed (``seat_random.seat_seed``)."""
    import numpy as np

    random.seed(value)
    np.random.seed(value)


def load(setup: HostSetup) -> Loaded:
    """The agent and how many of ``(obs, config)`` it takes: the file as Kaggle loads it, or a named agent."""
    if setup["kind"] == "file":
        from kaggle_environments.agent import get_last_callable
        from kaggle_environments.utils import read_file

        path = setup["path"]
        agent = get_last_callable(read_file(path, path), path=path)
    else:
        from connectx_forge.players.player import named_agent  # the registry: only a named player's host loads it

        kind, name = setup["named"]  # a named player's: both set (str() as Player.new_agent reads them)
        agent = named_agent(str(kind), str(name))
    code = getattr(agent, "__code__", None)
    argc = getattr(code, "co_argcount", None)
    return agent, 2 if argc is None else int(argc)


TRACEBACK_CHARS = 10_000  # a traceback goes to the log past the agent's own cap, its last this many characters


class Failure(TypedDict):
    """A reply's failure: its ``kind`` (``load``, ``error``, ``memory``), the exception's type and one line."""

    kind: str
    type: str
    detail: str


def _failure(kind: str, exc: BaseException) -> Failure:
    where = ""
    try:  # straight to the log, not through the capped sys.stderr: an agent that printed a lot keeps it
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # the agent's frames only
        text = "".join(traceback.format_exception(type(exc), exc, tb))[-TRACEBACK_CHARS:]
        os.write(2, text.encode("utf-8", "replace"))
        where = error_place(exc)
    except BaseException:
        pass
    try:
        detail = (f"{type(exc).__name__}: {exc}".strip() + where).splitlines()
    except BaseException:
        detail = [type(exc).__name__]
    if isinstance(exc, MemoryError):
        kind = "memory"
    return {"kind": kind, "type": type(exc).__name__, "detail": (detail[-1] if detail else "")[:300]}


def error_place(exc: BaseException) -> str:
    """`` (file:line)`` of the innermost frame an exception passed through (a bundle's frames name their
    source modules: ``mybot/tactics.py``), or ``""``."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    if not frames:
        return ""
    last = frames[-1]
    return f" ({last.filename}:{last.lineno})"


def _lines(sock: socket.socket) -> Iterator[bytes]:
    """Request lines from the channel, until it closes."""
    buf = b""
    while True:
        while b"\n" not in buf:
            data = sock.recv(1 << 16)
            if not data:
                return
            buf += data
        line, buf = buf.split(b"\n", 1)
        yield line


def rehearse() -> None:
    """Walk a move's path once without the agent (decode a request, build the ``Struct``s, encode a reply):
    a host forked ahead of its game so takes the copy-on-write faults of that path before its game."""
    from kaggle_environments.utils import Struct

    line = protocol.encode({"id": 0, "obs": {"board": [0] * 42, "mark": 1}, "config": {"rows": 6, "columns": 7}})
    request = protocol.decode(line.strip())
    Struct(**request["obs"]), Struct(**dict(request["config"]))
    protocol.encode({"id": 0, "kind": "ok", "action": protocol.encode_action(0)})


def serve(sock: socket.socket, setup: HostSetup, loaded: Loaded | None = None) -> None:
    """Answer move requests until the channel closes; the agent is loaded in the first, unless ``loaded``.
    The observation and configuration reach the agent as kaggle_environments' ``Agent.act`` gives them:
    ``structify``, so that nested objects (halite's players, orbit_wars' planets...) take attributes too."""
    from kaggle_environments.utils import structify

    agent, argc = loaded or (None, 2)
    for line in _lines(sock):
        request = protocol.decode(line)
        reply: dict[str, object] = {"id": request.get("id")}
        try:
            if agent is None:
                agent, argc = load(setup)
        except BaseException as exc:
            reply.update(_failure("load", exc))
        else:
            config = dict(request["config"])
            if setup["kind"] == "file":
                config["__raw_path__"] = setup["path"]
            args = (structify(request["obs"]), structify(config))[:argc]
            try:
                action = agent(*args) if callable(agent) else agent
                reply.update(kind="ok", action=protocol.encode_action(action))
            except BaseException as exc:
                reply.update(_failure("error", exc))
        sock.sendall(protocol.encode(reply))


def run(channel: int, log: int, setup: HostSetup, warden: int) -> NoReturn:
    """The host child's whole life (after ``fork`` in the warden): prepare, serve, exit."""
    def life() -> None:
        detach(warden, uid=setup.get("uid"))
        sock = take_fds(channel, log)
        settle(setup)
        serve(sock, setup)

    live(life)


def live(life: Callable[[], None]) -> NoReturn:
    """Run a host's ``life`` and exit: status 0, or 70 with a line in its log when our own code failed."""
    code = 0
    try:
        life()
    except BaseException as exc:
        code = 70
        try:
            os.write(2, f"agent host failed: {type(exc).__name__}: {exc}\n".encode("utf-8", "replace"))
        except BaseException:
            pass
    os._exit(code)
