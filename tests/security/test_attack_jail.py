"""Attacks on the jail (docs/security.md): an agent sees only the image and its own folder, reaches no socket
outside, holds no privilege even when cxforge runs as root, shares nothing with the other seat, is bounded as a
whole, and leaves nothing behind.  Each test is an attack an agent written by an adversary would try; each ran
through on the toolkit before these promises were built.  Skipped where bubblewrap is missing or refused."""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.play.resolve import resolve
from connectx_forge.sandbox import jail, syscalls
from connectx_forge.sandbox.limits import MIB, Limits, SeatBudget
from connectx_forge.sandbox.seat import HostedAgent
from tests.harness import ROOT
from tests.security.test_jail import CONFIG, OBS, fresh_warden, probe  # noqa: F401 (the fixture)

JAILED, HOW = jail.status()
alone = pytest.mark.skipif(not (JAILED and jail.probe().alone), reason=f"agents are {HOW}")


pytestmark = pytest.mark.usefixtures("fresh_warden")

@pytest.fixture
def planted() -> Iterator[dict[str, str]]:
    """Secrets where an attacker looks: a file in the user's home folder and one in the project's checkout."""
    tag = uuid.uuid4().hex
    paths = {"home": Path.home() / f".cxforge-attack-{tag}", "project": ROOT / f".cxforge-attack-{tag}"}
    made = []
    for path in paths.values():
        try:
            path.write_text(tag)
            made.append(path)
        except OSError:
            pass
    yield {name: str(path) for name, path in paths.items() if path in made}
    for path in made:
        path.unlink(missing_ok=True)


@alone
def test_an_agent_sees_only_the_image_and_its_own_folder(tmp_path: Path, planted: dict[str, str]) -> None:
    """Not the home folder (``~/.kaggle``), not the project, not ``/run``, ``/var`` or ``/sys``, and of ``/etc``
    only what the loader reads."""
    found = probe(tmp_path, f"""
        planted = {planted!r}
        found["planted"] = {{name: os.path.exists(path) for name, path in planted.items()}}
        home = {str(Path.home())!r}
        found["kaggle"] = os.path.exists(os.path.join(home, ".kaggle"))
        try:
            found["home"] = sorted(os.listdir(home))
        except OSError:
            found["home"] = []
        found["project"] = [name for name in ("README.md", ".git", "Makefile", "tests")
                            if os.path.exists(os.path.join({str(ROOT)!r}, name))]
        found["top"] = sorted(os.listdir("/"))
        try:
            found["sys"] = sorted(os.listdir("/sys"))
        except OSError:
            found["sys"] = []
        found["etc"] = sorted(os.listdir("/etc"))
    """)
    assert not any(found["planted"].values()), found
    assert found["project"] == [], found
    assert found["sys"] == [], found  # the warden's cgroups are bound there: its hosts see none of it
    assert not {"run", "var", "home", "root", "srv", "opt", "mnt"} & set(found["top"]) - {
        p.strip("/").split("/")[0] for p in jail.shown()}, found
    assert set(found["etc"]) <= set(jail.ETC), found
    home = str(Path.home())
    assert found["kaggle"] is False, found  # only the folders leading to the interpreter, where it lies there
    assert set(found["home"]) <= {p[len(home) + 1:].split("/")[0] for p in jail.shown() if p.startswith(home + "/")}


@alone
@pytest.mark.parametrize("template", [False, True])
def test_an_agent_cannot_change_the_kernels_settings(tmp_path: Path, template: bool) -> None:
    """``/proc/sys`` (core_pattern: a crash then runs a program as real root) and ``sysrq-trigger`` refuse."""
    pattern = Path("/proc/sys/kernel/core_pattern")
    before = pattern.read_text()
    try:
        found = _kernel(tmp_path, template)
    finally:
        if pattern.read_text() != before:  # the attack got through: the machine's own setting put back
            pattern.write_text(before)
    assert "written" not in found.values(), found
    assert pattern.read_text() == before


def _kernel(tmp_path: Path, template: bool) -> dict[str, Any]:
    return probe(tmp_path, """
        for name, path, text in (("core", "/proc/sys/kernel/core_pattern", "|/bin/true cxforge"),
                                 ("sysrq", "/proc/sysrq-trigger", "h")):
            try:
                with open(path, "w") as fh:
                    fh.write(text)
                found[name] = "written"
            except OSError as exc:
                found[name] = exc.__class__.__name__
    """, template)


def _listen_unix(path: str, accepted: list[Any]) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    return server


@alone
def test_no_socket_outside_the_jail_can_be_reached(tmp_path: Path) -> None:
    """Listeners under the home folder, the project and ``/run`` (a desktop's D-Bus, ssh-agent, Docker) and an
    abstract socket: none answers."""
    tag = uuid.uuid4().hex[:12]
    paths = [str(Path.home() / f".cxforge-{tag}.sock"), str(ROOT / f".cxforge-{tag}.sock"),
             f"/run/cxforge-{tag}.sock", str(tmp_path / f"{tag}.sock")]
    accepted: list[Any] = []
    servers = []
    for path in paths:
        try:
            servers.append((path, _listen_unix(path, accepted)))
        except OSError:
            pass
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0cxforge-{tag}")
    abstract.listen(1)
    threading.Thread(target=lambda: accepted.append(abstract.accept()), daemon=True).start()
    try:
        found = probe(tmp_path, f"""
            for path in {[p for p, _ in servers] + [chr(0) + f"cxforge-{tag}"]!r}:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.settimeout(2)
                    s.connect(path)
                    found[repr(path)] = "connected"
                except OSError as exc:
                    found[repr(path)] = exc.__class__.__name__
                finally:
                    s.close()
        """)
    finally:
        for path, server in servers:
            server.close()
            os.unlink(path)
        abstract.close()
    assert servers, "no listener could be made"
    assert "connected" not in found.values() and not accepted, found


STATUS = """
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("Uid", "Gid", "CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"):
                found[key] = value.split()
    import ctypes, errno
    libc = ctypes.CDLL(None, use_errno=True)
    calls = {
        "unshare": lambda: libc.unshare(0x10000000),  # a user namespace: root again, inside
        "mount": lambda: libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None),
        "ptrace": lambda: libc.ptrace(16, 1, None, None),  # PTRACE_ATTACH to its init
        "keyctl": lambda: libc.syscall(250, 0, 0, 0, 0),  # keyctl(KEYCTL_GET_KEYRING_ID)
        "bpf": lambda: libc.syscall(321, 0, None, 0),
        "perf_event_open": lambda: libc.syscall(298, None, 0, -1, -1, 0),
    }
    found["calls"] = {}
    for name, call in calls.items():
        ctypes.set_errno(0)
        result = call()
        found["calls"][name] = "allowed" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_an_agent_holds_no_privilege(tmp_path: Path, template: bool) -> None:
    """An unprivileged uid (a uid of its own where cxforge runs as root), no capability, no_new_privs and the
    syscall filter: namespaces, mounts, tracing, keyrings, BPF and performance counters are refused."""
    found = probe(tmp_path, STATUS, template)
    assert found["Uid"][0] != "0" and len(set(found["Uid"])) == 1, found
    assert found["Gid"][0] != "0", found
    assert found["CapEff"] == found["CapPrm"] == found["CapBnd"] == ["0" * 16], found
    assert found["NoNewPrivs"] == ["1"], found
    if syscalls.program() is not None:
        assert found["Seccomp"] == ["2"], found
    assert "allowed" not in found["calls"].values(), found


@alone
@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_the_seats_share_no_tmp_and_no_dev_shm(tmp_path: Path, folder: str) -> None:
    """What one seat leaves in ``/tmp`` or ``/dev/shm`` the other seat never finds (a fresh ``/dev/shm`` holds
    nothing else)."""
    note = f"{folder}/cxforge-note"
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = probe(tmp_path / "one", f"""
        open({note!r}, "w").write("x")
        found["listing"] = sorted(os.listdir({folder!r}))
    """)
    second = probe(tmp_path / "two", f"""
        found["seen"] = os.path.exists({note!r})
    """)
    assert "cxforge-note" in first["listing"] and second == {"seen": False}, (first, second)
    if folder == "/dev/shm":
        assert first["listing"] == ["cxforge-note"], first
    assert not Path(note).exists()  # its folder was its own


def _bounded(tmp_path: Path, body: str, limits: Limits, template: bool = False) -> dict[str, Any]:
    """``probe`` with ``limits``."""
    import json

    path = tmp_path / "bounded.py"
    path.write_text("def agent(obs, config):\n    import json, os\n    found = {}\n"
                    + textwrap.indent(textwrap.dedent(body), "    ")
                    + "\n    print('FOUND ' + json.dumps(found))\n    return 3\n")
    host = HostedAgent(resolve(str(path)), 1, SeatBudget.of_board((6, 7, 4), 2.0, 60.0), limits, template=template)
    try:
        reply = host.move(OBS, CONFIG, 60.0)
        assert reply.kind == "ok", (reply, host.log_text())
        [line] = [ln for ln in host.log_text().splitlines() if ln.startswith("FOUND ")]
        result: dict[str, Any] = json.loads(line[len("FOUND "):])
        return result
    finally:
        host.close()


FILL = """
    found["written"] = {}
    for path in ("/tmp/fill", "/dev/shm/fill"):
        block, written = b"x" * (1 << 20), 0
        try:
            with open(path, "wb") as fh:
                while written < (200 << 20):
                    fh.write(block)
                    fh.flush()
                    written += len(block)
        except OSError:
            pass
        os.unlink(path)
        found["written"][path] = written >> 20
"""


@alone
def test_tmp_and_dev_shm_are_capped(tmp_path: Path) -> None:
    """Each the agent's own, no larger than its budget says (and the defaults no looser than 256 processes and
    512 MiB in all)."""
    assert Limits().tmp_size <= 512 * MIB and Limits().extra_processes <= 256
    found = _bounded(tmp_path, FILL, Limits(tmp_size=32 * MIB))
    assert found["written"]["/tmp/fill"] <= 32 and found["written"]["/dev/shm/fill"] <= 32, found


FORK = """
    import signal, time
    kids = []
    for _ in range(600):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    found["forked"] = len(kids)
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
"""


@alone
def test_an_agents_processes_are_capped(tmp_path: Path) -> None:
    """Forking stops at its cap (with a uid of its own, its own processes alone count)."""
    if os.geteuid() != 0:
        pytest.skip("without root, the cap counts all of the user's processes (docs/security.md)")
    found = _bounded(tmp_path, FORK, Limits(extra_processes=40))
    assert 0 < found["forked"] <= 40, found


TREE = """
    import signal, time
    r, w = os.pipe()
    kids = []
    for n in range(4):
        pid = os.fork()
        if pid == 0:  # each child keeps 100 MiB, under the per-process cap: the tree holds 400
            os.close(r)
            held = bytearray(100 << 20)
            for i in range(0, len(held), 4096):
                held[i] = 1
            os.write(w, bytes([n]))
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    os.close(w)
    wrote, died, deadline = set(), set(), time.monotonic() + 20
    import select
    while len(wrote | died) < 4 and time.monotonic() < deadline:
        if select.select([r], [], [], 0.2)[0]:
            wrote.update(os.read(r, 4))
        for n, pid in enumerate(kids):
            if n not in died and os.waitpid(pid, os.WNOHANG)[0]:
                died.add(n)
    found["held"] = len(wrote - died)  # children holding their 100 MiB now, together
    for n, pid in enumerate(kids):
        if n in died:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
"""


def _tree_held(controller: str) -> None:
    from connectx_forge.sandbox import cgroup

    if cgroup.holding(cgroup.available(), controller) is None:
        pytest.skip(f"no cgroup with the {controller} controller is writable here: bounded per process only "
                    "(check's bounds line says so)")


@alone
def test_an_agents_processes_together_hold_at_most_its_memory(tmp_path: Path) -> None:
    """Four children of 100 MiB each, every one under the per-process cap of 160 MiB: their tree holds 400 MiB
    unless the tree is held as one (a cgroup), where the kernel ends what goes past 160 MiB in all.  Counted
    are the children holding their memory once all four have it or are gone: the OOM killer may end the
    first to hold it when the second grows, so how many ever held it says nothing."""
    _tree_held("memory")
    found = _bounded(tmp_path, TREE, Limits(memory=160 * MIB))
    assert found["held"] <= 1, found


SPREAD = """
    found["written"] = 0
    for n in range(12):  # each file under the file-size cap: 12 of them fill what the folders' cap leaves
        block, written = b"x" * (1 << 20), 0
        try:
            with open(os.path.join(folder, f"fill{n}"), "wb") as fh:
                while written < (48 << 20):
                    fh.write(block)
                    fh.flush()
                    written += len(block)
        except OSError:
            pass
        found["written"] += written >> 20
"""


@alone
@pytest.mark.parametrize("template", [False, True])
def test_what_an_agent_writes_in_its_own_folders_is_capped_in_all(tmp_path: Path, template: bool) -> None:
    """Files of 48 MiB each, under the file-size cap, in its game folder and its HOME: 576 MiB of the disk each
    unless the folders' writes are held together (a tmpfs of ``tmp_size`` under them), and nothing of it is
    left in the folder the referee made."""
    for folder in ("os.getcwd()", "os.environ['HOME']"):
        body = f"folder = {folder}\n" + textwrap.dedent(SPREAD)
        found = _bounded(tmp_path, body, Limits(tmp_size=64 * MIB), template)
        assert found["written"] <= 64, (folder, found)
    assert not list(tmp_path.rglob("fill*")), "an agent's writes reached the disk"


@alone
def test_an_agents_files_in_memory_count_against_its_memory(tmp_path: Path) -> None:
    """400 MiB written to its ``/dev/shm`` (a tmpfs of 512 MiB), each file under the file-size cap: memory the
    per-process caps never see.  Held as a tree, the kernel ends the host, and the referee says ``memory``."""
    _tree_held("memory")
    path = tmp_path / "shm.py"
    path.write_text(textwrap.dedent("""
        def agent(obs, config):
            block, written = b"x" * (1 << 20), 0
            for n in range(8):
                with open(f"/dev/shm/fill{n}", "wb") as fh:
                    while written < (n + 1) * (50 << 20):
                        fh.write(block)
                        fh.flush()
                        written += len(block)
            return 3
    """))
    host = HostedAgent(resolve(str(path)), 1, SeatBudget.of_board((6, 7, 4), 2.0, 60.0), Limits(memory=128 * MIB))
    try:
        reply = host.move(OBS, CONFIG, 60.0)
    finally:
        host.close()
    assert reply.kind == "memory" and "memory limit" in (reply.detail or ""), reply


DAEMON = """
    import time
    found["daemons"] = 0
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            found["daemons"] += open(f"/proc/{pid}/comm").read().strip() == "cxforge-daemon"
        except OSError:
            pass
    if os.fork() == 0:
        try:
            os.setsid()  # refused by the filter: it stays in its host's session
        except OSError:
            os.setpgid(0, 0)  # a group of its own: out of reach of the host's group's kill
        try:
            if os.fork() == 0:
                open("/proc/self/comm", "w").write("cxforge-daemon")
                time.sleep(60)
        except OSError:  # a fork refused by a process cap (a plain user's counts every process of the user)
            pass
        os._exit(0)
    os.wait()
"""


def _daemons_here() -> int:
    count = 0
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            count += Path(f"/proc/{pid}/comm").read_text().strip() == "cxforge-daemon"
        except OSError:
            pass
    return count


@alone
def test_a_daemon_does_not_outlive_its_game(tmp_path: Path) -> None:
    """A double-forked daemon, started in every game of a match (hosts forked from one template): no game sees
    the last one's, and none is left once the match is over."""
    path = tmp_path / "daemon.py"
    path.write_text("def agent(obs, config):\n    import os\n    found = {}\n"
                    + textwrap.indent(textwrap.dedent(DAEMON), "    ")
                    + "\n    print('SEEN', found['daemons'], flush=True)\n"
                    "    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n")
    result = run_match(str(path), "kaggle:random", games=4, workers=1, seed=0, progress=False)
    seen = [line for record in result.records for text in (record.logs or {}).values()
            for line in text.splitlines() if line.startswith("SEEN")]
    assert seen and set(seen) == {"SEEN 0"}, seen
    from connectx_forge.sandbox import warden
    warden.reset()
    assert _daemons_here() == 0


@alone
def test_an_agent_sees_no_cgroup_and_makes_none(tmp_path: Path) -> None:
    """No ``/sys``: neither the other host's cgroup (its CPU quota under --slowdown) nor a place to make one."""
    found = probe(tmp_path, """
        found["sys"] = os.path.exists("/sys/fs/cgroup")
        try:
            os.makedirs("/sys/fs/cgroup/pids/cxforge-evil")
            found["made"] = True
        except OSError:
            found["made"] = False
    """)
    assert found == {"sys": False, "made": False}, found
    assert not any(Path("/sys/fs/cgroup").glob("*/cxforge-evil"))


BUSY = """
    import time
    for _ in range(6):
        if os.fork() == 0:
            try:
                os.setsid()  # a session of its own: a scheduling group of its own, where the kernel allows
            except OSError:
                pass
            while True:
                pass
"""
SHARE = """
    import time
    start, cpu = time.monotonic(), time.process_time()
    while time.monotonic() - start < 2.0:
        pass
    found["share"] = (time.process_time() - cpu) / (time.monotonic() - start)
"""


@alone
@pytest.mark.slow
def test_a_busy_tree_slows_only_its_own_seat(tmp_path: Path) -> None:
    """Six busy children of one seat leave the other seat its share of the CPU: a whole core of two (the tree
    shares its host's session, where the kernel schedules sessions as groups; or its host's cgroup)."""
    if os.cpu_count() != 2 or Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() != "1":
        pytest.skip("measured on two cores with the kernel's autogroup on")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    busy = tmp_path / "one" / "busy.py"
    busy.write_text("def agent(obs, config):\n    import os\n" + textwrap.indent(textwrap.dedent(BUSY), "    ")
                    + "\n    return 3\n")
    host = HostedAgent(resolve(str(busy)), 1, SeatBudget.of_board((6, 7, 4), 2.0, 60.0))
    try:
        assert host.move(OBS, CONFIG, 10.0).kind == "ok"
        found = probe(tmp_path / "two", SHARE)
    finally:
        host.close()
    assert found["share"] > 0.5, found  # six groups of their own would leave it two of eight
