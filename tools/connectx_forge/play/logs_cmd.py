"""``cxforge logs GAMES.jsonl``: what each agent printed in saved games, and its traceback, as Kaggle's episode
logs show them (stdout and stderr cut at 10,000 characters; a traceback kept past the cut); ``--json``: one JSON
object per game instead (its control characters escaped by JSON itself).

A games file may come from anyone, so what it says (logs and player names) is printed with every control
character escaped (``sandbox/escape.py``): a terminal escape in it is shown, never obeyed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TypedDict

from connectx_forge import options
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import of_game, read_games
from connectx_forge.play.resolve import label_of
from connectx_forge.sandbox.escape import escape

HELP = "show what the agents printed, and their tracebacks, in games saved with --save"
EXAMPLE = """\
cxforge logs games.jsonl --index 3
cxforge logs games.jsonl --agent mybot
cxforge logs games.jsonl --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge logs``."""
    parser.add_argument("games", type=Path, metavar="GAMES.jsonl", help="games saved by match, tournament or "
                        "sprt with --save")
    options.add_index(parser)
    options.add_game(parser)
    parser.add_argument("--agent", default=None, metavar="NAME",
                        help="only this player's logs: its name in the games (a project's name; a project "
                             "folder or file also works, as its label)")
    options.add_json(parser, "print one JSON object per game (one a line) instead of the text")


def label(agent: str) -> str:
    """The name games record for ``--agent``: a project folder or file (or, inside a project, its own name) as
    its label (``reference.label_of``); anything else, or a folder that is no player, as given."""
    return label_of(agent)


def heading(number: int, rec: GameRecord) -> str:
    """One line on a game: its number in the file, its players by seat and how it ended."""
    first, second = rec.players
    if rec.outcome == "draw":
        end = "a draw"
    elif rec.outcome == "win":
        end = f"{rec.players[(rec.winner or 1) - 1]} won"
    else:
        end = f"{rec.players[(rec.culprit or 1) - 1]} lost by {rec.outcome}"
    length = f" after {len(rec.moves)} moves" if (rec.game or CONNECTX) == CONNECTX else f" ({rec.game})"
    return escape(f"== game {number}: {first} (first) vs {second} (second): {end}{length}", keep_newlines=False)


class SeatLog(TypedDict):
    """One seat's log in ``--json``'s record: its mark, its player and what it printed (``""``: nothing)."""

    mark: int
    player: str
    log: str


class GameLogs(TypedDict):
    """One line of ``cxforge logs --json``: a game's number in the file, players, how it ended, and each
    asked-for seat's log."""

    game: int
    players: list[str]
    outcome: str
    winner: int | None
    culprit: int | None
    moves: int
    logs: list[SeatLog]


def game_json(number: int, rec: GameRecord, marks: list[int]) -> GameLogs:
    """A game's logs as ``--json`` prints them (``GameLogs``)."""
    logs = rec.logs or {}
    return GameLogs(game=number, players=list(rec.players), outcome=rec.outcome, winner=rec.winner,
                    culprit=rec.culprit, moves=len(rec.moves),
                    logs=[SeatLog(mark=m, player=rec.players[m - 1], log=logs.get(str(m), "")) for m in marks])


def run(args: argparse.Namespace) -> int:
    """Print the logs asked for; 0, or 1 when the file has no such game."""
    records = of_game(read_games(args.games), args.game, str(args.games))
    if args.index is not None and args.index > len(records):
        raise UserError(f"{args.games} holds {len(records)} game(s), not {args.index}")
    numbered = list(enumerate(records, 1))
    chosen = [(n, r) for n, r in numbered if args.index is None or n == args.index]
    if args.agent is not None and all(args.agent not in r.players for r in records):
        args.agent = label(args.agent)
    if args.agent is not None and all(args.agent not in r.players for r in records):
        names = sorted({p for r in records for p in r.players})
        raise UserError(f"no player {args.agent!r} in {args.games}; its players are {', '.join(names)}")
    shown = 0
    for number, rec in chosen:
        logs = rec.logs or {}
        marks = [m for m in (1, 2) if args.agent is None or rec.players[m - 1] == args.agent]
        if args.index is None and not any(logs.get(str(m)) for m in marks):
            continue
        shown += 1
        if args.json:
            print(json.dumps(game_json(number, rec, marks)))
            continue
        print(heading(number, rec))
        for m in marks:
            text = logs.get(str(m), "")
            seat = f"mark {m}" if (rec.game or CONNECTX) == CONNECTX else f"seat {m}"
            print(escape(f"-- {rec.players[m - 1]} ({seat}): ", keep_newlines=False)
                  + ("its log:" if text else "printed nothing"))
            if text:
                print(escape(text.rstrip("\n")))
    if shown == 0 and not args.json:
        print(f"no agent printed anything in the {len(chosen)} game(s) of {args.games}")
    return 0
