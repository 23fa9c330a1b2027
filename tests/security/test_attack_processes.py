"""Promise: agent code owns every process it ran in (a template, a spare, a host), nothing of the jail outlives its
command, and each seat of each game has namespaces of its own.

* (a) a file's load reaches the template's own code through the call stack and makes it hand the warden a full
  socket: the match still ends (the warden and the referee never wait on agent code without a deadline);
* (b) the load turns off the template's fork check and forks a helper: no game sees it (the warden kills all but
  the template and the game's host in the template's namespace before each game);
* (c) a host stops its template and outlives its game: the next game never sees it alive;
* (d) ``cxforge`` killed by SIGTERM, SIGINT or SIGHUP while its warden is stuck and its host ignores signals:
  every jail process and folder is gone within seconds;
* (e) the seats cannot reach each other by TCP on 127.0.0.1, an abstract unix socket or System V shared memory,
  and a game's System V IPC does not outlive it;
* (f) what a game writes in /tmp, /dev/shm, a POSIX message queue, its game folder or its HOME is seen neither by
  a later game of the same worker nor by its template, and what the load wrote in /tmp is seen by every game.
* (g) the load maps writable shared memory: no game shares it with a later one (the file is loaded afresh).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox import jail, warden, warden_process
from tests.harness import ROOT, planted_world, wait_gone
from tests.security.test_jail import probe

JAILED, HOW = jail.status()
alone = pytest.mark.skipif(not (JAILED and jail.probe().alone), reason=f"agents are {HOW}")
pytestmark = alone


@pytest.fixture(autouse=True)
def fresh_warden() -> Iterator[None]:
    """Each test with wardens of its own (a template of an earlier test is never reused)."""
    warden.reset()
    yield
    warden.reset()


# the template's module, found through the call stack of the load (None in a host loaded afresh)
TEMPLATE_GLOBALS = """
import sys
def _template_globals():
    frame = sys._getframe()
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).endswith("sandbox.template"):
            return frame.f_globals
        frame = frame.f_back
    return None
"""

# (a): every spare the template says it forked is a sleeping child, and the socket it hands the warden is full
FULL_SOCKET = TEMPLATE_GLOBALS + """
import os, socket, time
KEEP = []
def _full_spare(setup, loaded, log, output, before):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    try:
        while True:
            ours.send(b"x" * 65536)
    except BlockingIOError:
        pass
    ours.setblocking(True)
    KEEP.append(theirs)
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(1000)
    return g["Spare"](pid, ours, "/tmp")
g = _template_globals()
if g is not None:
    g["_spare"] = _full_spare


def agent(obs, config):
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""

# (b): the fork check off, and a helper forked by the load; each game says how many helpers it sees
HELPER = TEMPLATE_GLOBALS + """
import os, time
g = _template_globals()
if g is not None:
    g["unforkable"] = lambda control: ""
    if os.fork() == 0:
        import ctypes
        ctypes.CDLL(None).prctl(15, b"cxforge-helper", 0, 0, 0)
        while True:
            time.sleep(0.01)


def agent(obs, config):
    seen = 0
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
            seen += "(cxforge-helper)" in stat and stat.rsplit(")", 1)[1].split()[0] not in "ZX"
        except OSError:
            pass
    if obs.step < 2:
        print("HELPERS", seen, flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""

# (c): at its first move a host says whether the last game's host is alive, stops its template and never returns
STOPPER = """
import os, signal, time


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return "dead" if fh.read().rsplit(")", 1)[1].split()[0] in "ZX" else "alive"
    except OSError:
        return "dead"


def agent(obs, config):
    try:
        with open("/tmp/cxforge-last-host") as fh:
            last = int(fh.read())
        print("LAST", _state(last), flush=True)
    except OSError:
        print("LAST none", flush=True)
    with open("/tmp/cxforge-last-host", "w") as fh:
        fh.write(str(os.getpid()))
    try:
        os.kill(os.getppid(), signal.SIGSTOP)
    except OSError:
        pass
    while True:
        time.sleep(1000)
"""


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _lines(result: Any, prefix: str) -> list[str]:
    return [line for record in result.records for text in (record.logs or {}).values()
            for line in text.splitlines() if line.startswith(prefix)]


def test_a_template_that_hands_the_warden_a_full_socket_cannot_hang_the_match(tmp_path: Path) -> None:
    env = dict(planted_world(tmp_path), TMPDIR=str(tmp_path))
    games = tmp_path / "games.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "connectx_forge.cli", "match",
                             _file(tmp_path, "full.py", FULL_SOCKET), "kaggle:random", "-n", "1", "-w", "1",
                             "--no-progress", "--save", str(games)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)  # a liveness bound, not a measure: a hung match never ends
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the match hung on a template that handed the warden a full socket")
    assert proc.returncode == 0, err[-2000:]
    [record] = [json.loads(line) for line in games.read_text().splitlines()]
    assert record.get("culprit") is None, record  # loaded afresh, the file plays its game
    assert not wait_gone(lambda: _jail_processes(tmp_path), 10.0), "jail processes left behind"


def test_a_helper_forked_by_the_template_lives_into_no_game(tmp_path: Path) -> None:
    result = run_match(_file(tmp_path, "helper.py", HELPER), "kaggle:random", games=3, workers=1, seed=0,
                       seats="first", progress=False)
    seen = _lines(result, "HELPERS")
    assert len(seen) == 3 and set(seen) == {"HELPERS 0"}, seen
    warden.reset()
    assert not wait_gone(lambda: _named("cxforge-helper")), "the helper outlived the match"


def test_a_host_that_stops_its_template_does_not_live_into_the_next_game(tmp_path: Path) -> None:
    settings = GameSettings(act_timeout=0.2, overage=0.0)
    result = run_match(_file(tmp_path, "stopper.py", STOPPER), "kaggle:random", games=3, workers=1, seed=0,
                       seats="first", settings=settings, progress=False)
    said = _lines(result, "LAST")
    assert len(said) == 3 and "LAST alive" not in said, said
    assert all(record.culprit is not None for record in result.records)  # each game: a timeout at move 1


# (b'): the template works between games: each spare after the first is forked after a second of CPU
BANKER = TEMPLATE_GLOBALS + """
import os, time
g = _template_globals()
if g is not None:
    _fork_spare = g["_spare"]

    def _banking_spare(*args):
        if os.path.exists("/tmp/cxforge-banked"):
            began = time.process_time()
            while time.process_time() - began < 1.0:
                pass
        open("/tmp/cxforge-banked", "w").close()
        return _fork_spare(*args)
    g["_spare"] = _banking_spare


def agent(obs, config):
    if obs.step < 2:
        try:
            with open(f"/proc/{os.getppid()}/comm") as fh:
                templated = fh.read().strip() == "cxforge-tmpl"
        except OSError:
            templated = False
        print("TEMPLATED", "yes" if templated else "no", flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def test_a_template_that_works_between_games_is_dropped(tmp_path: Path) -> None:
    # each of the file's templates plays one game from its first spare; the game after forks a second
    first = warden_process.TEMPLATES_PER_FILE
    result = run_match(_file(tmp_path, "banker.py", BANKER), "kaggle:random", games=first + 2, workers=1, seed=0,
                       seats="first", progress=False)
    assert _lines(result, "TEMPLATED") == ["TEMPLATED yes"] * first + ["TEMPLATED no"] * 2


def _named(comm: str) -> list[int]:
    found = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                found.append(int(pid))
        except OSError:
            pass
    return found


def _jail_processes(temp: Path) -> list[int]:
    """Live processes of the jails whose folders are under ``temp``: their command lines name it (hosts, templates
    and inits are forks of the warden), zombies left out."""
    found = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(temp).encode() in cmd and state != "Z" and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def _warden_of(temp: Path) -> int | None:
    for pid in _jail_processes(temp):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        # the interpreter run on the warden's module (the jail's shell and bubblewrap name it among their arguments)
        if cmd[1:4] == [b"-I", b"-m", b"connectx_forge.sandbox.warden"] and comm not in (
                "cxforge-host", "cxforge-tmpl", "cxforge-spare", "cxforge-init"):
            return pid
    return None


DEAF = """
import signal, time
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def agent(obs, config):
    while True:
        time.sleep(1000)
"""


def _default_signals() -> None:
    """SIGTERM, SIGINT and SIGHUP at their default actions in the child about to run (``preexec_fn``)."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_cxforge_killed_leaves_no_jail_process_and_no_folder(sig: signal.Signals, tmp_path: Path) -> None:
    """A host that ignores signals plays; the warden is stuck (stopped); cxforge gets ``sig``."""
    temp = tmp_path / "t"
    temp.mkdir()
    os.chmod(tmp_path, 0o755)
    env = dict(planted_world(tmp_path), TMPDIR=str(temp), CXFORGE_TEST_MARKER=uuid.uuid4().hex)
    proc = subprocess.Popen([sys.executable, "-m", "connectx_forge.cli", "match",
                             _file(tmp_path, "deaf.py", DEAF), "kaggle:random", "-n", "1", "-w", "1",
                             "--seats", "first", "--act-timeout", "60", "--no-progress"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            # the signals at their defaults, as at a terminal: a Python started with SIGINT ignored (as
                            # an earlier test or a pytest worker may leave it here) never raises KeyboardInterrupt, and
                            # one started under nohup ignores SIGHUP
                            preexec_fn=_default_signals)
    stopped = None
    try:
        deadline = time.monotonic() + 60
        while not [p for p in _jail_processes(temp) if p in _named("cxforge-host")] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p for p in _jail_processes(temp) if p in _named("cxforge-host")], "no host started"
        stopped = _warden_of(temp)
        assert stopped is not None, "no warden found"
        os.kill(stopped, signal.SIGSTOP)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        left = wait_gone(lambda: _jail_processes(temp), 10.0)
        folders = list(temp.glob("cxforge-jail-*"))
        assert not left and not folders, (left, folders)
    finally:
        for pid in _jail_processes(temp):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if stopped is not None:
            try:
                os.kill(stopped, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# (e): the first seat offers a token on 127.0.0.1, on an abstract socket and in System V shared memory (and says
# what its own game found of the last one's); the second looks for all three
IPC = """
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY, TAG, KEEP = 0x{key:x}, b"{tag}", []


def _read_token():
    shm = libc.shmget(KEY, 0, 0)
    if shm < 0:
        return None
    at = libc.shmat(shm, None, 0)
    return ctypes.string_at(at, len(TAG)) if at not in (None, ctypes.c_void_p(-1).value) else b"?"


def offer():
    found = []
    if _read_token() is not None:
        found.append("shm")
    shm = libc.shmget(KEY, 1 << 20, 0o1666)
    if shm >= 0:
        at = libc.shmat(shm, None, 0)
        ctypes.memmove(at, TAG, len(TAG))
    for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_UNIX, "\\0" + TAG.decode())):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.bind(address)
            s.listen(4)
            KEEP.append(s)
        except OSError:
            pass
    return found


def look():
    found = []
    if _read_token() is not None:
        found.append("shm")
    for family, address, name in ((socket.AF_INET, ("127.0.0.1", {port}), "tcp"),
                                  (socket.AF_UNIX, "\\0" + TAG.decode(), "abstract")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(0.5)
            s.connect(address)
            found.append(name)
        except OSError:
            pass
    return found


def agent(obs, config):
    if obs.step < 2:
        print("FOUND", {role!r}, ",".join({role}()) or "nothing", flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def _ipc_files(tmp_path: Path) -> tuple[str, str]:
    tag, key, port = uuid.uuid4().hex[:12], 0x5EA7_0000 + os.getpid() % 0xFFFF, 20000 + os.getpid() % 20000
    return (_file(tmp_path, "offer.py", IPC.format(key=key, tag=tag, port=port, role="offer")),
            _file(tmp_path, "look.py", IPC.format(key=key, tag=tag, port=port, role="look")))


@pytest.mark.parametrize("template", [True, False])
def test_the_seats_cannot_reach_each_other(tmp_path: Path, template: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not template:
        monkeypatch.setenv("CXFORGE_TEMPLATE", "off")
    offer, look = _ipc_files(tmp_path)
    result = run_match(offer, look, games=2, workers=1, seed=0, seats="first", progress=False)
    said = _lines(result, "FOUND")
    assert len(said) == 4 and set(said) == {"FOUND offer nothing", "FOUND look nothing"}, said


@pytest.mark.parametrize("template", [True, False])
def test_a_games_system_v_ipc_does_not_outlive_it(tmp_path: Path, template: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if not template:
        monkeypatch.setenv("CXFORGE_TEMPLATE", "off")
    offer, _ = _ipc_files(tmp_path)
    result = run_match(offer, "kaggle:random", games=3, workers=1, seed=0, seats="first", progress=False)
    said = _lines(result, "FOUND")
    assert len(said) == 3 and set(said) == {"FOUND offer nothing"}, said


@pytest.mark.parametrize("template", [True, False])
def test_an_agent_reaches_its_own_server_on_its_own_loopback(tmp_path: Path, template: bool) -> None:
    """Its own network namespace is a container's: its loopback is up, for its own processes alone."""
    found = probe(tmp_path, """
        try:
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            socket.create_connection(server.getsockname(), timeout=2).close()
            found["own"] = "reached"
        except OSError as exc:
            found["own"] = str(exc)
    """, template)
    assert found == {"own": "reached"}


# (f): a game notes itself in one place (/tmp, /dev/shm, a POSIX message queue, its game folder or its HOME) and says
# which notes of an earlier game it finds, and which its template found when the last game ended (the load makes the
# template look: it is agent code too); the load wrote a note in /tmp, which every game must find
NOTES = TEMPLATE_GLOBALS + """
import ctypes, glob, os
rt = ctypes.CDLL("librt.so.1", use_errno=True)
TAG, PLACE = "{tag}", "{place}"
QUEUE = f"/cxforge-note-{{TAG}}".encode()
open(f"/tmp/cxforge-load-{{TAG}}", "w").write("load")
FOLDER = os.getcwd()
SEEN_BY_TEMPLATE = []


def _places():
    return {{"tmp": "/tmp", "shm": "/dev/shm", "folder": FOLDER, "home": os.environ["HOME"]}}


def found():
    homes = glob.glob(f"/tmp/cxforge-home-*/cxforge-note-{{TAG}}") + glob.glob(f"{{os.environ['HOME']}}/cxforge-note-*")
    seen = [name for name, folder in _places().items() if os.path.exists(f"{{folder}}/cxforge-note-{{TAG}}")
            and name != "home"] + (["home"] if homes else [])
    queue = rt.mq_open(QUEUE, os.O_RDONLY)
    if queue >= 0:
        seen.append("mqueue")
    return seen


def note():
    if PLACE == "mqueue":
        rt.mq_open(QUEUE, os.O_CREAT | os.O_RDWR, 0o600, None)
    else:
        open(f"{{_places()[PLACE]}}/cxforge-note-{{TAG}}", "w").write("game")


g = _template_globals()
if g is not None:
    _reap = g["_gone"]

    def _looking_reap(pid):  # when a game's host has ended, before its HOME is removed
        _reap(pid)
        SEEN_BY_TEMPLATE[:] = found()
    g["_gone"] = _looking_reap


def agent(obs, config):
    if obs.step < 2:
        load = "load" if os.path.exists(f"/tmp/cxforge-load-{{TAG}}") else "no-load"
        print("NOTES", load, "game:" + ",".join(found()), "template:" + ",".join(SEEN_BY_TEMPLATE), flush=True)
        note()
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


@pytest.mark.parametrize("template", [True, False])
@pytest.mark.parametrize("place", ["tmp", "shm", "mqueue", "folder", "home"])
def test_nothing_a_game_writes_is_seen_by_a_later_game_or_its_template(
        tmp_path: Path, place: str, template: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not template:
        monkeypatch.setenv("CXFORGE_TEMPLATE", "off")
    notes = _file(tmp_path, "notes.py", NOTES.format(tag=uuid.uuid4().hex[:12], place=place))
    result = run_match(notes, "kaggle:random", games=3, workers=1, seed=0, seats="first", progress=False)
    assert _lines(result, "NOTES") == ["NOTES load game: template:"] * 3


# (f'): a game that writes nothing keeps its template, and every game of it sees what the load wrote in /tmp
LOAD_NOTE = """
import os
open("/tmp/cxforge-load-note", "w").write("load")


def agent(obs, config):
    if obs.step < 2:
        try:
            with open(f"/proc/{os.getppid()}/comm") as fh:
                templated = fh.read().strip() == "cxforge-tmpl"
        except OSError:
            templated = False
        with open("/tmp/cxforge-load-note") as fh:
            print("LOADED", fh.read(), "templated" if templated else "fresh", flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def test_every_templated_game_sees_what_the_load_wrote(tmp_path: Path) -> None:
    result = run_match(_file(tmp_path, "load_note.py", LOAD_NOTE), "kaggle:random", games=3, workers=1, seed=0,
                       seats="first", progress=False)
    assert _lines(result, "LOADED") == ["LOADED load templated"] * 3


# (g): the load maps writable shared memory (anonymous here; a shared file or a System V segment alike), which every
# fork of the template would map too: each game counts its own games there, and must find only itself
SHARED = """
import mmap
SHARED = mmap.mmap(-1, 4096)  # MAP_SHARED | MAP_ANONYMOUS


def agent(obs, config):
    if obs.step < 2:
        SHARED[0] = (SHARED[0] + 1) % 256
        print("SHARED", SHARED[0], flush=True)
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def test_no_game_shares_memory_the_load_mapped_with_a_later_game(tmp_path: Path) -> None:
    result = run_match(_file(tmp_path, "shared.py", SHARED), "kaggle:random", games=3, workers=1, seed=0,
                       seats="first", progress=False)
    assert _lines(result, "SHARED") == ["SHARED 1"] * 3


# (h): a game writes into its template's memory (``/proc/PPID/mem``: the template is its parent, stopped while it
# plays), where a later game, forked from the template, would read it
MEMORY = """
import ctypes, os
NOTE = ctypes.create_string_buffer(b"clean", 16)


def agent(obs, config):
    if obs.step < 2:
        print("MEMORY", NOTE.value.decode(), flush=True)
        try:
            with open(f"/proc/{os.getppid()}/mem", "r+b", buffering=0) as fh:
                fh.seek(ctypes.addressof(NOTE))
                fh.write(b"dirty\\0")
        except OSError:
            pass
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def test_no_game_writes_into_its_templates_memory(tmp_path: Path) -> None:
    result = run_match(_file(tmp_path, "memory.py", MEMORY), "kaggle:random", games=3, workers=1, seed=0,
                       seats="first", progress=False)
    assert _lines(result, "MEMORY") == ["MEMORY clean"] * 3
