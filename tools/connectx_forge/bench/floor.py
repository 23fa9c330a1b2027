"""The fastest isolated games this machine allows: the bound beside ``cxforge bench loop --isolated``.

An isolated game forks one process per player from a template holding what a
host holds (numpy, kaggle_environments and the modules submissions import, as
a host's warden preloads them: ``warden.preload``), and asks it for each move
over a socket.  This module plays such games with nothing else: a template
forks each host ahead of its game and hands it over, the referee sends each
move's observation as one JSON line and reads the answer (a random legal
column), and a host exits when its channel closes.  No jail, no warden, no
limits, no seeds, no folders, no logs, no rules of the game.
What is left is the process work (a fork, its copy-on-write faults and an exit
per host) and one round trip per move, so no design that keeps "a fresh
process per player per game" beats it on this machine: the agent hosts' rate
is read against it.

Each worker is a process of its own (``fork_pool``) with its own template, as
``cxforge match`` runs one warden per worker.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import time

from connectx_forge.play.worker_pool import fork_pool
from connectx_forge.sandbox import limits, warden

COLUMNS, ROWS = 7, 6


def _host(channel: socket.socket) -> None:
    """Answer each observation with a random free column until the channel closes."""
    buf = b""
    while True:
        data = channel.recv(1 << 16)
        if not data:
            os._exit(0)
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            board = json.loads(line)["obs"]["board"]
            free = [c for c in range(COLUMNS) if board[c] == 0]
            channel.sendall(json.dumps({"action": random.choice(free or [0])}).encode() + b"\n")


def _spare() -> socket.socket:
    """Fork a host ahead of its game: the referee's end of its channel."""
    ours, theirs = socket.socketpair()
    if os.fork() == 0:
        ours.close()
        _host(theirs)
    theirs.close()
    return ours


def _template(control: socket.socket) -> None:
    """Hand over a host (the referee's end of its channel) per request, forking the next one ahead."""
    import gc

    warden.preload()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # ended hosts are reaped by the kernel
    ready = _spare()
    while control.recv(16):
        socket.send_fds(control, [b"h"], [ready.fileno()])
        ready.close()
        ready = _spare()
    os._exit(0)


def _play(plies: int, games: int) -> int:
    """``games`` games of ``plies`` moves each, against a template of this process's own: how many ran."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        ours.close()
        limits.die_with_parent(signal.SIGKILL, parent)
        _template(theirs)
    theirs.close()
    try:
        for _ in range(games):
            hosts = [_take(ours), _take(ours)]
            board = [0] * (COLUMNS * ROWS)
            for ply in range(plies):
                host = hosts[ply % 2]
                host.sendall(json.dumps({"obs": {"board": board, "mark": 1 + ply % 2, "step": ply,
                                                 "remainingOverageTime": 60},
                                         "config": {"rows": ROWS, "columns": COLUMNS, "inarow": 4}}).encode()
                             + b"\n")
                answer = b""
                while not answer.endswith(b"\n"):
                    chunk = host.recv(1 << 16)
                    if not chunk:
                        raise RuntimeError("a floor host ended early")
                    answer += chunk
                column = int(json.loads(answer)["action"])
                cell = max((r * COLUMNS + column for r in range(ROWS) if board[r * COLUMNS + column] == 0),
                           default=None)
                if cell is not None:
                    board[cell] = 1 + ply % 2
            for host in hosts:
                host.close()
    finally:
        ours.close()
        os.waitpid(pid, 0)
    return games


def _take(control: socket.socket) -> socket.socket:
    control.send(b"go")
    _, fds, _, _ = socket.recv_fds(control, 16, 1)
    return socket.socket(fileno=fds[0])


def _share(job: tuple[int, int]) -> int:
    return _play(*job)


def floor_rate(plies: int, games: int, workers: int) -> float:
    """Games per second of ``games`` bare games of ``plies`` moves over ``workers`` processes."""
    start = time.perf_counter()
    if workers == 1:
        done = _play(plies, games)
    else:
        shares = [games // workers + (i < games % workers) for i in range(workers)]
        with fork_pool(workers) as pool:
            done = sum(pool.map(_share, [(plies, n) for n in shares if n]))
    return done / (time.perf_counter() - start)
