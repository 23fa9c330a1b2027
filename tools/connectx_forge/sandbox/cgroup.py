"""Each agent's process tree held together: its memory, its processes and (``--slowdown``) its CPU share.

Limits per process (``limits.py``) do not add up: an agent that starts ten
processes may use ten times ``--memory``, and its files in ``/tmp`` and
``/dev/shm`` (memory too) more.  A cgroup holds a process and everything it
later starts, whatever uid they run as:

* ``memory`` (v1 ``memory.limit_in_bytes``, v2 ``memory.max``; no swap): all the
  tree's memory, its tmpfs files included; past it the kernel's OOM killer ends
  a process of the tree, which the referee reports as ``memory`` (``oom_kills``);
* ``pids`` (``pids.max``): all its processes and threads; a fork past it fails;
* ``cpu`` (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``): with a quota of ``period / X``
  it runs as on a CPU X times slower (``--slowdown``), with no signal and no thread
  of ours in its way.

The harness may make such cgroups on a v1 hierarchy in its own cgroup, on v2 in
its own cgroup or the nearest ancestor that hands the controller to its
children (as root on most machines, virtual machines and containers whose
cgroup filesystem is writable; a user's delegated cgroup).  Elsewhere the
per-process limits are all there is, ``check`` says so, and the throttle falls
back to its duty cycle of ``SIGSTOP``/``SIGCONT`` (``throttle.py``).
``CXFORGE_CGROUP=off`` forces that.

The referee makes one cgroup per warden in each hierarchy (``make``), shown
writable inside the jail but to no host (``namespace.mount_own``); the warden
makes a tree in them for each fresh host and each template (``grow``), which the
forked child joins before anything else (``join``), and removes it when the
host ends (``release``).  What a crash leaves, the jail's shell removes once the
jail has ended, and the next referee removes the cgroups of referees that are
gone (a ``kill -9`` of a whole process group leaves them).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import cache

from connectx_forge.children import program

PERIOD_US = 20_000  # microseconds of one quota period
PREFIX = "cxforge-warden-"  # a warden's cgroup: PREFIX, its referee's pid, "-", a random part
CONTROLLERS = ("cpu", "memory", "pids")  # what the harness holds its hosts to: CPU share, memory, processes
HOST = "host-"  # a host's (or template's) own cgroup in each of its warden's: HOST and a number


@dataclass(frozen=True)
class Group:
    """A cgroup folder this process may make children in, its hierarchy's version (1 or 2), and the
    ``controllers`` (of ``CONTROLLERS``) those children may be held to."""

    folder: str
    version: int
    controllers: tuple[str, ...] = ("cpu",)


def to_arg(groups: tuple[Group, ...]) -> str:
    """``groups`` as one command-line word (``from_arg`` reads it back)."""
    return json.dumps([[g.folder, g.version, list(g.controllers)] for g in groups])


def from_arg(text: str) -> tuple[Group, ...]:
    """The groups ``to_arg`` wrote (none for anything else)."""
    try:
        return tuple(Group(str(folder), int(version), tuple(str(c) for c in controllers if c in CONTROLLERS))
                     for folder, version, controllers in json.loads(text) if version in (1, 2))
    except (ValueError, TypeError):
        return ()


def describe(group: Group) -> str:
    """How a host in a cgroup of ``group`` is held to its share, as the reports say it."""
    knob = "cpu.max" if group.version == 2 else "cpu.cfs_quota_us"
    return f"a CPU quota on the host's own cgroup: cgroup v{group.version} {knob}, every {PERIOD_US // 1000} ms"


def holding(groups: tuple[Group, ...], controller: str) -> Group | None:
    """The one of ``groups`` whose children may be held by ``controller``, or None."""
    return next((g for g in groups if controller in g.controllers), None)


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


def candidates(mounts: list[Mount], own: dict[str, str], controller: str = "cpu") -> list[Group]:
    """Where this process might make cgroups held by ``controller``, best first, given its cgroup ``mounts`` and
    its ``own`` cgroup paths, each with every controller of ``CONTROLLERS`` it could hold children to
    (unproven: ``available`` tries each)."""
    found: list[Group] = []
    for mount in mounts:
        if mount.version == 2 and "" in own:
            for folder in _upward(mount, own[""]):
                handed = _handed(folder)
                if controller in handed:
                    found.append(Group(folder, 2, tuple(c for c in CONTROLLERS if c in handed)))
        elif mount.version == 1 and controller in mount.options and controller in own:
            found += [Group(folder, 1, tuple(c for c in CONTROLLERS if c in mount.options))
                      for folder in _upward(mount, own[controller])[:1]]
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


def _handed(folder: str) -> set[str]:
    """The controllers v2 cgroup ``folder`` hands to its children."""
    try:
        with open(os.path.join(folder, "cgroup.subtree_control")) as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def _set_share(folder: str, version: int, share: float) -> None:
    quota = max(1000, int(PERIOD_US * share))
    if version == 2:
        _write(os.path.join(folder, "cpu.max"), f"{quota} {PERIOD_US}")
    else:
        _write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
        _write(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))


def _set_memory(folder: str, version: int, memory: int) -> None:
    """At most ``memory`` bytes for all the processes of cgroup ``folder`` (and none of swap, where the
    kernel counts it), their files in memory (a tmpfs: ``/tmp``, ``/dev/shm``) included."""
    if version == 2:
        _write(os.path.join(folder, "memory.max"), str(memory))
        swap = os.path.join(folder, "memory.swap.max")
        if os.path.exists(swap):
            _write(swap, "0")
    else:
        _write(os.path.join(folder, "memory.limit_in_bytes"), str(memory))
        swap = os.path.join(folder, "memory.memsw.limit_in_bytes")
        if os.path.exists(swap):
            _write(swap, str(memory))


def _set_processes(folder: str, processes: int) -> None:
    """At most ``processes`` processes and threads in cgroup ``folder`` (a fork beyond it fails with EAGAIN)."""
    _write(os.path.join(folder, "pids.max"), str(processes))


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


@cache
def available() -> tuple[Group, ...]:
    """The cgroups this process may make held children in, one per hierarchy, covering what they can of
    ``CONTROLLERS`` (none: no cgroup here).  Each is tried as it is used: a warden's cgroup made in it, a
    host's cgroup made in that and given each limit, a child moved into it, both removed.  On cgroup v2 a
    process is in one cgroup only, so one v2 folder at most."""
    if os.environ.get("CXFORGE_CGROUP", "on").strip().lower() in ("off", "0", "no"):
        return ()
    mounts, own = _mounts(), _own_paths()
    found: list[Group] = []
    for controller in CONTROLLERS:
        if holding(tuple(found), controller) is not None:
            continue
        for group in candidates(mounts, own, controller):
            if group.version == 2 and any(g.version == 2 for g in found):
                continue
            held = tuple(c for c in group.controllers if holding(tuple(found), c) is None)
            group = Group(group.folder, group.version, held)
            if _works(group):
                found.append(group)
                break
    return tuple(found)


def _works(group: Group) -> bool:
    """Whether a warden's cgroup made in ``group`` holds a host's cgroup to each of its controllers."""
    try:
        trial = _child(group, f"{PREFIX}{os.getpid()}-probe-")  # one left behind goes as orphans do
    except OSError:
        return False
    try:
        host = os.path.join(trial.folder, "host-probe")
        os.mkdir(host)
        _hold(host, group, 0.5, 1 << 30, 64)
        return _takes_a_child(host)
    except OSError:
        return False
    finally:
        remove(trial)


def _hold(folder: str, group: Group, share: float | None, memory: int | None, processes: int | None) -> None:
    """Set host cgroup ``folder``'s limits (in ``group``): those of its controllers given a value."""
    if "cpu" in group.controllers and share is not None:
        _set_share(folder, group.version, share)
    if "memory" in group.controllers and memory is not None:
        _set_memory(folder, group.version, memory)
    if "pids" in group.controllers and processes is not None:
        _set_processes(folder, processes)


def _takes_a_child(folder: str) -> bool:
    """Whether a child of this process may be moved into cgroup ``folder`` (v2 asks for write access where it
    comes from as well as where it goes)."""
    try:  # never a ``sleep`` of the working folder (an empty PATH entry)
        child = subprocess.Popen([program("sleep") or "/bin/sleep", "30"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    """A new cgroup in ``parent`` whose own children may be held by ``parent``'s controllers.  On cgroup v2 a
    cgroup hands a controller to its children only when its ``cgroup.subtree_control`` says so: each is
    written there (a new cgroup holds no process, so v2's rule that only a cgroup without processes may do
    so holds)."""
    folder = tempfile.mkdtemp(prefix=prefix, dir=parent.folder)
    if parent.version == 2:
        try:
            _write(os.path.join(folder, "cgroup.subtree_control"), " ".join(f"+{c}" for c in parent.controllers))
        except OSError:
            _remove(folder)
            raise
    return Group(folder, parent.version, parent.controllers)


def make() -> tuple[Group, ...]:
    """New cgroups for one warden's hosts, one in each of ``available``'s, named for this process (none
    where none may be made).  The cgroups of referees that are gone (killed before they could remove them)
    are removed first."""
    made = []
    for parent in available():
        _remove_orphans(parent)
        try:
            made.append(_child(parent, f"{PREFIX}{os.getpid()}-"))
        except OSError:
            pass
    return tuple(made)


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


@dataclass(frozen=True)
class Tree:
    """The cgroups of one host (or template) and all it starts: a folder in each of its warden's groups."""

    folders: tuple[tuple[Group, str], ...]

    def folder(self, controller: str) -> tuple[Group, str] | None:
        return next(((g, f) for g, f in self.folders if controller in g.controllers), None)


def grow(groups: tuple[Group, ...], name: str, memory: int, processes: int) -> Tree:
    """A tree of cgroups ``name`` in ``groups`` (a warden's), holding all its processes together to ``memory``
    bytes and ``processes`` processes where those controllers are held; an empty tree where none could be
    made."""
    made = []
    for group in groups:
        folder = os.path.join(group.folder, name)
        try:
            os.mkdir(folder)
            _hold(folder, group, None, memory, processes)
        except OSError:
            _remove(folder)
            continue
        made.append((group, folder))
    return Tree(tuple(made))


def entries(tree: Tree) -> tuple[int, ...]:
    """Open ``cgroup.procs`` of each of ``tree``'s folders, for a child to ``join`` before it runs anything
    (the one way for a process and all it later starts to be in the tree from their first instruction)."""
    fds = []
    for _, folder in tree.folders:
        try:
            fds.append(os.open(os.path.join(folder, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            pass
    return tuple(fds)


def join(fds: tuple[int, ...]) -> None:
    """Move this process into the cgroups whose ``cgroup.procs`` ``fds`` are open on (``entries``; "0" is the
    writer, whatever its pid namespace), and close them."""
    for fd in fds:
        try:
            os.write(fd, b"0")
        except OSError:
            pass
        os.close(fd)


def close(fds: tuple[int, ...]) -> None:
    for fd in fds:
        os.close(fd)


def slow(tree: Tree, share: float) -> Group | None:
    """Give ``tree`` ``share`` of a CPU: the group whose quota holds it, or None where it has none."""
    found = tree.folder("cpu")
    if found is None:
        return None
    try:
        _set_share(found[1], found[0].version, share)
    except OSError:
        return None
    return found[0]


def oom_kills(tree: Tree) -> int:
    """How many of ``tree``'s processes the kernel has killed for its memory limit so far."""
    found = tree.folder("memory")
    if found is None:
        return 0
    name = "memory.events" if found[0].version == 2 else "memory.oom_control"
    try:
        with open(os.path.join(found[1], name)) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def release(tree: Tree) -> bool:
    """Remove ``tree``'s cgroups; False while a process is still in one (try again once it is gone)."""
    return all([_remove(folder) for _, folder in tree.folders])


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
