"""The referee's side of an agent host: start one for a game, ask for moves under Kaggle's clock, end it.

``HostedAgent(player, seed, ...)`` gives the game folder a fresh copy of the
file (with ``beside``, of its whole folder: an unpacked .tar.gz) or names the
registered agent, asks this thread's warden to fork a host, and then ``move``
sends one request and waits AT MOST ``budget`` seconds (actTimeout + the
agent's remaining overage + ``MARGIN``).  What comes back is a ``Reply``:
``ok`` with the action, or one of the ways of breaking:

* ``timeout``: no reply within the budget; the host's whole group is killed;
* ``error`` / ``memory`` / ``load``: the agent raised (as the host reports it);
* ``crash``: the channel closed (the host exited, was killed by a signal, or
  its warden died); its exit status or signal, and the last line of its log;
* ``protocol``: a reply that is not one JSON line answering this request.

A host forked from a template first says it has taken its game (``protocol.READY``,
after the last game's host of its template is gone): move 1's clock starts then,
so that wait is not the agent's (up to ``READY_FREE`` after the warden's answer; a
later line is charged), plus the template's load as the warden measured it.  Every
line is read by ``protocol.decode``: a malformed one is the agent's ``protocol``.
``seed`` is the seat's own (``seat_random.seat_seed``): the host seeds its
``random`` and ``numpy.random`` with it and keeps them, as on Kaggle, where each agent has a container of its
own; no random state crosses the channel.  Detail lines, bad actions and logs are scrubbed of credentials and
control characters (``scrub.py``).  The host's output comes through a pipe, of which the referee keeps a bound
(``output.py``).  ``close`` kills the host's group and removes its folders.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from connectx_forge import trees
from connectx_forge.archive import copy_tree, unpack
from connectx_forge.boundedread import open_unlinked
from connectx_forge.players.player import Player
from connectx_forge.sandbox import protocol, warden
from connectx_forge.sandbox.limits import LOG_CHARS, Limits, SeatBudget
from connectx_forge.sandbox.output import Output
from connectx_forge.sandbox.protocol import HostSetup
from connectx_forge.sandbox.scrub import one_line, scrub

MARGIN = 0.5  # seconds the referee waits beyond actTimeout + overage before it calls a move a timeout
CRASH_GRACE = 1.0  # seconds a host whose channel closed gets to exit, so its status can be read
READY_SECONDS = 10.0  # the longest a templated host may take to say it has taken its game
# the longest after its start that a templated host's ready line is not charged to move 1: the wait for the last
# game's host to go (template.GONE_SECONDS) and a margin; later, the wait is the agent's (its load may have
# patched the code that says it)
READY_FREE = 2.5


@dataclass
class Reply:
    """One move's outcome: ``kind`` ok (``action``/``bad_action``) or a way of breaking (``detail``)."""

    kind: str
    duration: float
    action: int | None = None
    bad_action: str | None = None
    bad_float: float | None = None  # the value, when the invalid action was a float
    detail: str | None = None
    value: object = None  # the action as JSON, for a game other than ConnectX (protocol.json_action) ...
    unsent: str | None = None  # ... or why it did not cross: "not JSON" (its repr in bad_action), over the bound


def templates_on() -> bool:
    """Whether files may be forked from templates (``CXFORGE_TEMPLATE=off``: every game loads afresh)."""
    return os.environ.get("CXFORGE_TEMPLATE", "on").strip().lower() not in ("off", "0", "no")


def describe_status(status: int | None) -> str:
    """``"exited with status 3"`` or ``"killed by SIGSEGV"`` from a wait status."""
    if status is None:
        return "exited"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}" + (" (its CPU-time limit)" if sig == signal.SIGXCPU else "")
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


class HostedAgent:
    """One untrusted player's host for one game."""

    def __init__(self, player: Player, seed: int, budget: SeatBudget, limits: Limits | None = None, *,
                 beside: bool = False, shown_folder: str | None = None, template: bool = False,
                 twin: bool = False) -> None:
        """``beside``: the file's folder is the submission (an unpacked .tar.gz): copy all of it, not one file.
        ``shown_folder``: the folder the agent's messages name for the game folder (default: the file's own;
        ``check``, which stages the file first, gives the user's).  ``template``: fork the host from the
        file's template (``template.py``) instead of loading the file afresh; ``twin``: the second seat of a
        file that plays itself, forked from a template of its own (two hosts of one template would share
        its namespace, and so see each other).  ``budget``: Kaggle's clock, the game's CPU seconds and the
        most bytes of a JSON action the game takes (``protocol.json_action``)."""
        self.max_action = budget.max_action
        self.limits = limits or Limits()
        self.player, self.beside = player, beside
        self.source_folder = shown_folder or (os.path.dirname(os.path.abspath(player.file))
                                              if player.fresh else "")
        self.setup: HostSetup = {
            "kind": "file" if player.fresh else "spec", "named": [player.kind, player.name], "seed": seed,
            "limits": self.limits.to_json(),
            "cpu_seconds": budget.cpu_seconds,
            # a .tar.gz's files: at /kaggle_simulations/agent where the warden can (namespace.py)
            "kaggle": player.fresh and (beside or player.file.endswith(".tar.gz"))}
        self.budget = budget.act_timeout + budget.overage + MARGIN  # what move 1, and so a template's load, may take
        self.templated = template and player.fresh and templates_on()
        self.twin = twin
        self.output = Output(self.limits.log_bytes)  # its fds 1 and 2 (output.py)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.buf = b""
        self.next_id = 0
        self.pid: int | None = None
        self.status: int | None = None
        self.out_of_memory = False  # the kernel killed a process of its tree for the tree's memory limit
        self.pending = 0.0  # the template's load as the warden measured it, charged to move 1
        self.unready = False  # a templated host that has not yet said it is ready (not charged to move 1)
        self.spawned = 0.0  # when the warden answered (this process's clock): READY_FREE counts from it
        self.broken: str | None = None  # why no host could be started (the warden failed twice): move 1's crash
        self.slowed: str | None = None  # how --slowdown holds it (throttle.method), None when it is not slowed
        self.folder = ""
        try:
            self._spawn(theirs.fileno())
        finally:
            theirs.close()
            self.output.hand_over()

    def _spawn(self, fd: int) -> None:
        """Start the host; a warden that fails (dies, or answers what it never says) is replaced once, and a
        second failure is this agent's crash at move 1, not the run's."""
        try:
            self._start(warden.get(), fd)
        except warden.WardenGone:
            warden.reset()
            try:
                self._start(warden.get(), fd)
            except warden.WardenGone as exc:
                warden.reset()
                self.pid, self.broken = None, f"its host could not be started ({one_line(str(exc))})"

    def _start(self, w: warden.Warden, fd: int) -> None:
        """Make the game's folders (a template's, when there is one) and ask ``w`` for the host."""
        if self.folder:
            trees.remove(self.folder)
            self.folder = ""
        setup = self.setup.copy()
        key = self._key() if self.templated else None
        staged = w.templates.get(key) if key is not None else None
        if key is not None and key not in w.templates:
            shared = tempfile.mkdtemp(prefix="cxforge-template-", dir=w.root)
            os.mkdir(os.path.join(shared, "home"))
            staged = w.templates[key] = (shared, self._stage(os.path.join(shared, "game")))
        if staged is not None and key is not None:  # the template makes each host's HOME, ahead of its game
            setup["cwd"], setup["path"] = os.path.join(staged[0], "game"), staged[1]
            setup["template"] = {"key": key, "home": os.path.join(staged[0], "home"), "budget": self.budget}
        else:
            self.folder = tempfile.mkdtemp(prefix="cxforge-game-", dir=w.root)
            setup["home"], setup["cwd"] = os.path.join(self.folder, "home"), os.path.join(self.folder, "game")
            os.mkdir(setup["home"])
            if self.player.fresh:
                setup["path"] = self._stage(setup["cwd"])
            else:
                os.mkdir(setup["cwd"])
        self.game = setup["cwd"]
        answer = w.spawn(fd, self.output.write_fd, setup)
        self.pid = int(answer["pid"])
        self.spawned = time.perf_counter()
        self.pending = float(answer.get("load", 0.0))  # checked by the referee's warden handle (warden.spawned)
        self.slowed = answer.get("slowed")
        self.unready = "load" in answer  # a spare: it says when it has taken its game (template.py)
        if answer.get("fresh") and key is not None:
            w.templates[key] = None  # this file cannot have a template: later games load it afresh

    def _stage(self, game: str) -> str:
        """Put the file (with ``beside``, its whole folder, by an archive's rules and bounds: ``archive.copy_tree``;
        a .tar.gz, unpacked) in the new folder ``game``: the path the host loads."""
        file = self.player.file
        if self.beside:
            copy_tree(Path(os.path.dirname(os.path.abspath(file))), Path(game))
            return os.path.join(game, os.path.basename(file))
        os.mkdir(game)
        if file.endswith(".tar.gz"):  # its files where Kaggle puts them: beside main.py
            return str(unpack(Path(file), Path(game)))
        path = os.path.join(game, os.path.basename(file))
        with os.fdopen(open_unlinked(file), "rb") as source, open(path, "xb") as copy:  # as reference() checked it
            shutil.copyfileobj(source, copy)
        return path

    def _key(self) -> str:
        """What a template is shared by: the file (path and version), how it is staged, its limits, its time."""
        st = os.stat(self.player.file)
        return json.dumps([os.path.realpath(self.player.file), st.st_mtime_ns, st.st_size, self.beside,
                           self.setup["limits"], self.setup["cpu_seconds"], self.budget]
                          + (["twin"] if self.twin else []))

    # -- one move -------------------------------------------------------------------------------
    def move(self, obs: Mapping[str, object], config: Mapping[str, object], budget: float) -> Reply:
        """Ask for one move; wait at most ``budget`` seconds for the answer."""
        if self.broken is not None:
            return Reply("crash", 0.0, detail=self.broken)
        begun = time.perf_counter()
        if self.unready:
            self.unready = False
            free = max(begun, self.spawned + READY_FREE)  # the ready line's wait beyond this is the agent's
            try:
                ready = self._ready(min(READY_SECONDS, free + budget - begun))
            except protocol.ProtocolError as exc:
                return self._broke("protocol", begun, str(exc))
            now = time.perf_counter()
            if not ready:
                return self._timed_out(free - self.pending) if now >= free + budget else self._crashed(begun)
            begun = min(now, free)
        self.next_id += 1
        rid = self.next_id
        start = begun - self.pending  # a template's load (the warden's measure) counts against move 1, as on Kaggle
        self.pending = 0.0
        if self.buf:
            return self._broke("protocol", start, "a line the referee did not ask for")
        try:
            self.sock.sendall(protocol.encode({"id": rid, "obs": obs, "config": config}))
        except OSError:
            return self._crashed(start)
        deadline = start + budget
        poller = self._poller()
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0 or not self._wait(poller, left):
                if time.perf_counter() < deadline:
                    continue
                return self._timed_out(start)
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                return self._crashed(start)
            self.buf += data
            if len(self.buf) > protocol.MAX_LINE:
                return self._broke("protocol", start, f"a reply longer than {protocol.MAX_LINE} bytes")
        duration = time.perf_counter() - start
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return self._read(rid, line, duration)
        except protocol.ProtocolError as exc:
            return self._broke("protocol", start, str(exc), duration)

    def _ready(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout``, by default ``READY_SECONDS``) for a templated host's line saying it has
        taken its game: the time our own code takes there (and the wait for the last game's host to be gone) is
        not the agent's.  False when the channel closed or stayed silent; ``ProtocolError`` for any other line
        (the spare runs code the agent's load may have changed)."""
        deadline = time.perf_counter() + (READY_SECONDS if timeout is None else timeout)
        poller = self._poller()
        while b"\n" not in self.buf:
            if len(self.buf) >= len(protocol.READY):
                raise protocol.ProtocolError("a first line that is not the ready line (too long)")
            left = deadline - time.perf_counter()
            if left <= 0 or not self._wait(poller, left):
                if time.perf_counter() < deadline:
                    continue
                return False
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                return False
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        if protocol.decode(line, len(protocol.READY), "a first line") != {"ready": True}:
            raise protocol.ProtocolError("a first line that is not the ready line")
        return True

    def _poller(self) -> select.poll:
        """A poll of the channel and, while the host may still write it, its output pipe."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        if self.output.open:
            poller.register(self.output.read_fd, select.POLLIN)
        return poller

    def _wait(self, poller: select.poll, seconds: float) -> bool:
        """Wait at most ``seconds`` for the channel, reading the host's output meanwhile (a host that writes
        a full pipe waits for it): whether the channel is readable (False: the time ran out, or output came)."""
        ready = False
        for fd, _ in poller.poll(max(1, math.ceil(seconds * 1000))):
            if fd == self.output.read_fd:
                if not self.output.drain():
                    poller.unregister(fd)  # every writer gone: its end of file would wake each poll
            else:
                ready = True
        return ready

    def _read(self, rid: int, line: bytes, duration: float) -> Reply:
        message = protocol.decode(line)
        if message.get("id") != rid:
            raise protocol.ProtocolError(f"a reply with id {str(message.get('id'))[:20]!r} to request {rid}")
        if self.buf:
            raise protocol.ProtocolError("more than one line in answer to one request")
        kind = message.get("kind")
        if kind == "ok":
            data = message.get("action")
            valid, action, bad = protocol.decode_action(data)
            unsent, value = protocol.json_action(data, self.max_action)
            if valid:
                return Reply("ok", duration, action=action, value=value)
            return Reply("ok", duration, bad_action=scrub(bad or "", keep_newlines=False),
                         bad_float=protocol.float_of(data), value=value, unsent=unsent)
        if kind in ("error", "memory", "load"):
            return Reply(str(kind), duration, detail=one_line(self.shown(str(message.get("detail", "")))) or kind)
        raise protocol.ProtocolError(f"a reply of unknown kind {str(kind)[:20]!r}")

    def _broke(self, kind: str, start: float, detail: str, duration: float | None = None) -> Reply:
        self._kill()
        return Reply(kind, time.perf_counter() - start if duration is None else duration, detail=scrub(detail, False))

    def _timed_out(self, start: float) -> Reply:
        duration = time.perf_counter() - start
        self._kill()
        return Reply("timeout", duration, detail=f"no reply within {duration:.2f} s; its process group was killed")

    def _crashed(self, start: float) -> Reply:
        duration = time.perf_counter() - start
        self._kill(CRASH_GRACE)
        said = one_line(self.shown(self._log_tail()))
        how = describe_status(self.status)
        kind = "memory" if self.out_of_memory or said and "MemoryError" in said else "crash"
        if self.out_of_memory:
            how += "; its processes together went past their memory limit (the kernel's OOM killer ended one)"
        return Reply(kind, duration, detail=how + (f"; last words: {said}" if said else ""))

    def log_text(self, limit: int = 2 * LOG_CHARS + 2000) -> str:
        """The agent's log (its prints, cut at the host's cap, then any traceback; its last ``limit``
        characters, and the line that says how much of its output was dropped), credentials scrubbed, with
        the temporary game folder shown as the folder the file came from."""
        self._drain()
        text = self.output.kept().decode("utf-8", "replace")[-limit:]
        note = self.output.note()
        if note and text and not text.endswith("\n"):
            note = "\n" + note
        return scrub(self.shown(text + note)) or ""

    def shown(self, text: str) -> str:
        """``text`` with the temporary game folder shown as the folder the file came from."""
        if self.source_folder:
            text = text.replace(self.game + os.sep, self.source_folder + os.sep)
        return text

    def _log_tail(self) -> str:
        self._drain()
        return self.output.kept()[-4000:].decode("utf-8", "replace")

    def _drain(self) -> None:
        if self.output.read_fd >= 0:
            self.output.drain()

    # -- the end ----------------------------------------------------------------------------------
    def _kill(self, grace: float = 0.0) -> None:
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        try:
            self.status, self.out_of_memory = warden.get().end(pid, grace)
        except warden.WardenGone:
            warden.reset()  # the warden's death took its hosts with it

    def close(self) -> None:
        """Kill the host's group (if it still runs) and remove its folders."""
        self._kill()
        self.sock.close()
        self._drain()
        self.output.close()
        if self.folder:
            trees.remove(self.folder)


def close_all(hosts: Iterable[HostedAgent | None]) -> None:
    """Close one game's hosts: their ends in one request to the warden first (``Warden.end_all``: it kills
    all of them before it waits for any, so that their exits overlap), then each closed as ``close`` does."""
    live = [h for h in hosts if h is not None]
    pids = [h.pid for h in live if h.pid is not None]
    for h in live:
        h.pid = None
    if pids:
        try:
            warden.get().end_all(pids)
        except warden.WardenGone:
            warden.reset()  # the warden's death took its hosts with it
    for h in live:
        h.close()


def slowed_by(hosts: Iterable[HostedAgent | None]) -> str | None:
    """How ``--slowdown`` held a game's ``hosts`` (their ``slowed``; "; " between two ways), None where it held
    none."""
    return "; ".join(dict.fromkeys(h.slowed for h in hosts if h is not None and h.slowed)) or None
