"""Ending agent hosts: kill a host's process group, reap it, and learn how it died.

Shared by the warden (``warden.py``), whose hosts are its children, and by a
template (``template.py``), whose hosts are its own: only a process's parent
can read its wait status, so each ends the hosts it forked.
"""

from __future__ import annotations

import os
import signal
import time

from connectx_forge.tools.sandbox import cgroup, throttle


class Hosts:
    """The hosts one process forked: those running, and the wait statuses reaped but not yet asked for;
    ``group``: where the slowed ones get cgroups of their own (``cgroup.py``; None: the duty cycle)."""

    def __init__(self, group: cgroup.Group | None = None) -> None:
        self.running: set[int] = set()
        self.reaped: dict[int, int] = {}
        self.throttle = throttle.Throttle(group)  # hosts slowed down (--slowdown)


def killpg(pid: int) -> None:
    """``SIGKILL`` process group ``pid``, if it is still there."""
    try:
        os.killpg(pid, signal.SIGKILL)
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


def children() -> list[int]:
    """The pids of this process's children (from ``/proc``)."""
    me, out = str(os.getpid()), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[1].decode() == me:
            out.append(int(entry.name))
    return out
