"""Check a submission file, then submit it with the real ``kaggle`` CLI (``cxforge upload``'s logic).

The file must pass ``cxforge check`` first (no invalid move, error or timeout, and
no floor significantly missed); a file that fails is refused before anything is
sent.  There is deliberately no way to skip the check.  The upload itself is
``kaggle competitions submit connectx -f PATH -m MSG``, run with the user's own
environment; its output is relayed with every credential scrubbed out.  The
command line is ``upload_cmd.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from connectx_forge.tools.credentials import credential_source, scrub, secrets
from connectx_forge.tools.errors import UserError
from connectx_forge.tools.submit.check import DEFAULT_GAMES, check_file
from connectx_forge.tools.submit.check_report import format_report

COMPETITION = "connectx"
SUBMIT_TIMEOUT_S = 600
CREDENTIALS_HELP = (
    "no Kaggle credentials found: the kaggle CLI looks for KAGGLE_API_TOKEN or ~/.kaggle/access_token "
    "(a token from https://www.kaggle.com/settings/api), then kaggle.json in $KAGGLE_CONFIG_DIR, "
    "~/.kaggle or ~/.config/kaggle, or KAGGLE_USERNAME and KAGGLE_KEY, or `kaggle auth login`")
_CLI_FAILURES = ("Could not submit to competition", "Could not find competition")
_UNREACHABLE = ("ConnectionError", "Max retries exceeded", "Failed to establish a new connection",
                "Connection refused", "NameResolutionError", "ProxyError")


@dataclass(frozen=True)
class SubmitResult:
    """What the kaggle CLI said: ``ok``, and its output with the credentials scrubbed."""

    ok: bool
    output: str
    reason: str = ""


def kaggle_executable() -> str:
    """The ``kaggle`` CLI installed beside this Python (the project's venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "kaggle"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("kaggle")
    if found is None:
        raise UserError("the kaggle CLI is not installed (run `make setup`, or pip install kaggle)")
    return found


def _clean_lines(text: str) -> list[str]:
    """Non-empty lines, without tqdm's upload progress bars."""
    lines = []
    for raw in text.splitlines():
        line = raw.rsplit("\r", 1)[-1].strip()
        if line and not ("|" in line and "B/s" in line):
            lines.append(line)
    return lines


def submit(path: Path, message: str, kaggle: str | None = None) -> SubmitResult:
    """``kaggle competitions submit connectx -f PATH -m MESSAGE``; never raises on a CLI failure."""
    command = [kaggle or kaggle_executable(), "competitions", "submit", COMPETITION,
               "-f", str(path), "-m", message]
    hidden = secrets()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SUBMIT_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return SubmitResult(False, "", f"the kaggle CLI did not finish within {SUBMIT_TIMEOUT_S} s")
    out = scrub(done.stdout, hidden)
    err = scrub(done.stderr, hidden)
    lines = _clean_lines(out) + _clean_lines(err)
    output = "\n".join(lines)
    failed = done.returncode != 0 or any(f in out for f in _CLI_FAILURES)
    if not failed:
        return SubmitResult(True, "\n".join(_clean_lines(out)))
    return SubmitResult(False, output, _reason(out + "\n" + err, lines))


def _reason(text: str, lines: list[str]) -> str:
    """One line saying why the CLI failed."""
    if "Authentication required" in text or ("401" in text and "Unauthorized" in text):
        return "Kaggle refused the credentials: " + CREDENTIALS_HELP.split(": ", 1)[1]
    if any(u in text for u in _UNREACHABLE):
        cause = re.search(r"(Failed to establish a new connection: [^\"')]+|Failed to resolve [^\"')]+)", text)
        url = re.search(r"url: (\S+)", text)
        where = f" at {url.group(1)}" if url else ""
        return f"could not reach Kaggle's API{where}: {cause.group(1) if cause else 'connection failed'}"
    for known in _CLI_FAILURES:
        if known in text:
            return known.lower() + (" (the file upload failed)" if known.startswith("Could not submit") else "")
    return lines[-1][:500] if lines else "the kaggle CLI failed without a message"


def upload(path: Path, message: str, games: int = DEFAULT_GAMES, workers: int | None = None, *,
           progress: bool = False, show: Callable[[str], None] = print) -> str:
    """Check ``path``, ``show`` the check's report, and submit it if it passed; the CLI's answer.

    ``UserError`` (before anything is sent) for a missing file, an empty message,
    no kaggle CLI, no credentials or a failed check, and when the upload fails.
    """
    if not path.is_file():
        raise UserError(f"{path}: no such file (build one first: make submission)")
    if not message.strip():
        raise UserError("give the submission a message with -m")
    kaggle = kaggle_executable()
    if credential_source() is None:
        raise UserError(CREDENTIALS_HELP)
    report = check_file(path, games, workers, progress=progress)
    show(format_report(report))
    if not report.passed:
        raise UserError(f"refusing to upload {path}: it failed the check ({'; '.join(report.problems)})")
    show(f"uploading {path} to Kaggle's {COMPETITION} competition...")
    result = submit(path, message, kaggle)
    if not result.ok:
        relayed = [ln for ln in result.output.splitlines() if ln not in result.reason]
        if relayed and not result.reason.startswith("could not reach"):
            print("\n".join(relayed), file=sys.stderr)
        raise UserError(f"upload failed: {result.reason}")
    return result.output or "submitted"
