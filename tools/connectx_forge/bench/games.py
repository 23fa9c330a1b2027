"""Benchmark: episodes per second of each playable two-player game, jailed, against kaggle-environments' own
``evaluate``.

Run: ``cxforge bench games [--game rps --game planet_wars] [-n N]``.  Each game plays one agent file against itself
(``def agent(obs, config): return ACTION``, the game's legal action at step 0: ``GameInfo.action``) ``N`` times
in each of two harnesses, one after the other, on one core:

* jailed: ``play_job`` of the two files, each seat in an agent host of its own in the jail, the game refereed
  by kaggle-environments' interpreter in this process (``play/episode.py``; ConnectX by its own referee);
* ``evaluate``: ``kaggle_environments.evaluate(name, [file, file], num_episodes=N)``, which loads the file in
  this process and plays it there, without a jail: the peer a user would pick.

Each harness first plays one untimed game of the game (the jail's start, the game's imports).

The table gives each harness's episodes (games) per second (wall clock) and the jailed rate as a ratio of
``evaluate``'s.  A game whose packages are missing here is left out, with the line that installs them, on
stderr.
"""

from __future__ import annotations

import io
import os
import tempfile
import time
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.kaggle_env import load
from connectx_forge.play.game import play_job
from connectx_forge.play.resolve import as_player
from connectx_forge.play.settings import GameJob, GameSettings
from connectx_forge.table import GAMES, render


@dataclass(frozen=True)
class GameRow:
    """One game's figures: ``episodes`` played by each harness, their rates (episodes per second) and the
    jailed rate over ``evaluate``'s."""

    game: str
    episodes: int
    jailed_per_s: float
    evaluate_per_s: float

    @property
    def ratio(self) -> float:
        return self.jailed_per_s / self.evaluate_per_s if self.evaluate_per_s else float("nan")


def playable_games() -> list[str]:
    """The two-player games whose packages are all here, ConnectX first."""
    games = catalog.known()
    return [name for name in catalog.names() if games[name].two_player and games[name].playable]


def chosen(games: list[str] | None) -> list[str]:
    """The games ``--game`` names (repeated; none: every playable one), each checked in one line."""
    if games is None:
        return playable_games()
    names = [g.strip() for g in games if g.strip()]
    if not names:
        raise UserError("--game: name a game, e.g. --game rps --game planet_wars")
    for name in names:
        info = catalog.get(name)
        if not info.two_player:
            raise UserError(f"--game: {name} has no two-player game (its seats: {info.seats})")
    return list(dict.fromkeys(names))


def agent_text(info: catalog.GameInfo) -> str:
    """A file that plays the game's legal action at step 0, every step."""
    return f"def agent(obs, config):\n    return {info.action!r}\n"


def jailed_rate(name: str, path: str, episodes: int, bar: progress_bars.Bar) -> float:
    """Episodes per second of ``play_job`` with the file in both seats, each in the jail."""
    settings = GameSettings(game=name)
    start = time.perf_counter()
    for i in range(episodes):
        play_job(GameJob(as_player(path), as_player(path), 1 + i % 2, 1000 + i, i, settings=settings))
        bar.update()
    return episodes / (time.perf_counter() - start)


def evaluate_rate(name: str, path: str, episodes: int, bar: progress_bars.Bar) -> float:
    """Episodes per second of kaggle-environments' ``evaluate`` of the file against itself, in this process."""
    kaggle_environments = load()
    held = io.StringIO()  # what the interpreter prints (a game's own chatter) stays out of the table
    start = time.perf_counter()
    with redirect_stdout(held), redirect_stderr(held):
        kaggle_environments.evaluate(name, [path, path], num_episodes=episodes)
    seconds = time.perf_counter() - start
    bar.update(episodes)
    return episodes / seconds


def run_bench(games: Sequence[str], episodes: int, progress: bool = True) -> list[GameRow]:
    """Each game's row: one untimed game in each harness, then ``episodes`` jailed and ``episodes`` under
    ``evaluate``."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="cxforge-bench-games-") as folder:
        for name in games:
            info = catalog.get(name)
            path = os.path.join(folder, f"{name}_agent.py")
            with open(path, "w") as fh:
                fh.write(agent_text(info))
            plan = f"cxforge bench games: {name}: {progress_bars.count(2 * episodes + 2, 'game')}"
            with progress_bars.bar(2 * episodes + 2, name, unit="game", enabled=progress, plan=plan) as bar:
                jailed_rate(name, path, 1, bar)  # untimed: the jail's start, the game's imports
                evaluate_rate(name, path, 1, bar)
                jailed = jailed_rate(name, path, episodes, bar)
                plain = evaluate_rate(name, path, episodes, bar)
            rows.append(GameRow(name, episodes, jailed, plain))
    return rows


def markdown(rows: Sequence[GameRow]) -> str:
    """The rows as a Markdown table: episodes per second jailed, under ``evaluate``, and their ratio."""
    return render(["game", GAMES, "jailed games/s", "evaluate games/s", "jailed / evaluate"],
                  [[r.game, r.episodes, f"{r.jailed_per_s:.2f}", f"{r.evaluate_per_s:.2f}", f"{r.ratio:.2f}x"]
                   for r in rows], style="markdown", align="lrrrr")


def left_out() -> list[str]:
    """A line for each two-player game that cannot be played here: what installs it."""
    return [f"{info.name}: needs {', '.join(info.missing())} ({info.install_line()})" if info.missing()
            else f"{info.name}: {info.broken}" for info in catalog.known().values()
            if info.two_player and not info.playable]
