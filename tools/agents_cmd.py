"""``cxforge agents``: list the registered agents."""

from __future__ import annotations

import argparse
import json

from agents.registry import REGISTRY, strongest

HELP = "list the registered agents, their sources and win-rate floors"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    default = strongest().name
    if args.json:
        print(json.dumps({n: {"module": s.module, "function": s.function, "description": s.description,
                              "source": s.source, "floors": s.floors, "valid": s.valid,
                              "submittable": s.submittable, "default": n == default}
                          for n, s in sorted(REGISTRY.items())}, indent=2))
        return 0
    for name, spec in sorted(REGISTRY.items(), key=lambda kv: -kv[1].strength):
        flags = " (default)" if name == default else ""
        flags += "" if spec.valid else " (plays invalid moves on purpose)"
        flags += "" if spec.submittable else " (not for submission)"
        floors = ", ".join(f"{k} >= {v:.0%}" for k, v in spec.floors.items()) or "none"
        print(f"{name:<12} {spec.description}{flags}\n{'':<12} source: {spec.source}; floors: {floors}")
    return 0
