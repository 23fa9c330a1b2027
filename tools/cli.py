"""``cxforge``: the command line.  Each subcommand lives in its own module.

A subcommand module exposes ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``.  Modules import heavy packages (kaggle_environments, torch)
inside ``run`` so that ``cxforge --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn, Sequence

from agents.board import BoardError
from agents.registry import UnknownAgent
from tools.errors import UserError

COMMANDS: dict[str, str] = {
    "agents": "tools.agents_cmd",
    "build": "build.cli",
    "check": "tools.check",
    "upload": "tools.upload",
    "match": "tools.match",
    "solve": "tools.solve",
    "bench-solver": "tools.bench_solver",
    "book": "tools.book",
    "train": "tools.train",
}


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, pointing at ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _clean_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [UserError, BoardError, UnknownAgent]
    try:
        from build.errors import BuildError
        errors.append(BuildError)
    except ImportError:
        pass
    return tuple(errors)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cxforge", description="Build, check, measure and upload ConnectX agents.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # a subcommand not built yet
            raise
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except _clean_errors() as exc:
        print(f"cxforge {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"cxforge {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``cxforge ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
