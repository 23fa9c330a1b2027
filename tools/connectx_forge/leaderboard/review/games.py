"""Games to review, from wherever they come, as one ``Game``: a Kaggle replay, an episode id, or saved games.

* a Kaggle replay JSON (``env.toJSON()``, or ``kaggle competitions replay``):
  the moves are read from the boards of consecutive steps (the actions of
  inactive agents are 0, so the boards are the reliable record), checked
  against the rules, and the end (a line, a full board, or a rule broken) from
  the last step's statuses;
* an episode id: its replay is downloaded first (``kaggle_client``), once;
* a JSON-lines file of ``GameRecord`` lines (``--save`` of match, tournament,
  sprt, winrates): every line is a game.  A line's ``opening`` (absent in older
  files: 0) counts the leading moves that came from an opening suite, not from
  the players;
* one such game or replay pretty-printed over many lines, or a JSON list of them.

A file may come from anyone: the players' names, a saved game's outcome and
the file's name are read with their control characters escaped (``sandbox/escape.py``), so
whatever shows a ``Game`` (text, JSON, HTML) shows them, never obeys them.

Bad input (a missing file, a file that holds no game, a replay whose boards do
not follow the rules) is a ``UserError`` naming the file and the step.  In a
file of many games, a bad line is reported by its number (``problems``) and
the others are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.board import STANDARD, Board, BoardError, Size
from connectx_forge import boundedread, paths
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review import kaggle_client
from connectx_forge.play.rules import end_disagreement
from connectx_forge.sandbox.escape import escape

BROKEN = {"INVALID": "invalid", "ERROR": "error", "TIMEOUT": "timeout"}
EPISODE_FILE = re.compile(r"episode-(\d+)-replay\.json$")


@dataclass
class Game:
    """One game in seat terms: mark 1 moves first; ``moves`` are columns from 0.

    ``outcome``: ``win`` (``winner`` made a line), ``draw``, a rule broken by
    ``culprit`` (``invalid``, ``error``, ``timeout``, ...: the other mark wins),
    or ``unfinished``.  ``replay`` is the Kaggle replay it came from, if any.
    """

    source: str
    size: Size
    moves: list[int]
    names: tuple[str, str]
    outcome: str
    winner: int | None = None
    culprit: int | None = None
    opening: int = 0
    episode_id: int | None = None
    replay: dict[str, object] | None = field(default=None, repr=False)

    def result(self, mark: int) -> str:
        """``win``, ``draw`` or ``loss`` for ``mark`` (``unfinished`` while there is no result)."""
        if self.outcome == "unfinished":
            return "unfinished"
        if self.winner is None:
            return "draw"
        return "win" if self.winner == mark else "loss"

    def describe(self) -> str:
        """One line: the players, and how the game ended."""
        first, second = self.names
        if self.outcome == "win":
            end = f"{self.names[self.winner - 1] if self.winner else '?'} won with a line after {len(self.moves)} moves"
        elif self.outcome == "draw":
            end = "a draw"
        elif self.outcome == "unfinished":
            end = f"unfinished after {len(self.moves)} moves"
        else:
            culprit = self.names[self.culprit - 1] if self.culprit else "?"
            end = f"{culprit} lost by {self.outcome} after {len(self.moves)} moves"
        return f"{first} (first) vs {second} (second): {end}"


def load_games(spec: str, episodes: Path | None = None, problems: list[str] | None = None) -> list[Game]:
    """The games ``spec`` names: a replay file, a games file, or an episode id (downloaded into ``episodes``).

    Lines of a games file that cannot be read are skipped, each with one line in ``problems``.
    """
    path = Path(spec)
    if path.is_file():
        return read_file(path, problems)
    if spec.isdigit():
        folder = episodes if episodes is not None else paths.CACHE / "episodes"
        replay, _ = kaggle_client.download_replay(int(spec), folder)
        games = read_file(replay, problems)
        for g in games:
            g.episode_id = int(spec)
        return games
    if path.exists():
        raise UserError(f"{spec}: not a file")
    raise UserError(f"{spec}: no such file, and not an episode id")


def read_file(path: Path, problems: list[str] | None = None) -> list[Game]:
    """The games in a replay JSON, a game or a list of them, or a JSON-lines games file (see the module)."""
    text = boundedread.read_text(path, boundedread.MAX_DOCUMENT)
    if not text.strip():
        raise UserError(f"{path}: the file is empty")
    try:
        data = boundedread.parse_json(text, str(path))
    except UserError:
        data = None
    if isinstance(data, dict):
        return [_one(data, str(path), _episode_of(path))]
    if isinstance(data, list):
        return [_one(item, f"{path}[{i}]", None) for i, item in enumerate(data, 1)]
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > boundedread.MAX_GAMES:
        raise UserError(f"{path}: more than {boundedread.MAX_GAMES:,} lines, the most cxforge reads from one file")
    if len(lines) == 1 or text.lstrip().startswith(("[", "{\n", "{\r")):  # one document that does not parse
        boundedread.check_depth(text, str(path))
        try:
            boundedread.loads(text)
        except ValueError as exc:
            if len(lines) == 1 or not lines[0].rstrip().endswith("}"):
                raise UserError(f"{path}: is not a Kaggle replay or saved games: not valid JSON ({exc})") from None
    games, bad = [], []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = boundedread.parse_json(line, f"{path}: line {i} skipped")
        except UserError as exc:
            bad.append(str(exc))
            continue
        try:
            games.append(_one(record, f"{path}:{i}", None))
        except UserError as exc:
            bad.append(f"{exc} (line {i} skipped)")
    if not games:
        raise UserError(bad[0] if len(bad) == 1 else f"{path}: no game could be read ({len(bad)} bad lines; the "
                        f"first: {bad[0] if bad else '?'})")
    if problems is not None:
        problems.extend(bad)
    return games


def _one(data: object, source: str, episode_id: int | None) -> Game:
    """One game from a parsed JSON value: a Kaggle replay or a saved game (``source``, a file's name, escaped)."""
    source = escape(source, False)
    if isinstance(data, dict) and "steps" in data:
        return read_replay(data, source, episode_id)
    if isinstance(data, dict) and "moves" in data:
        return read_record(data, source)
    raise UserError(f"{source}: neither a Kaggle replay (no \"steps\") nor a game saved with --save (no \"moves\")")


def _episode_of(path: Path) -> int | None:
    found = EPISODE_FILE.search(path.name)
    return int(found.group(1)) if found else None


def _size(config: object, source: str) -> Size:
    """The board size of a replay's configuration (the standard one where it says none), within
    ``boundedread.board_size``'s bounds."""
    given = config if isinstance(config, dict) else {}
    return boundedread.board_size(given.get("rows", STANDARD[0]), given.get("columns", STANDARD[1]),
                                  given.get("inarow", STANDARD[2]), source)


def _names(info: object) -> tuple[str, str]:
    """The team names of a replay's ``info`` (escaped), or ``first`` and ``second``."""
    given = info if isinstance(info, dict) else {}
    names = given.get("TeamNames")
    if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names):
        return escape(names[0], False), escape(names[1], False)
    agents = given.get("Agents")
    if isinstance(agents, list) and len(agents) == 2 and all(isinstance(a, dict) for a in agents):
        return escape(str(agents[0].get("Name") or agents[0].get("name") or "first"), False), \
            escape(str(agents[1].get("Name") or agents[1].get("name") or "second"), False)
    return "first", "second"


def read_replay(replay: dict[str, object], source: str, episode_id: int | None = None) -> Game:
    """The ``Game`` of a Kaggle replay (``env.toJSON()``); ``UserError`` when its steps break the rules."""
    size = _size(replay.get("configuration"), source)
    steps = replay.get("steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(s, list) and len(s) == 2 for s in steps):
        raise UserError(f"{source}: not a two-player ConnectX replay (\"steps\" is not a list of agent pairs)")
    if len(steps) > size[0] * size[1] + 1:
        raise UserError(f"{source}: {len(steps)} steps, more than a {size[0]}x{size[1]} game has (one a move, "
                        f"and the start: {size[0] * size[1] + 1})")
    try:
        board = Board(*size)
    except BoardError as exc:
        raise UserError(f"{source}: {exc}") from None
    rows, columns, _ = size
    moves: list[int] = []
    previous = _grid(steps[0], rows * columns)
    for k in range(1, len(steps)):
        grid = _grid(steps[k], rows * columns)
        col = _move(previous, grid, steps[k - 1], steps[k], board, columns)
        if col is None:
            break
        if col >= 0 and (not board.can_play(col) or board.is_over()):
            raise UserError(f"{source}: step {k}: column {col} cannot be played (not a valid ConnectX replay)")
        expected = board.play(col) if col >= 0 else board
        if col < 0 or (grid is not None and expected.to_grid() != list(grid)):
            raise UserError(f"{source}: step {k}: the board does not follow from step {k - 1} "
                            "(not a valid ConnectX replay)")
        board = expected
        moves.append(col)
        previous = grid
    game = Game(source, size, moves, _names(replay.get("info")), "unfinished", episode_id=episode_id,
                replay=replay)
    _judge_end(game, board, steps[-1])
    return game


def _grid(step: list[object], cells: int) -> list[int] | None:
    """The board of a step (agent 0's observation holds it), or None where it is missing."""
    obs = step[0].get("observation") if isinstance(step[0], dict) else None
    grid = obs.get("board") if isinstance(obs, dict) else None
    if isinstance(grid, list) and len(grid) == cells and all(isinstance(v, int) for v in grid):
        return grid
    return None


def _move(before: list[int] | None, after: list[int] | None, prev_step: list[object], step: list[object], board: Board,
          columns: int) -> int | None:
    """The column played between two steps, or None when no stone was added (the game ended)."""
    if before is not None and after is not None:
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        if not changed:
            return None
        if len(changed) != 1 or before[changed[0]] != 0 or after[changed[0]] != board.mark:
            return -1  # more than one stone, or not the mover's: reported by the caller
        return changed[0] % columns
    active = [i for i, a in enumerate(prev_step) if isinstance(a, dict) and a.get("status") == "ACTIVE"]
    if len(active) != 1:
        return None
    chosen = step[active[0]]
    agent = chosen if isinstance(chosen, dict) else {}
    action = agent.get("action")
    if agent.get("status") in BROKEN or not isinstance(action, int) or isinstance(action, bool):
        return None
    return action


def _judge_end(game: Game, board: Board, last: list[object]) -> None:
    statuses = [a.get("status") if isinstance(a, dict) else None for a in last]
    broke = [i for i, s in enumerate(statuses) if s in BROKEN or (isinstance(s, str) and s.startswith("Invalid"))]
    winner = board.winner()
    if winner is not None:
        game.outcome, game.winner = "win", winner
    elif broke:
        s = statuses[broke[0]]
        game.outcome = BROKEN.get(s, "invalid") if isinstance(s, str) else "invalid"
        game.culprit = broke[0] + 1
        game.winner = 3 - game.culprit
    elif board.is_full() or all(s == "DONE" for s in statuses):
        game.outcome = "draw"


def read_record(record: dict[str, Any], source: str) -> Game:
    """The ``Game`` of one ``GameRecord`` JSON line (``opening`` 0 when the line has none): its fields as parsed,
    each read and checked here.  A game of another game (``game``) is refused in one line: the solver and the
    board are ConnectX's."""
    other = record.get("game")
    if other is not None:
        raise UserError(f"{source}: a game of {escape(str(other)[:40], False)}; review and its solver are ConnectX's "
                        "alone (cxforge replay shows a Kaggle replay of any game: --save-replays DIR writes them)")
    try:
        rows, columns, inarow = record.get("size") or STANDARD
        size = boundedread.board_size(rows, columns, inarow, source)
        moves = [int(c) for c in record["moves"]]
        players = record.get("players") or ["first", "second"]
        opening = int(record.get("opening") or 0)
        if len(moves) > size[0] * size[1] or len(players) != 2 or not 0 <= opening <= len(moves):
            raise ValueError
        board = Board.from_moves(moves, *size)
    except BoardError as exc:
        raise UserError(f"{source}: the moves break the rules: {exc}") from None
    except (TypeError, ValueError, KeyError):
        raise UserError(f"{source}: not a game saved by cxforge match (bad size, moves, players or opening)") \
            from None
    claimed = record.get("outcome") or ("win" if board.winner() else "draw")
    winner = record.get("winner")
    culprit = record.get("culprit")
    why = end_disagreement(moves, size, claimed, winner, culprit)
    if why is not None:
        raise UserError(f"{source}: its result does not follow from its moves under the rules ({why}); refusing it")
    outcome = escape(str(claimed), False)
    names = (escape(str(players[0]), False), escape(str(players[1]), False))
    return Game(source, (size[0], size[1], size[2]), moves, names, outcome,
                winner=int(winner) if winner in (1, 2) else None, culprit=int(culprit) if culprit in (1, 2) else None,
                opening=opening)


def only_ours(games: list[Game], us: list[str]) -> list[Game]:
    """The games a player named in ``us`` (labels) played (``--us``); ``UserError`` naming the players when
    none did."""
    ours = [g for g in games if set(g.names) & set(us)]
    if not ours:
        players = sorted({n for g in games for n in g.names})
        raise UserError(f"--us {', '.join(us)}: no game has that player (the players are {', '.join(players)})")
    return ours
