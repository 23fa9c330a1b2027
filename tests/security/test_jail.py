"""The jail (tools/connectx_forge/sandbox/jail.py): a jailed agent cannot reach the network, see the user's processes
or their
environments, or write outside its game folder and /tmp; where bubblewrap cannot run, hosts run as before and
say so.  Skipped where bubblewrap is missing or refused (make test installs it where it is root)."""

from __future__ import annotations

import json
import socket
import tarfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.play.resolve import resolve
from connectx_forge.sandbox import jail, warden
from connectx_forge.sandbox.limits import SeatBudget
from connectx_forge.sandbox.seat import HostedAgent

JAILED, HOW = jail.status()
jailed = pytest.mark.skipif(not JAILED, reason=f"agents are {HOW}")
FAKE_KEY = "0123456789abcdef0123456789abcdef"
OBS = {"board": [0] * 42, "mark": 1, "remainingOverageTime": 60}
CONFIG = {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2}


@pytest.fixture
def fresh_warden(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A warden started after the test's environment is set (a planted key included), closed afterwards."""
    monkeypatch.setenv("KAGGLE_KEY", FAKE_KEY)
    warden.reset()
    yield
    warden.reset()


def probe(tmp_path: Path, body: str, template: bool = False) -> dict[str, Any]:
    """What an agent whose first move runs ``body`` (setting ``found``) found, from its log (``template``: its
    host forked from the file's template, as in ``match``)."""
    path = tmp_path / "probe.py"
    text = ("def agent(obs, config):\n    import json, os, socket\n    found = {}\n"
            + textwrap.indent(textwrap.dedent(body), "    ")
            + "\n    print('FOUND ' + json.dumps(found))\n    return 3\n")
    if not path.exists() or path.read_text() != text:  # unchanged, the same template plays again
        path.write_text(text)
    host = HostedAgent(resolve(str(path)), 1, SeatBudget.of_board((6, 7, 4), 2.0, 60.0), template=template)
    try:
        reply = host.move(OBS, CONFIG, 10.0)
        assert reply.kind == "ok" and reply.action == 3, reply
        [line] = [ln for ln in host.log_text().splitlines() if ln.startswith("FOUND ")]
        return json.loads(line[len("FOUND "):])
    finally:
        host.close()


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_a_jailed_agent_cannot_reach_a_server_on_localhost(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[Any] = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    found = probe(tmp_path, f"""
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            found["connected"] = True
        except OSError as exc:
            found["connected"] = False
            found["error"] = str(exc)
    """)
    server.close()
    assert found["connected"] is False and not accepted, found


LIST = """
    import subprocess, time
    child = subprocess.Popen(["sleep", "30"])
    for _ in range(200):  # until the child has become sleep
        if open(f"/proc/{child.pid}/comm").read().strip() == "sleep":
            break
        time.sleep(0.01)
    found["me"], found["child"], found["procs"], found["key"] = os.getpid(), child.pid, {}, False
    found["parents"] = {}
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/comm") as fh:
                found["procs"][pid] = fh.read().strip()
            with open(f"/proc/{pid}/stat") as fh:
                found["parents"][pid] = int(fh.read().rsplit(")", 1)[1].split()[1])
            for name in ("environ", "cmdline"):
                with open(f"/proc/{pid}/{name}", "rb") as fh:
                    data = fh.read()
                found["key"] |= b"KAGGLE_KEY" in data or b"0123456789abcdef" in data
        except OSError:
            continue
    child.kill()
    child.wait()
    found["env"] = sorted(os.environ)
"""


@jailed
@pytest.mark.usefixtures("fresh_warden")
@pytest.mark.parametrize("template", [False, True])
def test_a_jailed_agent_sees_no_secret_and_only_its_own_processes(tmp_path: Path, template: bool) -> None:
    """Its namespace's init, its template (as in match), itself and its child: not the warden, not the other
    seat, not the user's processes; no planted key in any environment it can read."""
    if not jail.probe().alone:
        pytest.skip(f"agents share the jail's processes here: {HOW}")
    found = probe(tmp_path, LIST, template)
    assert found["key"] is False and "KAGGLE_KEY" not in found["env"], found
    assert_only_its_own(found, template)


def assert_only_its_own(found: dict[str, Any], template: bool) -> None:
    procs = {int(pid): name for pid, name in found["procs"].items()}
    expected = {1: "cxforge-init", found["me"]: "cxforge-host", found["child"]: "sleep"}
    if template:  # its template, and the copy of the same file it forks ahead for the next game (named so
        expected[2] = "cxforge-tmpl"  # once it runs: a copy caught in its fork still has its template's name)
        expected.update({int(pid): name for pid, name in found["procs"].items() if found["parents"].get(pid) == 2
                         and name in ("cxforge-spare", "cxforge-tmpl") and int(pid) != found["me"]})
        assert len(expected) <= 5, found
    assert procs == expected, found


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_each_game_of_a_template_starts_once_the_last_ones_host_is_gone(tmp_path: Path) -> None:
    """Games forked from one template, one after another as in match (each host ended just before the next
    starts, and handed its game by the warden without its template): none sees the last game's host, not even
    as a zombie."""
    if not jail.probe().alone:
        pytest.skip(f"agents share the jail's processes here: {HOW}")
    for _ in range(10):
        assert_only_its_own(probe(tmp_path, LIST, True), True)


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_a_jailed_agent_sees_no_secret_and_not_the_users_processes(tmp_path: Path) -> None:
    """Where each agent cannot be alone (no namespaces per agent), it still sees only the jail's processes."""
    found = probe(tmp_path, LIST)
    assert found["key"] is False and "KAGGLE_KEY" not in found["env"], found
    assert len(found["procs"]) <= 5, found  # bubblewrap's init, the warden, an init, this host and its child
    assert not any("pytest" in name for name in found["procs"].values()), found


@jailed
@pytest.mark.usefixtures("fresh_warden")
@pytest.mark.parametrize("template", [False, True])
def test_a_targz_agent_reads_its_files_where_kaggle_puts_them(tmp_path: Path, template: bool) -> None:
    if not jail.probe().alone:
        pytest.skip(f"agents share the jail's folders here: {HOW}")
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "weights.txt").write_text("42\n")
    (folder / "main.py").write_text(textwrap.dedent("""
        import json, os
        WEIGHTS = open("/kaggle_simulations/agent/weights.txt").read().strip()

        def agent(obs, config):
            print("FOUND " + json.dumps({"weights": WEIGHTS, "cwd": os.getcwd(), "path": config.__raw_path__,
                                         "files": sorted(os.listdir("/kaggle_simulations/agent"))}))
            return 3
    """))
    archive = tmp_path / "sub.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("main.py", "weights.txt"):
            tar.add(folder / name, arcname=name)
    host = HostedAgent(resolve(str(archive)), 1, SeatBudget.of_board((6, 7, 4), 2.0, 60.0), template=template)
    try:
        reply = host.move(OBS, CONFIG, 10.0)
        assert reply.kind == "ok" and reply.action == 3, (reply, host.log_text())
        [line] = [ln for ln in host.log_text().splitlines() if ln.startswith("FOUND ")]
    finally:
        host.close()
    assert json.loads(line[len("FOUND "):]) == {
        "weights": "42", "cwd": "/kaggle_simulations/agent", "path": "/kaggle_simulations/agent/main.py",
        "files": ["main.py", "weights.txt"]}


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_a_jailed_agent_writes_only_its_folder_and_tmp(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    found = probe(tmp_path, f"""
        for name, path in (("folder", "mine.txt"), ("tmp", "/tmp/mine.txt"), ("outside", {str(outside)!r}),
                           ("home", os.path.expanduser("~root/cxforge-jail-test.txt"))):
            try:
                with open(path, "w") as fh:
                    fh.write("x")
                found[name] = True
            except OSError:
                found[name] = False
    """)
    assert found == {"folder": True, "tmp": True, "outside": False, "home": False}, found
    assert not outside.exists() and not Path("/tmp/mine.txt").exists()  # its /tmp was its own


def test_without_bubblewrap_hosts_run_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    jail.probe.cache_clear()
    try:
        monkeypatch.delenv("CXFORGE_JAIL", raising=False)  # whatever the run's own setting
        monkeypatch.setenv("PATH", "/nonexistent")
        assert jail.status() == (False, f"not jailed: no bwrap on PATH; {jail.INSTALL}")
        jail.probe.cache_clear()
        monkeypatch.setenv("CXFORGE_JAIL", "off")
        assert jail.status() == (False, "not jailed (CXFORGE_JAIL=off)")
    finally:
        jail.probe.cache_clear()
        monkeypatch.undo()
        assert jail.status()[0] == JAILED


@pytest.mark.parametrize("template", [False, True])
def test_an_agent_has_no_capability_even_as_root(tmp_path: Path, template: bool) -> None:
    """Root in a container keeps capabilities (CAP_SYS_ADMIN too) inside bubblewrap: a host gives them all up
    before any agent code, for good."""
    found = probe(tmp_path, """
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(("CapEff", "CapPrm", "CapInh", "CapBnd", "NoNewPrivs")):
                    key, value = line.split(":")
                    found[key] = value.strip()
    """, template)
    assert found == {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16,
                     "NoNewPrivs": "1"}, found


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_a_file_playing_itself_never_sees_its_twin(tmp_path: Path) -> None:
    """Both seats of ``match a.py a.py`` are forked from templates of their own: neither seat's host sees the
    other's."""
    if not jail.probe().alone:
        pytest.skip(f"agents share the jail's processes here: {HOW}")
    path = tmp_path / "twin.py"
    path.write_text(textwrap.dedent("""
        import os

        def agent(obs, config):
            names = []
            for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
                try:
                    names.append(open(f"/proc/{pid}/comm").read().strip())
                except OSError:
                    pass
            print("HOSTS", names.count("cxforge-host"))
            return [c for c in range(config.columns) if obs.board[c] == 0][0]
    """))
    result = run_match(str(path), str(path), games=2, workers=1, seed=0, progress=False)
    seen = [line for record in result.records for text in (record.logs or {}).values()
            for line in text.splitlines() if line.startswith("HOSTS")]
    assert seen and set(seen) == {"HOSTS 1"}, seen
