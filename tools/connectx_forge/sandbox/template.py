"""The template: a submission file loaded once and forked for every game it plays.

Loading the file is most of what an isolated game costs, and Kaggle loads it
afresh in every episode.  So for ``match``, ``tournament`` and ``sprt`` the warden
forks templates per file (and per limits; two, each in namespaces of its own,
taking the file's games in turn: one forks its next game's host while the
other's host plays, ``warden_process.TEMPLATES_PER_FILE``): a process that prepares exactly
as a host does (``host.settle``: folder, environment, limits, the project out
of the import system), loads the file as Kaggle's loader does and never calls
its agent, then forks a host for every game.  Each game so starts from the
state right after the load, as on Kaggle, and the referee charges the load's
time to move 1: measured by the warden, from its fork of the template to the
arrival of the template's first spare (the template's own figure is not used:
the load runs the agent's code, which may forge it or change the clock it is
read from).  Whatever a template sends is read by ``protocol.decode`` and
checked; a malformed answer drops the template, and the file is loaded afresh.
``check`` keeps loading afresh in every game.

A template is used only where a fork copies the load faithfully: after the
load it must have one thread, no child process, no open file beyond its own
and no writable shared memory (a thread would be missing in the copies; a
process, a file offset or shared pages would be shared by all of them).
Otherwise, or when the load fails or takes longer than move 1 may, the warden
answers ``fresh`` and that file is loaded afresh in every game, which reports
the failure as before.  What stays different from fresh loads: randomness
drawn during the load (a generator seeded from the system at import) is the
same in every game, and the load's prints are copied
into each game's log.  A template's games share its namespace's writable
folders, which hold what the load wrote there (and one HOME for all its
hosts, so that nothing changes there between games): a game that writes anything
there (its ``/tmp``, ``/dev/shm``, POSIX message queues, game folder or HOME,
read from outside by ``namespace.written`` before the next game's start, once
every process of the game is gone) drops the template and that next game's
host, so that neither is given a game and no later game sees that.

Hosts are the template's children, so it reaps them (``end``, ``reap.py``) and
reads their statuses; they die with it, and it dies with the warden.  It forks
each host ahead of its game (a spare, named ``cxforge-spare`` until it has its
game), when the warden asks (at the load's end, then when each game's host has
ended; it reaps that host once the fork is made, so that the host's exit and the
fork overlap), and gives the warden the spare's end of a socket: the warden hands the
spare its game's fds straight, so that neither the fork nor a message to the
template is on a game's start.

The template is agent code from its load on, so the warden trusts nothing it
does and waits on it only with deadlines (a send that would block, an answer
that does not come: the template is dropped and the file loaded afresh).  What
matters is done from outside, by the warden: before each game it stops the
template (``SIGSTOP``; it runs again only when its host has ended), kills every
other process of the template's namespace but the game's spare (whatever the
load forked, whatever an earlier game left) and waits until they have exited
(``namespace.kill_all_but``), and removes the System V IPC of its namespace
(``namespace.clear_ipc``); it kills each host itself when its game ends.  A template that used more than ``SPARE_CPU``
seconds of CPU between two games (or a spare before its game) is dropped: that is
work done off every clock; so is one whose namespace's budget changed since its first game's start
(``_unwritten``: a game or the template wrote there), and one that leaves a POSIX message queue (whose times
count whole seconds: a message a game left there could go unseen).  When a game ends the warden stops the
template and kills all else in its namespace at once (``namespace.kill_now``), then lets it fork the next host
while it goes on; the waits for those exits and the budget's read are done once, before the next game.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import tempfile
import time
from typing import Literal, NamedTuple, NoReturn, TypedDict

from connectx_forge import trees
from connectx_forge.sandbox import cgroup, host, limits, namespace, protocol, reap
from connectx_forge.sandbox.protocol import HostSetup

NAME = "cxforge-tmpl"  # what ``ps`` shows for a template
SPARE = "cxforge-spare"  # and for a host forked ahead, until it has its game
ANSWER_SECONDS = 10.0  # the longest a template may take to answer (beyond an end's grace) before it is dropped
SEND_SECONDS = 1.0  # the longest a request to a template may wait to be sent (it reads them at once)
# the most CPU seconds a template may use between two games' starts (it forks a spare and reaps a host: milliseconds),
# and a spare before its game; more is work off every clock, and its file is loaded afresh from then on
SPARE_CPU = 0.5


class EndRequest(TypedDict):
    """An answered request to end a host (``Template.ask``): the host's pid as the template sees it, and the
    seconds it has to exit by itself."""

    op: Literal["end"]
    pid: int
    grace: float


class Template:
    """The warden's handle on one template process."""

    def __init__(self, pid: int, sock: socket.socket, started: float, init: int = 0,
                 tree: cgroup.Tree | None = None) -> None:
        self.pid, self.sock, self.started, self.init = pid, sock, started, init  # init: its namespace's (0: none)
        self.tree = tree  # the cgroups that hold it and its hosts together (cgroup.py; None: none)
        # its load's seconds on the warden's clock, from ``started`` (when the warden forked it) to its first spare
        # (a fork of the loaded state: the load is surely over), set when that spare arrives; what the template
        # says of its load is not used (its load runs the agent's code, which may forge it or change its clock)
        self.load: float | None = None
        self.gone = False  # it died or stopped answering: the warden drops it
        self.inner: dict[int, int] = {}  # each running host's pid as the template sees it, by the warden's
        self.asked = False  # a spare asked for, its answer not yet read
        self.spare: tuple[int, int, socket.socket] | None = None  # the next game's: pids (ours, its), socket
        self.cpu: float | None = None  # its own CPU seconds at its last game's start (``_isolate``)
        self.mark: namespace.Mark | None = None  # what its namespace's budget held at its first game's start

    def ask(self, message: EndRequest, fds: list[int] | None = None) -> dict[str, object] | None:
        """Send one request; its answer, or None when the template is gone (or stopped answering: the warden
        must never hang on one)."""
        self._take_spare()  # answers come in order: a spare asked for first
        if self.gone:
            return None
        self._wake()
        try:
            self.sock.settimeout(ANSWER_SECONDS + float(message.get("grace", 0)))
            socket.send_fds(self.sock, [json.dumps(message).encode()], fds or [])
            data = self.sock.recv(protocol.MAX_MESSAGE)
        except OSError:  # socket.timeout included
            data = b""
        try:
            if data:
                return protocol.decode(data, protocol.MAX_MESSAGE, "an answer")
        except protocol.ProtocolError:  # not what our template says: its load wrote it
            pass
        self.gone = True  # it died, stopped answering or said what it never says: the warden drops it
        return None

    def ask_spare(self) -> None:
        """Ask for the next game's host (forked when the last one's game ended, or at the load's end); its answer
        is read when it is needed."""
        if self.asked or self.gone:
            return
        self._wake()
        try:
            self.sock.settimeout(SEND_SECONDS)
            self.sock.send(json.dumps({"op": "spare"}).encode())
            self.asked = True
        except OSError:  # socket.timeout included: a template that reads nothing is dropped
            self.gone = True

    def _wake(self) -> None:
        """Let the template run (it is stopped while its host plays, and its host may have stopped it)."""
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            self.gone = True

    def _take_spare(self) -> None:
        """Read the answer to the spare asked for: its pid (as the template sees it) and its socket."""
        if not self.asked:
            return
        self.asked = False
        self._wake()
        try:
            self.sock.settimeout(ANSWER_SECONDS)
            data, fds, _, _ = socket.recv_fds(self.sock, protocol.MAX_MESSAGE, 1)
        except OSError:
            data, fds = b"", []
        if not data or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self.gone = True
            return
        try:
            inner = protocol.integer(protocol.decode(data, protocol.MAX_MESSAGE, "an answer").get("pid"), 2,
                                     protocol.MAX_PID, "a spare's pid")
        except protocol.ProtocolError:  # not what our template says: its load wrote it
            inner = 0
        # its own child, whatever its load wrote (read ahead of the game: off its critical path)
        pid = namespace.outer_pid(self.pid, inner) if inner else None
        if pid is None:
            os.close(fds[0])
            self.gone = True
            return
        if self.load is None:  # its first spare: the load is over
            self.load = time.perf_counter() - self.started
        sock = socket.socket(fileno=fds[0])
        if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_SEQPACKET:  # not the socketpair ours makes
            sock.close()
            self.gone = True
            return
        sock.setblocking(False)  # a send to the spare never waits: a full socket is the template's failure
        self.spare = (pid, inner, sock)

    def fork(self, game: dict[str, int], fds: list[int]) -> int | None:
        """A host for one game (``seed``) on the channel and log ``fds``: the spare forked ahead, handed them
        straight; its pid as the warden sees it, None on failure.  Before, the template is stopped (it runs
        again when its host ends: ``end``), and every other process of its namespace is killed and its System V
        IPC removed (``namespace.py``): nothing of an earlier game, nor anything the template started, lives into
        this one, whatever the template's own code (the agent's, since its load) did."""
        for _ in range(2):  # a spare that died before its game is replaced once
            if self.spare is None:
                self.ask_spare()
                self._take_spare()
            if self.spare is None:
                return None
            pid, inner, sock = self.spare
            self.spare = None
            self.inner[pid] = inner
            self._isolate(pid)
            if self.gone:
                sock.close()
                return None
            try:
                socket.send_fds(sock, [json.dumps(game).encode()], fds)
            except (BrokenPipeError, ConnectionResetError):  # the spare died before its game
                self.end(pid, 0)
                continue
            except OSError:  # a full socket, or any other: not what our template hands over
                self.gone = True
                return None
            finally:
                sock.close()
            return pid
        return None

    def _isolate(self, spare: int) -> None:
        """Stop the template and, in its namespace (where it has one), kill all but it, its init and ``spare``,
        and remove its System V IPC."""
        try:
            os.kill(self.pid, signal.SIGSTOP)
        except ProcessLookupError:
            self.gone = True
        if self.init:
            self.gone = not namespace.kill_all_but({self.init, self.pid}, {self.init, self.pid, spare}) or self.gone
            namespace.clear_ipc(self.init)
            self._unwritten()
        used, alone = cpu_seconds(self.pid), cpu_seconds(spare)
        if used is None or alone is None or alone > SPARE_CPU or self.cpu is not None and used - self.cpu > SPARE_CPU:
            self.gone = True  # it worked between its games (off every clock): its file is loaded afresh
        self.cpu = used

    def end(self, pid: int, grace: float) -> int | None:
        """End host ``pid`` (``reap.end``): its wait status, None when unknown (without ``grace`` it is not
        asked for: the template ends the host while the warden goes on).  Then the next game's host is asked for,
        at once: whatever the game left in the template's namespace is seen before that host's game (``_isolate``)."""
        inner = self.inner.pop(pid, pid)
        if grace <= 0:
            reap.kill(pid)  # from here: the template need not do it
            self._stop_all()
            if self.gone:
                return None
            self._wake()
            try:
                self.sock.settimeout(SEND_SECONDS)
                self.sock.send(json.dumps({"op": "end", "pid": inner, "quiet": True}).encode())
            except OSError:
                self.gone = True
            self.ask_spare()  # the next game's host, forked now
            return None
        answer = self.ask({"op": "end", "pid": inner, "grace": grace})
        status = None if answer is None else answer.get("status")
        reap.kill(pid)
        self._stop_all()
        self.ask_spare()
        try:
            return None if status is None else protocol.integer(status, 0, protocol.MAX_STATUS, "a status")
        except protocol.ProtocolError:  # not what our template says: its load wrote it
            self.gone = True
            return None

    def _stop_all(self) -> None:
        """After a game: stop the template and kill all but it in its namespace (whatever the game left running),
        without waiting for their exits, so that nothing of the game runs on while the template forks the next
        host; ``_isolate`` waits for them before that host's game."""
        if not self.init or self.gone:
            return
        try:
            os.kill(self.pid, signal.SIGSTOP)
        except ProcessLookupError:
            self.gone = True
            return
        namespace.kill_now({self.init, self.pid}, {self.init, self.pid})

    def _unwritten(self) -> None:
        """Before a game, once all but the template, its init and the game's host are gone from its namespace:
        drop the template (``gone``) where its namespace's budget (``namespace.written``: its ``/tmp``,
        ``/dev/shm``, POSIX message queues, game folder and HOME) changed since its first game's start, when it
        was read (``settled``).  What a game wrote is so seen before the next game runs, and
        neither the template nor a later game of it sees it: the file is loaded afresh, in namespaces of its own,
        from then on.  Also dropped: one whose budget could not be read (its own folders write to the disk) or
        holds a message queue (whose times count whole seconds: a game could leave a message there unseen)."""
        if self.mark is None:
            self.mark = namespace.settled(self.init)
            self.gone = self.gone or self.mark is None or any(
                entry[0].startswith("./mq/") or entry[0] == f"./{namespace.UNLAYERED}" for entry in self.mark)
        elif namespace.written(self.init) != self.mark:
            self.gone = True

    def close(self, hosts: reap.Hosts | None = None) -> None:
        """Kill the template (and so any host it still runs) and reap it (and ``hosts``' statuses meanwhile)."""
        reap.kill(self.pid)
        self.sock.close()
        if self.spare is not None:
            self.spare[2].close()
            self.spare = None
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        namespace.end_init(self.init, hosts)


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process ``pid`` used itself (not its children), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def start(setup: HostSetup, budget: float, warden: reap.Hosts,
          place: namespace.Place | None = None, tree: cgroup.Tree | None = None) -> Template | str:
    """Fork a template for ``setup`` (into ``place``: namespaces of its own, where the jail allows, and the
    cgroups ``tree``) and wait at most ``budget`` seconds for its load: the template, or why the file must be
    loaded afresh in every game.  ``warden``: the warden's hosts (its throttle slows the load down,
    --slowdown)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    place = place or namespace.Place()
    me = os.getpid()
    gc.freeze()
    started = time.perf_counter()  # the load's clock is the warden's: it runs from here to the first spare
    try:
        pid, init = place.fork()
    except OSError as exc:
        ours.close()
        theirs.close()
        return f"its namespaces could not be made ({exc})"
    if pid == 0:
        ours.close()
        _run(theirs, {**setup, "alone": place.alone}, 0 if place.alone else me)
    theirs.close()
    warden.throttle.add(pid, float(setup["limits"].get("slowdown", 1.0)), tree, init)
    ours.settimeout(budget)
    try:
        data = ours.recv(protocol.MAX_MESSAGE)
    except OSError:  # socket.timeout included
        data = b""
    ours.settimeout(None)
    warden.throttle.remove(pid)
    why = refused(data) if data else f"its load took more than {budget:g} s or ended the process"
    if why:
        Template(pid, ours, started, init).close(warden)
        return why
    loaded = Template(pid, ours, started, init, tree)
    loaded.ask_spare()  # the first game's host, forked now
    return loaded


def refused(data: bytes) -> str:
    """Why a template's first answer ``data`` does not make it a template ("" when it says its load is done:
    ``{"load": SECONDS}``, the seconds only checked, never used; ``{"why": ...}`` or anything malformed, which
    its load may have written, is a refusal)."""
    try:
        answer = protocol.decode(data, protocol.MAX_MESSAGE, "an answer")
        if "load" in answer:
            protocol.seconds(answer["load"], "a load")
            return ""
    except protocol.ProtocolError as exc:
        return f"its template said {exc}"
    why = answer.get("why")
    return why[:200] if isinstance(why, str) and why else "its template said no load"


# -- the template process ----------------------------------------------------------------------
def _run(sock: socket.socket, setup: HostSetup, warden: int) -> NoReturn:
    try:
        host.detach(warden, NAME, setup.get("uid"))
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


def _serve(control: socket.socket, setup: HostSetup, loaded: host.Loaded, log: object, output: bytes) -> None:
    """Answer ``spare`` and ``end`` until the warden's channel closes.  A host is forked ahead of its game (a
    spare, waiting for the game's fds, which the warden sends it straight), so that a game's start costs
    neither a fork nor a message to this process; a host killed by ``end`` is reaped at once."""
    hosts = reap.Hosts()
    # alone, one HOME for all its hosts, in its own /tmp (a game that writes there drops this template:
    # ``Template._unwritten``; none made between games, none is held back by ``namespace.settled``); else each
    # host's own, removed when it ends (``homes``)
    if setup.get("alone"):
        setup = {**setup, "spare_home": _home(setup)}
    homes: dict[int, str] = {}
    ended: list[int] = []  # hosts ended quietly, reaped once the next spare is forked (their exits meanwhile)
    for message, fds in protocol.requests(control):
        for fd in fds:  # no request carries any
            os.close(fd)
        if message["op"] == "spare":
            spare = _spare(setup, loaded, log, output, sorted(hosts.running), ended)
            hosts.running.add(spare.pid)
            if spare.home != setup.get("spare_home"):
                homes[spare.pid] = spare.home
            _gone(ended)  # before the answer: the warden stops this process as soon as it has its spare
            socket.send_fds(control, [json.dumps({"pid": spare.pid}).encode()], [spare.sock.fileno()])
            spare.sock.close()
            continue
        pid = int(message["pid"])
        answer = {"status": reap.end(hosts, pid, float(message.get("grace", 0)))}
        if message.get("quiet"):  # not answered: the warden asks for the next spare at once
            ended.append(pid)
        else:
            _gone([pid])
        if pid in homes:
            trees.remove(homes.pop(pid))
        if not message.get("quiet"):  # a quiet end is not answered
            control.send(json.dumps(answer).encode())


def _gone(pids: list[int]) -> None:
    """Reap hosts ``pids``, killed by ``reap.end`` (those it reaped already are passed over), and forget them."""
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    pids.clear()


def _say(sock: socket.socket, message: dict[str, object]) -> None:
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
    shared = shared_writable()
    if shared:  # every fork maps the same pages: a game would leave there what a later game reads
        return f"its load mapped {shared} piece(s) of writable shared memory"
    return ""


def shared_writable() -> int:
    """How many writable shared mappings this process holds (``/proc/self/maps``: shared anonymous memory, a
    mapped file or System V segment), each of which its forks would share."""
    with open("/proc/self/maps") as fh:
        return sum(1 for line in fh if len(line.split()) > 1 and line.split()[1][1::2] == "ws")


class Spare(NamedTuple):
    """A host forked ahead of its game: its pid, the socket that will hand it the game, its HOME."""

    pid: int
    sock: socket.socket
    home: str


def _home(setup: HostSetup) -> str:
    """A new empty folder for a host's HOME (alone: in this namespace's own ``/tmp``, which the referee's folders
    are not shown in; else beside the template's)."""
    folder = "/tmp" if setup.get("alone") else os.path.dirname(setup["home"])
    return tempfile.mkdtemp(prefix="cxforge-home-", dir=folder)


def _spare(setup: HostSetup, loaded: host.Loaded, log: object, output: bytes,
           before: list[int], ended: list[int]) -> Spare:
    """Fork a host ahead of its game, its HOME the template's ``spare_home`` where it has one, else a new one
    (``_home``); ``before``: the hosts running now, which must be gone before its game starts; ``ended``: hosts
    killed but not yet reaped, which still count against the processes allowed (reaped first, and the fork
    tried again, where the fork is refused for them; else the caller reaps them once the fork is made, before it
    says the spare is there: no game sees the last one's host, not even as a zombie)."""
    home = setup.get("spare_home") or _home(setup)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    me = os.getpid()
    pid = _fork(ended)
    if pid == 0:
        limits.set_name(SPARE)  # at once: a host listing processes never takes a spare for a playing host
        ours.close()
        _host(theirs, setup, loaded, log, output, me, home, before)
    theirs.close()
    return Spare(pid, ours, home)


def _fork(ended: list[int]) -> int:
    """``os.fork``; where the processes allowed are all taken (``EAGAIN``: the last game's tree, killed, may
    still be leaving), the hosts ``ended`` are reaped and the fork tried again, for at most ``GONE_SECONDS``."""
    deadline = time.monotonic() + GONE_SECONDS
    while True:
        try:
            return os.fork()
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            _gone(ended)
            time.sleep(0.005)


GONE_SECONDS = 2.0  # the longest a spare waits for the last game's hosts to be reaped before its own game


def _wait_gone(pids: list[int]) -> None:
    """Wait until these processes are gone, zombies included (at most ``GONE_SECONDS``)."""
    deadline = time.monotonic() + GONE_SECONDS
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(0.0002)


def _host(sock: socket.socket, setup: HostSetup, loaded: host.Loaded, log: object, output: bytes, template: int,
          home: str, before: list[int]) -> NoReturn:
    """A host forked from the template: it waits on ``sock`` for its game, and for the hosts of ``before``
    to be gone, then takes the game's channel, log and seed and serves (its rlimits are the template's, its
    CPU time counted from zero)."""
    def life() -> None:
        host.detach(template, SPARE)
        keep = sock.fileno()
        os.closerange(3, keep)  # none of the template's fds: the warden must see the template's end
        os.closerange(keep + 1, 1 << 16)
        os.environ["HOME"] = home
        host.rehearse()
        data, fds, _, _ = socket.recv_fds(sock, protocol.MAX_MESSAGE, 2)
        if not data or len(fds) != 2:  # the warden or the template ended before this spare had a game
            os._exit(0)
        game = json.loads(data)
        _wait_gone(before)
        if setup.get("alone"):
            reap.sweep(template)
        limits.set_name(host.NAME)
        channel = host.take_fds(fds[0], fds[1])
        if isinstance(log, host.CappedLog):  # the log's cap is per game; the load's output counts against it
            log.left = int(setup["limits"]["log_chars"])
            log.write(output.decode("utf-8", "replace"))
        host.seed(int(game["seed"]))
        channel.sendall(protocol.READY)  # the referee's clock for move 1 starts now
        host.serve(channel, setup, loaded)

    host.live(life)
