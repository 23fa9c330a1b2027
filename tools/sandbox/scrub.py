"""Credentials out of anything an agent says: every detail line and bad action is scrubbed before it is kept.

A host runs without ``KAGGLE_*`` variables or anything named like a credential,
and with an empty ``HOME``; but an agent can still read files by absolute path
(or its ancestors' ``/proc/PID/environ``), so what it reports is scrubbed here,
in the referee, with the referee's own credentials (``tools/credentials.py``,
the same list ``cxforge upload`` scrubs the kaggle CLI's output with).
"""

from __future__ import annotations

from functools import cache

from connectx_forge.tools import credentials


@cache
def secrets() -> tuple[str, ...]:
    """The referee's credential strings, longest first (read once per process)."""
    return tuple(credentials.secrets())


def scrub(text: str | None) -> str | None:
    """``text`` with every credential replaced by ``***`` (None stays None)."""
    if not text:
        return text
    return credentials.scrub(text, list(secrets()))


def one_line(text: str | None, limit: int = 300) -> str | None:
    """The last non-empty line of ``text``, cut to ``limit`` characters and scrubbed."""
    if not text:
        return None
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (scrub(lines[-1].strip()) or "")[:limit] if lines else None
