"""``cxforge replay GAME -o game.html``: one game as an offline HTML replay, with its review beside it.

``-o`` (default ``replay.html``) never replaces a file silently: an existing page is refused unless ``--force``;
``--index N`` counts from 1, as in every command."""

from __future__ import annotations

import argparse
from pathlib import Path

from connectx_forge import boundedread, options, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.annotate import Review, review_game
from connectx_forge.leaderboard.review.episode_page import episode_page, replay_game
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.replay_page import game_page, replay_of, visualizer
from connectx_forge.leaderboard.review.review_cmd import add_game_options, load_all

HELP = ("write one game as an HTML page: Kaggle's visualizer, offline (ConnectX's beside the solver's review; "
        "any game's from its Kaggle replay)")
EXAMPLE = """\
cxforge replay replays/episode-75123456-replay.json -o game.html
cxforge replay games.jsonl --index 3 -o game.html"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge replay``."""
    parser.add_argument("source", metavar="GAME",
                        help="a Kaggle replay JSON, an episode id (downloaded), or games saved with --save "
                             "(match, tournament, sprt, winrates)")
    options.add_out(parser, "the HTML page to write", default="replay.html")
    options.add_game(parser)
    options.add_index(parser)
    add_game_options(parser)


def run(args: argparse.Namespace) -> int:
    """Write the page; 0."""
    other = _other_game(args.source)
    if other is not None:
        name, replay = other
        _write(args.out, episode_page(name, replay, args.source))
        steps = replay["steps"]
        print(f"wrote {args.out}: a {name} replay ({len(steps) if isinstance(steps, list) else 0} steps)")
        return 0
    games = load_all([args.source], args.episodes)
    if args.index is None and len(games) > 1:
        raise UserError(f"{args.source} holds {len(games)} games: pick one with --index N (1 to {len(games)})")
    if (args.index or 1) > len(games):
        raise UserError(f"{args.source} holds {len(games)} games, not {args.index}")
    game = games[(args.index or 1) - 1]
    review: Review = review_game(game, Labeller(args.engine, args.time_limit))
    page = game_page(review, visualizer(replay_of(game)), f"{game.names[0]} vs {game.names[1]}")
    _write(args.out, page)
    print(f"wrote {args.out}: {game.describe()}")
    return 0


def _other_game(source: str) -> tuple[str, dict[str, object]] | None:
    """``(game, replay)`` when ``source`` is a Kaggle replay file of a game other than ConnectX, else None."""
    path = Path(source)
    if not path.is_file() or path.suffix != ".json":
        return None
    data = boundedread.read_json(path)
    if not isinstance(data, dict) or "steps" not in data:
        return None
    name = replay_game(data, source)
    return None if name is None else (name, data)


def _write(out: Path, page: str) -> None:
    """Write the page to ``-o`` (its --force rule: ``options.prepare``)."""
    try:
        safe_write.write_text(out, page, replace=True)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
