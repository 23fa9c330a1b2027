"""Where the project's folders are: its root, the cache, the runs, the datasets, and Pons' sets in ../shared."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CACHE = PROJECT_ROOT / ".cache"  # compiled twin, label and weak-score caches (ignored by git)
RUNS = PROJECT_ROOT / "runs"  # training runs and build progress files (ignored by git)
PONS_DIR = PROJECT_ROOT.parent / "shared" / "data" / "pons"  # Pascal Pons' benchmark sets, when present
HELDOUT_DIR = PROJECT_ROOT / "datasets" / "heldout"  # our own labelled test sets (cxforge heldout build)
