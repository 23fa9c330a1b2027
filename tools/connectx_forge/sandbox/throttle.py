"""The throttle: ``--slowdown X`` gives each agent host 1/X of a CPU, as on a machine X times slower.

Where each host has cgroups of its own with the CPU controller (``cgroup.py``),
a slowed host gets a CPU quota there.  Elsewhere a thread of the warden
stops and continues each slowed host's whole tree on a duty cycle: in every
``PERIOD`` a host runs for ``PERIOD / X``, then stands still.  The tree is what
the agent cannot leave, whatever it does with process groups and sessions:
its cgroup (v2's freezer, ``cgroup.freeze``), else its PID namespace (every
process there but its init gets ``SIGSTOP``/``SIGCONT``, found from outside
below the init, the host and its template: ``descendants``), else, where neither exists (no
jail), its process group, which a child that calls ``setpgid`` leaves.  So the agent's own clock (wall time) runs
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

from connectx_forge.sandbox import cgroup

PERIOD = 0.02  # seconds of one duty cycle


FROZEN = "cgroup.freeze"  # cgroup v2's freezer: "1" stops every process of the cgroup, "0" lets them run
SWEEPS = 8  # walks of a namespace's tree at most per stop: a process forked meanwhile is found by the next


def method(group: cgroup.Group | None, hold: str = "group") -> str:
    """How a slowed host is held to its share, as the reports say it: ``group``'s quota, or the duty cycle on
    what ``hold`` says (``Hold.how``)."""
    if group is not None:
        return cgroup.describe(group)
    every = f"every {PERIOD * 1000:g} ms"
    return {"freezer": f"a duty cycle of the cgroup v2 freezer on the host's own cgroup {every}",
            "namespace": f"a duty cycle of SIGSTOP/SIGCONT on every process of the host's PID namespace {every}",
            "group": f"a duty cycle of SIGSTOP/SIGCONT on the host's process group {every} (no PID namespace here: "
                     "a child that leaves the group runs at full speed)"}[hold]


def descendants(roots: list[int]) -> list[int]:
    """The processes below ``roots``, each once (read from ``/proc``, each thread's ``children``): with a PID
    namespace's init and the process forked into it (the warden's child, not the init's: ``namespace.fork``),
    every other process there, since an orphan there is adopted by the init or a process under it."""
    found, todo, seen = [], list(roots), set(roots)
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    kids = [k for k in (int(k) for k in fh.read().split()) if k not in seen]
            except (OSError, ValueError):
                continue
            seen.update(kids)
            found += kids
            todo += kids
    return found


class Hold:
    """What the duty cycle stops and continues for one host: its v2 cgroup (``freezer``), else every process of
    its PID namespace but the init and ``spared`` (a templated host's template, which the warden keeps stopped
    during its games: ``template.py``) (``namespace``), else its process group (``group``)."""

    def __init__(self, pid: int, tree: cgroup.Tree | None = None, init: int = 0, spared: int = 0) -> None:
        self.pid, self.init, self.spared = pid, init, spared
        self.stopped: list[int] = []  # what its last stop stopped (``namespace``): what the next go continues
        self.freezer = next((os.path.join(f, FROZEN) for g, f in (tree.folders if tree else ())
                             if g.version == 2 and os.path.exists(os.path.join(f, FROZEN))), None)
        self.how = "freezer" if self.freezer else "namespace" if init else "group"

    def stop(self) -> None:
        if self.freezer is not None:
            _write(self.freezer, "1")
        elif self.init:
            stopped: set[int] = set()
            for _ in range(SWEEPS):  # until a walk finds no process it has not stopped (a stopped one forks none)
                fresh = [p for p in self._tree() if p not in stopped]
                if not fresh:
                    break
                for pid in fresh:
                    _kill(pid, signal.SIGSTOP)
                stopped.update(fresh)
            self.stopped = list(stopped)
        else:
            _killpg(self.pid, signal.SIGSTOP)

    def _tree(self) -> list[int]:
        """The host and every process of its PID namespace but the init and ``spared``: what is below the init,
        the host, and its template (``spared``), which forked it (a fresh host is its warden's child)."""
        return [self.pid, *descendants([r for r in (self.init, self.pid, self.spared) if r])]

    def go(self) -> None:
        if self.freezer is not None:
            _write(self.freezer, "0")
        elif self.init:
            for pid in self.stopped:  # no walk: a stopped process forks nothing, and the host runs at once
                _kill(pid, signal.SIGCONT)
        else:
            _killpg(self.pid, signal.SIGCONT)


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError:
        pass


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _killpg(pid: int, sig: int) -> None:
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
        self.hosts: dict[int, list[float]] = {}  # host -> [share, seconds run, when first cycled]
        self.holds: dict[int, Hold] = {}  # host -> what its duty cycle stops and continues
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, pid: int, slowdown: float, tree: cgroup.Tree | None = None, init: int = 0,
            spared: int = 0) -> str | None:
        """Slow host ``pid`` (a process group; its cgroups ``tree``; ``init``: its PID namespace's, 0 for none;
        ``spared``: a process there the duty cycle leaves alone) down ``slowdown`` times (1 leaves it alone):
        how it is held (``method``), or None."""
        if slowdown <= 1:
            return None
        group = None if tree is None else cgroup.slow(tree, 1 / slowdown)
        if group is not None:
            return method(group)
        hold = Hold(pid, tree, init, spared)
        with self.lock:
            self.hosts[pid] = [1 / slowdown, 0.0, -1.0]
            self.holds[pid] = hold
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="cxforge-throttle", daemon=True)
            self.thread.start()
        return method(None, hold.how)

    def remove(self, pid: int) -> None:
        """Stop slowing ``pid`` (it ended); it is continued, so that it can exit."""
        with self.lock:  # under the lock: once this returns, the thread stops it no more
            hold = self.holds.pop(pid, None)
            if self.hosts.pop(pid, None) is not None and hold is not None:
                hold.go()

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
                holds = dict(self.holds)
            for run, pid in runs:
                if run > 0:
                    holds[pid].go()
            for run, pid in runs:  # the shortest run stops first
                if run <= 0:
                    continue
                time.sleep(max(0.0, start + run - time.monotonic()))
                with self.lock:
                    if pid in self.hosts:  # not removed meanwhile (a removed host must go on running)
                        # its run ends as its stop begins (a stop that walks its namespace runs it a little on)
                        self.hosts[pid][1] += time.monotonic() - start
                        holds[pid].stop()
            time.sleep(max(0.0, start + PERIOD - time.monotonic()))
