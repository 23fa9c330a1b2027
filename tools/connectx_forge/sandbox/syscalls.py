"""The syscall filter: what no agent needs is refused, as container runtimes refuse it (seccomp).

The filter is compiled once, in the warden, by libseccomp (its Python bindings,
or ``pyseccomp``, the same API over ``ctypes``): every host and template loads
the compiled program before any agent code runs, after it has given up its
capabilities and set ``no_new_privs``.  Refused with ``EPERM``: tracing and
reading other processes' memory, mounts and every new namespace (``unshare``,
``setns``, ``clone`` with a namespace flag), ``clone`` of a sibling
(``CLONE_PARENT``: a template's children are its hosts alone), the kernel's keyrings, BPF,
performance counters, modules, ``kexec``, reboots, swap, clocks, accounting,
raw I/O ports, ``userfaultfd``, ``io_uring`` and typing into a terminal
(``TIOCSTI``), and ``setsid``: an agent's processes stay in its host's session, so
that where the kernel groups the scheduler's tasks by session (autogroup) its
whole tree shares one seat's CPU, however many processes it starts.  Sockets are
opened by allowlist: of the families, only what an agent needs inside its own
network namespace (``SOCKET_FAMILIES``: AF_UNIX, AF_INET, AF_INET6); every other
(AF_NETLINK, AF_VSOCK, which no network namespace isolates, AF_PACKET, AF_ALG,
...) answers ``EAFNOSUPPORT``, as on a kernel without it.  SysV shared memory
and message queues (memory no tmpfs counts, kept beyond a process's life) are
allowed where the host's IPC namespace is capped by its budget
(``namespace.cap_sysv``, which a plain user's jail cannot set: ``sysv_capped``);
elsewhere ``shmget`` and ``msgget`` answer ``ENOSYS``, as on a kernel without
SysV IPC.  ``clone3``
answers ``ENOSYS`` (its flags sit in memory a filter cannot read), so that the
C library falls back to ``clone``.  No kernel object of a file both seats see
carries a bit between them (the image is one set of files, read-only, for every
seat and game; ``_observers``): file locks (``flock`` and ``fcntl``'s record and
open-file locks, ``F_GETLK`` among them) answer ``ENOLCK``, as on a file system
without locks; leases and directory notices (``F_SETLEASE``, ``F_GETLEASE``,
``F_NOTIFY``) ``EINVAL``; watches (inotify, fanotify) and the page cache's
residency (``mincore``, ``cachestat``, Linux AIO) ``ENOSYS``, as on a kernel without them;
a read that only says whether pages are cached (``preadv2`` with ``RWF_NOWAIT``)
``EOPNOTSUPP``; dropping a file's cached pages (``posix_fadvise``'s
``DONTNEED``) does nothing, as advice may; merging pages with another process's
(KSM: ``MADV_MERGEABLE``, ``PR_SET_MEMORY_MERGE``) ``EINVAL``; ``sysinfo`` (the
machine's thread count, load and free memory, which the other seat moves)
``ENOSYS``: glibc's ``getloadavg`` then fails, and its
``sysconf(_SC_PHYS_PAGES)`` and ``_SC_AVPHYS_PAGES``, which never check the
call, are arbitrary (each host's ``/proc/meminfo`` gives the total:
``namespace.cover_counters``).  An agent locks
not even its own files (no Kaggle agent needs to; sqlite's file locks are among
them).  Calls of another architecture (32-bit calls
on x86-64) kill the process, libseccomp's default.
Where libseccomp is missing, ``program`` is None and the reports say so.
"""

from __future__ import annotations

import ctypes
import errno
import os
from functools import cache
from typing import Protocol

from connectx_forge.sandbox import limits

DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
          "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
          "fspick", "mount_setattr", "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
          "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
          "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
          "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "lookup_dcookie",
          "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm", "nfsservctl",
          "sethostname", "setdomainname", "io_uring_setup", "io_uring_enter", "io_uring_register",
          "personality", "uselib", "ustat", "sysfs", "_sysctl", "setsid")
# clone's flags that make namespaces (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET)
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
CLONE_PARENT = 0x00008000  # a child of the caller's parent: a process a template would take for one of its own
TIOCSTI = 0x5412
SOCKET_FAMILIES = (1, 2, 10)  # AF_UNIX, AF_INET, AF_INET6: the families a host may open (``socket``, ``socketpair``)
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
WATCHES = ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark")
# which of a file's pages the page cache holds (what another seat read): asked directly, or by a read that fails
# where a page is not cached (Linux AIO's RWF_NOWAIT sits in memory a filter cannot read: no AIO at all)
RESIDENCY = ("mincore", "cachestat", "io_setup")
# the machine's thread count, free memory and load, which another seat moves by each thread it starts (its /proc
# files: namespace.cover_counters)
MACHINE = ("sysinfo",)
# fcntl's lock commands: F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW (the 64-bit ABI's
# numbers, its F_*LK64 the same); then F_SETLEASE, F_GETLEASE, F_NOTIFY (dnotify)
LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)
NOTICE_COMMANDS = (1024, 1025, 1026)
RWF_NOWAIT = 0x8
POSIX_FADV_DONTNEED = 4
MADV_MERGEABLE, PR_SET_MEMORY_MERGE = 12, 67


class _Filter(Protocol):
    """A libseccomp filter (``SyscallFilter``), as this module uses it."""

    def add_rule(self, action: int, syscall: str, *args: object) -> None: ...

    def export_bpf(self, file: object) -> None: ...


class _Seccomp(Protocol):
    """libseccomp's Python bindings (``seccomp``, or ``pyseccomp``: the same API), as this module uses them: the
    actions and comparisons are ints, an argument's condition (``Arg``) is passed through to ``add_rule``."""

    ALLOW: int
    EQ: int
    GT: int
    MASKED_EQ: int

    def SyscallFilter(self, defaction: int, /) -> _Filter: ...

    def ERRNO(self, errno: int, /) -> int: ...

    def Arg(self, arg: int, op: int, datum_a: int, datum_b: int = 0, /) -> object: ...


def _bindings() -> _Seccomp | None:
    """libseccomp's Python bindings, else ``pyseccomp`` (the same API over ctypes), else None."""
    try:
        import seccomp
        bindings: _Seccomp = seccomp  # an untyped module: _Seccomp says what of it is used
        return bindings
    except ImportError:
        pass
    try:
        import pyseccomp
        fallback: _Seccomp = pyseccomp  # the same
        return fallback
    except (ImportError, OSError, AttributeError):  # no libseccomp.so on this machine
        return None


def sysv_capped() -> bool:
    """Whether this IPC namespace's SysV shared memory and queues are capped by a host's budget
    (``namespace.cap_sysv`` set its mark), read before any agent code runs."""
    try:
        with open("/proc/sys/kernel/shmmni") as fh:
            return int(fh.read()) <= limits.SYSV_SEGMENTS
    except (OSError, ValueError):
        return False


def program(sysv: bool = True) -> bytes | None:
    """The filter, compiled by libseccomp to a BPF program (``struct sock_filter`` records), or None where
    libseccomp is missing or refused; ``sysv`` False: SysV shared memory and queues refused too.  Compiled once
    per variant (the warden compiles both before any host: ``warden.preload``)."""
    return _compiled(bool(sysv))


@cache
def _compiled(sysv: bool) -> bytes | None:
    sc = _bindings()
    if sc is None:
        return None
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        refuse = sc.ERRNO(errno.EPERM)
        _each(f, refuse, DENIED)
        for flag in (*NAMESPACE_FLAGS, CLONE_PARENT):
            f.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        f.add_rule(refuse, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
        _families(f, sc)
        _observers(f, sc)
        if not sysv:
            for name in ("shmget", "msgget"):
                f.add_rule(sc.ERRNO(errno.ENOSYS), name)
        _each(f, sc.ERRNO(errno.ENOSYS), ("clone3",))
        fd = os.memfd_create("cxforge-seccomp")
        with os.fdopen(fd, "w+b") as fh:
            f.export_bpf(fh)
            fh.seek(0)
            data = fh.read()
    except (RuntimeError, OSError, ValueError, AttributeError):
        return None
    return data if data and len(data) % 8 == 0 else None


def _families(f: _Filter, sc: _Seccomp) -> None:
    """Refuse ``socket`` and ``socketpair`` of every family but ``SOCKET_FAMILIES``: each number below the
    highest allowed that is not allowed, and all above it (a domain with high bits set included)."""
    unsupported = sc.ERRNO(errno.EAFNOSUPPORT)
    top = max(SOCKET_FAMILIES)
    for call in ("socket", "socketpair"):
        for family in range(top):
            if family not in SOCKET_FAMILIES:
                f.add_rule(unsupported, call, sc.Arg(0, sc.EQ, family))
        f.add_rule(unsupported, call, sc.Arg(0, sc.GT, top))


def _observers(f: _Filter, sc: _Seccomp) -> None:
    """Refuse what would pass a bit between seats through a file both see (the image, ``/dev/null``): its locks,
    leases, watches and notices, and what tells which of its pages are cached; and the machine's counters
    (``MACHINE``); each errno that of a kernel or
    file system without the feature, so that a library that tries one falls back as it would there."""
    _each(f, sc.ERRNO(errno.ENOSYS), (*WATCHES, *RESIDENCY, *MACHINE))
    _each(f, sc.ERRNO(errno.ENOLCK), ("flock",))
    low = 0xFFFFFFFF  # an int argument: the kernel reads its low 32 bits alone
    for command in LOCK_COMMANDS:
        _each(f, sc.ERRNO(errno.ENOLCK), ("fcntl",), sc.Arg(1, sc.MASKED_EQ, low, command))
    for command in NOTICE_COMMANDS:
        _each(f, sc.ERRNO(errno.EINVAL), ("fcntl",), sc.Arg(1, sc.MASKED_EQ, low, command))
    _each(f, sc.ERRNO(errno.EOPNOTSUPP), ("preadv2",), sc.Arg(5, sc.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    _each(f, sc.ERRNO(0), ("fadvise64",), sc.Arg(3, sc.MASKED_EQ, low, POSIX_FADV_DONTNEED))
    _each(f, sc.ERRNO(errno.EINVAL), ("madvise",), sc.Arg(2, sc.MASKED_EQ, low, MADV_MERGEABLE))
    _each(f, sc.ERRNO(errno.EINVAL), ("prctl",), sc.Arg(0, sc.MASKED_EQ, low, PR_SET_MEMORY_MERGE))


def _each(f: _Filter, action: int, names: tuple[str, ...], *args: object) -> None:
    """Answer every call of ``names`` (where its arguments match ``args``) with ``action``, skipping a call this
    kernel or architecture lacks."""
    for name in names:
        try:
            f.add_rule(action, name, *args)
        except (RuntimeError, OSError, ValueError):
            pass


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_LOADED: list[bool] = []  # set in a process that loaded the filter (and so in its forks, which inherit it)


def loaded() -> bool:
    """Whether this process holds the filter (it loaded it, or its parent had before the fork)."""
    return bool(_LOADED)


def load(code: bytes | None) -> bool:
    """Load the compiled filter ``code`` into this process for good (its children inherit it); needs
    ``no_new_privs`` (``limits.drop_capabilities``).  False where there is none or the kernel refused it."""
    if _LOADED:
        return True
    if not code:
        return False
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Program(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if limits._libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return False
    _LOADED.append(True)
    return True


def works() -> bool:
    """Whether a child of this process can load the filter and is then refused what it refuses."""
    code = program()
    if code is None:
        return False
    pid = os.fork()
    if pid == 0:
        ok = limits.prctl(limits.PR_SET_NO_NEW_PRIVS, 1) and load(code)
        os._exit(0 if ok and limits._libc().unshare(0x20000) != 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
