"""Progress bars for long work: on stderr, and only when stderr is a terminal.

A redirected log (``cxforge match ... 2> log``, CI) must not fill with carriage
returns, so a bar shows itself only on a terminal, and never with ``--no-progress``.
"""

from __future__ import annotations

import sys
from typing import Any


def wanted(enabled: bool = True) -> bool:
    """Whether a bar should be drawn: asked for, and stderr is a terminal."""
    return enabled and sys.stderr.isatty()


def bar(total: int | None, desc: str, unit: str = "game", enabled: bool = True) -> Any:
    """A tqdm bar on stderr (a silent one when ``wanted`` says no); use it as a context manager."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not wanted(enabled), leave=False)
