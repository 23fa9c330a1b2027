"""The throttle: ``--slowdown X`` gives each agent host 1/X of a CPU, as on a machine X times slower.

A thread of the warden stops and continues each slowed host's process group on
a duty cycle (``SIGSTOP``/``SIGCONT``): in every ``PERIOD`` a host runs for
``PERIOD / X``, then stands still.  So the agent's own clock (wall time) runs
as usual while it gets 1/X of the CPU time it would: an agent that times its
search by the clock searches X times less, and one that does a fixed amount
of work takes X times longer, against Kaggle's clock, which stays wall time.
The method works wherever the warden may signal its hosts (it forked them);
cgroup v2's ``cpu.max`` would be finer, and is not used.
"""

from __future__ import annotations

import os
import signal
import threading
import time

PERIOD = 0.02  # seconds of one duty cycle
METHOD = f"a duty cycle of SIGSTOP/SIGCONT on the host's process group every {PERIOD * 1000:g} ms"


def _signal(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Throttle:
    """The slowed hosts (process group -> share of a CPU) and the thread that runs their duty cycle."""

    def __init__(self) -> None:
        self.shares: dict[int, float] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, pid: int, slowdown: float) -> None:
        """Slow host ``pid`` (a process group) down ``slowdown`` times; 1 leaves it alone."""
        if slowdown <= 1:
            return
        with self.lock:
            self.shares[pid] = 1 / slowdown
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="cxforge-throttle", daemon=True)
            self.thread.start()

    def remove(self, pid: int) -> None:
        """Stop slowing ``pid`` (it ended); it is continued, so that it can exit."""
        with self.lock:
            known = self.shares.pop(pid, None)
        if known is not None:
            _signal(pid, signal.SIGCONT)

    def _run(self) -> None:
        while True:
            with self.lock:
                shares = sorted(self.shares.items(), key=lambda kv: kv[1])
            start = time.monotonic()
            for pid, _ in shares:
                _signal(pid, signal.SIGCONT)
            for pid, share in shares:  # the smallest share stops first
                time.sleep(max(0.0, start + PERIOD * share - time.monotonic()))
                _signal(pid, signal.SIGSTOP)
            time.sleep(max(0.0, start + PERIOD - time.monotonic()))
