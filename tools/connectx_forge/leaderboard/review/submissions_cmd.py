"""``cxforge submissions``: our ConnectX submissions on Kaggle, their status and score (through the kaggle CLI)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence

from connectx_forge import options, table
from connectx_forge.leaderboard.review import kaggle_client

HELP = "list your ConnectX submissions on Kaggle, their status and score (through the kaggle CLI)"
EXAMPLE = """\
cxforge submissions
cxforge submissions --json"""
FIELDS = ("ref", "date", "status", "publicScore", "privateScore", "fileName", "description")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge submissions``."""
    parser.add_argument("--page-size", type=options.positive_int, default=20, metavar="N",
                        help="submissions to list, newest first (default 20)")
    options.add_json(parser, "print the submissions as a JSON list instead of the table")


def submissions_table(rows: Sequence[Mapping[str, object]]) -> str:
    """The submissions as a table: id, date, status, scores, file and description."""
    if not rows:
        return "no submissions yet (make upload MSG=... submits one)"
    cells = [[s.get("ref", "?"), str(s.get("date") or "")[:19], s.get("status") or "?", s.get("publicScore") or "-",
              s.get("privateScore") or "-", s.get("description") or s.get("fileName") or ""] for s in rows]
    return table.render(["id", "date", "status", table.SCORE, "private", "description"], cells, "rule",
                        align="rllrrl")


def run(args: argparse.Namespace) -> int:
    """Print our submissions; 0."""
    rows = kaggle_client.list_submissions(args.page_size)
    if args.json:
        print(json.dumps([{k: s.get(k) for k in FIELDS} for s in rows], indent=2))
    else:
        print(submissions_table(rows))
    return 0
