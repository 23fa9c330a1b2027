"""The jail: bubblewrap around each warden, so that every agent host it forks runs as in Kaggle's container.

Inside (``bwrap``, the sandbox under Flatpak): no network (a private network
namespace with only its own loopback), private process, IPC and UTS
namespaces, and a filesystem of its own that shows, read-only, only the image
(the system's programs and libraries, the few ``/etc`` files the loader reads)
and what the warden runs (this interpreter, the libraries it imports, the
toolkit's packages): never the home folder, the project's other files,
``/run``, ``/var`` or ``/sys``, so no file and no unix socket of the user's is
in reach.  Writable: this warden's game folders and a private ``/tmp``.  A
clean environment (no credential reaches the jail at all) and a new session.
The warden is a fresh Python started in the jail (``python -I -m
connectx_forge.sandbox.warden``: isolated, ``children.py``), which costs one interpreter start per
referee thread, not per game: hosts are still forks of it.  It keeps the
capabilities of ``WARDEN_CAPS`` (real root's where cxforge runs as root: no
user namespace then; else bubblewrap's, inside a user namespace) to put each
host in namespaces of its own (``namespace.py``: its own processes, ``/tmp``
and ``/dev/shm``, a .tar.gz at ``/kaggle_simulations/agent``) and, as root, to
run each as a uid of its own; every host gives them all up and loads the
syscall filter (``syscalls.py``) before any agent code.  Where it cannot, hosts
share the jail's namespaces and the report says so (``probe``, ``bounds``).

Where ``bwrap`` is missing or the kernel refuses its namespaces, hosts run
as before, not jailed, and ``probe()`` says why (the reports print it once).
``CXFORGE_JAIL=off`` turns the jail off.  docs/security.md: the threat model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from connectx_forge.children import is_library, isolated_python, program
from connectx_forge.credentials import exposes
from connectx_forge.errors import UserError
from connectx_forge.sandbox import cgroup, throttle
from connectx_forge.sandbox.limits import Limits
from connectx_forge.sandbox.namespace import KAGGLE_AGENT

INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) to jail agents as Kaggle does"
PATH = "/usr/local/bin:/usr/bin:/bin"
# what a jailed warden imports first; then whether it can make a host's namespaces
PROBE = ("import json, numpy, connectx_forge.sandbox.warden\n"
         "from connectx_forge.sandbox import limits, namespace, syscalls\n"
         "print(json.dumps({'alone': namespace.works(), 'uids': limits.private_uids(), "
         "'seccomp': syscalls.works()}))")
# the warden's: to make namespaces (SYS_ADMIN), give each host a uid of its own and its folders (SETUID, SETGID,
# CHOWN, SETPCAP), end what a host leaves (KILL, SYS_PTRACE to read its children), remove its folders
# (DAC_OVERRIDE, FOWNER), bring up each host's own loopback (NET_ADMIN, in the jail's network namespace and
# those below it); every host and template gives them all up (limits.py)
WARDEN_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_SETPCAP", "CAP_KILL", "CAP_SYS_PTRACE",
               "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_NET_ADMIN")
CAPS = ("--cap-drop", "ALL", *(arg for cap in WARDEN_CAPS for arg in ("--cap-add", cap)))
ALONE = ("jailed (bubblewrap: no network, each agent alone with its own processes, /tmp and /dev/shm, no file "
         "but the image's and its game folder's")
SHARED = ("jailed (bubblewrap: no network, no file but the image's, the game's folder and /tmp; an agent sees the "
          "jail's processes and /tmp: namespaces per agent were refused")
UID = "a uid of its own"
SAME_UID = "the user's uid (not root: no uid of its own)"
FILTER = "no capability, a syscall filter"
NO_FILTER = ("no capability; no syscall filter (libseccomp missing: apt-get install libseccomp2): the seats "
             "can pass bits through locks and watches on the files both see")
PASSED = ("CXFORGE_NATIVE", "CXFORGE_TEST_MARKER")  # what enters the jail from the environment: no credential


def python() -> str:
    """This interpreter's path with its folder's links resolved (a link in a folder above a virtualenv, such as
    pytest's ``pytest-current``, would point into the hidden ``/tmp``; the file itself keeps its name, so that
    the virtualenv is still found beside it)."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def under_tmp() -> list[str]:
    """The shown folders (``shown``) that lie under ``/tmp``: the jail's private ``/tmp`` would hide them, so they
    are bound again on top of it.  ``/tmp`` itself never is (a script run from it puts it on ``sys.path``)."""
    return [path for path in shown() if path.startswith("/tmp/")]


SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")  # the programs and libraries of the image
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime")  # what the dynamic loader and time zone read
# bwrap's /dev, read-only: one folder every seat of the jail sees, which a plain user's seats (the jail's own uid)
# could write in; /dev/shm a tmpfs of its own (each host's own over it: namespace.py), and no pseudo-terminal: the
# jail's devpts lists every seat's and lets a seat of the same uid open another's
DEVICES = ("--dev", "/dev", "--perms", "01777", "--tmpfs", "/dev/shm", "--tmpfs", "/dev/pts",
           "--remount-ro", "/dev/pts", "--remount-ro", "/dev")


def toolkit() -> list[str]:
    """The folders of the toolkit's own packages (``agents``, ``connectx_forge`` and its subpackages): where an
    editable install maps them into a checkout, these alone are shown, not the checkout's other files."""
    import importlib.util

    found = []
    for name in ("agents", "connectx_forge", "connectx_bundler"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        found += list(spec.submodule_search_locations or []) if spec else []
    return found


def shown() -> list[str]:
    """What the jail shows of this machine, read-only, outside the system folders: this interpreter and the
    libraries it imports (its prefixes, its library import paths) and the toolkit's packages; each the
    outermost of what it holds.  Never the home folder, the project's other files, ``/run`` or ``/var``: a
    folder that would show a home folder or credentials (``credentials.exposes``) is refused in one line."""
    prefixes = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    wanted = {*prefixes, os.path.dirname(python()), os.path.dirname(os.path.realpath(sys.executable)),
              *(p for p in sys.path if is_library(p)), *toolkit()}
    found: list[str] = []
    for path in sorted({os.path.realpath(p) for p in wanted if os.path.exists(p)}):
        if path != "/" and not any((path + "/").startswith(f + "/") for f in found) \
                and not any(path == f"/{d}" or path.startswith(f"/{d}/") for d in SYSTEM):
            found.append(path)
    for path in found:
        problem = exposes(path)
        if problem is not None:
            raise UserError(f"the agents' jail would show {path}, which {problem}; install the toolkit and its "
                            "Python in a folder of their own")
    return found


def system() -> list[str]:
    """bwrap's arguments that show the image's system folders (links as links) and the loader's files."""
    args: list[str] = []
    for name in SYSTEM:
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _binds(paths: list[str]) -> list[str]:
    """bwrap's arguments that show ``paths`` read-only, each folder above them made traversable by any uid
    (a host's own uid must reach an interpreter under ``/root``, whose own folder is not)."""
    args: list[str] = []
    made: set[str] = set()
    for path in paths:
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            folder = "/" + "/".join(parts[:depth])
            if folder not in made and folder != "/tmp":
                made.add(folder)
                args += ["--perms", "0755", "--dir", folder]
        args += ["--ro-bind", path, path]
    return args


# bwrap's --unshare-all, named one by one so that the cgroup namespace can be left out
UNSHARE = ("--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts")


def arguments(root: str | None, caps: tuple[str, ...] = (), cgroup_ns: bool = True,
              writable: tuple[str, ...] = ()) -> list[str]:
    """bwrap's arguments for a jail that shows only the system, the interpreter and the toolkit, read-only, and
    whose only writable folders are ``root`` and a private ``/tmp``; ``caps``: what keeps the warden able to
    make each host's namespaces and give it a uid of its own (``namespace.py``); ``cgroup_ns``: a cgroup
    namespace of its own too (left out where its hosts' cgroups lie outside the harness's own, which a v2
    namespace could not move them to: ``cgroup.in_own``); ``writable``: folders shown writable too (the
    warden's cgroup, which its hosts do not see: ``namespace.mount_own``).  As root the jail opens no user
    namespace: its warden stays real root (its capabilities named in ``caps``), so that each host can be given
    a uid of its own, which a user namespace that maps one uid could not."""
    unshare = UNSHARE[1:] if os.geteuid() == 0 else UNSHARE
    outside = [p for p in shown() if not p.startswith("/tmp/")]
    return [*system(), *_binds(outside), *DEVICES, "--proc", "/proc", "--tmpfs", "/tmp",
            *_binds(under_tmp()),
            *(["--bind", root, root] if root else []), *[arg for path in writable for arg in ("--bind", path, path)],
            "--dir", KAGGLE_AGENT, "--remount-ro", "/",
            *unshare, *(["--unshare-cgroup-try"] if cgroup_ns else []),
            "--new-session", "--die-with-parent", *caps, "--clearenv", "--setenv", "PATH", PATH,
            "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8", "--chdir", "/"]


def _off() -> bool:
    return os.environ.get("CXFORGE_JAIL", "on").strip().lower() in ("off", "0", "no")


@dataclass(frozen=True)
class Probe:
    """What the jail is here: whether hosts run in it, the line the reports print, whether each host is alone
    in its own namespaces (``namespace.py``), and the bwrap arguments that allow it."""

    jailed: bool
    how: str
    alone: bool = False
    caps: tuple[str, ...] = ()
    uids: bool = False  # each host runs as a uid of its own (the warden is real root)
    seccomp: bool = False  # each host loads the syscall filter


@cache
def probe() -> Probe:
    """Start the jail once without its game folder (a probe cut short leaves nothing behind): can it run, and
    can its warden make each host's namespaces (with ``CAP_SYS_ADMIN`` kept, where bwrap allows it)?"""
    if _off():
        return Probe(False, "not jailed (CXFORGE_JAIL=off)")
    bwrap = program("bwrap")
    if bwrap is None:
        return Probe(False, f"not jailed: no bwrap on PATH; {INSTALL}")
    why = ""
    for caps in (CAPS, ()):
        try:
            run = subprocess.run([bwrap, *arguments(None, caps), *isolated_python(python()), "-c", PROBE],
                                 capture_output=True, text=True, timeout=30, env={"PATH": PATH})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Probe(False, f"not jailed: bwrap cannot run ({exc})")
        if run.returncode == 0:
            try:
                said = json.loads(run.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                said = {}
            alone, uids, seccomp = (bool(said.get(k)) for k in ("alone", "uids", "seccomp"))
            how = (ALONE if alone else SHARED) + f"; {UID if uids else SAME_UID}, {FILTER if seccomp else NO_FILTER})"
            return Probe(True, how, alone, caps, uids, seccomp)
        why = why or (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
    return Probe(False, f"not jailed: bwrap refused ({why[:200]})")


def status() -> tuple[bool, str]:
    """``(jailed, how)``: whether hosts run jailed here, and the line the reports print."""
    found = probe()
    return found.jailed, found.how


def bounds(limits: Limits | None = None) -> str:
    """The line that says which bounds hold for each agent here, with ``limits`` (the defaults when None)."""
    limits = limits or Limits()
    found = probe()
    mib = 1 << 20
    groups = cgroup.available()
    tree = [c for c in ("memory", "pids") if cgroup.holding(groups, c) is not None]
    procs = (f"{limits.extra_processes} processes (its whole tree: cgroup pids)" if "pids" in tree
             else f"{limits.extra_processes} processes (a uid of its own)" if found.jailed and found.uids
             else f"{limits.extra_processes} processes beyond the user's own (no uid of its own without root)")
    memory = (f"{limits.memory // mib} MiB of memory for its whole tree, its /tmp and /dev/shm files included "
              "(cgroup memory)" if "memory" in tree
              else f"{limits.memory // mib} MiB of memory per process (no cgroup here: not per tree)")
    # as root a host's init owns its IPC namespace's settings (namespace.cap_sysv); a plain user's jail maps no root
    sysv = ("as much again of SysV shared memory" if os.geteuid() == 0
            else "no SysV shared memory (a plain user's jail cannot cap it: refused)")
    tmp = (f"{limits.tmp_size // mib} MiB in all for what it writes (its /tmp, /dev/shm, game folder and HOME), "
           f"{sysv}" if found.alone else "/tmp and /dev/shm shared with the other agents of the run, not capped")
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as fh:
            autogroup = fh.read().strip() == "1"
    except OSError:
        autogroup = False
    cpu = ("its processes share its seat's CPU (one session: the kernel's autogroup)" if found.seccomp and autogroup
           else "its processes are not held to its seat's CPU (no autogroup or no filter)")
    slowed = throttle.method(cgroup.holding(groups, "cpu"), "namespace" if found.alone else "group")
    return (f"bounds per agent: {procs}, {memory}, files of {limits.file_size // mib} MiB, {tmp}, its output "
            f"through a pipe (its last {limits.log_bytes / mib:g} MiB kept); {cpu}; "
            f"--slowdown holds it by {slowed}")


def command(channel: int, root: str, groups: tuple[cgroup.Group, ...] = ()) -> list[str]:
    """The command that starts a jailed warden serving ``channel`` (an inherited fd), its game folders in
    ``root``, its hosts' cgroups in ``groups`` (shown writable in the jail; ``cgroup.py``).  The warden
    empties ``root`` when it ends; a shell outside the jail (``SHELL``) then removes the folder and the cgroups,
    and ends the jail at once when the referee dies or a signal ends it."""
    bwrap = program("bwrap")
    assert bwrap is not None
    passed = [arg for k in PASSED if k in os.environ for arg in ("--setenv", k, os.environ[k])]
    cgroup_ns = all(cgroup.in_own(group) for group in groups)
    folders = tuple(group.folder for group in groups)
    setpriv = program("setpriv", PATH)
    return [*([setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []), "/bin/sh", "-c", SHELL,
            "cxforge-jail", root, ":".join(folders), bwrap, *arguments(root, probe().caps, cgroup_ns, folders),
            *passed, *isolated_python(python()), "-m", "connectx_forge.sandbox.warden", str(channel), root,
            cgroup.to_arg(groups)]


# the jail's shell: it runs bubblewrap (whose --die-with-parent ends the whole jail when bubblewrap dies) and, once it
# is gone, removes the jail's folder and cgroups.  SIGTERM, SIGINT or SIGHUP (SIGTERM is its parent-death signal,
# setpriv's --pdeathsig: the referee died, even by SIGKILL) kill bubblewrap at once, whatever the warden is doing
SHELL = ('root=$1; cgs=$2; shift 2; trap \'kill -KILL $jail 2>/dev/null\' TERM INT HUP; "$@" & jail=$!; '
         'wait $jail; wait $jail 2>/dev/null; rm -rf -- "$root" 2>/dev/null; IFS=:; '
         # a cgroup is removable once the last of its processes has finished exiting
         'for i in 1 2 3 4 5 6 7 8 9 10; do left=; for cg in $cgs; do [ -d "$cg" ] || continue; '
         f'rmdir -- "$cg"/{cgroup.HOST}* "$cg" 2>/dev/null; [ -d "$cg" ] && left=1; done; '
         '[ -z "$left" ] && break; sleep 0.1; done; exit 0')


def slowdown_line(slowdown: float, methods: dict[str, int] | None = None) -> str:
    """What a report says of ``--slowdown``: the factor and the method that ran, as the games recorded it
    (``methods``: each way hosts were held -> its games, ``slowed_games``); where no game recorded one (a run
    stored before they did), the way this machine would hold them."""
    if methods and len(methods) == 1:
        how = next(iter(methods))
    elif methods:
        how = "; ".join(f"{n} game{'s' * (n != 1)}: {m}" for m, n in methods.items())
    else:
        hold = "namespace" if probe().alone else "group"
        how = throttle.method(cgroup.holding(cgroup.available(), "cpu"), hold)
    return (f"slowdown {slowdown:g}x: each agent host ran on 1/{slowdown:g} of a CPU ({how}); "
            "Kaggle's clock in wall time")


def slowed_games(ways: Iterable[str | None]) -> dict[str, int]:
    """How many games each way of slowing hosts held, most first, from each game's ``slowed`` (None: a game
    not slowed, or stored before games said)."""
    return dict(Counter(way for way in ways if way).most_common())
