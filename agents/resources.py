"""Data files that agents read (tables, opening books, network weights).

In the source tree they live in ``agents/data/``.  In a built submission the
bundler embeds them (compressed, base64, sha256-checked) and fills ``EMBEDDED``
before any agent code runs, so the same ``read_data`` call works in both places.
Call it with a string literal: the bundler finds the files a module needs by
reading those calls, without running the module.
"""

from __future__ import annotations

import os

EMBEDDED: dict[str, bytes] = {}


class MissingData(FileNotFoundError):
    """A data file that is neither embedded nor in agents/data/."""


def data_path(name: str) -> str:
    """Where ``name`` lives in the source tree."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", name)


def read_data(name: str) -> bytes:
    """The bytes of data file ``name``: embedded in a bundle, else from agents/data/."""
    if name in EMBEDDED:
        return EMBEDDED[name]
    try:
        with open(data_path(name), "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise MissingData(f"data file {name!r} not found in agents/data/ ({exc.strerror})") from None
