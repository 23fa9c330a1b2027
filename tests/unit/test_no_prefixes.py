"""No command takes a prefix of a long flag: ``cxforge match A B --game 4`` is refused, never read as ``--games 4``.

Every parser, each command's and each one under it (``book build``, ``bench solver``), is walked as the command
line builds it, and each of its long flags is given cut short: argparse's default would take the prefix for the
flag (or ask for its value); here it is an unrecognized argument, one line, exit status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from connectx_forge import cli
from tests.unit.test_cli import _parsers

SAMPLES = ("1", "p", "1:2", "1/2", "a,b")  # a value each positional's type takes (a count, a name, a band, a shard)


def _every_parser() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The top-level parser, every command's, and every parser under one."""
    top = cli.build_parser()
    yield "", top
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from ((f"(listed) {name}", sub) for name, sub in action.choices.items())
    yield from _parsers()


def _value(action: argparse.Action) -> str:
    """A value the action's type and choices take, to fill a required argument."""
    if action.choices:
        return str(next(iter(action.choices)))
    for sample in SAMPLES:
        try:
            if action.type is None or callable(action.type) and action.type(sample) is not None:
                return sample
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
    raise AssertionError(f"no sample value fits {action.dest}")


def _required(parser: argparse.ArgumentParser) -> list[str]:
    """The arguments ``parser`` needs before it looks at the rest: its positionals and required flags."""
    argv: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings and action.nargs in (None, "+", 1):
            argv.append(_value(action))
        elif action.option_strings and action.required:
            argv += [action.option_strings[0], _value(action)]
    return argv


def _prefix(option: str, taken: set[str]) -> str | None:
    """The longest proper prefix of ``option`` that is no flag of its own (``--game`` of ``--games`` where the
    parser has no ``--game``); ``None`` when each one is taken."""
    for end in range(len(option) - 1, 2, -1):
        if option[:end] not in taken:
            return option[:end]
    return None


def test_every_parser_has_abbreviations_off() -> None:
    seen = 0
    for path, parser in _every_parser():
        assert parser.allow_abbrev is False, path or "cxforge"
        seen += 1
    assert seen > len(cli.COMMANDS) + 10  # the commands, listed and built, and the parsers under them


def test_no_command_takes_a_prefix_of_a_long_flag(capsys: pytest.CaptureFixture[str]) -> None:
    tried = 0
    for path, parser in _parsers():
        if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            continue  # ``book``, ``bench``: their flags (but --help) are on the parsers under them
        taken = set(parser._option_string_actions)
        name, *under = path.split()
        command = cli.command_parser(name, cli.load(name))  # parsed only: nothing runs, even were a prefix taken
        base = [*under, *_required(parser)]
        for option in sorted(o for o in taken if o.startswith("--")):
            cut = _prefix(option, taken)
            if cut is None:
                continue
            with pytest.raises(SystemExit) as exc:
                command.parse_args([*base, cut, "1"])
            err = capsys.readouterr().err.strip().splitlines()
            assert exc.value.code == 2 and len(err) == 1, (path, option, err)
            assert f"unrecognized arguments: {cut}" in err[0], (path, option, err)
            tried += 1
    assert tried > 300  # every long flag of every command (about 500)


def test_game_is_not_games(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: ``--game 4`` played 4 games as ``--games 4``.  Now ``--game`` names the game, and a cut
    flag is refused before any game: ``--gam`` is neither ``--game`` nor ``--games``."""
    match = cli.command_parser("match", cli.load("match"))
    with pytest.raises(SystemExit) as exc:
        match.parse_args(["random", "leftmost", "--gam", "4"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cxforge match: error: unrecognized arguments: --gam 4 (see cxforge match --help)"]
    assert match.parse_args(["random", "leftmost", "--game", "4"]).games == 100  # a game named "4": no count
    assert cli.main(["match", "random", "leftmost", "--game", "4"]) == 2
    assert "no game '4'" in capsys.readouterr().err
