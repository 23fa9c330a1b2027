"""The jail: bubblewrap around each warden, so that every agent host it forks runs as in Kaggle's container.

Inside (``bwrap``, the sandbox under Flatpak): no network (a private network
namespace with only its own loopback), private process, IPC and UTS
namespaces (not the user's processes, nor their environments), every file
read-only but for this process's game folders (one folder per warden) and a
private ``/tmp``, a clean environment (no credential reaches the jail at all),
and a new session (no terminal to type into).  The warden is a fresh Python
started in the jail (``python -m connectx_forge.tools.sandbox.warden``), which
costs one interpreter start per referee thread, not per game: hosts are still
forks of it.  It keeps ``CAP_SYS_ADMIN`` where bwrap allows, to put each host
in namespaces of its own (``namespace.py``: its own processes, its own ``/tmp``,
a .tar.gz at ``/kaggle_simulations/agent``); where it cannot, hosts share the
jail's and the report says so.

Where ``bwrap`` is missing or the kernel refuses its namespaces, hosts run
as before, not jailed, and ``probe()`` says why (the reports print it once).
``CXFORGE_JAIL=off`` turns the jail off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache

from connectx_forge.tools.sandbox import cgroup
from connectx_forge.tools.sandbox.namespace import KAGGLE_AGENT

INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) to jail agents as Kaggle does"
PATH = "/usr/local/bin:/usr/bin:/bin"
# what a jailed warden imports first; then whether it can make a host's namespaces
PROBE = ("import numpy, connectx_forge.tools.sandbox.warden\n"
         "from connectx_forge.tools.sandbox import namespace\nprint(namespace.works())")
CAPS = ("--cap-add", "CAP_SYS_ADMIN")  # the warden's, to make namespaces; every host gives it up (limits.py)
ALONE = ("jailed (bubblewrap: no network, each agent alone with its own processes and /tmp, read-only files "
         "but its game folder)")
SHARED = ("jailed (bubblewrap: no network, read-only files but the game's folder and /tmp; an agent sees the "
          "jail's processes: namespaces per agent were refused)")
PASSED = ("CXFORGE_NATIVE", "CXFORGE_TEST_MARKER")  # what enters the jail from the environment: no credential


def python() -> str:
    """This interpreter's path with its folder's links resolved (a link in a folder above a virtualenv, such as
    pytest's ``pytest-current``, would point into the hidden ``/tmp``; the file itself keeps its name, so that
    the virtualenv is still found beside it)."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def under_tmp() -> list[str]:
    """The folders the jailed warden runs from (Python, the virtualenv, every import path, the toolkit) that the
    jail's private ``/tmp`` would hide: a checkout or virtualenv under ``/tmp`` is shown again, read-only.  ``/tmp``
    itself never is (a script run from it puts it on ``sys.path``): it would show the user's ``/tmp`` whole."""
    from connectx_forge.tools.paths import PROJECT_ROOT

    wanted = {sys.prefix, sys.base_prefix, os.path.dirname(python()), str(PROJECT_ROOT), *(p for p in sys.path if p)}
    found: list[str] = []
    for path in sorted({os.path.realpath(p) for p in wanted}):
        if path.startswith("/tmp/") and os.path.exists(path) \
                and not any((path + "/").startswith(f + "/") for f in found):
            found.append(path)
    return found


def root_entries() -> list[str]:
    """bwrap's arguments that show every top-level entry of ``/`` read-only (links as links) on the jail's own
    root, which so can hold ``/kaggle_simulations/agent`` (``namespace.py`` binds a .tar.gz's folder there)."""
    args: list[str] = []
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        path = entry.path
        if entry.name in ("proc", "dev", "tmp", "kaggle_simulations"):
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(path), path]
        elif entry.is_dir() or entry.is_file():
            args += ["--ro-bind", path, path]
    return args


# bwrap's --unshare-all, named one by one so that the cgroup namespace can be left out
UNSHARE = ("--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts")


def arguments(root: str | None, caps: tuple[str, ...] = (), cgroup_ns: bool = True) -> list[str]:
    """bwrap's arguments for a jail whose only writable folders are ``root`` and a private ``/tmp``; ``caps``:
    what keeps the warden able to make each host's namespaces (``namespace.py``); ``cgroup_ns``: a cgroup
    namespace of its own too (left out where its hosts' cgroups lie outside the harness's own, which a v2
    namespace could not move them to: ``cgroup.in_own``)."""
    return [*root_entries(), "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            *[arg for path in under_tmp() for arg in ("--ro-bind", path, path)],
            *(["--bind", root, root] if root else []),
            "--dir", KAGGLE_AGENT, "--remount-ro", "/",
            *UNSHARE, *(["--unshare-cgroup-try"] if cgroup_ns else []),
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


@cache
def probe() -> Probe:
    """Start the jail once without its game folder (a probe cut short leaves nothing behind): can it run, and
    can its warden make each host's namespaces (with ``CAP_SYS_ADMIN`` kept, where bwrap allows it)?"""
    if _off():
        return Probe(False, "not jailed (CXFORGE_JAIL=off)")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Probe(False, f"not jailed: no bwrap on PATH; {INSTALL}")
    why = ""
    for caps in (CAPS, ()):
        try:
            run = subprocess.run([bwrap, *arguments(None, caps), python(), "-c", PROBE], capture_output=True,
                                 text=True, timeout=30, env={"PATH": PATH})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Probe(False, f"not jailed: bwrap cannot run ({exc})")
        if run.returncode == 0:
            if run.stdout.strip().endswith("True"):
                return Probe(True, ALONE, True, caps)
            return Probe(True, SHARED, False, caps)
        why = why or (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
    return Probe(False, f"not jailed: bwrap refused ({why[:200]})")


def status() -> tuple[bool, str]:
    """``(jailed, how)``: whether hosts run jailed here, and the line the reports print."""
    found = probe()
    return found.jailed, found.how


def command(channel: int, root: str, group: cgroup.Group | None = None) -> list[str]:
    """The command that starts a jailed warden serving ``channel`` (an inherited fd), its game folders in
    ``root``, its hosts' cgroups in ``group`` (shown writable in the jail; ``cgroup.py``).  The warden empties
    ``root`` when it ends; a shell outside the jail then removes the folder itself (a mount point inside) and
    the cgroups, even when the referee was killed."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    passed = [arg for k in PASSED if k in os.environ for arg in ("--setenv", k, os.environ[k])]
    shown = ["--bind", group.folder, group.folder] if group else []
    cgroup_ns = group is None or cgroup.in_own(group)
    return ["/bin/sh", "-c", 'root=$1; cg=$2; shift 2; "$@"; rmdir -- "$root" 2>/dev/null; '
            # a cgroup is removable once the last of its processes has finished exiting
            'for i in 1 2 3 4 5 6 7 8 9 10; do [ -z "$cg" ] || [ ! -d "$cg" ] && break; '
            'rmdir -- "$cg"/host-* "$cg" 2>/dev/null; sleep 0.1; done; exit 0', "cxforge-jail", root,
            group.folder if group else "", bwrap, *arguments(root, probe().caps, cgroup_ns), *shown, *passed,
            python(), "-m", "connectx_forge.tools.sandbox.warden", str(channel), root, group.to_arg() if group else "-"]
