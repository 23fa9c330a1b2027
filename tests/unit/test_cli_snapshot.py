"""A snapshot of every command's ``--help`` (as fastchess snapshot-tests its CLI output): a flag's name, metavar,
default or meaning cannot change unseen.  After an intended change, rewrite the snapshot with
``CXFORGE_UPDATE_SNAPSHOTS=1 pytest tests/unit/test_cli_snapshot.py`` and review its diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from connectx_forge import cli
from tests.unit.test_cli import _parsers

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "help.txt"
WIDTH = "100"  # argparse wraps help at $COLUMNS


def every_help() -> str:
    """``cxforge --help`` and each command's and subcommand's ``--help``, one after the other."""
    parts = [f"$ cxforge --help\n{cli.build_parser().format_help()}"]
    for path, parser in _parsers():
        parts.append(f"$ cxforge {path} --help\n{parser.format_help()}")
    return "\n".join(parts)


def test_every_help_matches_its_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", WIDTH)
    text = every_help()
    if os.environ.get("CXFORGE_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.is_file(), f"no snapshot yet: run CXFORGE_UPDATE_SNAPSHOTS=1 pytest {__file__}"
    expected = SNAPSHOT.read_text(encoding="utf-8")
    if text != expected:
        got, want = text.splitlines(), expected.splitlines()
        changed = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
        where = f"first difference at line {changed + 1}: {got[changed] if changed < len(got) else '(end)'!r}"
        pytest.fail(f"a command's --help changed ({where}); if it was meant to, run "
                    f"CXFORGE_UPDATE_SNAPSHOTS=1 pytest {__file__} and review the snapshot's diff")
