"""Where things are: the toolkit's own files, the agents' data, the user's cache and runs, Pons' sets.

The toolkit may be a checkout or an installed wheel, so nothing generated goes
next to its code: caches go to the user cache (``$CXFORGE_CACHE``, else
``$XDG_CACHE_HOME/cxforge``, else ``~/.cache/cxforge``) and runs to ``runs/``
in the folder the command runs in.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path


@cache
def agents_root() -> Path:
    """The folder the shipped ``agents`` package is imported from (the checkout, or site-packages)."""
    spec = importlib.util.find_spec("agents")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).resolve().parent.parent


@cache
def runtime_file() -> Path:
    """The source file of ``connectx_forge.runtime``, the one part of the toolkit a submission may import (in a
    checkout, ``tools/connectx_forge/runtime/__init__.py``)."""
    spec = importlib.util.find_spec("connectx_forge.runtime")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).resolve()


_PACKAGE = Path(__file__).resolve().parent
# the checkout (the package sits in its tools/ folder), or site-packages when installed
PROJECT_ROOT = _PACKAGE.parents[1] if _PACKAGE.parent.name == "tools" else _PACKAGE.parent
DATASETS = _PACKAGE / "datasets"  # the shipped data sets
AGENTS_ROOT = agents_root()  # the folder the shipped agents import from
AGENTS_DATA = AGENTS_ROOT / "agents" / "data"  # the shipped agents' data files (weights, opening book)
PONS_DIR = PROJECT_ROOT.parent / "shared" / "data" / "pons"  # Pascal Pons' benchmark sets, when present
HELDOUT_DIR = DATASETS / "heldout"  # our own labelled test sets (cxforge heldout build)
EXAMPLE_REPLAYS = DATASETS / "replays"  # three real kaggle-environments replays (docs/review.md)
RUNS = Path("runs")  # training runs, arena stores and build progress files, in the working folder


def user_cache() -> Path:
    """The user's cache folder for connectx-forge (not created here)."""
    if os.environ.get("CXFORGE_CACHE"):
        return Path(os.environ["CXFORGE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cxforge"


CACHE = user_cache()  # openings, label, weak-score and on-the-fly build caches


def agent_data(name: str) -> Path:
    """The source file of the shipped agents' data file ``name`` (``agents/data/NAME``)."""
    return AGENTS_DATA / name

