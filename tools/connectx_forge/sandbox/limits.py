"""What an agent host may use, and the clean world it runs in: rlimits, environment, parent-death signals.

Everything here runs in the host child (``host.py``) after ``fork`` and before
any agent code, except ``parse_memory`` (the ``--memory`` flag) and
``Limits`` itself (built by the referee, sent to the warden as JSON).

* address space (``RLIMIT_AS``: 2 GiB by default, ``cxforge match --memory``, on top
  of what the host has mapped when it starts): an allocation beyond it raises
  ``MemoryError`` in the agent (reported as ``memory``); the same ``memory`` holds
  the whole process tree, its tmpfs files included, where the warden may make
  cgroups (``cgroup.py``);
* CPU seconds (``RLIMIT_CPU``): a whole game's worth of Kaggle's time
  (``cpu_seconds``), so a runaway background thread cannot burn forever;
* processes (``RLIMIT_NPROC``, counted per user by Linux): where the warden is
  real root, each agent runs as a uid of its own (``become``), so the cap is
  its own ``extra_processes``; elsewhere the cap is the user's current count
  plus ``extra_processes``;
* file size (``RLIMIT_FSIZE``, default 64 MiB; ``SIGXFSZ`` is ignored, so a
  write past it fails with ``EFBIG`` instead of killing the host);
* captured output: ``LOG_CHARS`` characters of its prints (Kaggle keeps 10,000);
  fds 1 and 2 are a pipe the referee reads, keeping at most ``log_bytes``
  (``seat.Output``): an agent that writes to them straight grows no file.

Every rlimit is hard as well as soft (``harden``): an agent cannot raise one
back (``RLIMIT_CPU``'s hard limit is a second above its soft one, so that
``SIGXCPU`` comes first and ``SIGKILL`` ends one that ignores it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import re
import resource
import signal
from dataclasses import dataclass
from functools import cache
from typing import TypedDict

from connectx_forge.credentials import is_secret_name
from connectx_forge.errors import UserError

MIB = 1 << 20
DEFAULT_MEMORY = 2048 * MIB
DEFAULT_FILE_SIZE = 64 * MIB
DEFAULT_PROCESSES = 256  # an agent's processes and threads (Kaggle's container caps them too; not published)
DEFAULT_TMP = 512 * MIB  # all an agent writes: its /tmp, /dev/shm, game folder and HOME (namespace.mount_own)
UID_FIRST, UID_COUNT = 1 << 30, 1 << 30  # where a host's own uid is drawn from (far above any user's or system's)
LOG_CHARS = 10_000  # Kaggle's maxLogLength
SYSV_SEGMENTS = 64  # SysV shared memory segments a host's IPC namespace allows (namespace.cap_sysv): its mark
LOG_BYTES = MIB  # what the referee keeps of an agent's output per game (its first and last halves)
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
PR_SET_CHILD_SUBREAPER = 36
_UNITS = {"": MIB, "K": 1 << 10, "M": MIB, "G": 1 << 30}


class LimitsJson(TypedDict):
    """``Limits`` as a host's setup carries them to the warden and the host (``Limits.to_json``)."""

    memory: int
    file_size: int
    cpu_seconds: int | None
    extra_processes: int
    tmp_size: int
    log_chars: int
    log_bytes: int
    slowdown: float


@dataclass(frozen=True)
class Limits:
    """The resource limits of one agent host (bytes and seconds); ``cpu_seconds`` None: per game."""

    memory: int = DEFAULT_MEMORY
    file_size: int = DEFAULT_FILE_SIZE
    cpu_seconds: int | None = None
    extra_processes: int = DEFAULT_PROCESSES  # with a uid of its own: its processes; else beyond the user's
    tmp_size: int = DEFAULT_TMP  # all it writes: /tmp, /dev/shm, game folder, HOME (one tmpfs), and SysV shm beside
    log_chars: int = LOG_CHARS
    log_bytes: int = LOG_BYTES  # of its output (fds 1 and 2) the referee keeps per game; the rest is counted
    slowdown: float = 1.0  # the host gets 1/slowdown of a CPU (the warden's throttle, throttle.py)

    def to_json(self) -> LimitsJson:
        return {"memory": self.memory, "file_size": self.file_size, "cpu_seconds": self.cpu_seconds,
                "extra_processes": self.extra_processes, "tmp_size": self.tmp_size, "log_chars": self.log_chars,
                "log_bytes": self.log_bytes, "slowdown": self.slowdown}  # every field, as dataclasses.asdict


def parse_memory(text: str) -> int:
    """``--memory``: MiB as a plain number (``512``), or with a suffix K, M or G (``1.5G``); bytes out."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?\s*", str(text), re.IGNORECASE)
    if m is None:
        raise UserError(f"--memory takes MiB (512) or a size with K, M or G (1.5G), got {text!r}")
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if size < 64 * MIB:
        raise UserError(f"--memory must be at least 64 MiB (Python itself needs it), got {text!r}")
    return size


def game_cpu_seconds(cells: int, act_timeout: float, overage: float) -> int:
    """CPU seconds for one game: every move at ``act_timeout``, the whole overage, twice over, and 10 s."""
    return int(math.ceil(2 * ((cells + 1) // 2 * act_timeout + overage))) + 10


MAX_ACTION = 1 << 16  # the most bytes of a JSON action the referee takes (a game may set its own: GameInfo.max_action)


@dataclass(frozen=True)
class SeatBudget:
    """What one seat may spend in one game: Kaggle's clock (``act_timeout`` a move, ``overage`` in all), the
    CPU seconds of the whole game, and the most bytes of one JSON action."""

    act_timeout: float
    overage: float
    cpu_seconds: int
    max_action: int = MAX_ACTION

    @classmethod
    def of_board(cls, size: tuple[int, int, int], act_timeout: float, overage: float) -> SeatBudget:
        """A ConnectX seat's budget: its CPU seconds from the board's cells (``game_cpu_seconds``)."""
        return cls(act_timeout, overage, game_cpu_seconds(size[0] * size[1], act_timeout, overage))


@cache
def _libc() -> ctypes.CDLL:
    """libc, found once (``find_library`` runs programs: never in a host, the warden calls this first)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` on Linux; False where it is not available."""
    try:
        done: int = _libc().prctl(option, value, 0, 0, 0)  # a c_int result, which ctypes returns as an int
        return done == 0
    except (OSError, AttributeError):
        return False


def set_name(name: str) -> None:
    """This process's name as ``ps`` and ``/proc/PID/comm`` show it (at most 15 bytes)."""
    try:
        _libc().prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):
        pass


def drop_capabilities(uid: int | None = None) -> bool:
    """Give up every capability for good (root in a container keeps many, CAP_SYS_ADMIN among them, even in
    the jail): none effective, permitted or inheritable, none left to gain (the bounding set emptied, no new
    privileges through ``execve``); with ``uid``, run as that uid from then on (``become``).  False where the
    kernel refused a step (a failed change of uid raises: a host must never run agent code as root)."""
    libc, ok = _libc(), True
    ok &= prctl(PR_SET_NO_NEW_PRIVS, 1)
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1:
            ok &= libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0
    if uid is not None and os.getuid() != uid:
        become(uid)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two sets of (effective, permitted, inheritable), all empty
    ok &= libc.capset(header, data) == 0
    return bool(ok)


def private_uids() -> bool:
    """Whether this process may run each host as a uid of its own: real root (all uids mapped, not a user
    namespace's one) with ``CAP_SETUID`` and ``CAP_SETGID``."""
    try:
        with open("/proc/self/uid_map") as fh:
            mapped = [line.split() for line in fh if line.strip()]
        with open("/proc/self/status") as fh:
            eff = next(int(line.split()[1], 16) for line in fh if line.startswith("CapEff:"))
    except (OSError, ValueError, StopIteration):
        return False
    full = mapped == [["0", "0", "4294967295"]]
    return os.geteuid() == 0 and full and bool(eff >> 6 & 1) and bool(eff >> 7 & 1)


def new_uid() -> int:
    """A uid (and gid) for one host, drawn at random where no user or service has one: nothing else on the
    machine runs as it, so ``RLIMIT_NPROC`` counts that host's processes alone."""
    import secrets

    return UID_FIRST + secrets.randbelow(UID_COUNT)


def become(uid: int) -> None:
    """Run as ``uid`` (and the group of that number, no supplementary groups), for good: real, effective and
    saved ids, so that no capability is left (the kernel clears them when root's ids all change)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def die_with_parent(sig: int, parent: int) -> None:
    """Get ``sig`` when the parent (thread) dies; exit now if it is already gone."""
    prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os._exit(1)


def user_processes() -> int:
    """How many processes this user runs (what ``RLIMIT_NPROC`` counts)."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


def _set(which: int, value: int, above: int = 0) -> None:
    """Set rlimit ``which`` to ``value``, soft and hard (hard ``above`` more), never above the hard one now."""
    _, hard = resource.getrlimit(which)
    soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
    top = soft + above if hard == resource.RLIM_INFINITY else min(soft + above, hard)
    try:
        resource.setrlimit(which, (soft, top))
    except (ValueError, OSError):
        pass  # a cap that cannot be set (e.g. below what is in use) is left as it is, and hardened


def harden() -> None:
    """Every rlimit's hard limit down to its soft one: nothing this process (or its children) may raise."""
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            which = getattr(resource, name)
            soft, hard = resource.getrlimit(which)
            if soft != hard:
                try:
                    resource.setrlimit(which, (soft, soft))
                except (ValueError, OSError):
                    pass


def address_space() -> int:
    """This process's mapped address space now, in bytes (``VmSize``; 0 where unknown)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def apply(limits: Limits, cpu_seconds: int, nproc: int) -> None:
    """Set this process's rlimits (before any agent code runs).

    The address-space cap is ``limits.memory`` ON TOP of what the host has mapped
    when it starts (Python, numpy and kaggle_environments: ~170 MB here, more
    where numpy's BLAS reserves buffers for many cores), so the agent may add
    ``limits.memory`` bytes whatever the machine.
    """
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    harden()
    _set(resource.RLIMIT_AS, limits.memory + address_space())
    _set(resource.RLIMIT_FSIZE, limits.file_size)
    _set(resource.RLIMIT_CPU, limits.cpu_seconds or cpu_seconds, 1)
    _set(resource.RLIMIT_NPROC, nproc)
    _set(resource.RLIMIT_CORE, 0)


def clean_environment(home: str | None = None) -> None:
    """This process's environment without credentials, and ``HOME`` the empty ``home`` (when given).

    The warden cleans its own once, so a host (a fork of it) only sets ``HOME``.
    """
    for k in [k for k in os.environ if is_secret_name(k)]:
        del os.environ[k]
    if home is not None:
        os.environ["HOME"] = home
