"""``python -m connectx_forge``: the ``cxforge`` command line, for an environment without the script."""

from __future__ import annotations

import sys

from connectx_forge.cli import main

if __name__ == "__main__":
    sys.exit(main())
