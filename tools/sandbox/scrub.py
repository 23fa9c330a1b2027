"""Credentials out of anything an agent says: every detail line and bad action is scrubbed before it is kept.

A host runs without ``KAGGLE_*`` variables or anything named like a credential,
and with an empty ``HOME``; but an agent can still read files by absolute path
(or its ancestors' ``/proc/PID/environ``), so what it reports is scrubbed here,
in the referee: the values of the referee's own credential-like variables
(``limits.is_secret_name``) and every string in its ``~/.kaggle/kaggle.json``
(and ``$KAGGLE_CONFIG_DIR/kaggle.json``, ``~/.kaggle/access_token``) become ``***``.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from connectx_forge.tools.sandbox.limits import is_secret_name

MASK = "***"
MIN_SECRET = 4  # shorter values (e.g. "1") would mask ordinary text


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


def _files() -> list[Path]:
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    out = [home / ".kaggle" / "kaggle.json", home / ".kaggle" / "access_token",
           home / ".config" / "kaggle" / "kaggle.json"]
    if os.environ.get("KAGGLE_CONFIG_DIR"):
        out.append(Path(os.environ["KAGGLE_CONFIG_DIR"]) / "kaggle.json")
    return out


@cache
def secrets() -> tuple[str, ...]:
    """The referee's credential strings, longest first (read once per process)."""
    found = {v for k, v in os.environ.items() if is_secret_name(k)}
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        try:
            found.update(_strings(json.loads(text)))
        except ValueError:
            found.add(text.strip())
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET), key=len, reverse=True))


def scrub(text: str | None) -> str | None:
    """``text`` with every credential replaced by ``***`` (None stays None)."""
    if not text:
        return text
    for s in secrets():
        if s in text:
            text = text.replace(s, MASK)
    return text


def one_line(text: str | None, limit: int = 300) -> str | None:
    """The last non-empty line of ``text``, cut to ``limit`` characters and scrubbed."""
    if not text:
        return None
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (scrub(lines[-1].strip()) or "")[:limit] if lines else None
