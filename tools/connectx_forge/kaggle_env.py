"""kaggle_environments, imported without its noise.

kaggle-environments is installed without the dependencies of Kaggle's other
games (they are gigabytes; ConnectX needs none of them), so importing it prints
a "Loading environment X failed" line on stdout for each game it cannot load.
``load`` imports it once with those lines held back; anything else it prints
still comes through.
"""

from __future__ import annotations

import importlib
import io
import sys
from contextlib import redirect_stdout
from types import ModuleType

NOISE = "Loading environment "


def load() -> ModuleType:
    """The ``kaggle_environments`` package, imported quietly the first time."""
    module = sys.modules.get("kaggle_environments")
    if module is not None:
        return module
    held = io.StringIO()
    with redirect_stdout(held):
        module = importlib.import_module("kaggle_environments")
    for line in held.getvalue().splitlines():
        if not line.startswith(NOISE):
            print(line)
    return module
