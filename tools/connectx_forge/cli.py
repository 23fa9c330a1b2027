"""``cxforge``: the command line, one subcommand per module, imported only when it runs.

``COMMANDS`` maps each subcommand to its module and its one-line help, so that
``cxforge --help`` lists every command without importing any of them (some pull
in torch or kaggle_environments), and a command whose module cannot be imported
is one error line naming it, never a missing entry.  A command module (a
``*_cmd.py`` next to the code it drives) defines ``HELP`` (the registry's line),
``EXAMPLE`` (one or more example lines, shown under ``--help``),
``add_arguments(parser)`` and ``run(args) -> int``.  The flags several commands
share come from ``connectx_forge.options``.

Bad input is one line on stderr: ``cxforge CMD: error: ...``, exit status 2, as
for a bad command line or a missing package; every command exits by the one
table of ``tools/connectx_forge/errors.py`` (``EXIT_STATUSES``), shown under ``cxforge --help``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import NoReturn

from agents.board import BoardError
from agents.registry import UnknownAgent, did_you_mean
from connectx_bundler.errors import BuildError
from connectx_forge import options
from connectx_forge.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_STATUSES, UserError
from connectx_forge.options import HelpFormatter
from connectx_forge.sandbox.escape import escape
from connectx_forge.table import render

PROG = "cxforge"
TRAINING_LAYER = ("torch", "gymnasium", "matplotlib")
OPTIONAL = {"stable_baselines3": "pip install -e '.[sb3]'",
            "kaggle_environments": "make setup, or pip install --no-deps kaggle-environments==1.33.2"}


@dataclass(frozen=True)
class Command:
    """Where a subcommand lives, and its line in ``cxforge --help`` (equal to the module's ``HELP``)."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "new": Command("connectx_forge.new_cmd",
                   "create an agent project of your own: an entry module, a helper, a data file, cxforge.toml and "
                   "tests"),
    "agents": Command("connectx_forge.agents_cmd",
                      "list the registered agents, their sources and win-rate floors"),
    "games": Command("connectx_forge.games_cmd",
                     "list the two-player Kaggle games cxforge plays, their built-in agents, and what each needs"),
    "build": Command("connectx_forge.build_cmd",
                     "bundle an agent and what it uses into one self-contained submission file"),
    "check": Command("connectx_forge.submit.check_cmd",
                     "play a submission file against Kaggle's random and negamax, loaded as Kaggle loads it"),
    "upload": Command("connectx_forge.submit.upload_cmd", "check a submission file, then submit it to its game's "
                                                          "Kaggle competition (ConnectX's by default)"),
    "match": Command("connectx_forge.arena.match_cmd",
                     "play games between two agents with Kaggle's rules and report win rates"),
    "logs": Command("connectx_forge.play.logs_cmd",
                    "show what the agents printed, and their tracebacks, in games saved with --save"),
    "compare": Command("connectx_forge.play.compare_cmd",
                       "is NEW better than BASE? their scores in the same saved games, paired game by game, with "
                       "intervals"),
    "winrates": Command("connectx_forge.arena.winrates_cmd",
                        "a win-rate table: agents against Kaggle's random and negamax (or others), seats swapped"),
    "openings": Command("connectx_forge.arena.openings_cmd",
                        "write a suite of solver-labelled openings after K plies, mirror duplicates removed, "
                        "filtered by score"),
    "tournament": Command("connectx_forge.arena.tournament_cmd",
                          "a round robin or gauntlet on paired openings: W/D/L, pentanomial pairs, Elo with "
                          "intervals, crash-safe"),
    "sprt": Command("connectx_forge.arena.sprt_cmd",
                    "is NEW stronger than BASE? a sequential test (GSPRT) on paired openings, stopped when it decides"),
    "ladder": Command("connectx_forge.arena.ladder.ladder_cmd",
                      "simulate Kaggle's rating ladder (TrueSkill, mu0 600) over your agents and a pool: predicted "
                      "score, interval, days to settle; --fit its parameters to episode lists"),
    "solve": Command("connectx_forge.solver.solve_cmd",
                     "solve a 6x7 position given as a move string of columns 1-7 (Pons' score convention); "
                     "with the C engine where it loads (the pure-Python one can take minutes to hours below ~12 "
                     "stones)"),
    "book": Command("connectx_forge.solver.book_cmd",
                    "build or fill (resumable, parallel), or inspect, the solver's opening book"),
    "mistakes": Command("connectx_forge.solver.mistakes_cmd",
                        "mistake rates of agents on our held-out sets (or Pons' six test sets), moves labelled by "
                        "the exact solver"),
    "models": Command("connectx_forge.solver.models_cmd",
                      "which opponent model of the practical search fits the opponents' moves in saved games: mean "
                      "log-likelihood per model and opponent"),
    "heldout": Command("connectx_forge.solver.heldout_cmd",
                       "build our held-out sets of arbitrary positions, every column labelled by the exact solver "
                       "(resumable)"),
    "train": Command("connectx_forge.train.train_cmd",
                     "train the net / net-search (supervised on solver labels) or dqn networks"),
    "labels": Command("connectx_forge.solver.labels_cmd",
                      "generate, import and pack the exact solver labels that train uses"),
    "ppo": Command("connectx_forge.train.ppo_cmd",
                   "reproduce the Kaggle Learn course's PPO run on the gymnasium environment (extra sb3)"),
    "bench": Command("connectx_forge.bench.bench_cmd",
                     "benchmarks: the quick set (no NAME), or loop, agents, solver, book, net, search, negamax, arena, "
                     "games"),
    "submissions": Command("connectx_forge.leaderboard.review.submissions_cmd",
                           "list your ConnectX submissions on Kaggle, their status and score (through the kaggle CLI)"),
    "episodes": Command("connectx_forge.leaderboard.review.episodes_cmd",
                        "list a submission's Kaggle episodes (opponent, seat, result, agent states); download their "
                        "replays"),
    "ghosts": Command("connectx_forge.leaderboard.ghosts.ghosts_cmd",
                      "list the Kaggle teams your replays show, to play as ghost:TEAM (their recorded moves, else "
                      "a fallback agent)"),
    "regress": Command("connectx_forge.leaderboard.regress.regress_cmd",
                       "turn the first losing move of each lost replay into a regression test of your project "
                       "(add), and list them (list)"),
    "review": Command("connectx_forge.leaderboard.review.review_cmd",
                      "annotate every move of Kaggle replays, episodes or saved games with the exact solver; "
                      "where we lose"),
    "replay": Command("connectx_forge.leaderboard.review.replay_cmd",
                      "write one game as an HTML page: Kaggle's visualizer, offline (ConnectX's beside the solver's "
                      "review; any game's from its Kaggle replay)"),
}

class CommandUnavailable(Exception):
    """A command's module cannot be imported (a missing package, or a module not written yet)."""


class _Parser(options.Parser):
    """A parser whose errors are one line, pointing at ``--help``; no prefix of a long flag is taken for it
    (``options.Parser``), here and in every parser made under it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


CLEAN_ERRORS: tuple[type[BaseException], ...] = (UserError, BoardError, UnknownAgent, BuildError)
"""The exceptions that mean bad input: reported as one line, no traceback."""


def missing_package(name: str | None) -> str:
    """What to say about a package that is not installed, with how to install it."""
    top = (name or "?").split(".")[0]
    if top in TRAINING_LAYER:
        return (f"it needs {top}, part of the training layer: install it with make test "
                f"or pip install -e '.[train]'")
    if top in OPTIONAL:
        return f"it needs {top}, which is not installed: {OPTIONAL[top]}"
    return f"it needs the module {name}, which is not installed"


def load(name: str) -> ModuleType:
    """The module of command ``name``; ``CommandUnavailable`` says why it cannot be imported."""
    command = COMMANDS[name]
    module = command.module
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise _unavailable(module, exc) from None
    except Exception as exc:  # a module that fails as it imports: still one line
        raise CommandUnavailable(f"cannot import its module {module}: {type(exc).__name__}: {exc}") from None


def _unavailable(module: str, exc: ModuleNotFoundError) -> CommandUnavailable:
    if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
        return CommandUnavailable(f"its module {module} does not exist")
    return CommandUnavailable(f"cannot import its module {module}: {missing_package(exc.name)}")


class _CommandList(HelpFormatter):
    """Keeps a long command name's help on its line: argparse measures subcommands one indent short."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        names = [self._format_action_invocation(a) for a in getattr(action, "_get_subactions", list)()]
        if names and action.help is not argparse.SUPPRESS:
            longest = max(map(len, names)) + self._current_indent + 2 * self._indent_increment
            self._action_max_length = max(self._action_max_length, longest)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: lists the commands from the registry alone (it imports none of them)."""
    parser = _Parser(prog=PROG, description="Build, check, measure and upload ConnectX agents, and other Kaggle "
                                            "games' (cxforge games).",
                     epilog=f"Run '{PROG} COMMAND --help' for a command's flags and an example.\n\n"
                            + exit_statuses(),
                     formatter_class=_CommandList)
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, command in COMMANDS.items():
        sub.add_parser(name, help=command.help, add_help=False)
    return parser


def exit_statuses() -> str:
    """The exit-status table every command follows (``tools/connectx_forge/errors.py``), as ``--help`` shows it."""
    table = render(("status", "meaning"), EXIT_STATUSES, style="plain", align="ll", color=False)
    return "exit status (every command):\n" + "\n".join("  " + line for line in table.splitlines())


def command_parser(name: str, module: ModuleType) -> argparse.ArgumentParser:
    """The parser of one command, its example shown under ``--help``."""
    example = getattr(module, "EXAMPLE", "")
    epilog = None
    if example:
        lines = example.strip("\n").splitlines()
        epilog = ("example:\n" if len(lines) == 1 else "examples:\n") + "\n".join("  " + x for x in lines)
    parser = _Parser(prog=f"{PROG} {name}", description=module.HELP, epilog=epilog)
    module.add_arguments(parser)
    return parser


def _fail(name: str, message: str, status: int) -> int:
    """Print the error ``message`` (its control characters escaped: it may quote a file or an agent); ``status``."""
    print(f"{PROG} {name}: error: {escape(message)}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        from connectx_bundler.manifest import tool_version  # the bundler's modules: not for every --help

        print(f"{PROG} {tool_version()}")
        return 0
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return _fail(argv[0], f"no such command{did_you_mean(argv[0], COMMANDS)}; {PROG} --help lists "
                              "them", 2)
    if not argv or argv[0] not in COMMANDS:
        build_parser().parse_args(argv)  # --help, or one line: no command
        return 2
    name = argv[0]
    try:
        module = load(name)
    except CommandUnavailable as exc:
        return _fail(name, str(exc), 2)
    args = command_parser(name, module).parse_args(argv[1:])
    args.command = name
    try:
        options.prepare(args)
        return int(module.run(args) or 0)
    except CLEAN_ERRORS as exc:
        return _fail(name, str(exc), getattr(exc, "status", EXIT_ERROR))
    except ModuleNotFoundError as exc:  # an optional package the run needs (torch, stable-baselines3...)
        if (exc.name or "").split(".")[0] in ("agents", "connectx_forge", "tests"):
            raise
        return _fail(name, missing_package(exc.name), 2)
    except KeyboardInterrupt:
        print(f"{PROG} {name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``cxforge ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
