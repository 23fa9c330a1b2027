"""Promise: the seats (and the games) share no kernel object through which a bit can pass: no lock, lease, watch,
notice or access time on the files every seat sees (the image: the interpreter, numpy, ``/dev``), no page-cache
probe of them, no writable ``/dev`` and no pseudo-terminal.

The jail shows one image, read-only, to every seat and every game (``jail.py``); a lock or a watch on its files
is a kernel object both seats reach.  The syscall filter (``syscalls._observers``) refuses them, and the jail's
``/dev`` is read-only, without ptys.  The attacks, by a file playing itself (both seats hosted and jailed, each
trying everything at its first move, while the other's locks and watches may already stand):

* (a) ``flock``, ``fcntl``'s record and open-file locks (``F_SETLK``, ``F_GETLK``, ``F_OFD_*``: all work on a
  read-only fd), leases, ``F_NOTIFY``, inotify and fanotify on the interpreter's ``os.py``, numpy's
  ``__init__.py`` and ``/dev/null``; ``mincore``, ``cachestat``, Linux AIO and ``preadv2(RWF_NOWAIT)`` on their
  pages: each is refused with the errno of a kernel or file system without it, and no seat ever gets a notice;
* (b) a file written in ``/dev`` (a plain user's seats share the jail's uid, which owns it) and a pseudo-terminal
  opened (the jail's devpts lists every seat's): both refused, and no seat sees a pty;
* (c) a shared file's access time, set old outside the jail, is unchanged after both seats read it (the image's
  mounts are read-only, which the kernel never stamps), though a read outside stamps it;
* (d) the machine's counters: one seat opens files, forks processes and fills memory at a move, and both read,
  at every move, what moves by exactly that on a machine (``/proc/sys/fs/file-nr``, ``inode-nr``,
  ``dentry-state``, ``/proc/loadavg``'s task counts, ``/proc/stat``'s ``processes`` and ``procs_running``,
  ``/proc/meminfo``, ``/proc/vmstat``, pressure, interrupts, ``sysinfo()``): each reads the same at every move
  of both seats (empty, absent, fixed or refused), read-only, and the fixed files still say what libraries
  count (the CPUs, the memory's total, a load).
"""

from __future__ import annotations

import collections
import errno
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy
import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.sandbox import jail, warden

JAILED, HOW = jail.status()
pytestmark = pytest.mark.skipif(not (JAILED and jail.probe().alone), reason=f"agents are {HOW}")

# each call an agent tries, and the errno the filter answers (that of a kernel or file system without it)
REFUSED = {"flock": "ENOLCK", "F_SETLK": "ENOLCK", "F_GETLK": "ENOLCK", "F_OFD_SETLK": "ENOLCK",
           "F_OFD_GETLK": "ENOLCK", "F_SETLEASE": "EINVAL", "F_GETLEASE": "EINVAL", "F_NOTIFY": "EINVAL",
           "inotify": "ENOSYS", "fanotify": "ENOSYS", "mincore": "ENOSYS", "cachestat": "ENOSYS",
           "aio": "ENOSYS", "RWF_NOWAIT": errno.errorcode[errno.EOPNOTSUPP]}
UNSEEN = {"devfile": "EROFS", "openpty": "ENOENT"}  # the jail's /dev: read-only, no pty

OBSERVERS = """
import ctypes, errno, fcntl, os, signal, struct, time
import numpy

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
FILES = (os.__file__, numpy.__file__, "/dev/null")
FOLDERS = (os.path.dirname(os.__file__), "/dev")
IO_SETUP = {{"x86_64": 206, "aarch64": 0}}.get(os.uname().machine)
F_OFD_GETLK, F_OFD_SETLK, CACHESTAT = 36, 37, 451
KEEP, NOTICES, WATCHES = [], [], []
signal.signal(signal.SIGIO, lambda *_: NOTICES.append("SIGIO"))  # F_NOTIFY's signal
ATIME = {atime!r}


def _lock(kind):
    return struct.pack("hhqqi", kind, 0, 0, 0, 0) + bytes(4)


def _c(result):
    if result is None or result < 0:
        raise OSError(ctypes.get_errno(), "refused")
    return result


def _inotify(path):
    fd = _c(libc.inotify_init1(os.O_NONBLOCK))
    WATCHES.append(fd)
    return _c(libc.inotify_add_watch(fd, path.encode(), 0x20 | 0x1))  # IN_OPEN | IN_ACCESS


def _mapped(fd):
    at = libc.mmap(None, 4096, 1, 2, fd, 0)  # PROT_READ, MAP_PRIVATE
    if at in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    return at


def _mincore(fd):
    pages = (ctypes.c_ubyte * 1)()
    return _c(libc.mincore(ctypes.c_void_p(_mapped(fd)), ctypes.c_size_t(4096), pages))


def _cachestat(fd):
    span, stat = (ctypes.c_uint64 * 2)(0, 4096), (ctypes.c_uint64 * 5)()
    return _c(libc.syscall(CACHESTAT, fd, span, stat, 0))


def _aio():
    context = ctypes.c_ulong(0)
    return _c(libc.syscall(IO_SETUP, 1, ctypes.byref(context)))


def calls(path):
    fd = os.open(path, os.O_RDONLY)
    KEEP.append(fd)
    yield "flock", lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    yield "F_SETLK", lambda: fcntl.fcntl(fd, fcntl.F_SETLK, _lock(fcntl.F_RDLCK))
    yield "F_GETLK", lambda: fcntl.fcntl(fd, fcntl.F_GETLK, _lock(fcntl.F_WRLCK))
    yield "F_OFD_SETLK", lambda: fcntl.fcntl(fd, F_OFD_SETLK, _lock(fcntl.F_RDLCK))
    yield "F_OFD_GETLK", lambda: fcntl.fcntl(fd, F_OFD_GETLK, _lock(fcntl.F_WRLCK))
    yield "F_SETLEASE", lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    yield "F_GETLEASE", lambda: fcntl.fcntl(fd, fcntl.F_GETLEASE)
    yield "inotify", lambda: _inotify(path)
    yield "fanotify", lambda: _c(libc.fanotify_init(0x200, os.O_RDONLY))  # FAN_REPORT_FID: a plain user's
    if path != "/dev/null":
        yield "mincore", lambda: _mincore(fd)
        yield "cachestat", lambda: _cachestat(fd)
        yield "RWF_NOWAIT", lambda: os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)


def folder_calls(path):
    fd = os.open(path, os.O_RDONLY)
    KEEP.append(fd)
    yield "F_NOTIFY", lambda: fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
    yield "inotify", lambda: _inotify(path)


def device_calls():
    yield "/dev", "devfile", lambda: open(f"/dev/cxforge-{{os.getpid()}}", "w").close()
    yield "/dev", "openpty", os.openpty
    if IO_SETUP is not None:
        yield "-", "aio", _aio


def tried():
    for path in FILES:
        for name, call in calls(path):
            yield path, name, call
    for path in FOLDERS:
        for name, call in folder_calls(path):
            yield path, name, call
    yield from device_calls()


def say(path, name, call):
    try:
        call()
        print("CALL", name, path, "ok", flush=True)
    except OSError as exc:
        print("CALL", name, path, errno.errorcode.get(exc.errno, exc.errno), flush=True)


def notices():
    for fd in WATCHES:
        try:
            NOTICES.append(f"inotify {{len(os.read(fd, 4096))}} bytes")
        except OSError:
            pass
    return NOTICES


def agent(obs, config):
    if obs.step < 2:
        for path, name, call in tried():
            say(path, name, call)
        if ATIME:
            print("ATIME", os.stat(ATIME).st_atime_ns, len(open(ATIME, "rb").read()), flush=True)
    for path in (*FILES, *([ATIME] if ATIME else [])):
        with open(path, "rb") as fh:
            fh.read(4096)
    time.sleep(0.05)
    print("SEEN", ",".join(notices()) or "nothing", "pts", len(os.listdir("/dev/pts")), flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


@pytest.fixture(autouse=True)
def fresh_warden() -> Iterator[None]:
    """Each test with wardens of its own (a template of an earlier test is never reused)."""
    warden.reset()
    yield
    warden.reset()


def _played(tmp_path: Path, atime: str | None = None) -> list[str]:
    """The log lines of two games of the observing file against itself (``atime``: a shared file it also reads
    and reports the access time of)."""
    path = tmp_path / "observer.py"
    path.write_text(textwrap.dedent(OBSERVERS.format(atime=atime)))
    result = run_match(str(path), str(path), games=2, workers=1, seed=0, progress=False)
    assert [r.outcome for r in result.records if r.outcome not in ("win", "draw")] == []
    return _lines(result)


def _lines(result: Any) -> list[str]:
    return [line for record in result.records for text in (record.logs or {}).values()
            for line in text.splitlines()]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The log lines of two games of the observing file against itself, once for the tests that read them."""
    warden.reset()
    return _played(tmp_path_factory.mktemp("observers"))


def test_no_lock_watch_or_cache_probe_reaches_a_file_both_seats_see(played: list[str]) -> None:
    if not jail.probe().seccomp:
        pytest.skip(f"no syscall filter here: {HOW}")
    lines = played
    calls = [line.split() for line in lines if line.startswith("CALL ")]
    expected = {**REFUSED, **UNSEEN}
    assert {name for _, name, _, _ in calls} >= set(expected) - ({"aio"} if os.uname().machine not in
                                                                 ("x86_64", "aarch64") else set())
    wrong = sorted({f"{name} {path}: {got}" for _, name, path, got in calls if got != expected[name]})
    assert not wrong, wrong
    seen = [line for line in lines if line.startswith("SEEN ")]
    assert len(seen) >= 8 and set(seen) == {"SEEN nothing pts 0"}, seen  # both seats, every move


def test_the_jails_dev_is_read_only_and_has_no_pty(played: list[str]) -> None:
    """The jail's own promise, with or without the filter: no file in /dev, no pty."""
    calls = [line.split() for line in played if line.startswith("CALL ") and line.split()[1] in UNSEEN]
    assert len(calls) == 2 * 2 * len(UNSEEN), calls
    assert {(name, got) for _, name, _, got in calls} == set(UNSEEN.items()), calls


def _shared_file() -> Path:
    """A file of the image (numpy's, shown read-only in every seat's jail) that no import reads."""
    return Path(numpy.__file__).parent / "__init__.pyi"


@pytest.fixture
def old_atime() -> Iterator[Path]:
    """The shared file, its access time set to 1970 (older than its change time, so that any read would stamp
    it), its times restored afterwards."""
    path = _shared_file()
    if not path.is_file():
        pytest.skip(f"no {path} to read")
    before = path.stat()
    try:
        os.utime(path, ns=(10**9, before.st_mtime_ns))
    except PermissionError:
        pytest.skip(f"setting the access time of {path} needs its owner (here: not this user)")
    yield path
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_reading_a_shared_file_never_stamps_its_access_time(tmp_path: Path, old_atime: Path) -> None:
    lines = _played(tmp_path, str(old_atime))
    stamps = [line.split() for line in lines if line.startswith("ATIME ")]
    assert len(stamps) == 4 and all(int(size) > 0 for _, _, size in stamps), stamps
    assert {int(ns) for _, ns, _ in stamps} == {10**9}, stamps  # no seat saw the other's read
    assert old_atime.stat().st_atime_ns == 10**9
    old_atime.read_bytes()
    if old_atime.stat().st_atime_ns == 10**9:
        pytest.skip("this file system never stamps access times (noatime): nothing to show")


# (d): what an agent reads of the machine: each file's digest (or errno; a folder: its names) and sysinfo's bytes
COUNTING = """
import ctypes, errno, hashlib, os, time

libc = ctypes.CDLL(None, use_errno=True)
FILES, PROCESSES, MIB = 200, 12, 64  # what the first seat opens, forks and fills at its second move
READ = ("/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr", "/proc/sys/fs/inode-state", "/proc/sys/fs/dentry-state",
        "/proc/sys/fs/aio-nr", "/proc/loadavg", "/proc/stat", "/proc/meminfo", "/proc/vmstat", "/proc/zoneinfo",
        "/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/interrupts", "/proc/softirqs", "/proc/diskstats",
        "/proc/schedstat", "/proc/swaps", "/proc/timer_list", "/proc/sched_debug", "/proc/slabinfo",
        "/proc/vmallocinfo", "/proc/sys/kernel/random/entropy_avail", "/proc/pressure", "/proc/pressure/cpu",
        "/proc/pressure/memory", "/proc/pressure/io", "/proc/irq", "/proc/sys/fs/quota")
HELD = []


def _errno(code):
    return errno.errorcode.get(code, str(code))


def read(path):
    try:
        if os.path.isdir(path):
            return "folder:" + ",".join(sorted(os.listdir(path)))
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError as exc:
        return _errno(exc.errno)


def sysinfo():
    info = (ctypes.c_byte * 256)()
    if libc.sysinfo(info) != 0:
        return _errno(ctypes.get_errno())
    return hashlib.sha256(bytes(info)).hexdigest()[:16]


def written(path):
    try:
        with open(path, "w") as fh:
            fh.write("0")
        return "ok"
    except OSError as exc:
        return _errno(exc.errno)


def load():
    try:
        return str(os.getloadavg()[0])
    except OSError:  # glibc asks sysinfo
        return "unobtainable"


def act():
    HELD.extend(os.open("/dev/null", os.O_RDONLY) for _ in range(FILES))
    for _ in range(PROCESSES):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
    HELD.append(bytearray(MIB << 20))


def agent(obs, config):
    if obs.mark == 1 and obs.step == 2:
        act()
    if obs.step < 6:  # both seats before and after the first's act (a game's log keeps 10,000 characters)
        got = " ".join(f"{path[6:]}={read(path)}" for path in READ)
        print("READ", got, f"sysinfo()={sysinfo()}", flush=True)
    if obs.step < 2:
        with open("/proc/meminfo") as fh:
            total = [line.split()[1] for line in fh if line.startswith("MemTotal:")]
        print("COUNTS", os.cpu_count(), load(), *total, flush=True)
        print("WRITE", written("/proc/meminfo"), written("/proc/sys/fs/file-nr"), flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The log lines of a game of the counting file against itself."""
    warden.reset()
    path = tmp_path_factory.mktemp("counters") / "counting.py"
    path.write_text(textwrap.dedent(COUNTING))
    result = run_match(str(path), str(path), games=1, workers=1, seed=0, progress=False)
    assert [r.outcome for r in result.records if r.outcome not in ("win", "draw")] == []
    return _lines(result)


def test_no_machine_wide_counter_moves_with_the_other_seat(counted: list[str]) -> None:
    readings: dict[str, set[str]] = collections.defaultdict(set)
    moves = 0
    for line in counted:
        if line.startswith("READ "):
            moves += 1
            for pair in line.split()[1:]:
                path, got = pair.split("=", 1)
                readings[path].add(got)
    assert moves == 6 and len(readings) == 29, counted  # both seats, before and after the first one's act
    moving = {path: sorted(got) for path, got in readings.items() if len(got) != 1}
    assert not moving, moving
    if jail.probe().seccomp:
        assert readings["sysinfo()"] == {"ENOSYS"}


def test_the_fixed_counters_are_read_only_and_still_count(counted: list[str]) -> None:
    """The files libraries parse keep what never moves: glibc's CPU count (from /proc/stat, no /sys being
    shown) and the memory's total; the load is unobtainable where the filter refuses sysinfo (glibc's source
    for it); no seat can write a cover."""
    counts = [line.split()[1:] for line in counted if line.startswith("COUNTS ")]
    total = next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                 if line.startswith("MemTotal:"))
    load = "unobtainable" if jail.probe().seccomp else "0.0"
    assert len(counts) == 2 and all(c == [str(os.cpu_count()), load, total] for c in counts), counts
    writes = {tuple(line.split()[1:]) for line in counted if line.startswith("WRITE ")}
    assert writes and all(got != "ok" for pair in writes for got in pair), writes
