"""Ending agent hosts: kill a host's process group, reap it, and learn how it died.

Shared by the warden (``warden.py``), whose hosts are its children, and by a
template (``template.py``), whose hosts are its own: only a process's parent
can read its wait status, so each ends the hosts it forked.
"""

from __future__ import annotations

import os
import signal
import time

from connectx_forge.sandbox import throttle


class Hosts:
    """The hosts one process forked: those running, and the wait statuses reaped but not yet asked for."""

    def __init__(self) -> None:
        self.running: set[int] = set()
        self.reaped: dict[int, int] = {}
        self.throttle = throttle.Throttle()  # hosts slowed down (--slowdown)


def killpg(pid: int) -> None:
    """``SIGKILL`` process group ``pid``, if it is still there."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill(pid: int) -> None:
    """``SIGKILL`` a process and its group (a host that left its group is killed all the same)."""
    killpg(pid)
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap_any(hosts: Hosts) -> None:
    """Reap every child that exited; a host's status is kept, anything else's group is killed (an orphan this
    subreaper inherited, or a host already ended)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        keep(hosts, pid, status)


def keep(hosts: Hosts | None, pid: int, status: int) -> None:
    """What becomes of a reaped child: a running host's status is kept (for ``end`` to answer); anything
    else's group is killed (an orphan this subreaper inherited, or a host already ended)."""
    if hosts is not None and pid in hosts.running:
        hosts.reaped[pid] = status
    else:
        killpg(pid)


def end(hosts: Hosts, pid: int, grace: float) -> int | None:
    """Kill host ``pid``'s group; with ``grace``, first wait that long for it to exit, and reap it: its wait
    status (None without ``grace``: it is reaped later)."""
    if grace <= 0:
        killpg(pid)
        hosts.throttle.remove(pid)
        reap_any(hosts)
        hosts.running.discard(pid)
        hosts.reaped.pop(pid, None)
        return None
    deadline = time.monotonic() + grace
    while pid not in hosts.reaped:
        reap_any(hosts)
        if pid in hosts.reaped or time.monotonic() >= deadline:
            break
        time.sleep(0.005)
    killpg(pid)
    hosts.throttle.remove(pid)
    if pid not in hosts.reaped and pid in hosts.running:
        try:
            _, status = os.waitpid(pid, 0)
            hosts.reaped[pid] = status
        except ChildProcessError:
            pass
    reap_any(hosts)
    hosts.running.discard(pid)
    return hosts.reaped.pop(pid, None)


def parents() -> dict[int, int]:
    """Each process's parent, by pid, as this process's ``/proc`` shows them (its PID namespace's)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                found[int(entry.name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return found


def children() -> list[int]:
    """The pids of this process's children (from ``/proc``)."""
    me = os.getpid()
    return [pid for pid, parent in parents().items() if parent == me]


SWEEPS = 50  # passes of ``sweep`` at most (a leftover that forks as fast as it is killed is still bounded)


def sweep(template: int) -> None:
    """Kill whatever the last games left in this PID namespace (a daemon, a child that left its group): every
    process but its init (1), this process (a spare), its ``template`` and the template's other children (its
    spares; no agent can make one, as the syscall filter refuses ``CLONE_PARENT``).  Run by a spare before its
    game."""
    spared = (1, os.getpid(), template)
    for _ in range(SWEEPS):
        leftovers = [pid for pid, parent in parents().items() if pid not in spared and parent != template]
        if not leftovers:
            return
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.001)
