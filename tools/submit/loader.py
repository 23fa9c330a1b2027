"""The checker's engine process: one isolated ``python -I kaggle_load.py`` that plays games on request.

A ``KaggleLoader`` is the resource a thread of the worker pool keeps
(``tools/play/pool.in_threads``): it starts the process (in the folder that
holds only the submission, unable to import this project), sends it one JSON
job a line and reads one JSON result a line.  A game that outlives its deadline
is hung: the process is killed and the game is a TIMEOUT; a process that dies
mid-game makes the game an ERROR with the last line it wrote on stderr.  Either
way the next game starts a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from connectx_forge.tools.paths import PROJECT_ROOT
from connectx_forge.tools.play.pool import PoolStopped
from connectx_forge.tools.submit import kaggle_load

STOP_WAIT_S = 10.0  # how long a process may take to exit once its jobs are done


def _last_line(log: IO[bytes]) -> str:
    """The last line (300 characters at most) of what the process wrote on stderr."""
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - 4000))
    lines = log.read().decode(errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else ""


class KaggleLoader:
    """One isolated process in ``folder`` playing jobs one at a time; renewed when it hangs or dies."""

    def __init__(self, folder: Path, deadline: float) -> None:
        self.folder = folder
        self.deadline = deadline
        self._log: IO[bytes] = tempfile.TemporaryFile()  # its stderr, outside the agent's folder
        self._proc: subprocess.Popen[str] | None = None
        self._closed = False
        self._lock = threading.Lock()

    def _process(self) -> subprocess.Popen[str]:
        """The running process, started afresh when there is none or it has exited."""
        with self._lock:
            if self._closed:
                raise PoolStopped("the loader was closed")
            if self._proc is None or self._proc.poll() is not None:
                self._log.seek(0)
                self._log.truncate()
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", kaggle_load.__file__, str(PROJECT_ROOT)],
                    cwd=self.folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                    text=True, bufsize=1)
            return self._proc

    def play(self, job: dict[str, Any]) -> dict[str, Any]:
        """The result of one game ``job``, as ``kaggle_load`` reports it (or TIMEOUT / ERROR)."""
        proc = self._process()
        hung = threading.Event()

        def kill() -> None:
            hung.set()
            proc.kill()

        timer = threading.Timer(self.deadline, kill)
        timer.start()
        try:
            line = self._exchange(proc, job)
        finally:
            timer.cancel()
        if line:
            return json.loads(line)
        proc.kill()
        proc.wait()
        return self._lost(job, proc.returncode, hung.is_set())

    @staticmethod
    def _exchange(proc: subprocess.Popen[str], job: dict[str, Any]) -> str:
        """Send the job, read the result line ("" when the process is gone)."""
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(job) + "\n")
            proc.stdin.flush()
            return proc.stdout.readline()
        except (BrokenPipeError, OSError, ValueError):  # ValueError: the pipe was closed under us
            return ""

    def _lost(self, job: dict[str, Any], code: int | None, hung: bool) -> dict[str, Any]:
        """The result of a game whose process hung (TIMEOUT) or died (ERROR)."""
        base = {"index": job["index"], "opponent": job["opponent"], "seat": job["seat"], "outcome": "loss",
                "reward": None, "durations": [], "moves": 0}
        if hung:
            return {**base, "status": "TIMEOUT",
                    "error": f"the game did not finish within {self.deadline:.0f} s (a move hung); process killed"}
        said = _last_line(self._log)
        return {**base, "status": "ERROR",
                "error": f"the process running the agent exited (code {code}) in the middle of a game"
                         + (f"; its last words: {said}" if said else "")}

    def close(self, abort: bool = False) -> None:
        """End the process: let it finish and exit, or kill it now (``abort``)."""
        with self._lock:
            self._closed = True
            proc, self._proc = self._proc, None
        if proc is not None:
            _stop(proc, abort)
        if not abort:  # an aborted loader's thread may still be reading the log: it goes with the object
            self._log.close()


def _stop(proc: subprocess.Popen[str], abort: bool) -> None:
    try:
        if abort:
            proc.kill()
        elif proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=STOP_WAIT_S)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
