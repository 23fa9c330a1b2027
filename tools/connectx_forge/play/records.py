"""Games on disk: one ``GameRecord`` per JSON line (what ``--save FILE`` writes in every command that plays).

A line is ``GameRecord.to_json()``; ``load_records`` reads a file back into
records that replay, tally and report like fresh ones.  A game's stable key
(``game_key``: its run, pairing, opening, A's seat and seed) is the same however
often it is played, stored or read back, so a file is written with each game
once (``GameWriter``): a resumed run appends exactly the games the file lacks.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from typing import Any

from connectx_forge import boundedread, safe_write
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.play.episode import episode_result
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.replays import ReplayFolder
from connectx_forge.play.rules import end_disagreement

PathLike = str | os.PathLike[str]
GameKey = tuple[str | None, str, str, int, int]  # run, pairing "A vs B", opening (Pons digits), A's seat, seed


def game_key(rec: GameRecord) -> GameKey:
    """The game's stable key: its run and pairing (as its run named them; a game saved without them: the
    players' names by A's seat), its opening in Pons' digits, A's seat and its seed."""
    a, b = rec.players[rec.a_seat - 1], rec.players[2 - rec.a_seat]
    pairing = rec.pairing if rec.pairing is not None else f"{a} vs {b}"
    opening = "".join(str(c + 1) for c in rec.moves[:rec.opening])
    return rec.run, pairing, opening, rec.a_seat, rec.seed


def tag(rec: GameRecord, run: str, pairing: str) -> GameRecord:
    """``rec`` named by the run and the pairing it was played in (its stable key's); returned for chaining."""
    rec.run, rec.pairing = run, pairing
    return rec


class GameWriter:
    """Games written to a JSONL file as they finish, each line flushed: a crash or Ctrl-C keeps them.

    ``close(records)`` rewrites the games this writer added with ``records`` in order (a finished run's games
    sorted by index); an interrupted run leaves the lines in finishing order.  A file that exists is
    replaced only with ``replace`` (``--force``): else ``UserError`` unless ``append``, which adds the games
    after its lines and leaves those alone.
    Each game is written once: a game whose stable key (``game_key``) the file already holds (a resumed run's
    games saved before the interrupt) or this writer already wrote is left out.
    """

    def __init__(self, path: PathLike, append: bool = False, replace: bool = False,
                 replays: ReplayFolder | None = None) -> None:
        self.replays = replays  # --save-replays: each game's Kaggle replay too (games other than ConnectX)
        self.path = os.fspath(path)
        self.had: set[GameKey] = _keys_in(self.path) if append else set()
        self.wrote: set[GameKey] = set()
        try:
            self.fh = safe_write.open_append(self.path, new=not append and not replace)
            if replace and not append:
                self.fh.truncate(0)
                self.fh.seek(0)
            self.start = self.fh.tell()
            if self.start and not _ends_with_newline(self.path):
                self.fh.write("\n")
                self.start = self.fh.tell()
        except FileExistsError:
            raise UserError(f"--save {self.path}: the file exists; add --append to add the games to its end, "
                            "--force to replace it, or give another name") from None
        except OSError as exc:
            raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.count = 0

    def add(self, rec: GameRecord) -> None:
        """Write ``rec`` now (flushed), unless the file already holds its game; and its replay."""
        if self.replays is not None:
            self.replays.add(rec)
        key = game_key(rec)
        if key in self.had or key in self.wrote:
            return
        self.wrote.add(key)
        self.fh.write(json.dumps(rec.to_json()) + "\n")
        self.fh.flush()
        self.count += 1

    def close(self, records: Iterable[GameRecord] | None = None) -> None:
        """Close the file; with ``records``, its lines from this writer are replaced by theirs, in order, each
        game once and none the file held before this writer."""
        self.fh.close()
        if records is None:
            return
        self.wrote, self.count = set(), 0
        try:
            with safe_write.open_append(self.path) as fh:
                fh.truncate(self.start)
                for rec in records:
                    key = game_key(rec)
                    if key not in self.had and key not in self.wrote:
                        self.wrote.add(key)
                        self.count += 1
                        fh.write(json.dumps(rec.to_json()) + "\n")
        except OSError as exc:
            raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def _keys_in(path: str) -> set[GameKey]:
    """The stable keys of the games in the file at ``path`` (none when it does not exist; a line that is no
    game is skipped: it is kept, and matches no game), read within ``boundedread``'s bounds."""
    if not os.path.lexists(path):
        return set()
    keys: set[GameKey] = set()
    for number, line in boundedread.read_lines(path):
        try:
            keys.add(game_key(record_of(boundedread.parse_json(line, path), f"{path}: line {number}")))
        except (UserError, IndexError, AttributeError, TypeError):
            continue
    return keys


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def load_records(path: PathLike) -> list[GameRecord]:
    """The games of a ``--save`` file (one JSON line each, ``GameWriter``'s), in file order: ``read_games``, as
    every file is anyone's."""
    return read_games(path)


def read_games(path: PathLike) -> list[GameRecord]:
    """``load_records`` for a file a user names, read within ``boundedread``'s bounds (its size, lines, nesting
    and numbers, and each game's board); ``UserError`` (one line, naming the file and the line) for a file that
    cannot be read, breaks a bound, or holds a line that is no game."""
    name = os.fspath(path)
    return [record_of(boundedread.parse_json(text, f"{name}: line {number}"), f"{name}: line {number}")
            for number, text in boundedread.read_lines(path, name=name)]


def of_game(records: list[GameRecord], game: str | None, where: str) -> list[GameRecord]:
    """The games of ``records`` that are games of ``game`` (``--game``; None: all of them); one line naming the
    games ``where`` holds when none is."""
    if game is None:
        return records
    catalog.get(game)
    kept = [r for r in records if (r.game or catalog.CONNECTX) == game]
    if not kept:
        held = sorted({r.game or catalog.CONNECTX for r in records}) or ["none"]
        raise UserError(f"{where} holds no game of {game} (it holds {', '.join(held)})")
    return kept


def read_all(paths: Iterable[PathLike]) -> list[GameRecord]:
    """``read_games`` of each of ``paths`` in turn, as one list (the commands that take several files)."""
    return [game for path in paths for game in read_games(path)]


def record_of(data: Any, where: str) -> GameRecord:
    """The ``GameRecord`` of one parsed line, its board within ``boundedread.board_size``'s bounds, its moves
    no more than the board holds, and its result (outcome, winner, culprit) the one its moves give under the
    rules (``rules.end_disagreement``): every report counts results, so a line that claims another is refused,
    never counted."""
    try:
        rec = GameRecord.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{where}: not a game written with --save ({boundedread.one_line(exc)})") from None
    if rec.game is not None:
        return _episode_of(rec, where)
    try:
        size = boundedread.board_size(*rec.size, name=where)
        rows, columns, _ = size
        moves = len(rec.moves)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{where}: not a game written with --save ({boundedread.one_line(exc)})") from None
    if moves > rows * columns:
        raise UserError(f"{where}: {moves} moves, more than a {rows}x{columns} board holds")
    why = _malformed(rec)
    if why is not None:
        raise UserError(f"{where}: not a game written with --save ({why})")
    why = end_disagreement(rec.moves, size, rec.outcome, rec.winner, rec.culprit)
    if why is not None:
        raise UserError(f"{where}: its result does not follow from its moves under the rules ({why}); refusing it")
    return rec


STATUSES = frozenset({"DONE", "ERROR", "TIMEOUT", "INVALID", "ACTIVE", "INACTIVE"})


def _episode_of(rec: GameRecord, where: str) -> GameRecord:
    """A game of another kaggle-environments game, checked: a game the table knows, two statuses and rewards,
    no moves, a trace, and its result the one its rewards and statuses give (``episode.episode_result``)."""
    why = _malformed(rec)
    statuses, rewards = rec.statuses, rec.rewards
    if why is None and (rec.game not in catalog.known() or rec.game == catalog.CONNECTX):
        why = f"no game {str(rec.game)[:40]!r} cxforge plays besides connectx"
    if why is None and rec.moves:
        why = f"a game of {rec.game} has no ConnectX moves"
    if why is None and not (isinstance(statuses, list) and len(statuses) == 2 and all(s in STATUSES for s in statuses)):
        why = "its statuses are not two of Kaggle's"
    if why is None and not (isinstance(rewards, list) and len(rewards) == 2 and all(
            r is None or (type(r) in (int, float) and math.isfinite(r)) for r in rewards)):
        why = "its rewards are not two numbers"
    if why is None and not (isinstance(rec.trace, str) and len(rec.trace) == 64):
        why = "its trace is not a digest"
    if why is not None:
        raise UserError(f"{where}: not a game written with --save ({why})")
    assert statuses is not None and rewards is not None
    if (rec.outcome, rec.winner, rec.culprit) != episode_result(statuses, rewards):
        raise UserError(f"{where}: its result does not follow from its rewards and statuses; refusing it")
    return rec


def _malformed(game: GameRecord) -> str | None:
    """What in ``game`` no ``--save`` file holds (a file may be written by anyone), or None: the fields a reader
    steps through (moves, players, A's seat, the opening) of the wrong kind."""
    if not (isinstance(game.moves, list) and all(type(m) is int for m in game.moves)):
        return "its moves are not a list of columns"
    if type(game.a_seat) is not int or game.a_seat not in (1, 2) or len(game.players) != 2 \
            or not all(isinstance(p, str) for p in game.players):
        return "its players or A's seat are not two names and 1 or 2"
    if type(game.opening) is not int or not 0 <= game.opening <= len(game.moves):
        return "its opening is not a count of its moves"
    return None
