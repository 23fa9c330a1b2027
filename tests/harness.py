"""What the agent-host tests share: the corpus of broken agents, a world with planted credentials, running
``cxforge`` in its own process group, and finding the processes a run left behind (Linux ``/proc``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken_agents"
FAKE_KEY = "cxforge-fake-kaggle-key-5f0c2e"
FAKE_USER = "cxforge-fake-user-91ab"


def agent_file(name: str, folder: Path) -> Path:
    """The corpus file ``name`` (the syntax error is stored as .txt, so that the linters can read the folder)."""
    if name == "syntax_error.py":
        path = folder / name
        shutil.copyfile(BROKEN / "syntax_error.txt", path)
        return path
    return BROKEN / name


def slow_mover(folder: Path, seconds: float) -> Path:
    """An agent file that waits ``seconds`` before each legal move: games that last a known wall time while using
    next to no CPU, for tests that interrupt a run mid-way (however loaded the machine, a game is under way)."""
    path = folder / "slow_mover.py"
    path.write_text("import time\n\n\ndef agent(obs, config):\n"
                    f"    time.sleep({seconds!r})\n"
                    "    return next(c for c in range(config.columns) if obs.board[c] == 0)\n")
    return path


def expected_kind(name: str) -> str:
    """The kind the corpus file's first line promises."""
    source = BROKEN / ("syntax_error.txt" if name == "syntax_error.py" else name)
    first = source.read_text().splitlines()[0]
    assert first.startswith("# expected: "), first
    return first.split()[2]


def planted_world(home: Path) -> dict[str, str]:
    """An environment for cxforge with a fake ``KAGGLE_KEY``, a fake kaggle.json under ``home`` and a marker."""
    (home / ".kaggle").mkdir()
    (home / ".kaggle" / "kaggle.json").write_text(json.dumps({"username": FAKE_USER, "key": FAKE_KEY}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAGGLE")}
    env.update(HOME=str(home), KAGGLE_KEY=FAKE_KEY, CXFORGE_TEST_MARKER=uuid.uuid4().hex)
    return env


class Run:
    """A finished ``cxforge`` command: its status, output, wall time and process group."""

    def __init__(self, returncode: int, stdout: str, stderr: str, seconds: float, pgid: int) -> None:
        self.returncode, self.stdout, self.stderr, self.seconds, self.pgid = returncode, stdout, stderr, seconds, pgid

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def run_cxforge(env: dict[str, str], *args: str, timeout: float = 60) -> Run:
    """``cxforge ARGS`` in a session of its own; killed (its whole group) if it outlives ``timeout``."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "connectx_forge.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Run(proc.returncode, stdout, stderr, time.monotonic() - start, proc.pid)


def _stat(pid: str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().decode().rsplit(")", 1)[1].split()
    except OSError:
        return None


def live_descendants(root: int) -> list[int]:
    """Processes below ``root`` that are not zombies."""
    parents: dict[int, int] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None:
            parents[int(entry)], states[int(entry)] = int(fields[1]), fields[0]
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid:
                todo.append(child)
                if states[child] != "Z":
                    out.append(child)
    return out


def marked(marker: str) -> list[int]:
    """Live processes whose environment or command line carries ``marker``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        fields = _stat(entry)
        if fields is not None and fields[0] != "Z" and (marker.encode() in env or marker.encode() in cmd):
            out.append(int(entry))
    return out


def wait_gone(find: object, seconds: float = 5.0) -> list[int]:
    assert callable(find)
    deadline = time.monotonic() + seconds
    left: list[int] = find()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = find()
    return left


def hosts_of(root: int) -> list[int]:
    """The agent hosts below ``root``: descendants in a session of their own."""
    return [p for p in live_descendants(root) if (f := _stat(str(p))) is not None and int(f[3]) == p]


def in_group(pgid: int) -> list[int]:
    """Live members of process group ``pgid`` (zombies not reaped by this container's init do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and (f := _stat(e)) is not None
            and int(f[2]) == pgid and f[0] != "Z"]


def new_descendants(before: set[int], keep: set[int] | None = None) -> list[int]:
    """This process's live descendants that were not there ``before`` (the suite's own long-lived helpers,
    such as multiprocessing's resource tracker, were), nor in ``keep``."""
    return [p for p in live_descendants(os.getpid()) if p not in before and p not in (keep or set())]


def warden_processes() -> set[int]:
    """This thread's warden and its templates, which outlive a game: its process; jailed, the chain that starts it
    (a shell, bubblewrap, the jail's init, then the warden: three levels below the shell; hosts are forks below)."""
    from connectx_forge.sandbox import warden

    w = getattr(warden._local, "warden", None)
    if w is None:
        return set()
    if not w.jailed:
        return {w.pid} | templates_of({w.pid})
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None:
            parents[int(entry)] = int(fields[1])
    level, found = {w.pid}, {w.pid}
    for _ in range(3):
        level = {p for p, parent in parents.items() if parent in level}
        found |= level
    return found | templates_of(found)


def templates_of(wardens: set[int]) -> set[int]:
    """The templates (``tools/connectx_forge/sandbox/template.py``) that ``wardens`` keep between games: their
    children that
    name themselves so, each one's namespace init (``namespace.py``: in the template's process namespace) and
    the spare host each one forks ahead of its next game."""
    from connectx_forge.sandbox.namespace import NAME as INIT
    from connectx_forge.sandbox.template import NAME, SPARE

    def pid_namespace(pid: int) -> str:
        try:
            return os.readlink(f"/proc/{pid}/ns/pid")
        except OSError:
            return ""

    named = children_named(wardens)
    found = {pid for pid, name in named.items() if name == NAME}
    spaces = {pid_namespace(pid) for pid in found} - {""}
    spares = {pid for pid, name in children_named(found).items() if name == SPARE}
    return found | spares | {pid for pid, name in named.items() if name == INIT and pid_namespace(pid) in spaces}


def children_named(parents: set[int]) -> dict[int, str]:
    """The children of ``parents``, with the names they give themselves (``/proc/PID/comm``)."""
    named: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None and int(fields[1]) in parents:
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    named[int(entry)] = fh.read().strip()
            except OSError:
                pass
    return named


def wait_for_hosts(root: int, temp: Path, count: int, seconds: float = 15.0) -> None:
    """Wait until ``count`` agent hosts below ``root`` have started, each with its game folder under ``temp``.

    Both are needed: a jailed warden's bubblewrap is a session leader too, so ``hosts_of`` alone may count it
    before any host is forked."""
    def games() -> list[Path]:  # a game's own copy, or the file's template (``match`` forks hosts from it)
        return [*temp.rglob("cxforge-game-*/game/*.py"), *temp.rglob("cxforge-template-*/game/*.py")]

    deadline = time.monotonic() + seconds
    while (len(hosts_of(root)) < count or len(games()) < count) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hosts_of(root) and games(), "no agent host started"
    time.sleep(0.3)  # the hosts are forked


def left_folders(temp: Path) -> list[Path]:
    """Game folders, and jailed wardens' folders, still under ``temp``."""
    return list(temp.rglob("cxforge-game-*")) + list(temp.glob("cxforge-jail-*"))
