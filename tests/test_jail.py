"""The jail (tools/sandbox/jail.py): a jailed agent cannot reach the network, see the user's processes or their
environments, or write outside its game folder and /tmp; where bubblewrap cannot run, hosts run as before and
say so.  Skipped where bubblewrap is missing or refused (make test installs it where it is root)."""

from __future__ import annotations

import json
import socket
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.tools.play.players import resolve
from connectx_forge.tools.sandbox import jail, warden
from connectx_forge.tools.sandbox.seat import HostedAgent

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
    path.write_text("def agent(obs, config):\n    import json, os, socket\n    found = {}\n"
                    + textwrap.indent(textwrap.dedent(body), "    ")
                    + "\n    print('FOUND ' + json.dumps(found))\n    return 3\n")
    host = HostedAgent(resolve(str(path)), 1, (6, 7, 4), 2.0, 60.0, template=template)
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


@jailed
@pytest.mark.usefixtures("fresh_warden")
def test_a_jailed_agent_sees_only_the_jail_and_no_secret(tmp_path: Path) -> None:
    found = probe(tmp_path, """
        found["pids"], found["key"], found["cmdlines"] = [], False, []
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            found["pids"].append(int(pid))
            for name in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                found["key"] |= b"KAGGLE_KEY" in data or b"0123456789abcdef" in data
                if name == "cmdline":
                    found["cmdlines"].append(data.split(b"\\0")[0].decode(errors="replace"))
        found["env"] = sorted(os.environ)
    """)
    assert found["key"] is False and "KAGGLE_KEY" not in found["env"], found
    assert len(found["pids"]) <= 3, found  # bubblewrap's init, the warden, this host: not the user's processes
    assert not any("pytest" in c for c in found["cmdlines"]), found


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
    jail.status.cache_clear()
    try:
        monkeypatch.setenv("PATH", "/nonexistent")
        assert jail.status() == (False, f"not jailed: no bwrap on PATH; {jail.INSTALL}")
        jail.status.cache_clear()
        monkeypatch.setenv("CXFORGE_JAIL", "off")
        assert jail.status() == (False, "not jailed (CXFORGE_JAIL=off)")
    finally:
        jail.status.cache_clear()
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
