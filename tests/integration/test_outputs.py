"""Nothing the user made is lost: output folders are made before the work, games are saved as they finish,
Ctrl-C keeps what is done (and says how to resume), and a missing plotting package never fails a run."""

from __future__ import annotations

import builtins
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from connectx_forge.cli import main
from tests.harness import slow_mover

CXFORGE = [sys.executable, "-m", "connectx_forge.cli"]


@pytest.mark.parametrize("argv, made", [
    (["match", "random", "leftmost", "-n", "4", "-w", "1", "--save", "{d}/a/b/games.jsonl"], "a/b/games.jsonl"),
    (["winrates", "--agents", "leftmost", "--opponents", "random", "-n", "2", "-w", "1", "-o", "{d}/w/r.json"],
     "w/r.json"),
    (["replay", "{game}", "-o", "{d}/pages/g.html", "--time-limit", "0.05"], "pages/g.html"),
    (["tournament", "leftmost", "random", "--openings", "1", "-w", "1", "--store", "{d}/s/t.sqlite",
      "-o", "{d}/t/out", "--save", "{d}/t/games.jsonl"], "t/out/report.json"),
])
def test_a_missing_output_folder_is_made_before_the_work(tmp_path: Path, argv: list[str], made: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "one.jsonl"
    assert main(["match", "random", "leftmost", "-n", "1", "-w", "1", "--save", str(game)]) == 0
    args = [a.format(d=tmp_path, game=game) for a in argv]
    assert main([*args, "--no-progress"] if argv[0] in ("match", "tournament", "winrates") else args) == 0, \
        capsys.readouterr().err
    assert (tmp_path / made).is_file()


def test_an_output_that_cannot_be_written_is_refused_before_any_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from connectx_forge.arena import match_run

    (tmp_path / "afile").write_text("")
    matches: list[object] = []
    monkeypatch.setattr(match_run, "play_match", lambda *args, **kwargs: matches.append(args))
    assert main(["match", "kaggle:negamax", "random", "-n", "100", "--save", str(tmp_path / "afile" / "g.jsonl")]) \
        == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create the folder" in err and matches == []  # no game was begun
    assert main(["tournament", "random", "leftmost", "-o", str(tmp_path / "afile")]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err


def _interrupt(argv: list[str], after: float, ready: Callable[[], bool]) -> subprocess.CompletedProcess[str]:
    """Run cxforge, wait until ``ready()`` (work under way, however loaded the machine), send it SIGINT (Ctrl-C)
    ``after`` seconds later, and wait for it."""
    proc = subprocess.Popen([*CXFORGE, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_in_match_keeps_exactly_the_finished_games(tmp_path: Path) -> None:
    save = tmp_path / "games.jsonl"
    after = random.Random(os.getpid()).uniform(0.0, 3.0)  # a random point of the match, once a game has ended
    done = _interrupt(["match", str(slow_mover(tmp_path, 0.05)), "random", "-n", "40", "-w", "2", "--save", str(save),
                       "--no-progress"], after, lambda: save.is_file() and save.read_text().count("\n") > 0)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "interrupted: the table counts the" in done.stderr
    overall = next(line for line in done.stdout.splitlines() if line.startswith("overall"))
    counted = int(overall.split()[1])
    lines = [json.loads(line) for line in save.read_text().splitlines()]
    assert 0 < counted < 40 and len(lines) == counted
    assert len({g["index"] for g in lines}) == counted and f"{counted} finished game(s) of 40" in done.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_at_a_terminal_leaves_no_folder(tmp_path: Path, workers: str) -> None:
    """Ctrl-C at a terminal signals the whole foreground process group, the jail's shell and bubblewrap
    included: the jail's folders, each game's and template's, are still removed."""
    agent = tmp_path / "r.py"
    agent.write_text("import random\n\ndef agent(obs, config):\n"
                     "    return random.choice([c for c in range(config.columns) if obs.board[c] == 0])\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = subprocess.Popen([*CXFORGE, "match", str(agent), "random", "-n", "5000", "-w", workers, "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(temp)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not any(temp.glob("cxforge-*/cxforge-*")) and time.monotonic() < deadline:  # a game folder is up
        time.sleep(0.1)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    deadline = time.monotonic() + 10  # the jail's shell removes its folder once the warden has ended
    while list(temp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(p.name for p in temp.rglob("*")) == []


def test_ctrl_c_in_a_tournament_says_how_to_resume(tmp_path: Path) -> None:
    store = tmp_path / "t.sqlite"
    slow = str(slow_mover(tmp_path, 0.2))  # its 8 games outlast the 2 s before Ctrl-C on any machine
    done = _interrupt(["tournament", slow, "random", "lookahead", "--openings", "2", "-w", "2",
                       "--store", str(store), "--no-progress"], 2.0, store.is_file)
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    hint = done.stderr.strip().splitlines()[-1]
    assert hint.endswith(f"resume with: cxforge tournament --resume --store {store}")
    assert main(["tournament", "--resume", "--store", str(store), "-w", "2", "--no-progress"]) == 0


def test_a_tournament_without_matplotlib_writes_everything_but_the_png(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    out = tmp_path / "t"
    assert main(["tournament", "leftmost", "random", "--openings", "1", "-w", "1", "--no-progress",
                 "--store", str(tmp_path / "t.sqlite"), "-o", str(out), "--save", str(tmp_path / "g.jsonl")]) == 0
    captured = capsys.readouterr()
    assert "leftmost vs random" in captured.out
    notes = [line for line in captured.err.splitlines() if "matplotlib" in line]
    assert len(notes) == 1 and "ratings.png not written" in notes[0] and "pip install matplotlib" in notes[0]
    assert {p.name for p in out.iterdir()} == {"report.json", "ratings.csv", "pairs.csv"}
    assert len((tmp_path / "g.jsonl").read_text().splitlines()) == 2
