"""Promise: the seats share no random state; an agent can neither steer another seat's draws nor send it a message
through ``random`` or ``numpy.random``, and the same seed still gives the same games.

On Kaggle each agent runs in a container of its own.  Here each seat has its
own generators, seeded from the game's seed and the seat
(tools/connectx_forge/play/seat_random.py): a host keeps its own, and an agent played in the
referee's process (``kaggle:random`` among them) gets its seat's state swapped
in around each call.  The attacks, each played hosted (a file), hosted on both
sides (``isolate``) and in the referee's process (a function):

* (a) an agent reseeds ``random`` and ``numpy.random`` after every move so that
  ``kaggle:random`` would pick the rightmost free column: ``kaggle:random``
  plays exactly the moves it plays against the same agent without the reseeding,
  or aiming at the leftmost column;
* (b) one agent writes a message into the random state, the other looks for it
  at every move: it never finds it;
* (c) ``cxforge match --seed`` twice gives the same games, a file among the
  players; another seed gives others.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena.match import run_match
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.settings import GameSettings
from connectx_forge.players.player import PlayerLike, from_callable
from tests.harness import run_cxforge

# plays a fixed column order (what the board allows), then, with AIM, reseeds both generators so that Python's
# random.choice over the free columns left after its move (kaggle:random's draw) gives the AIMed one
STEERER = """
import random

import numpy as np

AIM = {aim!r}
ORDER = (0, 6, 1, 5, 2, 4, 3)


def agent(obs, config):
    cols, rows = config.columns, config.rows
    board = list(obs.board)
    free = [c for c in range(cols) if board[c] == 0]
    want = ORDER[(obs.step // 2) % len(ORDER)] % cols
    col = want if want in free else free[0]
    row = max(r for r in range(rows) if board[r * cols + col] == 0)
    board[row * cols + col] = obs.mark
    left = [c for c in range(cols) if board[c] == 0]
    if AIM is not None and left:
        target = max(left) if AIM == "right" else min(left)
        seed = next(s for s in range(100_000) if random.Random(s).choice(left) == target)
        random.seed(seed)
        np.random.seed(seed)
    return col
"""

MESSAGE = 424242
WRITER = f"""
import random

import numpy as np


def agent(obs, config):
    random.seed({MESSAGE})
    np.random.seed({MESSAGE})
    return [c for c in range(config.columns) if obs.board[c] == 0][-1]
"""

READER = f"""
import random

import numpy as np


def agent(obs, config):
    got = random.getstate() == random.Random({MESSAGE}).getstate()
    got = got or bool((np.random.get_state()[1] == np.random.RandomState({MESSAGE}).get_state()[1]).all())
    print("GOT THE MESSAGE" if got else "nothing")
    return [c for c in range(config.columns) if obs.board[c] == 0][0]
"""


def player(source: str, kind: str, name: str, folder: Path) -> PlayerLike:
    """The agent of ``source``: a file (played in a host) or a function (played in the referee's process)."""
    source = textwrap.dedent(source)
    if kind == "file":
        path = folder / f"{name}.py"
        path.write_text(source)
        return str(path)
    space: dict[str, Any] = {}
    exec(compile(source, f"<{name}>", "exec"), space)  # noqa: S102 - the test's own agent
    return from_callable(space["agent"], name)


def moves_of(record: GameRecord, mark: int) -> list[int]:
    return record.moves[mark - 1::2]


def rightmost_each_time(record: GameRecord, mark: int) -> list[bool]:
    """For each move of ``mark``: whether it was the rightmost free column then."""
    rows, cols, _ = record.size
    heights = [0] * cols
    out = []
    for ply, col in enumerate(record.moves):
        if 1 + ply % 2 == mark:
            out.append(col == max(c for c in range(cols) if heights[c] < rows))
        heights[col] += 1
    return out


def random_moves(aim: str | None, kind: str, isolate: bool, folder: Path) -> list[list[int]]:
    """``kaggle:random``'s moves in 6 games against the steerer aiming at ``aim`` (None: not aiming)."""
    steerer = player(STEERER.format(aim=aim), kind, f"steer_{aim}", folder)
    result = run_match(steerer, "kaggle:random", games=6, workers=1, seed=3, progress=False,
                       settings=GameSettings(isolate=isolate))
    assert [r.outcome for r in result.records if r.outcome not in ("win", "draw")] == []
    return [moves_of(r, 3 - r.a_seat) for r in result.records]


MODES = [("file", False), ("file", True), ("function", False)]
MODE_IDS = ["hosted", "both-hosted", "in-process"]


@pytest.mark.parametrize("kind, isolate", MODES, ids=MODE_IDS)
def test_an_agent_cannot_steer_kaggle_random(kind: str, isolate: bool, tmp_path: Path) -> None:
    honest = random_moves(None, kind, isolate, tmp_path)
    right = random_moves("right", kind, isolate, tmp_path)
    assert sum(map(len, honest)) >= 12  # kaggle:random really played
    assert right == honest
    assert random_moves("left", kind, isolate, tmp_path) == honest
    steerer = player(STEERER.format(aim="right"), kind, "steer_again", tmp_path)
    result = run_match(steerer, "kaggle:random", games=6, workers=1, seed=3, progress=False,
                       settings=GameSettings(isolate=isolate))
    aimed = [hit for r in result.records for hit in rightmost_each_time(r, 3 - r.a_seat)]
    assert not all(aimed)


@pytest.mark.parametrize("writer_kind, reader_kind", [("file", "file"), ("file", "function"), ("function", "file"),
                                                      ("function", "function")])
def test_no_message_crosses_through_the_random_state(writer_kind: str, reader_kind: str, tmp_path: Path) -> None:
    writer = player(WRITER, writer_kind, "writer", tmp_path)
    reader = player(READER, reader_kind, "reader", tmp_path)
    result = run_match(writer, reader, games=4, workers=1, seed=5, progress=False)
    logs = [text for r in result.records for text in (r.logs or {}).values()]
    said = "".join(logs)
    assert "nothing" in said  # the reader looked
    assert "GOT THE MESSAGE" not in said


RANDOM_FILE = """
import random

import numpy as np


def agent(obs, config):
    free = [c for c in range(config.columns) if obs.board[c] == 0]
    return free[int(np.random.randint(len(free)))] if random.random() < 0.5 else random.choice(free)
"""


def saved_games(args: list[str], out: Path) -> list[tuple[list[int], str]]:
    """The moves and outcome of each game ``cxforge match ARGS --save OUT`` plays."""
    run = run_cxforge(dict(os.environ), "match", *args, "--no-progress", "--save", str(out), timeout=120)
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return [(r["moves"], r["outcome"]) for r in sorted(records, key=lambda r: r["index"])]


@pytest.mark.parametrize("a", ["kaggle:random", "file"])
def test_the_same_seed_gives_the_same_games(a: str, tmp_path: Path) -> None:
    if a == "file":
        a = str(tmp_path / "random_file.py")
        Path(a).write_text(textwrap.dedent(RANDOM_FILE))
    args = [a, "kaggle:random", "-n", "4", "-w", "1"]
    first = saved_games([*args, "--seed", "3"], tmp_path / "a.jsonl")
    again = saved_games([*args, "--seed", "3"], tmp_path / "b.jsonl")
    other = saved_games([*args, "--seed", "4"], tmp_path / "c.jsonl")
    assert len(first) == 4 and first == again
    assert other != first
