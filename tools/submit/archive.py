"""A ``.tar.gz`` submission: unpacked as Kaggle unpacks it, ``main.py`` at its top (the one copy of that logic)."""

from __future__ import annotations

import tarfile
from pathlib import Path

from connectx_forge.tools.errors import UserError

NO_MAIN = "no main.py at the top of the archive (Kaggle runs main.py)"


def check(source: Path) -> None:
    """``UserError`` unless ``source`` is a readable ``.tar.gz`` with ``main.py`` at its top (nothing unpacked)."""
    try:
        with tarfile.open(source, "r:gz") as archive:
            names = archive.getnames()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UserError(f"{source}: not a readable .tar.gz ({exc})") from None
    if "main.py" not in names and "./main.py" not in names:
        raise UserError(f"{source}: {NO_MAIN}")


def unpack(source: Path, folder: Path) -> Path:
    """Unpack the ``.tar.gz`` submission ``source`` into ``folder``; its ``main.py``."""
    try:
        with tarfile.open(source, "r:gz") as archive:
            archive.extractall(folder, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UserError(f"{source}: not a readable .tar.gz ({exc})") from None
    main = folder / "main.py"
    if not main.is_file():
        raise UserError(f"{source}: {NO_MAIN}")
    return main
