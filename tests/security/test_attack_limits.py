"""Attacks on the jail's bounds (docs/security.md): an agent cannot raise its limits, its output cannot grow a
file, everything it writes shares one budget, ``--slowdown`` holds its whole tree whatever it does with process
groups, and it opens no socket of a family it does not need.  Each test is an attack an agent written by an
adversary would try; each ran through on the toolkit before these promises were built.  Skipped where
bubblewrap is missing or refused."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.play.resolve import resolve
from connectx_forge.sandbox import jail
from connectx_forge.sandbox.limits import MIB, Limits, SeatBudget
from connectx_forge.sandbox.seat import HostedAgent
from tests.security.test_attack_jail import _bounded
from tests.security.test_jail import CONFIG, OBS, fresh_warden, probe  # noqa: F401 (the fixture)
from tests.security.test_slowdown import method  # noqa: F401 (the fixture)

JAILED, HOW = jail.status()
alone = pytest.mark.skipif(not (JAILED and jail.probe().alone), reason=f"agents are {HOW}")

pytestmark = pytest.mark.usefixtures("fresh_warden")

RAISE = """
    import resource
    found["raised"] = []
    for name in ("RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_CORE", "RLIMIT_NOFILE",
                 "RLIMIT_MSGQUEUE", "RLIMIT_MEMLOCK", "RLIMIT_STACK"):
        which = getattr(resource, name)
        soft, hard = resource.getrlimit(which)
        for wanted in ((resource.RLIM_INFINITY, resource.RLIM_INFINITY), (hard, hard)):
            try:
                resource.setrlimit(which, wanted)
            except (ValueError, OSError):
                pass
        now = resource.getrlimit(which)[0]
        grace = 1 if name == "RLIMIT_CPU" else 0  # SIGXCPU at the soft limit, SIGKILL a second later
        if soft != resource.RLIM_INFINITY and (now == resource.RLIM_INFINITY or now > soft + grace):
            found["raised"].append(name)
    block, written = b"x" * (1 << 20), 0
    try:
        with open("big", "wb") as fh:
            while written < (100 << 20):
                fh.write(block)
                fh.flush()
                written += len(block)
    except OSError:
        pass
    os.unlink("big")
    found["file"] = written >> 20
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_an_agent_cannot_raise_its_limits(tmp_path: Path, template: bool) -> None:
    """Every rlimit is hard as well as soft: raising the file size, address space, CPU time (beyond the second
    between ``SIGXCPU`` and ``SIGKILL``), processes (or any other) fails, and a file stops at its cap."""
    found = _bounded(tmp_path, RAISE, Limits(file_size=8 * MIB), template)
    assert found["raised"] == [] and found["file"] <= 8, found


SHOUT = """
    import stat
    found["pipe"] = stat.S_ISFIFO(os.fstat(1).st_mode) and stat.S_ISFIFO(os.fstat(2).st_mode)
    block = b"y" * (1 << 16)
    for _ in range(64):  # 4 MiB straight to fd 1, past the capped sys.stdout
        os.write(1, block)
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_an_agents_output_never_grows_a_file(tmp_path: Path, template: bool) -> None:
    """fds 1 and 2 are a pipe the referee reads: 4 MiB written straight to fd 1 leave at most the log's bound
    kept, and the log says how much was dropped."""
    body = SHOUT + "\n    print('FOUND ' + json.dumps(found), flush=True)\n"
    path = tmp_path / "shout.py"
    path.write_text("def agent(obs, config):\n    import json, os\n    found = {}\n"
                    + textwrap.indent(textwrap.dedent(body), "    ") + "\n    return 3\n")
    budget = SeatBudget.of_board((6, 7, 4), 2.0, 60.0)
    host = HostedAgent(resolve(str(path)), 1, budget, Limits(log_bytes=MIB), template=template)
    try:
        reply = host.move(OBS, CONFIG, 60.0)
        assert reply.kind == "ok", (reply, host.log_text())
        text = host.log_text(limit=8 * MIB)
    finally:
        host.close()
    assert len(host.output) <= MIB, len(host.output)
    assert '"pipe": true' in text, text[-500:]
    [note] = [line for line in text.splitlines() if line.startswith("cxforge: dropped ")]
    assert int(note.split()[2]) >= 3 * MIB, note


SPREAD = """
    found["written"] = {}
    for folder in (os.getcwd(), os.environ["HOME"], "/tmp", "/dev/shm"):
        total = 0
        for n in range(3):  # files of 24 MiB, under the file-size cap
            block, written = b"x" * (1 << 20), 0
            try:
                with open(os.path.join(folder, f"fill{n}"), "wb") as fh:
                    while written < (24 << 20):
                        fh.write(block)
                        fh.flush()
                        written += len(block)
            except OSError:
                pass
            total += written
        found["written"][folder] = total >> 20
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_everything_an_agent_writes_shares_one_budget(tmp_path: Path, template: bool) -> None:
    """72 MiB in each of its game folder, HOME, ``/tmp`` and ``/dev/shm`` (POSIX shared memory): each place a
    budget of its own would hold 288 MiB; one budget of ``tmp_size`` holds them all together."""
    found = _bounded(tmp_path, SPREAD, Limits(tmp_size=64 * MIB), template)
    assert sum(found["written"].values()) <= 64, found
    assert not list(tmp_path.rglob("fill*")), "an agent's writes reached the disk"


SYSV = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    found["held"] = 0
    for n in range(6):  # segments of 32 MiB, each touched
        seg = libc.shmget(0, ctypes.c_size_t(32 << 20), 0o1600)  # IPC_PRIVATE | IPC_CREAT | 0600
        if seg < 0:
            break
        addr = libc.shmat(seg, None, 0)
        libc.shmctl(seg, 0, None)  # IPC_RMID: gone once detached
        if addr in (None, ctypes.c_void_p(-1).value):
            break
        ctypes.memset(addr, 1, 32 << 20)
        found["held"] += 32
"""


@alone
def test_sysv_shared_memory_is_capped_by_the_budget(tmp_path: Path) -> None:
    """SysV segments (memory no file-size cap sees, kept by the kernel beyond a process's life): at most the
    budget's ``tmp_size``."""
    found = _bounded(tmp_path, SYSV, Limits(tmp_size=64 * MIB))
    assert found["held"] <= 64, found


TREE_SHARE = """
    import time
    r, w = os.pipe()
    kid = os.fork()
    if kid == 0:  # leaves the host's process group, out of reach of a signal to the group
        os.setpgid(0, 0)
        start, cpu = time.monotonic(), time.process_time()
        while time.monotonic() - start < 2.0:
            pass
        os.write(w, repr(time.process_time() - cpu).encode())
        os._exit(0)
    os.close(w)
    start, cpu = time.monotonic(), time.process_time()
    while time.monotonic() - start < 2.0:
        pass
    found["host"] = time.process_time() - cpu
    found["child"] = float(os.read(r, 100) or 0)
    os.waitpid(kid, 0)
"""


@alone
@pytest.mark.usefixtures("method")  # each way a slowed tree is held, a plain user's duty cycle included
@pytest.mark.parametrize("template", [False, True])
def test_slowdown_holds_a_child_that_leaves_its_group(tmp_path: Path, template: bool) -> None:
    """At --slowdown 4 a child in a process group of its own burns beside its host for two seconds: held with
    the tree, it gets about the host's CPU time; escaped, up to four times it (both measured in CPU seconds, so a
    loaded machine slows both alike).  And the host is held at all: a quarter of the two seconds, not the second
    or more a busy process gets on two loaded cores."""
    found = _bounded(tmp_path, TREE_SHARE, Limits(slowdown=4), template)
    assert found["host"] > 0 and found["child"] <= 1.5 * found["host"] + 0.05, found
    assert found["host"] <= 0.75, found


FAMILIES = """
    import socket
    found["opened"] = []
    for family in range(46):
        if family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
            continue
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET):
            for call in (socket.socket, socket.socketpair):
                try:
                    made = call(family, kind)
                except OSError:
                    continue
                for s in made if isinstance(made, tuple) else (made,):
                    s.close()
                found["opened"].append([family, kind, call.__name__])
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_only_unix_and_internet_sockets_open(tmp_path: Path, template: bool) -> None:
    """AF_NETLINK (the kernel's routing and audit), AF_VSOCK (the hypervisor's sockets, outside any network
    namespace), AF_PACKET, AF_ALG and every other family but AF_UNIX, AF_INET and AF_INET6 are refused."""
    found: dict[str, Any] = probe(tmp_path, FAMILIES, template)
    assert found["opened"] == [], found


def test_the_log_bound_is_a_limit() -> None:
    """The kept output's bound travels with the other limits (a template's key included)."""
    assert Limits().log_bytes == MIB and json.loads(json.dumps(Limits(log_bytes=5).to_json()))["log_bytes"] == 5
