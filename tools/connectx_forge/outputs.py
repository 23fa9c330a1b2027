"""One rule for every output, files and folders alike: an existing output is never replaced without ``--force``.

Every command that writes declares its outputs (``options.register_output``) and gets ``--force``, which means
one thing everywhere: replace the outputs that exist.  Without it, before any work (``options.prepare``):

- a file output (``-o PATH``, ``--save FILE``, ``--write FILE``, ``build``'s default file) that exists is refused
  in one line naming it; ``--save`` may instead add to its file with ``--append``;
- a folder output (``-o DIR``, ``--html DIR``) is refused when it holds a file the command would write there
  (``report.json`` of an earlier tournament, ``index.html`` of an earlier review): the finer rule, so that a
  folder of other files is still a place to write.  A resumed run (``--resume``) rewrites its own reports in
  its folder: that is what resuming asks for;
- a dry run (``--dry-run``) writes nothing, so nothing is refused.

Outputs a command adds to rather than replaces (the results store, a held-out set or label shard continued,
the book ``book fill`` extends, a project's regression cases) are no replaced outputs and need no ``--force``.
The one exception to the rule is ``make submission``: its target rebuilds its own file, so it passes ``--force``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from connectx_forge.errors import UserError
from connectx_forge.safe_write import UnsafeOutput

FORCE_HELP = ("replace the outputs that exist (without --force an existing output is refused, in one line, "
              "before any work)")

Written = Callable[[Path], Iterable[Path]]
"""The files a command would write in its output folder, given the folder (those that exist are refused)."""


def named(*patterns: str) -> Written:
    """The files of a folder output, as names or glob patterns (``report.json``, ``game-*.html``); a name is
    taken as it is, so that a broken link there counts too."""
    def written(folder: Path) -> list[Path]:
        if not folder.is_dir():
            return []
        return [p for pattern in patterns
                for p in (sorted(folder.glob(pattern)) if any(c in pattern for c in "*?[") else [folder / pattern])]

    return written


def exists(path: Path | str) -> bool:
    """Whether something is at ``path`` (a link too, even a broken one: it is not the command's to replace)."""
    return os.path.lexists(path)


def _no_link(path: Path | str) -> None:
    """``UnsafeOutput`` when ``path`` is a symbolic link: said as such, with or without ``--force``, as
    ``safe_write`` says it (a link planted where a command writes is an attack, not an earlier output)."""
    if os.path.islink(path):
        raise UnsafeOutput(f"refusing to write {path}: {path} is a symbolic link")


def check_output(path: Path | str | None, force: bool, flag: str | None = None, what: str = "",
               forcing: str = "--force") -> None:
    """``UserError`` (one line) when the file output ``path`` exists and ``--force`` was not given.  ``flag``:
    the flag that named it (``-o``), as the line shows it; ``None`` for a default; ``what`` says whose default
    (``"build's default output"``); ``forcing``: how the caller says ``--force`` (the notebook: ``force=True``)."""
    if path is None or not exists(path):
        return
    _no_link(path)
    if force:
        return
    shown = f"{flag} {path}" if flag else str(path)
    whose = f" ({what})" if what else ""
    raise UserError(f"{shown}: the file exists{whose}; add {forcing} to replace it, or give another name")


def check_save(path: Path | str | None, append: bool = False, force: bool = False) -> None:
    """``UserError`` (one line) unless ``--save path`` may be written: a file that exists is added to with
    ``--append`` or replaced with ``--force``, else refused; ``--append`` needs ``--save``.  Called before any
    game is played (``options.prepare``)."""
    if path is None:
        if append:
            raise UserError("--append adds games to the file of --save FILE; give --save FILE too")
        return
    path = Path(path)
    if path.is_dir():
        raise UserError(f"--save {path}: is a folder; give a file name")
    if exists(path) and not append and not force:
        raise UserError(f"--save {path}: the file exists; add --append to add the games to its end, --force to "
                        "replace it, or give another name")


def check_folder(folder: Path | str | None, written: Written, force: bool, flag: str | None = None,
                 forcing: str = "--force") -> None:
    """``UserError`` (one line) when the folder output ``folder`` already holds a file the command would write
    there (``written``) and ``--force`` was not given; the line names the first and counts the others.
    ``forcing``: as ``check_output``'s."""
    if folder is None:
        return
    found: Sequence[Path] = [p for p in written(Path(folder)) if exists(p)]
    for path in found:
        _no_link(path)
    if not found or force:
        return
    shown = f"{flag} {folder}" if flag else str(folder)
    more = f" (and {len(found) - 1} more of its outputs)" if len(found) > 1 else ""
    raise UserError(f"{shown}: {found[0]} exists{more}, from an earlier run; add {forcing} to replace it, or "
                    "give another folder")
