"""Templates (tools/connectx_forge/sandbox/template.py): ``match`` loads a file once per template
(``TEMPLATES_PER_FILE`` per
worker, taking games in turn) and forks every game's host from one; the load's time is charged to each game's
move 1; a load a fork would not copy faithfully (a thread) is loaded afresh in every game, and so is every file
with ``CXFORGE_TEMPLATE=off``."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.sandbox import output, protocol, seat, warden_process

AGENT = '''
import os, time{extra}
TOKEN = os.urandom(8).hex()  # a pid is its namespace's, and each template has its own: the load is told by this
LOADED_IN = f"{{os.getpid()}}:{{TOKEN}}"
time.sleep(0.3)

def agent(obs, config):
    print("LOADED_IN", LOADED_IN, "PLAYS_IN", f"{{os.getpid()}}:{{TOKEN}}")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
'''


def pids(tmp_path: Path, extra: str = "", games: int = 3) -> list[tuple[str, str, float]]:
    """Per game: the process the file was loaded in and the one its agent played in (each its pid and the load's
    token), and its move 1's time."""
    path = tmp_path / "loads.py"
    path.write_text(AGENT.format(extra=extra))
    result = run_match(str(path), "leftmost", games, workers=1, seed=0, seats="first", progress=False)
    out = []
    for record in result.records:
        assert record.outcome in ("win", "draw"), record
        assert record.logs is not None
        words = record.logs["1"].split()
        out.append((words[1], words[3], record.times[0]))
    return out


def test_a_file_is_loaded_once_per_template_and_each_game_forked_from_one(tmp_path: Path) -> None:
    templates = warden_process.TEMPLATES_PER_FILE
    games = pids(tmp_path, games=2 * templates + 1)
    loads = [loaded for loaded, _, _ in games]
    assert len(set(loads)) == templates, games  # one load each
    assert loads[:2 * templates] == loads[:templates] * 2, games  # taking games in turn
    assert len({played for _, played, _ in games}) == len(games), games  # a host each
    assert all(loaded != played for loaded, played, _ in games), games
    assert all(first >= 0.3 for _, _, first in games), games  # the load's sleep counts against move 1


def test_a_load_that_starts_a_thread_is_loaded_afresh_in_every_game(tmp_path: Path) -> None:
    games = pids(tmp_path, "\nimport threading\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()")
    assert all(loaded == played for loaded, played, _ in games), games
    assert all(first >= 0.3 for _, _, first in games), games


def test_templates_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXFORGE_TEMPLATE", "off")
    games = pids(tmp_path)
    assert all(loaded == played for loaded, played, _ in games), games


@pytest.mark.parametrize(("sent", "close", "ready"), [
    ([protocol.READY], False, True), ([b'{"ready":', b'true}\n'], False, True), ([b'{"id":1}\n'], False, None),
    ([b"[" * 100], False, None), ([], True, False), ([], False, False)],
    ids=["ready", "in-parts", "other", "endless", "closed", "silent"])
def test_a_templated_host_is_ready_only_when_it_says_so(sent: list[bytes], close: bool, ready: bool | None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The referee starts move 1's clock once a templated host says it has taken its game; a host that closes
    its channel or says nothing in time is not ready (and its move is a crash); one that says anything else
    (``ready`` None) breaks the protocol."""
    monkeypatch.setattr(seat, "READY_SECONDS", 0.3)
    ours, theirs = socket.socketpair()
    host = object.__new__(seat.HostedAgent)  # only the channel: no warden, no host process
    host.sock, host.buf = ours, b""
    host.output = output.Output(0)
    host.output.hand_over()
    os.close(host.output.read_fd)
    host.output.open = False  # no output pipe to poll: only the channel
    for part in sent:
        theirs.sendall(part)
    if close:
        theirs.close()
    try:
        if ready is None:
            with pytest.raises(protocol.ProtocolError):
                host._ready()
        else:
            assert host._ready() is ready
    finally:
        ours.close()
        theirs.close()


def test_a_spare_refused_for_the_last_games_processes_is_forked_once_they_are_reaped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The template forks the next spare before it reaps the host just killed (their exit and the fork overlap);
    where the processes allowed are all taken meanwhile (``EAGAIN``), it reaps the ended hosts and forks again."""
    from connectx_forge.sandbox import template

    forks, reaped = [], []

    def fork() -> int:
        forks.append(len(reaped))
        if not reaped:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return 4242

    monkeypatch.setattr(template.os, "fork", fork)
    monkeypatch.setattr(template.os, "waitpid", lambda pid, flags: reaped.append(pid) or (pid, 9))
    ended = [101, 102]
    assert template._fork(ended) == 4242
    assert forks == [0, 2] and reaped == [101, 102] and ended == []


def test_a_games_hosts_are_ended_in_one_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a game's end the referee asks its warden to end both hosts in one request (``Warden.end_all``: the
    warden kills both before it waits for either), then closes each."""
    from connectx_forge.sandbox import warden

    asked: list[list[int]] = []
    closed: list[int | None] = []

    class Handle:
        def end_all(self, pids: list[int]) -> None:
            asked.append(pids)

    class Host:
        def __init__(self, pid: int | None) -> None:
            self.pid = pid

        def close(self) -> None:
            closed.append(self.pid)

    monkeypatch.setattr(warden, "get", Handle)
    seat.close_all([Host(11), None, Host(12)])  # type: ignore[list-item]
    seat.close_all([Host(None)])  # type: ignore[list-item]
    assert asked == [[11, 12]] and closed == [None, None, None]
