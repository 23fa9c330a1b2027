"""One rule for every output: an existing output is never replaced without ``--force``
(``tools/connectx_forge/outputs.py``).

Each command that writes is run with its output already there: exit status 2, one line naming the output and
saying ``--force to replace it``, the file unchanged; then with ``--force``: replaced.  Cheap commands run for
real (two games of ``random`` and ``leftmost`` on one worker); the expensive ones are checked by the same
function the command line calls before any work (``options.prepare``) on the command's real parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from connectx_forge import cli, options, outputs
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from tests.unit.test_cli import _parsers

CHEAP = ["-w", "1", "--no-progress"]
MINE = "mine: not to be lost\n"

# (argv, the output there before, as a path in the working folder); {game}: a saved game
RUNS = [
    (["build", "random"], "submissions/submission.py"),  # the default output, kept as -o is
    (["build", "random", "-o", "bot.py"], "bot.py"),
    (["match", "random", "leftmost", "-n", "2", *CHEAP, "--save", "games.jsonl"], "games.jsonl"),
    (["check", "random", "--opponents", "random", "-n", "1", "--no-validation", "--no-floors", *CHEAP,
      "--save", "check.jsonl"], "check.jsonl"),
    (["winrates", "--agents", "leftmost", "--opponents", "random", "-n", "2", *CHEAP, "-o", "w.json"], "w.json"),
    (["tournament", "leftmost", "random", "--openings", "1", "--store", "t.sqlite", *CHEAP, "-o", "t1"],
     "t1/report.json"),  # the case: a finished run's folder
    (["sprt", "leftmost", "random", "-n", "2", "--store", "s.sqlite", *CHEAP, "-o", "s1"], "s1/report.json"),
    (["review", "{game}", "--html", "pages", "--time-limit", "0.05", "-w", "1"], "pages/game-001.html"),
    (["replay", "{game}", "--time-limit", "0.05"], "replay.html"),  # its default output
    (["new", "bot"], "bot/cxforge.toml"),  # refused by its folder, which has files
    (["labels", "pack", "cache", "dataset"], "dataset/labels-0.jsonl.gz"),
]


@pytest.mark.parametrize("argv, output", RUNS, ids=[" ".join(a[:2]) + f" -> {o}" for a, o in RUNS])
def test_an_existing_output_is_kept_without_force(argv: list[str], output: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    if "{game}" in argv:
        assert main(["match", "leftmost", "random", "-n", "1", *CHEAP, "--save", "one.jsonl"]) == 0
        argv = [a.replace("{game}", "one.jsonl") for a in argv]
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "labels-0.jsonl").write_text('{"moves": "4", "scores": [0, 0, 0, 1, 0, 0, 0]}\n')
    mine = tmp_path / output
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(MINE)
    capsys.readouterr()

    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    named = "bot" if argv[0] == "new" else output
    assert len(err) == 1 and named in err[0] and "--force to replace it" in err[0], err
    assert mine.read_text() == MINE

    assert main([*argv, "--force"]) != 2, capsys.readouterr().err
    assert mine.read_bytes() != MINE.encode()


# (argv, the output there before) of commands too slow to run here: the check they run before any work
PREPARED = [
    (["ladder", "leftmost", "--pool", "random", "-o", "lad"], "lad/report.json"),
    (["openings", "--plies", "2", "-o", "suite.txt"], "suite.txt"),
    (["mistakes", "--agents", "leftmost", "-o", "m.json"], "m.json"),
    (["book", "build", "--plies", "1", "-o", "book.bin"], "book.bin"),
    (["labels", "book", "progress.jsonl", "shard.jsonl.gz"], "shard.jsonl.gz"),
    (["ghosts", "--team", "T", "--write", "ghost.py"], "ghost.py"),
    (["winrates", "--agents", "leftmost", "--save", "w.jsonl"], "w.jsonl"),
]


def _args(argv: list[str]) -> argparse.Namespace:
    return cli.command_parser(argv[0], cli.load(argv[0])).parse_args(argv[1:])


@pytest.mark.parametrize("argv, output", PREPARED, ids=[" ".join(a[:2]) for a, _ in PREPARED])
def test_a_slow_commands_output_is_refused_before_any_work(argv: list[str], output: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / output
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(MINE)
    with pytest.raises(UserError) as exc:
        options.prepare(_args(argv))
    assert output in str(exc.value) and "--force to replace it" in str(exc.value)
    assert "\n" not in str(exc.value)
    options.prepare(_args([*argv, "--force"]))
    assert mine.read_text() == MINE  # the check writes nothing: the command replaces it


def test_the_exceptions_a_resumed_run_and_a_dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``--resume`` rewrites its own run's reports in its folder (what resuming asks for); ``--dry-run`` writes
    nothing, so nothing is refused; a folder of other files is still a place to write."""
    monkeypatch.chdir(tmp_path)
    argv = ["tournament", "leftmost", "random", "--openings", "1", "--store", "t.sqlite", *CHEAP, "-o", "t1"]
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "notes.txt").write_text(MINE)
    assert main(argv) == 0
    (tmp_path / "t1" / "report.json").write_text(MINE)
    assert main(["tournament", "--resume", "--store", "t.sqlite", *CHEAP, "-o", "t1"]) == 0
    assert (tmp_path / "t1" / "report.json").read_text() != MINE
    assert (tmp_path / "t1" / "notes.txt").read_text() == MINE
    (tmp_path / "book.bin").write_text(MINE)
    options.prepare(_args(["book", "build", "--dry-run", "-o", "book.bin"]))


def test_every_command_that_writes_has_force() -> None:
    """``--force`` means one thing wherever an output can be replaced; a command that only adds to what it
    writes (a results store, a held-out set continued) needs none."""
    writers = {"build", "check", "match", "winrates", "openings", "tournament", "sprt", "ladder", "book build",
               "mistakes", "train", "labels book", "labels pack", "review", "replay", "ghosts", "new", "episodes"}
    seen = {path: parser for path, parser in _parsers()}
    for path in writers:
        action = seen[path]._option_string_actions.get("--force")
        assert action is not None and action.help == outputs.FORCE_HELP, path
    for path, parser in seen.items():  # a declared output that can be replaced comes with --force
        rules = parser.get_default(options.RULES) or {}
        for dest, kind in parser.get_default(options.OUTPUTS) or ():
            if kind == "file" or rules[dest][2] is not None:
                assert "--force" in parser._option_string_actions, (path, dest)


def test_a_training_run_is_replaced_only_with_force(tmp_path: Path) -> None:
    """``train``: a run's folder with a checkpoint is continued with ``--resume``, replaced with ``--force``."""
    pytest.importorskip("torch")
    from connectx_forge.train.netlib import prepare_run_dir

    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "checkpoint.pt").write_text(MINE)
    with pytest.raises(UserError, match="--force to replace it"):
        prepare_run_dir(tmp_path, "net", resume=False)
    assert prepare_run_dir(tmp_path, "net", resume=False, force=True) == (tmp_path / "net",
                                                                           tmp_path / "net" / "checkpoint.pt")


def test_the_notebook_keeps_outputs_by_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cf.tournament(out=)``, ``cf.match(save=)`` and a replay's ``save`` (``sprt``, ``ladder``, ``review`` and
    ``ghosts`` alike): an earlier run's output is refused in one line naming ``force=True``, before any game;
    with it, replaced."""
    import connectx_forge as cf

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "report.json").write_text(MINE)
    (tmp_path / "games.jsonl").write_text(MINE)
    (tmp_path / "one.html").write_text(MINE)
    with pytest.raises(UserError, match=r"t1/report.json exists.*add force=True"):
        cf.tournament("leftmost", "random", openings=1, workers=1, out="t1")
    with pytest.raises(UserError, match=r"games.jsonl: the file exists"):
        cf.match("leftmost", "random", 2, workers=1, save="games.jsonl")
    assert (tmp_path / "t1" / "report.json").read_text() == MINE
    assert (tmp_path / "games.jsonl").read_text() == MINE
    result = cf.tournament("leftmost", "random", openings=1, workers=1, out="t1", force=True)
    assert (tmp_path / "t1" / "report.json").read_text() != MINE
    replay = result.replay(0)
    with pytest.raises(UserError, match=r"one.html: the file exists; add force=True"):
        replay.save("one.html")
    assert (tmp_path / "one.html").read_text() == MINE
    replay.save("one.html", force=True)
    assert (tmp_path / "one.html").read_text() != MINE
