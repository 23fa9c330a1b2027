"""The ``cxforge`` command line: one registry, lazy imports, one-line errors, and shared flags that agree."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectx_forge import cli
from connectx_forge.cli import COMMANDS, Command, main

ROOT = Path(__file__).resolve().parents[2]
CXFORGE = Path(sys.executable).parent / "cxforge"

# the shared flags each of this project's commands must have (match/check/upload: see test_match, test_check)
EXPECTED = {
    "agents": {"--json"},
    "build": {"--out"},
    "winrates": {"--games", "--workers", "--seed", "--json", "--out", "--rows", "--no-progress"},
    "mistakes": {"--seed", "--json", "--out", "--no-progress"},
    "heldout build": {"--seed", "--out", "--no-progress"},
    "book build": {"--workers", "--out", "--no-progress"},
    "train": {"--seed", "--out", "--no-progress"},
    "labels generate": {"--games", "--seed", "--out", "--no-progress"},
    "ppo": {"--games", "--seed"},
    "bench loop": {"--workers", "--json"},
    "bench agents": {"--seed", "--rows", "--no-progress"},
    "bench solver": {"--seed", "--no-progress"},
}
SHORT = {"--games": "-n", "--workers": "-w", "--out": "-o"}


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser and every parser under it (``book build``, ``bench solver``...)."""
    def walk(path: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield from walk(f"{path} {sub_name}", sub)

    for name in COMMANDS:
        yield from walk(name, cli.command_parser(name, cli.load(name)))


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = _help([], capsys)
    for name, command in COMMANDS.items():
        assert f"    {name} " in out, name
        assert command.help.split()[0] in out
    proc = subprocess.run([str(CXFORGE), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and all(f"    {name} " in proc.stdout for name in COMMANDS)


def test_the_top_level_parser_imports_no_command() -> None:
    code = ("import sys; from connectx_forge import cli; cli.build_parser().format_help(); "
            "mods = [c.module for c in cli.COMMANDS.values()]; "
            "print([m for m in mods + ['torch', 'kaggle_environments', 'matplotlib'] if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_python_dash_m_runs_the_same_command_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "connectx_forge", "agents", "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "solver" in json.loads(proc.stdout)


def test_a_command_that_cannot_be_imported_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(COMMANDS, "ghost", Command("connectx_forge.ghost_cmd", "a command not written"))
    assert main(["ghost", "--help"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cxforge ghost: error: its module connectx_forge.ghost_cmd does not exist"]

    monkeypatch.setitem(COMMANDS, "ghost", Command("cxforge_test_needs_torch", "needs torch"))

    def needs_torch(name: str) -> Any:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(cli.importlib, "import_module", needs_torch)
    assert main(["ghost", "-n", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("cxforge ghost: error: cannot import its module cxforge_test_needs_torch")
    assert "training layer" in err[0] and "pip install -e '.[train]'" in err[0]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_registry_line_is_its_modules_help(name: str) -> None:
    assert COMMANDS[name].help == cli.load(name).HELP


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_has_help_with_an_example(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = cli.load(name)
    out = _help([name], capsys)
    assert out.startswith(f"usage: cxforge {name}")
    example = getattr(module, "EXAMPLE", None)
    assert example is not None, f"{module.__name__} defines no EXAMPLE"
    lines = [line for line in example.splitlines() if line.strip()]
    assert lines and all(line.lstrip().startswith(("cxforge", "nice cxforge")) for line in lines)
    assert all(line in out for line in lines)


def test_nested_commands_have_help(capsys: pytest.CaptureFixture[str]) -> None:
    for path, _ in _parsers():
        if " " in path:
            out = _help(path.split(), capsys)
            assert out.startswith(f"usage: cxforge {path}") and "example:" in out, path


def test_the_shared_flags_mean_one_thing_everywhere() -> None:
    seen: dict[str, set[str]] = {}
    for path, parser in _parsers():
        flags = {opt: action for action in parser._actions for opt in action.option_strings}
        seen[path] = set(flags)
        for long, short in SHORT.items():  # -n is --games, -w is --workers, -o is --out, both ways
            if long in flags or short in flags:
                assert flags.get(long) is flags.get(short) is not None, (path, long)
        probe = []
        if "--games" in flags:
            probe += ["-n", "7"]
        if "--workers" in flags:
            probe += ["-w", "2"]
        if "--out" in flags:
            probe += ["-o", "x.json"]
        if "--json" in flags:
            probe += ["--json"]
        if "--no-progress" in flags:
            probe += ["--no-progress"]
        if "--rows" in flags:
            probe += ["--rows", "5", "--columns", "8", "--inarow", "4"]
        if any(isinstance(a, argparse._SubParsersAction) and a.required for a in parser._actions):
            continue  # ``book``, ``labels``: their flags are on the parsers under them
        positionals = ["p" for a in parser._actions if not a.option_strings and a.nargs in (None, "+")]
        for action in parser._actions:  # other required flags (upload's -m): a plain value
            if action.required and action.option_strings and action.option_strings[0] not in probe:
                probe += [action.option_strings[0], "p"]
        args = parser.parse_args(positionals + probe)
        if "--seed" in flags:
            assert flags["--seed"].default == 0 and args.seed == 0, path
            assert parser.parse_args(positionals + probe + ["--seed", "5"]).seed == 5
        if "--games" in flags:
            assert args.games == 7
        if "--workers" in flags:
            assert args.workers in (2, [2])
        if "--out" in flags:
            assert flags["--out"].dest == "out" and args.out == Path("x.json")
        if "--save" in flags:
            assert flags["--save"].dest == "save" and flags["--save"].metavar == "FILE"
        if "--json" in flags:
            assert args.json is True
        if "--no-progress" in flags:
            assert args.no_progress is True
        if "--rows" in flags:
            from connectx_forge.options import size_of

            assert size_of(args) == (5, 8, 4)
    for path, flags in EXPECTED.items():
        assert flags <= seen[path], (path, flags - seen[path])


def test_bench_solver_solves_pons_positions(pons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solver", str(pons_dir / "Test_L3_R1"), "--limit", "5", "--engine", "python"]) == 0
    out = capsys.readouterr().out
    assert "End-Easy" in out and "5/5" in out
    assert main(["bench-solver"]) == 2  # one name a command: no hidden aliases


def test_bench_search_reports_the_depth_reached(pons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "search", "--positions", "2", "--budget", "0.05", "--pons", str(pons_dir)]) == 0
    out = capsys.readouterr().out
    assert "on each of 2 Begin-Medium positions: depth reached mean" in out and "searched a second" in out


@pytest.mark.parametrize("argv, status, why", [  # every error: exit status 2 (tools/connectx_forge/errors.py)
    (["solve", "4458"], 2, "bad move string '4458'"),
    (["book", "info", "/no/such/book.bin"], 2, "cannot read /no/such/book.bin"),
    (["bench", "nope"], 2, "invalid choice: 'nope'"),
    (["bench", "solver", "/no/such/file"], 2, "cannot read /no/such/file"),
    (["bench", "book", "--progress", "/no/such/progress.jsonl"], 2, "no progress file"),
    (["bench", "search", "--pons", "/no/such/folder"], 2, "no Pons set at /no/such/folder"),
    (["bench", "search", "--budget", "0"], 2, "--budget"),
    (["winrates", "-n", "zero"], 2, "expected a whole number, got 'zero'"),
    (["winrates", "--agents", "nobody"], 2, "unknown player 'nobody'"),
    (["mistakes", "--sample", "0"], 2, "--sample: must be at least 1"),
    (["mistakes", "--sets", "pons", "--pons", "/no/such/folder"], 2, "no Pons test set Test_L3_R1 in /no/such/folder"),
    (["train", "--epochs", "zero"], 2, "--epochs"),
    (["labels", "pack", "/no/such/src", "/tmp/x"], 2, "no labels-*.jsonl shards"),
    (["agents", "--seed", "1"], 2, "unrecognized arguments: --seed 1"),
    (["nope"], 2, "no such command; cxforge --help lists them"),
    (["chek"], 2, "no such command (did you mean 'check'?)"),
])
def test_bad_input_is_one_line(argv: list[str], status: int, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == status and len(err) == 1, err
    assert err[0].startswith("cxforge") and why in err[0] and "Traceback" not in err[0]


def test_run_errors_interrupts_and_missing_packages(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.errors import UserError, Verdict

    def fake(raised: BaseException) -> types.ModuleType:
        module = types.ModuleType("cxforge_test_fake_cmd")
        module.HELP = "a fake command"  # type: ignore[attr-defined]
        module.add_arguments = lambda parser: None  # type: ignore[attr-defined]

        def run(args: argparse.Namespace) -> int:
            raise raised

        module.run = run  # type: ignore[attr-defined]
        return module

    monkeypatch.setitem(COMMANDS, "fake", Command("cxforge_test_fake_cmd", "a fake command"))
    for raised, status, line in [(UserError("bad input"), 2, "cxforge fake: error: bad input"),
                                 (Verdict("refused: FAIL", 1), 1, "cxforge fake: error: refused: FAIL"),
                                 (Verdict("refused: UNDECIDED", 3), 3, "cxforge fake: error: refused: UNDECIDED"),
                                 (KeyboardInterrupt(), 130, "cxforge fake: interrupted"),
                                 (ModuleNotFoundError("No module named 'gymnasium'", name="gymnasium"), 2,
                                  "cxforge fake: error: it needs gymnasium, part of the training layer: install it "
                                  "with make test or pip install -e '.[train]'")]:
        monkeypatch.setitem(sys.modules, "cxforge_test_fake_cmd", fake(raised))
        assert main(["fake"]) == status
        assert capsys.readouterr().err.strip().splitlines() == [line]


