"""An agent's output, read by the referee through a pipe: it never grows a file, and the referee keeps a bound.

A host's fds 1 and 2 are the write end of a pipe (``seat.HostedAgent`` makes it,
the warden hands it to the host), never a file: an agent that writes to them
straight, past its capped ``sys.stdout`` (``host.CappedLog``), or a program it
runs, fills the pipe and then waits until the referee reads.  The referee reads
it whenever it waits on the host (``seat.HostedAgent.move``) and when it reads
the log, keeps the last ``Limits.log_bytes`` of it (1 MiB by default), counts
what it drops, and says so at the end of the log.
"""

from __future__ import annotations

import os
from collections import deque

READS = 64  # chunks of 64 KiB one ``drain`` reads at most
NOTE = "cxforge: dropped {dropped} bytes of its output (the log keeps its last {kept} bytes)"


class Output:
    """One host's output pipe and the last ``bound`` bytes read from it."""

    def __init__(self, bound: int) -> None:
        self.bound = max(0, int(bound))
        self.read_fd, self.write_fd = os.pipe()  # the write end goes to the host (``hand_over`` closes ours)
        os.set_blocking(self.read_fd, False)
        self.chunks: deque[bytes] = deque()
        self.held = 0  # bytes in ``chunks`` (at most one chunk more than ``bound``)
        self.seen = 0  # bytes read in all
        self.open = True  # some writer may still write (no end of file read yet)

    def hand_over(self) -> None:
        """Close the referee's copy of the write end (the host holds its own): the end of file then says the
        host and all it started are gone."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def drain(self) -> bool:
        """Read what there is now without waiting (at most ``READS`` chunks: a writer that never stops holds
        no caller); False once every writer is gone (end of file)."""
        for _ in range(READS):
            if not self.open:
                break
            try:
                data = os.read(self.read_fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                data = b""
            if not data:
                self.open = False
                break
            self._keep(data)
        return self.open

    def _keep(self, data: bytes) -> None:
        self.chunks.append(data)
        self.held += len(data)
        self.seen += len(data)
        while self.chunks and self.held - len(self.chunks[0]) >= self.bound:
            self.held -= len(self.chunks.popleft())

    def __len__(self) -> int:
        """The bytes kept (at most ``bound``)."""
        return min(self.held, self.bound)

    @property
    def dropped(self) -> int:
        return self.seen - len(self)

    def kept(self) -> bytes:
        """The last ``bound`` bytes read."""
        data = b"".join(self.chunks)
        return data[len(data) - len(self):]

    def note(self) -> str:
        """The line that says how much was dropped ("" when nothing was)."""
        return NOTE.format(dropped=self.dropped, kept=self.bound) + "\n" if self.dropped else ""

    def close(self) -> None:
        self.hand_over()
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1
        self.open = False
