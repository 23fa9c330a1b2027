"""Credentials and control characters out of anything an agent says: every detail line, bad action and log is
scrubbed before it is kept.

A host runs without ``KAGGLE_*`` variables or anything named like a credential,
and with an empty ``HOME``; but an agent can still read files by absolute path
(or its ancestors' ``/proc/PID/environ``), so what it reports is scrubbed here,
in the referee, with the referee's own credentials (``tools/connectx_forge/credentials.py``,
the same list ``cxforge upload`` scrubs the kaggle CLI's output with).  Its
terminal escapes, carriage returns and bidi overrides are written as visible
escapes (``escape.py``) in the same pass, so our records hold none of them.
"""

from __future__ import annotations

from functools import cache

from connectx_forge import credentials
from connectx_forge.sandbox.escape import escape


@cache
def secrets() -> tuple[str, ...]:
    """The referee's credential strings, longest first (read once per process)."""
    return tuple(credentials.secrets())


def scrub(text: str | None, keep_newlines: bool = True) -> str | None:
    """``text`` with every credential replaced by ``***`` and every control character escaped (None stays None);
    ``keep_newlines``: a log's ``\\n`` and ``\\t`` stay, else (one line of a report) they are escaped too."""
    if not text:
        return text
    return escape(credentials.scrub(text, list(secrets())), keep_newlines)


def one_line(text: str | None, limit: int = 300) -> str | None:
    """The last non-empty line of ``text``, scrubbed (a control character in it escaped), cut to ``limit``
    characters."""
    if not text:
        return None
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (scrub(lines[-1].strip(), keep_newlines=False) or "")[:limit] if lines else None
