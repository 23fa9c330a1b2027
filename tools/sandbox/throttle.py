"""The throttle: ``--slowdown X`` gives each agent host 1/X of a CPU, as on a machine X times slower.

Where each host has cgroups of its own with the CPU controller (``cgroup.py``),
a slowed host gets a CPU quota there.  Elsewhere a thread of the warden
stops and continues each slowed host's process group on a duty cycle
(``SIGSTOP``/``SIGCONT``): in every ``PERIOD`` a host runs for ``PERIOD / X``,
then stands still.  So the agent's own clock (wall time) runs
as usual while it gets 1/X of the CPU time it would: an agent that times its
search by the clock searches X times less, and one that does a fixed amount
of work takes X times longer, against Kaggle's clock, which stays wall time.
The duty cycle works wherever the warden may signal its hosts (it forked them).
"""

from __future__ import annotations

import os
import signal
import threading
import time

from connectx_forge.tools.sandbox import cgroup

PERIOD = 0.02  # seconds of one duty cycle


def method(group: cgroup.Group | None) -> str:
    """How a slowed host is held to its share, as the reports say it: ``group``'s quota, or the duty cycle."""
    if group is not None:
        return cgroup.describe(group)
    return f"a duty cycle of SIGSTOP/SIGCONT on the host's process group every {PERIOD * 1000:g} ms"


def _signal(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Throttle:
    """The slowed hosts and the thread that runs their duty cycle.

    Each period a host runs for what keeps its running time since it was
    slowed at ``share`` of the time elapsed, so a late wake-up of this thread
    (a loaded machine) is paid back in the next periods instead of adding up.
    """

    def __init__(self) -> None:
        self.hosts: dict[int, list[float]] = {}  # process group -> [share, seconds run, when first cycled]
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, pid: int, slowdown: float, tree: cgroup.Tree | None = None) -> str | None:
        """Slow host ``pid`` (a process group; its cgroups ``tree``) down ``slowdown`` times (1 leaves it
        alone): how it is held (``method``), or None."""
        if slowdown <= 1:
            return None
        group = None if tree is None else cgroup.slow(tree, 1 / slowdown)
        if group is not None:
            return method(group)
        with self.lock:
            self.hosts[pid] = [1 / slowdown, 0.0, -1.0]
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="cxforge-throttle", daemon=True)
            self.thread.start()
        return method(None)

    def remove(self, pid: int) -> None:
        """Stop slowing ``pid`` (it ended); it is continued, so that it can exit."""
        with self.lock:  # under the lock: once this returns, the thread stops it no more
            if self.hosts.pop(pid, None) is not None:
                _signal(pid, signal.SIGCONT)

    def _run(self) -> None:
        while True:
            start = time.monotonic()
            with self.lock:
                for host in self.hosts.values():
                    if host[2] < 0:
                        host[2] = start
                # each host's time to run this period: its share of all the time since it was first cycled
                runs = sorted((max(0.0, min(PERIOD, host[0] * (start + PERIOD - host[2]) - host[1])), pid)
                              for pid, host in self.hosts.items())
            for run, pid in runs:
                if run > 0:
                    _signal(pid, signal.SIGCONT)
            for run, pid in runs:  # the shortest run stops first
                if run <= 0:
                    continue
                time.sleep(max(0.0, start + run - time.monotonic()))
                with self.lock:
                    if pid in self.hosts:  # not removed meanwhile (a removed host must go on running)
                        _signal(pid, signal.SIGSTOP)
                        self.hosts[pid][1] += time.monotonic() - start
            time.sleep(max(0.0, start + PERIOD - time.monotonic()))
