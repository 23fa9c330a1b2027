"""The jail: bubblewrap around each warden, so that every agent host it forks runs as in Kaggle's container.

Inside (``bwrap``, the sandbox under Flatpak): no network (a private network
namespace with only its own loopback), private process, IPC and UTS
namespaces (an agent sees the jail's processes, not the user's, and none of
their environments), the whole filesystem read-only but for this process's
game folders (one folder per warden) and a private ``/tmp``, a clean environment
(no credential reaches the jail at all), and a new session (no terminal to
type into).  The warden is a fresh Python started in the jail (``python -m
connectx_forge.tools.sandbox.warden``), which costs one interpreter start per
referee thread, not per game: hosts are still forks of it.

Where ``bwrap`` is missing or the kernel refuses its namespaces, hosts run
as before, not jailed, and ``status()`` says why (the reports print it once).
``CXFORGE_JAIL=off`` turns the jail off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache

INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) to jail agents as Kaggle does"
PATH = "/usr/local/bin:/usr/bin:/bin"
PROBE = "import numpy, connectx_forge.tools.sandbox.warden"  # what a jailed warden imports first
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


def arguments(root: str | None) -> list[str]:
    """bwrap's arguments for a jail whose only writable folders are ``root`` and a private ``/tmp``."""
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            *[arg for path in under_tmp() for arg in ("--ro-bind", path, path)],
            *(["--bind", root, root] if root else []),
            "--unshare-all", "--new-session", "--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--chdir", "/"]


def _off() -> bool:
    return os.environ.get("CXFORGE_JAIL", "on").strip().lower() in ("off", "0", "no")


@cache
def status() -> tuple[bool, str]:
    """``(jailed, how)``: whether hosts run jailed here, and the line the reports print."""
    if _off():
        return False, "not jailed (CXFORGE_JAIL=off)"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, f"not jailed: no bwrap on PATH; {INSTALL}"
    try:  # the jail without its game folder (so a probe cut short leaves nothing behind)
        probe = subprocess.run([bwrap, *arguments(None), python(), "-c", PROBE], capture_output=True, text=True,
                               timeout=30, env={"PATH": PATH})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"not jailed: bwrap cannot run ({exc})"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        return False, f"not jailed: bwrap refused ({why[:200]})"
    return True, "jailed (bubblewrap: no network, private processes, read-only files but the game's folder and /tmp)"


def command(channel: int, root: str) -> list[str]:
    """The command that starts a jailed warden serving ``channel`` (an inherited fd), its game folders in
    ``root``.  The warden empties ``root`` when it ends; a shell outside the jail then removes the folder
    itself (a mount point inside), even when the referee was killed."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    passed = [arg for k in PASSED if k in os.environ for arg in ("--setenv", k, os.environ[k])]
    return ["/bin/sh", "-c", 'root=$1; shift; "$@"; rmdir -- "$root" 2>/dev/null; exit 0', "cxforge-jail", root,
            bwrap, *arguments(root), *passed, python(), "-m", "connectx_forge.tools.sandbox.warden",
            str(channel), root]
