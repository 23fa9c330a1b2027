"""Running the real ``kaggle`` CLI, or its Python API in a child process, and reading its failures.

``cxforge upload``, ``submissions``, ``episodes`` and ``review`` (an episode id)
all talk to Kaggle through the kaggle package the user installed, never through
an HTTP client of ours: the CLI knows where the credentials are, which endpoint
to call and how to authenticate.  This module finds the executable, runs it
with the user's environment, scrubs every credential from what it said, and
turns a failure into one line (``CliResult.reason``): refused credentials, an
unreachable server, or the server's own message.

Where the CLI prints less than we need (its episode table has no agents), a
few lines of the package's Python API run in a child process
(``run_python_api``), so that a failure reads exactly like the CLI's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from connectx_forge import boundedread
from connectx_forge.children import isolated_python, program
from connectx_forge.credentials import scrub, secrets
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX_COMPETITION

COMPETITION = CONNECTX_COMPETITION  # `cxforge submissions` and `episodes` read ConnectX's
DEFAULT_TIMEOUT_S = 300
CREDENTIALS_HELP = (
    "no Kaggle credentials found: the kaggle CLI looks for KAGGLE_API_TOKEN or ~/.kaggle/access_token "
    "(a token from https://www.kaggle.com/settings/api), then kaggle.json in $KAGGLE_CONFIG_DIR, "
    "~/.kaggle or ~/.config/kaggle, or KAGGLE_USERNAME and KAGGLE_KEY, or `kaggle auth login`")
UNREACHABLE = ("ConnectionError", "Max retries exceeded", "Failed to establish a new connection",
               "Connection refused", "NameResolutionError", "ProxyError")

# the CLI's own handling of errors (kaggle/cli.py main), for a child running its Python API
_API_PRELUDE = """\
import json, sys
from requests.exceptions import HTTPError
from kaggle.api.kaggle_api_extended import print_auth_help
import kaggle
api = kaggle.api
if not api._authenticated:
    api.authenticate()
def emit(items):
    print(json.dumps([type(i).to_dict(i) for i in (items or [])]))
try:
"""
_API_EPILOGUE = """
except HTTPError as e:
    if e.response is not None and e.response.status_code == 401:
        print_auth_help()
    else:
        print(e, file=sys.stderr)
    sys.exit(1)
except ValueError as e:
    print(e, file=sys.stderr)
    sys.exit(1)
"""


@dataclass(frozen=True)
class CliResult:
    """What the CLI said: ``ok``; ``stdout`` as printed (scrubbed); ``output``, its non-empty lines
    (stdout then stderr, without progress bars, scrubbed); and on failure a one-line ``reason``."""

    ok: bool
    stdout: str
    output: str
    reason: str = ""


def kaggle_executable() -> str:
    """The ``kaggle`` CLI installed beside this Python (the project's venv), else the one on PATH (its absolute
    folders: never one in the working folder)."""
    beside = Path(sys.executable).parent / "kaggle"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = program("kaggle")
    if found is None:
        raise UserError("the kaggle CLI is not installed (run `make setup`, or pip install kaggle)")
    return found


def clean_lines(text: str) -> list[str]:
    """Non-empty lines, without tqdm's progress bars."""
    lines = []
    for raw in text.splitlines():
        line = raw.rsplit("\r", 1)[-1].strip()
        if line and not ("|" in line and "B/s" in line):
            lines.append(line)
    return lines


def failure_reason(text: str, lines: list[str], known: Sequence[str] = ()) -> str:
    """One line saying why the CLI failed: credentials, no server, a ``known`` message, else its last line."""
    if "Authentication required" in text or ("401" in text and "Unauthorized" in text):
        return "Kaggle refused the credentials: " + CREDENTIALS_HELP.split(": ", 1)[1]
    if any(u in text for u in UNREACHABLE):
        cause = re.search(r"(Failed to establish a new connection: [^\"')\n]+|Failed to resolve [^\"')\n]+)", text)
        url = re.search(r"url: (\S+)", text)
        where = f" at {url.group(1)}" if url else ""
        return f"could not reach Kaggle's API{where}: {cause.group(1) if cause else 'connection failed'}"
    for message in known:
        if message in text:
            return message.lower()
    if lines and lines[-1].startswith("Traceback"):
        return "the kaggle CLI crashed"
    return lines[-1][:500] if lines else "the kaggle CLI failed without a message"


def _run(command: list[str], timeout: float, known: Sequence[str]) -> CliResult:
    hidden = secrets()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return CliResult(False, "", "", f"the kaggle CLI did not finish within {timeout:g} s")
    out = scrub(done.stdout, hidden)
    err = scrub(done.stderr, hidden)
    lines = clean_lines(out) + clean_lines(err)
    failed = done.returncode != 0 or any(k in out for k in known)
    if not failed:
        return CliResult(True, out, "\n".join(clean_lines(out)))
    return CliResult(False, out, "\n".join(lines), failure_reason(out + "\n" + err, lines, known))


def run_kaggle(args: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S, known: Sequence[str] = (),
               kaggle: str | None = None) -> CliResult:
    """``kaggle ARGS...``; never raises on a CLI failure.  ``known``: messages that mean failure even
    when the CLI exits 0 (it prints some errors and returns normally)."""
    return _run([kaggle or kaggle_executable(), *args], timeout, known)


def run_python_api(body: str, args: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT_S) -> CliResult:
    """Run ``body`` (indented statements using ``api``, ``sys.argv[1:]`` = ``args``, and ``emit(items)``
    to print a list of kagglesdk objects as JSON) in a child Python beside the ``kaggle`` CLI, with the
    CLI's own error handling, isolated (``-c`` would import from the working folder first); never raises on a
    failure."""
    python = Path(kaggle_executable()).parent / "python"
    if not (python.is_file() and os.access(python, os.X_OK)):
        python = Path(sys.executable)
    return _run([*isolated_python(str(python)), "-c", _API_PRELUDE + body + _API_EPILOGUE, *args], timeout, ())


def require_json(result: CliResult, what: str) -> object:
    """The JSON the CLI printed (from its first line that opens a JSON value), parsed within ``boundedread``'s
    bounds (it is what Kaggle's server sent); ``UserError`` when none."""
    lines = result.stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(("[", "{"))]  # after any warning lines
    if not starts:
        said = result.output.splitlines()
        raise UserError(f"the kaggle CLI printed no {what}: {said[-1] if said else 'nothing'}")
    return boundedread.parse_json("\n".join(lines[starts[0]:]), f"the kaggle CLI's {what}")
