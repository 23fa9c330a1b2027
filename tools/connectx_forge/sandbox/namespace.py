"""Each agent alone: its own process table, ``/tmp``, network and IPC, and a .tar.gz's files where Kaggle puts them.

The jail (``jail.py``) is one per warden, so all the hosts of a warden share
it.  Where the jailed warden holds ``CAP_SYS_ADMIN`` (root, or bubblewrap's
``--cap-add`` inside its user namespace), ``fork`` puts each host, and each
template, in a new set of namespaces of its own (``OWN``: PID, mount, network,
IPC, UTS), so that the seats share no loopback, abstract socket, System V or
POSIX IPC, and a fresh host's IPC dies with its game (a template's hosts share
its set: the warden empties its System V IPC before each game, ``clear_ipc``,
kills all but the template and the game's host there, ``kill_all_but``, and drops
the template when a game wrote in its budget, ``written``):

* pid 1 is a small init (``cxforge-init``) that only reaps; the host is pid 2,
  so an agent's signals to itself work as anywhere (an init ignores them);
* ``/proc`` is mounted afresh: the agent lists its init, itself (a template's
  hosts: their template and its spare) and its own children, never the warden,
  the other seat or the jail; the machine's counters there (open files,
  processes, memory, load, interrupts: ``COUNTERS``) read empty or fixed;
* ``/tmp`` is private, with the folders the jail showed under ``/tmp``
  shown again (the toolkit or its virtualenv, and the host's own game folders:
  not the other seat's);
* one budget holds everything it writes: its ``/tmp``, its ``/dev/shm`` (POSIX
  shared memory) and what it writes in its own folders (its game folder and
  HOME) are all in one tmpfs of ``tmp_size`` (``mount_own``), and SysV shared
  memory gets at most as much again (``cap_sysv``);
* ``agent`` (a .tar.gz's unpacked folder) is bound at ``/kaggle_simulations/agent``.

The process that makes the namespaces forks the init, then the host, and exits,
so the host becomes the warden's child (it is a subreaper): the warden reads
its wait status and signals its group as before.  Killing the init kills all
that is left in the namespace.  Neither sets a parent-death signal (its first
parent exits at once): the init ends as soon as the warden is gone (the end of
a pipe only the warden holds reads EOF), and takes the namespace with it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import time
from dataclasses import dataclass
from typing import NoReturn

from connectx_forge import trees
from connectx_forge.sandbox import cgroup, limits, reap, throttle

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x04000000, 0x08000000, 0x40000000
# a host's (or template's) own set: its processes, mounts, network, System V and POSIX message-queue IPC, host name
OWN = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 0x4000, 1 << 18
MNT_DETACH = 2
KAGGLE_AGENT = "/kaggle_simulations/agent"  # where Kaggle puts a .tar.gz's files
NAME = "cxforge-init"  # what ``ps`` shows for a namespace's init


def possible() -> bool:
    """Whether this process may make namespaces (``CAP_SYS_ADMIN`` in its effective set)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 21 & 1)
    except (OSError, ValueError):
        pass
    return False


@dataclass(frozen=True)
class Place:
    """Where a forked host (or template) goes: alone in namespaces of its own (``shown`` and ``agent`` as in
    ``fork``; ``mount_own`` for the sizes), or, with ``alone`` False, beside its parent as a plain fork."""

    alone: bool = False
    shown: tuple[str, ...] = ()
    agent: str | None = None
    tmp_size: int = 0  # bytes of all it writes: /tmp, /dev/shm, its own folders (0: the kernel's default)
    cgroups: tuple[int, ...] = ()  # its cgroups' ``cgroup.procs``, open (``cgroup.entries``): joined first
    own: tuple[str, ...] = ()  # of ``shown``, its own folders: what it writes there stays in memory

    def fork(self) -> tuple[int, int]:
        """``(pid, init)`` in the parent (init 0 for a plain fork), ``(0, 0)`` in the child, which is in
        ``cgroups`` before it runs anything else."""
        if self.alone:
            return fork(self)
        pid = os.fork()
        if pid == 0:
            cgroup.join(self.cgroups)
        return pid, 0


def fork(place: Place) -> tuple[int, int]:
    """``os.fork`` into new namespaces: ``(pid, init)`` in the parent, ``(0, 0)`` in the child (pid 2 of its
    namespace), whose mounts ``place`` says (``mount_own``).
    Raises ``OSError`` when the namespaces cannot be made (nothing is left running)."""
    _lifeline()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    middle = os.fork()
    if middle == 0:  # makes the namespaces, forks the init and the child, says their pids, exits
        cgroup.join(place.cgroups)  # and so are the init, the child and all it starts
        ours.close()
        _middle(theirs.detach(), place)
        return 0, 0  # only the child gets here
    theirs.close()
    with ours:
        said, fds, _, _ = socket.recv_fds(ours, 256, 2)
    os.waitpid(middle, 0)
    words = said.split()
    if len(words) != 2 or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        raise OSError(said[3:].decode(errors="replace") if words[:1] == [b"no"] else "the namespaces could not be "
                      "made")
    _IPC[int(words[0])], _ROOTS[int(words[0])] = fds
    return int(words[1]), int(words[0])


# each namespace's IPC namespace, by its init's pid: an fd the process that made it holds (``clear_ipc``), said by the
# process between, which alone may open it (opening another process's needs ptrace access, which a jail as a plain
# user does not give)
_IPC: dict[int, int] = {}
# each namespace's budget (``_budget``), by its init's pid: an fd on its tmpfs's root, read from outside (``written``)
_ROOTS: dict[int, int] = {}


def _middle(pids_w: int, place: Place) -> None:
    """The process between: returns only in the namespace's child (pid 2); exits in itself."""
    try:
        libc = limits._libc()
        if libc.unshare(OWN) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        ipc = os.open("/proc/self/ns/ipc", os.O_RDONLY)  # now: the init's /proc will not show this process
        ready_r, ready_w = (s.detach() for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        init = os.fork()
        if init == 0:
            os.close(ready_r)
            os.close(pids_w)
            os.close(ipc)
            _init(ready_w, place)
        os.close(ready_w)
        with socket.socket(fileno=os.dup(ready_r)) as said_ready:
            ready, roots, _, _ = socket.recv_fds(said_ready, 256, 1)
        if ready != b"ok" or len(roots) != 1:
            for fd in roots:
                os.close(fd)
            os.kill(init, signal.SIGKILL)
            os.waitpid(init, 0)  # gone before the caller hears of it: nothing is left to it, not even exiting
            raise OSError(ready.decode(errors="replace") or "its init died")
        child = os.fork()
        if child == 0:
            os.close(ready_r)
            os.close(pids_w)
            os.close(ipc)
            return
        with socket.socket(fileno=pids_w) as said:
            socket.send_fds(said, [f"{init} {child}".encode()], [ipc, roots[0]])
    except BaseException as exc:
        _tell(pids_w, f"no {exc}")
    os._exit(0)


def _tell(fd: int, text: str) -> None:
    """Write ``text`` (its first 200 bytes) to the pipe ``fd``, if it can still be written."""
    try:
        os.write(fd, text.encode()[:200])
    except OSError:
        pass


def _init(ready_w: int, place: Place) -> NoReturn:
    """pid 1: make the mounts, say so, then reap until killed or until the warden is gone (its lifeline's end
    reads EOF), which kills all in the namespace.  It holds no other fd of the warden's (a host's channel
    must close when the host dies)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    life = _LIFELINE[0]  # inherited from the process that forks namespaces
    for low, high in _gaps(3, 1 << 16, {ready_w, life}):
        os.closerange(low, high)
    try:
        limits.set_name(NAME)
        root = mount_own(list(place.shown), place.agent, place.tmp_size, place.own)
        loopback_up()
        with socket.socket(fileno=os.dup(ready_w)) as ready:
            socket.send_fds(ready, [b"ok"], [root])
        os.close(root)
    except BaseException as exc:
        _tell(ready_w, f"its mounts failed ({exc})")
        os._exit(1)
    os.close(ready_w)
    limits.drop_capabilities()
    signal.signal(signal.SIGCHLD, _reap_all)
    _reap_all()
    while True:
        try:
            if select.select([life], [], [])[0] and not os.read(life, 1):
                os._exit(0)
        except InterruptedError:
            pass


SIOCSIFFLAGS, IFF_UP, IFF_RUNNING = 0x8914, 0x1, 0x40


def loopback_up() -> bool:
    """Bring up this network namespace's loopback (a new one's is down), so that an agent's own processes reach
    each other on 127.0.0.1 as in a container of its own; False where it may not (``CAP_NET_ADMIN``)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", IFF_UP | IFF_RUNNING))
        return True
    except OSError:
        return False


def _reap_all(*_: object) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _gaps(low: int, high: int, keep: set[int]) -> list[tuple[int, int]]:
    """The ranges of ``[low, high)`` between the fds in ``keep``."""
    out, start = [], low
    for fd in sorted(keep):
        out.append((start, fd))
        start = fd + 1
    return [*out, (start, high)]


_LIFELINE: list[int] = []


def _lifeline() -> tuple[int, int]:
    """A pipe whose write end only the process that forks namespaces holds (every host and template closes
    its fds): its read end, in each namespace's init, reads EOF when that process is gone."""
    if not _LIFELINE or _LIFELINE[2] != os.getpid():
        read, write = os.pipe()
        _LIFELINE[:] = [read, write, os.getpid()]
    return _LIFELINE[0], _LIFELINE[1]


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def b(s: str | None) -> bytes | None:
        return None if s is None else s.encode()

    if limits._libc().mount(b(source), b(target), b(fstype), flags, b(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


UNLAYERED = "unlayered"  # in a budget's root where its own folders are not overlays: their writes are not seen there
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")  # what of /proc could change the kernel
# the kernel's machine-wide counters in /proc, which move by what any process does (files open, processes, pages,
# interrupts, pressure): one seat would read what the other does (file-nr by exactly the files it opens).  A host
# reads each as an empty file (``COUNTERS``), an empty folder (``COUNTER_FOLDERS``) or a fixed file (``views``)
COUNTERS = ("buddyinfo", "diskstats", "interrupts", "pagetypeinfo", "sched_debug", "schedstat", "slabinfo",
            "softirqs", "swaps", "timer_list", "vmallocinfo", "vmstat", "zoneinfo", "sys/fs/aio-nr",
            "sys/fs/dentry-state", "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state",
            "sys/kernel/random/entropy_avail")
COUNTER_FOLDERS = ("irq", "pressure", "sys/fs/quota")
VIEW = "view"  # the folder, in a budget's root, of what covers them


def mount_own(shown: list[str], agent: str | None, tmp_size: int = 0, own: tuple[str, ...] = ()) -> int:
    """In this mount namespace: nothing shared back, a fresh ``/proc`` whose kernel settings are read-only and
    whose machine-wide counters never move (``cover_counters``), nothing of ``/sys`` (the warden's cgroups are
    bound there), ``agent`` at ``KAGGLE_AGENT``, a private ``/tmp`` with ``shown`` in it again and a private
    ``/dev/shm``.  Everything it writes there, and in its
    ``own`` folders and in ``agent`` (``overlay``), goes to one tmpfs of at most ``tmp_size`` bytes (0: the
    kernel's default, half the memory): one budget in all; SysV shared memory is capped beside it
    (``cap_sysv``).  Returns an fd on the budget's root, which shows all of it (``written``)."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    cap_sysv(tmp_size)
    for name in PROC_READ_ONLY:
        path = f"/proc/{name}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _detach_under("/sys")
    if agent is not None:
        _mount(agent, KAGGLE_AGENT, None, MS_BIND | MS_REC)
    held = [(path, os.open(path, os.O_PATH)) for path in shown]
    budget = _budget(tmp_size)
    try:
        cover_counters(f"/proc/self/fd/{budget}/{VIEW}")
        for path, fd in held:
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            os.close(fd)
        if not overlay([p for p in (*own, *([KAGGLE_AGENT] if agent else [])) if p in shown or p == KAGGLE_AGENT],
                       f"/proc/self/fd/{budget}"):
            open(f"/proc/self/fd/{budget}/{UNLAYERED}", "w").close()  # its writes there are not in the budget
    except BaseException:
        os.close(budget)
        raise
    return budget


def views() -> dict[str, str]:
    """The fixed ``/proc`` files a host reads, which libraries parse: ``stat`` (glibc counts the CPUs from its
    ``cpuN`` lines where ``/sys`` is not shown), ``meminfo`` and ``loadavg``.  Each keeps what never moves (the
    CPUs' names, the boot time, the memory's total) and says nothing of what runs: every count 0, all memory
    free, one process running."""
    with open("/proc/stat") as fh:
        stat = fh.read().splitlines()
    with open("/proc/meminfo") as fh:
        total = next((line.split()[1] for line in fh if line.startswith("MemTotal:")), "0")
    cpus = [line.split()[0] for line in stat if line.startswith("cpu")]
    btime = next((line for line in stat if line.startswith("btime ")), "btime 0")
    return {"stat": "".join(f"{cpu} {' '.join(['0'] * 10)}\n" for cpu in cpus)
            + f"intr 0\nctxt 0\n{btime}\nprocesses 0\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n",
            "meminfo": "".join(f"{key}:{value:>16} kB\n" for key, value in (
                ("MemTotal", total), ("MemFree", total), ("MemAvailable", total), ("Buffers", "0"), ("Cached", "0"),
                ("SwapCached", "0"), ("SwapTotal", "0"), ("SwapFree", "0"), ("Shmem", "0"))),
            "loadavg": "0.00 0.00 0.00 1/1 1\n"}


def cover_counters(folder: str) -> None:
    """Cover each of the fresh ``/proc``'s machine-wide counters (``COUNTERS``, ``COUNTER_FOLDERS``, ``views``)
    with a file or folder made in ``folder`` (in the budget, which no agent reaches), read-only: binds of a
    read-only mount are read-only too, so that one remount serves them all."""
    fixed = views()
    os.mkdir(folder, 0o755)
    os.mkdir(f"{folder}/none", 0o555)
    for name, text in {"empty": "", **fixed}.items():
        with open(f"{folder}/{name}", "w") as fh:
            fh.write(text)
        os.chmod(f"{folder}/{name}", 0o444)
    _mount(folder, folder, None, MS_BIND)
    _mount(None, folder, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    covers = {**dict.fromkeys(COUNTER_FOLDERS, "none"), **dict.fromkeys(COUNTERS, "empty"), **{n: n for n in fixed}}
    for name, source in covers.items():
        if os.path.lexists(f"/proc/{name}"):
            _mount(f"{folder}/{source}", f"/proc/{name}", None, MS_BIND)


def _budget(size: int) -> int:
    """Mount the one tmpfs of ``size`` bytes that all an agent writes goes to, and show its folders ``tmp`` at
    ``/tmp`` and ``shm`` at ``/dev/shm``: an fd on its root, where ``overlay`` puts its layers, which nothing
    else reaches (``/tmp`` covers it).  Its folder ``mq`` shows this IPC namespace's POSIX message queues (a
    ``mqueue`` file system), so that the root shows all an agent wrote (``written``)."""
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, _tmpfs_options(size).replace("1777", "0700"))
    for name in ("tmp", "shm", "mq"):
        os.mkdir(f"/tmp/{name}")
        os.chmod(f"/tmp/{name}", 0o1777)
    _mount("mqueue", "/tmp/mq", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    root = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
    if os.path.isdir("/dev/shm"):
        _mount("/tmp/shm", "/dev/shm", None, MS_BIND)
    _mount("/tmp/tmp", "/tmp", None, MS_BIND)
    return root


def cap_sysv(size: int) -> bool:
    """SysV shared memory of this IPC namespace: at most ``size`` bytes in all (0: left as it is), which no
    tmpfs counts (the kernel keeps a segment beyond its process's life), and 16 message queues.  False where
    the kernel refused (a plain user's jail maps no root to own the namespace's settings): its hosts' filter
    then refuses SysV shared memory and queues (``syscalls.sysv_capped``)."""
    if size <= 0:
        return True
    page = os.sysconf("SC_PAGE_SIZE")
    caps = {"shmmax": size, "shmall": max(1, size // page), "shmmni": limits.SYSV_SEGMENTS,  # bytes, pages, segments
            "msgmni": 16}  # message queues (of 16 KiB each: msgmnb)
    try:
        for name, value in caps.items():
            with open(f"/proc/sys/kernel/{name}", "w") as fh:
                fh.write(str(value))
    except OSError:
        return False
    return True


def overlay(folders: list[str], layers: str) -> bool:
    """Show each of ``folders`` as it is, with what is written there kept in the folder ``layers`` (in the
    budget's tmpfs: ``_budget``): an overlay whose upper layer is there, so that an agent's writes to its own
    folders count against its one budget and its memory (``cgroup.py``), and vanish with its namespace.
    The agent never sees the layers.  False where the kernel refused (the folders stay as they were: writes
    go to disk, each file under ``RLIMIT_FSIZE``)."""
    if not folders or any(ch in f for f in folders for ch in ",:\\"):  # characters overlay's options can't hold
        return not folders
    try:
        for n, folder in enumerate(folders):
            upper, work = f"{layers}/upper{n}", f"{layers}/work{n}"
            os.mkdir(upper)
            os.mkdir(work)
            info = os.stat(folder)
            os.chown(upper, info.st_uid, info.st_gid)
            os.chmod(upper, info.st_mode & 0o7777)
            _mount("overlay", folder, "overlay", MS_NOSUID | MS_NODEV,
                   f"lowerdir={folder},upperdir={upper},workdir={work}")
        return True
    except OSError:
        return False


def _tmpfs_options(size: int) -> str:
    return "mode=1777" + (f",size={int(size)}" if size > 0 else "")


def _detach_under(top: str) -> None:
    """Unmount (lazily) every mount at or under ``top`` in this mount namespace, deepest first."""
    try:
        with open("/proc/self/mountinfo") as fh:
            points = {line.split()[4].encode().decode("unicode_escape") for line in fh}
    except OSError:
        return
    for point in sorted((p for p in points if p == top or p.startswith(top + "/")), key=len, reverse=True):
        if limits._libc().umount2(point.encode(), MNT_DETACH) != 0:
            errno = ctypes.get_errno()
            if errno not in (22, 2):  # EINVAL, ENOENT: already gone with its parent
                raise OSError(errno, f"umount {point}: {os.strerror(errno)}")


def works() -> bool:
    """Whether ``fork`` works here: a child that finds itself pid 2 under a fresh ``/proc`` (the jail's probe)."""
    if not possible():
        return False
    limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)  # as the warden is: the child becomes this process's own
    try:
        pid, init = fork(Place(True))
    except OSError:
        return False
    if pid == 0:
        os._exit(0 if os.getpid() == 2 and sorted(p for p in os.listdir("/proc") if p.isdigit()) == ["1", "2"]
                 else 1)
    _, status = os.waitpid(pid, 0)
    os.close(_IPC.pop(init))
    os.close(_ROOTS.pop(init))
    os.kill(init, signal.SIGKILL)
    os.waitpid(init, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def mounted_under_tmp(skip: str | None) -> list[str]:
    """The mount points under ``/tmp`` (the outermost ones), but ``skip`` and what is under it: what the jail
    showed again under its private ``/tmp``, for a host's own ``/tmp`` to show too."""
    found: list[str] = []
    try:
        with open("/proc/self/mountinfo") as fh:
            points = [line.split()[4].encode().decode("unicode_escape") for line in fh]
    except OSError:
        return found
    for point in sorted(set(points)):
        if not point.startswith("/tmp/") or skip and (point + "/").startswith(skip.rstrip("/") + "/"):
            continue
        if not any((point + "/").startswith(f + "/") for f in found):
            found.append(point)
    return found


def end_init(init: int, hosts: reap.Hosts | None = None) -> None:
    """Kill a namespace's init (and so everything left in it) and reap it.  Its end waits until every
    process of the namespace is reaped, some of which may be this process's own children (a fresh host):
    so this reaps any child meanwhile, as ``reap.keep`` says for ``hosts``."""
    if not init:
        return
    for fd in (_IPC.pop(init, None), _ROOTS.pop(init, None)):
        if fd is not None:
            os.close(fd)
    try:
        os.kill(init, signal.SIGKILL)
    except ProcessLookupError:
        return
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == init:
            return
        reap.keep(hosts, pid, status)


PF_EXITING = 0x4  # a thread's flag (``/proc/PID/task/TID/stat``, field 9) from the first step of its exit on


def members(roots: set[int], exiting: bool = False) -> list[int]:
    """The processes that are ``roots`` or descend from them and may still run code of their own (zombies and,
    unless ``exiting``, processes in the kernel's exit left out: ``_runs``), walked down from ``roots`` through
    each thread's ``children`` in ``/proc``: with a namespace's init and the process forked into it, all of that
    namespace (an orphan there is its init's), read from outside, so that nothing agent code there says is needed;
    the walk (``throttle.descendants``) costs the namespace's size, not the machine's."""
    return [p for p in [*roots, *throttle.descendants(list(roots))] if _runs(p, _threads(p), exiting)]


def _runs(pid: int, threads: list[str], exiting: bool = False) -> bool:
    """Whether process ``pid`` may still run code of its own: one of its ``threads`` is neither a zombie nor in
    the kernel's exit (``PF_EXITING``, set before the exit frees the process's memory: from then on the thread
    never returns to its code, and every call it made has returned); with ``exiting``, or still in that exit."""
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if fields[0] not in (b"Z", b"X") and (exiting or not int(fields[6]) & PF_EXITING):
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False


SWEEPS = 50  # passes of ``kill_all_but`` at most: a tree that forks as fast as it is killed is still bounded
KILL_SECONDS = 2.0  # the longest ``kill_all_but`` waits for the processes it killed to be ended


def kill_all_but(roots: set[int], spared: set[int]) -> bool:
    """``SIGKILL`` every process of ``members(roots)`` but ``spared``, until none is left: True then, False where
    some were still there after ``KILL_SECONDS`` or ``SWEEPS`` passes.  Each is waited for until it has exited (a
    zombie at most: it runs nothing, writes nothing more and holds no memory).  Each pass stops them first, so
    that none forks while the others are killed, then waits on their pidfds, which wake it when one has exited,
    and the next pass finds what forked before it was stopped or was passed to the namespace's init."""
    deadline = time.monotonic() + KILL_SECONDS
    for _ in range(SWEEPS):
        left = [p for p in members(roots, exiting=True) if p not in spared]
        if not left:
            return True
        pidfds = _kill(left)
        try:
            if pidfds is None or not _all_ended(pidfds, deadline):
                return False
        finally:
            for fd in pidfds or ():
                os.close(fd)
    return False


def kill_now(roots: set[int], spared: set[int]) -> None:
    """``SIGSTOP``, then ``SIGKILL``, every process of ``members(roots)`` but ``spared``, in one pass and without
    waiting for their exits: none of them runs code of its own again (what forked meanwhile, or could not be
    signalled, is left to the next ``kill_all_but``, which waits)."""
    for fd in _kill([p for p in members(roots) if p not in spared]) or ():
        os.close(fd)


def _kill(pids: list[int]) -> list[int] | None:
    """Stop, then kill, ``pids`` through pidfds (a pid reused meanwhile is not signalled): the pidfds, open, of
    those not gone yet; None where one could not be opened (no fd left: it cannot be signalled nor waited for)."""
    pidfds = []
    for pid in pids:
        try:
            pidfds.append(os.pidfd_open(pid))
        except ProcessLookupError:  # it exited meanwhile
            continue
        except OSError:
            for fd in pidfds:
                os.close(fd)
            return None
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for fd in pidfds:
            _signal(fd, sig)
    return pidfds


def _signal(pidfd: int, sig: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, sig)
    except ProcessLookupError:  # it exited meanwhile
        pass


def _all_ended(pidfds: list[int], deadline: float) -> bool:
    """Wait until every process of ``pidfds`` has exited (its pidfd reads ready), at most until ``deadline``
    (``time.monotonic``)."""
    poller = select.poll()
    for fd in pidfds:
        poller.register(fd, select.POLLIN)
    waiting = set(pidfds)
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        for fd, _ in poller.poll(left * 1000):
            poller.unregister(fd)
            waiting.discard(fd)
    return True


def _threads(pid: int) -> list[str]:
    """The thread ids of process ``pid`` (none when it is gone)."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


IPC_RMID = 0
SYSV = ("shm", "sem", "msg")  # /proc/sysvipc's files: the System V objects of the reader's IPC namespace


def own_ipc() -> bool:
    """An IPC namespace of this process's own (the warden's, in the jail): one its user namespace owns, so that it
    may come back to it from a host's (``clear_ipc``)."""
    if limits._libc().unshare(CLONE_NEWIPC) != 0:
        return False
    _IPC[0] = os.open("/proc/thread-self/ns/ipc", os.O_RDONLY)
    return True


def clear_ipc(init: int) -> bool:
    """Remove every System V shared memory segment, semaphore set and message queue of the IPC namespace of the
    namespace whose init is ``init`` (made by ``fork`` here): this process enters it, removes them and comes back
    (an error if it could not come back: it must never stay there).  False where it could not enter."""
    libc = limits._libc()
    theirs, ours = _IPC.get(init), _IPC.get(0)  # 0: this process's own (``own_ipc``)
    if not init or theirs is None or ours is None or libc.setns(theirs, CLONE_NEWIPC) != 0:
        return False
    try:
        for kind in SYSV:
            for ident in _sysv_ids(kind):
                if kind == "sem":
                    libc.semctl(ident, 0, IPC_RMID)
                else:
                    getattr(libc, f"{kind}ctl")(ident, IPC_RMID, None)
    finally:
        if libc.setns(ours, CLONE_NEWIPC) != 0:
            raise OSError(ctypes.get_errno(), "setns back to the warden's IPC namespace failed")
    return True


def _sysv_ids(kind: str) -> list[int]:
    """The ids of this IPC namespace's System V objects of ``kind`` (``SYSV``)."""
    try:
        with open(f"/proc/sysvipc/{kind}") as fh:
            rows = fh.read().splitlines()[1:]
    except OSError:
        return []
    return [int(row.split()[1]) for row in rows if len(row.split()) > 1 and row.split()[1].isdigit()]


MARK_ENTRIES = 10_000  # the most entries ``written`` reads in a budget
Mark = tuple[tuple[str, int, int, int, int, int], ...]


def written(init: int) -> Mark | None:
    """What the budget of the namespace whose init is ``init`` holds (``_budget``: its ``/tmp``, ``/dev/shm``, POSIX
    message queues and what was written in its own folders): each entry's path, inode, mode, size and change
    and modification times, which any write, rename, removal or new entry changes (a change time no process
    sets).  Read from outside, through the fd its init handed over; None where there is none, or where it holds
    more than ``MARK_ENTRIES`` entries or is deeper than ``trees.DEEPEST`` folders (the walk is the
    warden's work, on its own stack: ``trees.walk``).  Overlay's work folders (its own, emptied
    after each use) are left out."""
    root = _ROOTS.get(init)
    if root is None:
        return None
    found: list[tuple[str, int, int, int, int, int]] = []
    try:
        for top, _, name, info in trees.walk(root, trees.DEEPEST, _overlay_work):
            if len(found) >= MARK_ENTRIES:
                return None
            found.append((f"{top}/{name}", info.st_ino, info.st_mode, info.st_size, info.st_ctime_ns,
                          info.st_mtime_ns))
    except (trees.TooDeep, OSError):  # deeper than a walk goes (no recursion: trees.py), or unreadable
        return None
    return tuple(sorted(found))


def _overlay_work(path: str) -> bool:
    """Whether ``path`` is one of overlay's work folders at the top of a budget (``written`` leaves them out)."""
    return path.startswith("./work") and path.count("/") == 1


SETTLE_SECONDS = 1.1  # the longest ``settled`` waits: a message queue's times count whole seconds
CLOCK_REALTIME_COARSE = 5  # the clock the kernel stamps files with (Linux; the time module lacks its name)


def settled(init: int) -> Mark | None:
    """``written`` at a game's start, once every entry's change time is past, so that any later change gives
    it another: an entry changed in the file system's current tick (whole seconds for message queues) is read
    again when the clock has moved on (at most ``SETTLE_SECONDS``); None where it could not be read so."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        mark = written(init)
        now = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
        due = max((_due(entry[0], entry[4], now) for entry in mark or ()), default=0)
        if mark is None or not due:
            return mark
        time.sleep(max(0.002, (due - now) / 1e9))
    return None


def _due(path: str, changed: int, now: int) -> int:
    """When a change to the entry at ``path`` (changed at ``changed``) would give it another change time, where
    that is after ``now`` (0: it is not): a message queue's next second, a file's next tick."""
    if path == "./mq":  # the queues' folder: what it holds are entries of their own, its times no agent reads
        return 0
    if path.startswith("./mq/"):
        return (changed // 10**9 + 1) * 10**9 if changed >= now // 10**9 * 10**9 else 0
    return changed + 1 if changed >= now else 0


def outer_pid(parent: int, inner: int) -> int | None:
    """The pid, as this process sees it, of ``parent``'s child that is ``inner`` in ``parent``'s own namespace
    (a template says its hosts' pids as it sees them); None when there is no such child."""
    try:
        with open(f"/proc/{parent}/task/{parent}/children") as fh:
            kids = [int(k) for k in fh.read().split()]
    except OSError:
        return None
    for kid in kids:
        try:
            with open(f"/proc/{kid}/status") as fh:
                for line in fh:
                    if line.startswith("NSpid:"):
                        if int(line.split()[-1]) == inner:
                            return kid
                        break
        except (OSError, ValueError):
            continue
    return None
