"""Namespaces per host (tools/connectx_forge/sandbox/namespace.py), outside any jail, in a child Python that may make
them (root):
the child is pid 2 under a fresh /proc beside its init, and a fork whose mounts fail raises and leaves nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, os, sys
    from connectx_forge.sandbox import limits, namespace

    if not namespace.possible():
        print(json.dumps({"skip": "this process may not make namespaces (root only)"}))
        sys.exit(0)
    limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)  # as the warden is
    out = {}
    read, write = os.pipe()
    pid, init = namespace.fork(namespace.Place(True))
    if pid == 0:
        os.write(write, json.dumps([os.getpid(), sorted(p for p in os.listdir("/proc") if p.isdigit())]).encode())
        os._exit(0)
    os.close(write)
    out["child"] = json.loads(os.read(read, 4096))
    os.waitpid(pid, 0)
    namespace.end_init(init)
    try:
        namespace.fork(namespace.Place(True, ("/nonexistent/cxforge-test",)))
        out["bad"] = "no error"
    except OSError as exc:
        out["bad"] = str(exc)
    def state_and_parent(p):  # ("", "") for a process gone meanwhile (the machine's others come and go)
        try:
            with open(f"/proc/{p}/stat") as fh:
                return tuple(fh.read().rsplit(")", 1)[1].split()[:2])
        except OSError:
            return ("", "")
    stats = {int(p): state_and_parent(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()}
    out["left"] = [p for p, (state, parent) in stats.items() if parent == str(os.getpid()) and state != "Z"]
    print(json.dumps(out))
""")


def test_a_host_is_pid_2_beside_its_init_and_a_failed_fork_leaves_nothing() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    if "skip" in found:
        pytest.skip(found["skip"])
    assert found["child"] == [2, ["1", "2"]], found
    assert "mounts failed" in found["bad"] and "/nonexistent/cxforge-test" in found["bad"], found
    assert found["left"] == [], found


WRITTEN = textwrap.dedent("""
    import ctypes, json, os, sys, tempfile
    from connectx_forge.sandbox import limits, namespace

    if not namespace.possible():
        print(json.dumps({"skip": "this process may not make namespaces (root only)"}))
        sys.exit(0)
    limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)  # as the warden is
    own, unlayered = tempfile.mkdtemp(), tempfile.mkdtemp(suffix=",")  # a comma: overlay's options cannot hold it
    out = {}
    for name, folder, writes in (("own", own, ("", "/tmp/note", "/dev/shm/note", "mqueue", own + "/note")),
                                 ("unlayered", unlayered, ("",))):
        before = []
        for write in writes:
            go_r, go_w = os.pipe()
            pid, init = namespace.fork(namespace.Place(True, (folder,), None, 1 << 20, own=(folder,)))
            if pid == 0:
                os.read(go_r, 1)
                if write == "mqueue":
                    ctypes.CDLL("librt.so.1").mq_open(b"/note", os.O_CREAT | os.O_RDWR, 0o600, None)
                elif write:
                    open(write, "w").write("note")
                os._exit(0)
            mark = namespace.settled(init)
            os.write(go_w, b"x")
            os.waitpid(pid, 0)
            after = namespace.written(init)
            before.append([mark is not None and mark != after, any(e[0] == "./unlayered" for e in after or ())])
            namespace.end_init(init)
        out[name] = before
    print(json.dumps(out))
""")


def test_what_a_namespace_wrote_is_read_from_outside() -> None:
    """``written``, after ``settled``, changes with a write to /tmp, /dev/shm, a POSIX message queue or an own
    folder, and not without; where an own folder is no overlay (its writes go to disk), the budget says so."""
    run = subprocess.run([sys.executable, "-c", WRITTEN], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    if "skip" in found:
        pytest.skip(found["skip"])
    assert found["own"] == [[False, False]] + [[True, False]] * 4, found
    assert found["unlayered"] == [[False, True]], found


KILL = textwrap.dedent("""
    import json, os, signal, time
    from connectx_forge.sandbox import limits, namespace

    ready_r, ready_w = os.pipe()
    root = os.fork()
    if root == 0:  # spared: a subreaper, so that what its tree orphans stays under it, as under an init
        limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)
        if os.fork() == 0:  # a tree that forks for as long as it runs (each child for a minute at most)
            for n in range(300):
                if n == 3:
                    os.write(ready_w, b"x")
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                time.sleep(0.005)
            os._exit(0)
        while True:
            signal.pause()
    os.read(ready_r, 1)
    before = len(namespace.members({root}))
    done = namespace.kill_all_but({root}, {root})
    left = [p for p in namespace.members({root}) if p != root]
    for pid in left:  # what the call missed: killed here, so that the test leaves nothing
        os.kill(pid, signal.SIGKILL)
    os.kill(root, signal.SIGKILL)
    os.waitpid(root, 0)
    print(json.dumps({"tree": before > 3, "done": done, "left": left}))
""")


def test_every_process_but_the_spared_ones_is_killed_and_gone() -> None:
    """``kill_all_but`` kills a tree that forks while it is killed and spares what it is told to: when it returns,
    none of the rest is left (but zombies)."""
    run = subprocess.run([sys.executable, "-c", KILL], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found == {"tree": True, "done": True, "left": []}, found


def test_the_message_queues_folder_never_holds_a_game_back() -> None:
    """A budget's ``mq`` folder (its mount's times count whole seconds) is no reason for ``settled`` to wait: a
    queue is an entry of its own, which changes what ``written`` reads; a queue and a file just changed are."""
    from connectx_forge.sandbox import namespace

    now = 1_700_000_000_123_456_789
    assert namespace._due("./mq", now, now) == 0
    assert namespace._due("./mq/cxforge-note", now, now) == 1_700_000_001_000_000_000
    assert namespace._due("./tmp", now, now) == now + 1
    assert namespace._due("./tmp", now - 1, now) == 0


LEADER_GONE = textwrap.dedent("""
    import ctypes, json, os, signal, threading, time
    from connectx_forge.sandbox import namespace

    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # its first thread exits; the other goes on running its code
        def work():
            os.write(ready_w, b"xx")  # one for this process's first thread, one for the test
            while True:
                time.sleep(0.01)
        threading.Thread(target=work).start()
        os.read(ready_r, 1)
        ctypes.CDLL(None).syscall(60, 0)  # exit(2): this thread alone (x86_64's number)
    os.read(ready_r, 1)
    time.sleep(0.2)
    leader = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    found = namespace.members({pid})
    done = namespace.kill_all_but({pid}, set())
    after = namespace.members({pid})
    os.kill(pid, signal.SIGKILL)  # what the call missed: killed here, so that the test leaves nothing
    os.waitpid(pid, 0)
    print(json.dumps({"leader": leader, "found": found == [pid], "done": done, "after": after}))
""")


def test_a_process_whose_first_thread_exited_still_runs_and_is_killed() -> None:
    """A process whose first thread has exited shows as a zombie in ``/proc/PID/stat`` while its other threads run
    its code: ``members`` reads every thread (a zombie or exiting thread is not a running process), and
    ``kill_all_but`` kills it and returns once it runs nothing."""
    run = subprocess.run([sys.executable, "-c", LEADER_GONE], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found == {"leader": "Z", "found": True, "done": True, "after": []}, found
