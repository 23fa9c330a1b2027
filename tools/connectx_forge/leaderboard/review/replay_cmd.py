"""``cxforge replay GAME -o game.html``: one game as an offline HTML replay, with its review beside it.

``-o`` (default ``replay.html``) never replaces a file silently: an existing page is refused unless ``--force``;
``--game N`` counts from 1, as in every command."""

from __future__ import annotations

import argparse

from connectx_forge import options, safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.annotate import Review, review_game
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.replay_page import game_page, replay_of, visualizer
from connectx_forge.leaderboard.review.review_cmd import add_game_options, load_all

HELP = "write one game as an HTML page: Kaggle's ConnectX visualizer, offline, beside the solver's review"
EXAMPLE = """\
cxforge replay replays/episode-75123456-replay.json -o game.html
cxforge replay games.jsonl --game 3 -o game.html"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge replay``."""
    parser.add_argument("source", metavar="GAME",
                        help="a Kaggle replay JSON, an episode id (downloaded), or games saved with --save "
                             "(match, tournament, sprt, winrates)")
    options.add_out(parser, "the HTML page to write", default="replay.html")
    options.add_game(parser)
    add_game_options(parser)


def run(args: argparse.Namespace) -> int:
    """Write the page; 0."""
    games = load_all([args.source], args.episodes)
    if args.game is None and len(games) > 1:
        raise UserError(f"{args.source} holds {len(games)} games: pick one with --game N (1 to {len(games)})")
    if (args.game or 1) > len(games):
        raise UserError(f"{args.source} holds {len(games)} games, not {args.game}")
    game = games[(args.game or 1) - 1]
    review: Review = review_game(game, Labeller(args.engine, args.time_limit))
    page = game_page(review, visualizer(replay_of(game)), f"{game.names[0]} vs {game.names[1]}")
    try:
        safe_write.write_text(args.out, page, replace=True)  # -o's --force rule: options.prepare
    except OSError as exc:
        raise UserError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"wrote {args.out}: {game.describe()}")
    return 0
