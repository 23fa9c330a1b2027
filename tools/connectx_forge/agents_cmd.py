"""``cxforge agents``: list the registered agents (agents/registry.py), strongest first.

A table, one row per agent: the win-rate floors ``cxforge check`` holds its builds to, the board sizes
it plays, whether it is the default; then each one's description and source.  ``--json`` prints the
registry as JSON instead.
"""

from __future__ import annotations

import argparse
import json

from agents.registry import REGISTRY, strongest
from connectx_forge import options, table

HEADERS = ("agent", "floors", "boards", "notes")
HELP = "list the registered agents, their sources and win-rate floors"
EXAMPLE = """\
cxforge agents
cxforge agents --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge agents``."""
    options.add_json(parser, "print the registry as JSON instead of the list")


def run(args: argparse.Namespace) -> int:
    """Print the agents."""
    default = strongest().name
    if args.json:
        print(json.dumps({n: {"module": s.module, "function": s.function, "description": s.description,
                              "source": s.source, "floors": s.floors, "valid": s.valid,
                              "submittable": s.submittable, "sizes": s.sizes, "default": n == default}
                          for n, s in sorted(REGISTRY.items())}, indent=2))
        return 0
    rows, about = [], []
    for name, spec in sorted(REGISTRY.items(), key=lambda kv: -kv[1].strength):
        notes = ["default"] if name == default else []
        notes += [] if spec.valid else ["plays invalid moves on purpose"]
        notes += [] if spec.submittable else ["not for submission"]
        floors = ", ".join(f"{k} >= {v:.0%}" for k, v in spec.floors.items()) or "none"
        sizes = "any board size" if spec.sizes == "any" else "6x7 four in a row only"
        rows.append([name, floors, sizes, ", ".join(notes)])
        about.append(f"{name}: {spec.description} (source: {spec.source})")
    print(table.render(HEADERS, rows, "rule"))
    print("\n" + "\n".join(about))
    return 0
