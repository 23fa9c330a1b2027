"""CPU quotas for ``--slowdown``: a cgroup per agent host, where this machine lets the harness make one.

The kernel's CFS bandwidth control gives a cgroup ``quota`` microseconds of CPU
in every ``period``: a host alone in a cgroup with a quota of ``period / X``
runs as on a CPU X times slower, with no signal and no thread of ours in its
way.  It is cgroup v2's ``cpu.max`` or, on a v1 hierarchy, ``cpu.cfs_quota_us``
and ``cpu.cfs_period_us`` (the same mechanism).  The harness may use it where
it may make cgroups with the CPU controller: on v1 in its own cgroup of the
``cpu`` hierarchy, on v2 in its own cgroup or the nearest ancestor that hands
``cpu`` to its children (as root on most machines, virtual machines and
containers whose cgroup filesystem is writable; a user's delegated cgroup).
Elsewhere the throttle falls back to its duty cycle of ``SIGSTOP``/``SIGCONT``
(``throttle.py``).  ``CXFORGE_CGROUP=off`` forces the fallback.

The referee makes one cgroup per warden (``make``), shown writable inside the
jail; the warden makes one inside it per slowed host (``limit``) and removes
it when the host ends (``release``).  What a crash leaves, the jail's shell
removes once the jail has ended, and the next referee removes the cgroups of
referees that are gone (a ``kill -9`` of a whole process group leaves them).
"""

from __future__ import annotations

import os
import subprocess
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


@dataclass(frozen=True)
class Mount:
    """A cgroup hierarchy as mounted here: where, which of its cgroups is at that point, and its kind."""

    point: str  # the mount point
    root: str  # the cgroup shown at the mount point ("/" but where a subtree is mounted)
    version: int  # 1 or 2
    options: frozenset[str]  # the super options (on v1, the controllers)


def _mounts() -> list[Mount]:
    """Each cgroup mount of this process, from its mountinfo."""
    out = []
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields, head = right.split(), left.split()
                if len(fields) >= 3 and len(head) >= 5 and fields[0] in ("cgroup", "cgroup2"):
                    out.append(Mount(head[4], head[3], 2 if fields[0] == "cgroup2" else 1,
                                     frozenset(fields[2].split(","))))
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


def candidates(mounts: list[Mount], own: dict[str, str]) -> list[Group]:
    """Where this process might make cpu-limited cgroups, best first, given its cgroup ``mounts`` and its
    ``own`` cgroup paths (unproven: ``available`` tries each)."""
    found: list[Group] = []
    for mount in mounts:
        if mount.version == 2 and "" in own:
            found += [Group(folder, 2) for folder in _upward(mount, own[""]) if _hands_cpu(folder)]
        elif mount.version == 1 and "cpu" in mount.options and "cpu" in own:
            found += [Group(folder, 1) for folder in _upward(mount, own["cpu"])[:1]]
    return found


def in_own(group: Group, mounts: list[Mount] | None = None, own: dict[str, str] | None = None) -> bool:
    """Whether ``group`` lies in this process's own cgroup (given its ``mounts`` and ``own`` paths, else read),
    so that a cgroup namespace this process opens can still move processes into it (v2's ``nsdelegate``
    forbids moves out of a namespace's cgroup; v1 has no such rule)."""
    if group.version == 1:
        return True
    path = (_own_paths() if own is None else own).get("")
    mine = [] if path is None else [f for m in (_mounts() if mounts is None else mounts) if m.version == 2
                                    for f in _upward(m, path)[:1]]
    return any(os.path.commonpath([group.folder, f]) == f for f in mine)


def _upward(mount: Mount, path: str) -> list[str]:
    """The folders of cgroup ``path`` and of its ancestors in ``mount``, nearest first (none where ``path``
    is outside the mounted subtree).

    On cgroup v2 a cgroup that holds processes may not hand controllers to children (but the root), so the
    harness's own cgroup seldom can: the nearest ancestor that does, where the harness may write (root),
    holds its cgroups instead."""
    root = [p for p in mount.root.split("/") if p]
    parts = [p for p in path.split("/") if p]
    if parts[:len(root)] != root:
        return []
    parts = parts[len(root):]
    return [os.path.join(mount.point, *parts[:depth]) for depth in range(len(parts), -1, -1)]


def _hands_cpu(folder: str) -> bool:
    """Whether v2 cgroup ``folder`` hands the CPU controller to its children."""
    try:
        with open(os.path.join(folder, "cgroup.subtree_control")) as fh:
            return "cpu" in fh.read().split()
    except OSError:
        return False


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
    """The cgroup this process may make cpu-limited children in, or None.  Tried as it is used: a warden's
    cgroup made in it, a host's cgroup made in that and given a quota, both removed."""
    if os.environ.get("CXFORGE_CGROUP", "on").strip().lower() in ("off", "0", "no"):
        return None
    for group in candidates(_mounts(), _own_paths()):
        try:
            trial = _child(group, f"{PREFIX}{os.getpid()}-probe-")  # one left behind goes as orphans do
        except OSError:
            continue
        try:
            host = os.path.join(trial.folder, "host-probe")
            os.mkdir(host)
            _set_share(host, group.version, 0.5)
            if _takes_a_child(host):
                return group
        except OSError:
            continue
        finally:
            remove(trial)
    return None


def _takes_a_child(folder: str) -> bool:
    """Whether a child of this process may be moved into cgroup ``folder`` (v2 asks for write access where it
    comes from as well as where it goes)."""
    try:
        child = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    except OSError:
        return True  # nothing here to try it with: each host's ``limit`` still falls back on its own
    try:
        _write(os.path.join(folder, "cgroup.procs"), str(child.pid))
        return True
    except OSError:
        return False
    finally:
        child.kill()
        child.wait()


def _child(parent: Group, prefix: str) -> Group:
    """A new cgroup in ``parent`` whose own children may be given CPU quotas.  On cgroup v2 a cgroup hands a
    controller to its children only when its ``cgroup.subtree_control`` says so: ``+cpu`` is written there (a
    new cgroup holds no process, so v2's rule that only a cgroup without processes may do so holds)."""
    folder = tempfile.mkdtemp(prefix=prefix, dir=parent.folder)
    if parent.version == 2:
        try:
            _write(os.path.join(folder, "cgroup.subtree_control"), "+cpu")
        except OSError:
            _remove(folder)
            raise
    return Group(folder, parent.version)


def make() -> Group | None:
    """A new cgroup for one warden's hosts, named for this process, or None where none may be made.  The
    cgroups of referees that are gone (killed before they could remove them) are removed first."""
    parent = available()
    if parent is None:
        return None
    _remove_orphans(parent)
    try:
        return _child(parent, f"{PREFIX}{os.getpid()}-")
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
