"""CPU quotas for ``--slowdown``: a cgroup per agent host, where this machine lets the harness make one.

The kernel's CFS bandwidth control gives a cgroup ``quota`` microseconds of CPU
in every ``period``: a host alone in a cgroup with a quota of ``period / X``
runs as on a CPU X times slower, with no signal and no thread of ours in its
way.  It is cgroup v2's ``cpu.max`` or, on a v1 hierarchy, ``cpu.cfs_quota_us``
and ``cpu.cfs_period_us`` (the same mechanism).  The harness may use it where
its own cgroup is writable and has the CPU controller (root in most containers
and virtual machines; a user's systemd scope where delegated); elsewhere the
throttle falls back to its duty cycle of ``SIGSTOP``/``SIGCONT`` (``throttle.py``).
``CXFORGE_CGROUP=off`` forces the fallback.

The referee makes one cgroup per warden (``make``), shown writable inside the
jail; the warden makes one inside it per slowed host (``limit``) and removes
it when the host ends (``release``).  What a crash leaves, the jail's shell
removes once the jail has ended, and the next referee removes the cgroups of
referees that are gone (a ``kill -9`` of a whole process group leaves them).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from functools import cache

PERIOD_US = 20_000  # microseconds of one quota period
PREFIX = "cxforge-warden-"  # a warden's cgroup: PREFIX, its referee's pid, "-", a random part


@dataclass(frozen=True)
class Group:
    """A cgroup folder this process may make cpu-limited children in, and its hierarchy's version (1 or 2)."""

    folder: str
    version: int

    def to_arg(self) -> str:
        return f"{self.version}:{self.folder}"

    @staticmethod
    def from_arg(text: str) -> Group | None:
        version, _, folder = text.partition(":")
        return Group(folder, int(version)) if folder and version in ("1", "2") else None


def describe(group: Group) -> str:
    """How a host in a cgroup of ``group`` is held to its share, as the reports say it."""
    knob = "cpu.max" if group.version == 2 else "cpu.cfs_quota_us"
    return f"a CPU quota on the host's own cgroup: cgroup v{group.version} {knob}, every {PERIOD_US // 1000} ms"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of each cgroup mount."""
    out = []
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields = right.split()
                if len(fields) >= 3 and fields[0] in ("cgroup", "cgroup2"):
                    out.append((left.split()[4], fields[0], set(fields[2].split(","))))
    except OSError:
        pass
    return out


def _own_paths() -> dict[str, str]:
    """This process's cgroup path by controller (``""`` for v2's unified line)."""
    out = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    out[name] = path
    except (OSError, ValueError):
        pass
    return out


def _candidates() -> list[Group]:
    own, found = _own_paths(), []
    for point, kind, options in _mounts():
        if kind == "cgroup2" and "" in own:
            folder = os.path.normpath(os.path.join(point, own[""].lstrip("/")))
            try:
                with open(os.path.join(folder, "cgroup.subtree_control")) as fh:
                    if "cpu" in fh.read().split():
                        found.append(Group(folder, 2))
            except OSError:
                pass
        elif kind == "cgroup" and "cpu" in options and "cpu" in own:
            found.append(Group(os.path.normpath(os.path.join(point, own["cpu"].lstrip("/"))), 1))
    return found


def _set_share(folder: str, version: int, share: float) -> None:
    quota = max(1000, int(PERIOD_US * share))
    if version == 2:
        _write(os.path.join(folder, "cpu.max"), f"{quota} {PERIOD_US}")
    else:
        _write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
        _write(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


@cache
def available() -> Group | None:
    """The cgroup this process may make cpu-limited children in (tried: a child made, given a quota, removed),
    or None."""
    if os.environ.get("CXFORGE_CGROUP", "on").strip().lower() in ("off", "0", "no"):
        return None
    for group in _candidates():
        try:
            trial = tempfile.mkdtemp(prefix="cxforge-probe-", dir=group.folder)
        except OSError:
            continue
        try:
            _set_share(trial, group.version, 0.5)
            return group
        except OSError:
            continue
        finally:
            _remove(trial)
    return None


def make() -> Group | None:
    """A new cgroup for one warden's hosts, named for this process, or None where none may be made.  The
    cgroups of referees that are gone (killed before they could remove them) are removed first."""
    parent = available()
    if parent is None:
        return None
    _remove_orphans(parent)
    try:
        return Group(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent.folder), parent.version)
    except OSError:
        return None


def _remove_orphans(parent: Group) -> None:
    """Remove the warden cgroups in ``parent`` whose referee (the pid in the name) no longer runs."""
    try:
        names = [e.name for e in os.scandir(parent.folder) if e.name.startswith(PREFIX) and e.is_dir()]
    except OSError:
        return
    for name in names:
        owner = name[len(PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            remove(Group(os.path.join(parent.folder, name), parent.version), seconds=0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def limit(group: Group, pid: int, share: float) -> bool:
    """Move process ``pid`` into its own child of ``group`` with ``share`` of a CPU; False where it failed."""
    folder = os.path.join(group.folder, f"host-{pid}")
    try:
        os.makedirs(folder, exist_ok=True)
        _set_share(folder, group.version, share)
        _write(os.path.join(folder, "cgroup.procs"), str(pid))
        return True
    except OSError:
        _remove(folder)
        return False


def release(group: Group, pid: int) -> bool:
    """Remove host ``pid``'s cgroup; False while a process is still in it (try again once it is gone)."""
    return _remove(os.path.join(group.folder, f"host-{pid}"))


def _remove(folder: str) -> bool:
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def remove(group: Group, seconds: float = 1.0) -> bool:
    """Remove a warden's cgroup and the host cgroups left in it, waiting up to ``seconds`` for their last
    processes to finish exiting; False if it is still there."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            kids = [e.path for e in os.scandir(group.folder) if e.is_dir()]
        except FileNotFoundError:
            return True
        except OSError:
            kids = []
        for kid in kids:
            _remove(kid)
        if _remove(group.folder) or time.monotonic() > deadline:
            return not os.path.isdir(group.folder)
        time.sleep(0.01)
