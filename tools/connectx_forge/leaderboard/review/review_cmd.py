"""``cxforge review GAME...``: every move of Kaggle replays, episodes or saved games judged by the exact solver."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge import options, outputs
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.games.catalog import CONNECTX, connectx_only
from connectx_forge.leaderboard.review import label_cache
from connectx_forge.leaderboard.review.annotate import Review, format_review, review_game
from connectx_forge.leaderboard.review.games import Game, load_games, only_ours
from connectx_forge.leaderboard.review.label_cache import LabelCache
from connectx_forge.leaderboard.review.labeller import DEFAULT_TIME_LIMIT, Labeller
from connectx_forge.leaderboard.review.pages import PAGES, write_html
from connectx_forge.leaderboard.review.summary import format_summary, summarise
from connectx_forge.play.resolve import label_of
from connectx_forge.play.worker_pool import Progress, in_processes
from connectx_forge.sandbox.escape import escape

HELP = "annotate every move of Kaggle replays, episodes or saved games with the exact solver; where we lose"
EXAMPLE = """\
cxforge review replays/episode-75123456-replay.json
cxforge review 75123456 --json
cxforge review replays/*.json --us "My Team" --html review/
cxforge review games.jsonl --time-limit 5 --engine c -w 2"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge review`` (``cxforge replay`` shares the game and solver ones)."""
    options.add_game(parser)
    parser.description = (HELP + ". Each move gets the mover's value before and after it (win, draw or loss, "
                          "and Pons' exact score where the solver finishes in time), the best moves, and a "
                          "mark: blunder, slower-win, first losing move. Unlabelled values are shown as ? "
                          "(null in JSON), never guessed.")
    parser.add_argument("games", nargs="+", metavar="GAME",
                        help="a Kaggle replay JSON, an episode id (downloaded), or games saved with --save "
                             "(match, tournament, sprt, winrates)")
    add_game_options(parser)
    options.add_json(parser, "print one JSON object per game (one a line) instead of the text")
    parser.add_argument("--us", action="append", default=None, metavar="NAME",
                        help="our agent: a Kaggle team or a player's name, or a project folder or file (its label "
                             "in saved games); repeat for several. Default: the one name every game has, if any")
    options.add_index(parser)
    parser.add_argument("--summary", action="store_true", help="print only the summary of where we lose")
    parser.add_argument("--html", type=Path, default=None, metavar="DIR",
                        help="also write an HTML replay of each game with its review, and an index, into DIR "
                             "(a DIR holding an earlier review's pages is refused unless --force)")
    options.register_output(parser, "html", "folder", outputs.named(*PAGES))
    options.add_workers(parser)
    options.add_progress(parser)


def add_game_options(parser: argparse.ArgumentParser) -> None:
    """``--time-limit``, ``--engine`` and ``--episodes``."""
    parser.add_argument("--time-limit", type=options.positive_float, default=DEFAULT_TIME_LIMIT, metavar="S",
                        help=f"seconds of solving per position; a value not found in time is left unlabelled "
                             f"(default {DEFAULT_TIME_LIMIT:g})")
    options.add_engine(parser, "auto", "the solver labelling the moves")
    parser.add_argument("--episodes", type=Path, default=None, metavar="DIR",
                        help="where an episode id's replay is downloaded (default: the user cache, "
                             "~/.cache/cxforge/episodes)")


def load_all(specs: list[str], episodes: Path | None, game: int | None = None) -> list[Game]:
    """Every game the arguments name, in order (only the ``game``-th, from 1, when given); a line that cannot
    be read is reported on stderr, by its number, and skipped."""
    problems: list[str] = []
    games = [g for spec in specs for g in load_games(spec, episodes, problems)]
    for problem in problems:
        print(f"cxforge: {escape(problem)}", file=sys.stderr)
    if not games:
        raise UserError("no games to review")
    if game is not None:
        if game > len(games):
            raise UserError(f"--index {game}: there are {len(games)} game(s) (1 to {len(games)})")
        return [games[game - 1]]
    return games


_LABELLER: Labeller | None = None  # the parent's, inherited by forked workers (``_review_one``)


def _review_one(job: tuple[Game, str, float]) -> tuple[Review, list[str]]:
    """One game reviewed in a worker, with the labeller it inherited (or its own, where workers are not forked);
    the positions it labelled now, as lines for the parent's cache."""
    global _LABELLER
    game, engine, time_limit = job
    if _LABELLER is None or (_LABELLER.engine, _LABELLER.time_limit) != (engine, time_limit):
        _LABELLER = Labeller(engine, time_limit, cache=LabelCache())
    review = review_game(game, _LABELLER)
    cache = _LABELLER.cache
    return review, cache.take() if isinstance(cache, LabelCache) else []


def review_all(games: list[Game], args: argparse.Namespace, cache: LabelCache | None = None) -> list[Review]:
    """Each game reviewed with the solver the flags ask for, in order; ``-w`` games at a time, each in a worker
    process (one worker: in this process).  ``cache``: positions labelled before, not solved again; those
    labelled now are added to it as each game ends."""
    global _LABELLER
    labeller = _LABELLER = Labeller(args.engine, args.time_limit, cache=cache)  # a bad engine: one line, now
    total = sum(len(g.moves) for g in games)
    workers = min(options.workers_of(args), len(games))
    line = plan_line(games, total, labeller, workers, cache)
    if workers <= 1:
        reviews = []
        with progress_bars.bar(total, "review", unit="move", enabled=options.progress_of(args), plan=line) as bar:
            for g in games:
                reviews.append(review_game(g, labeller, bar.update))
                if cache is not None:
                    cache.save()
        return reviews

    def kept(_: int, result: tuple[Review, list[str]]) -> None:
        if cache is not None:
            cache.add_lines(result[1])
            cache.save()

    progress = Progress("review", "move", total, options.progress_of(args), count=lambda r: len(r[0].moves),
                        plan=line, sample=workers)
    done = in_processes(_review_one, [(g, args.engine, args.time_limit) for g in games], workers, progress=progress,
                        on_result=kept)
    return [review for review, _ in done]


def plan_line(games: list[Game], moves: int, labeller: Labeller, workers: int, cache: LabelCache | None) -> str:
    """The review's first line (``progress.Bar``): the games and moves, the solver and its limit, the workers,
    and how many positions the cache holds."""
    held = len(cache.entries) if cache is not None else 0
    cached = f"; {progress_bars.count(held, 'position')} labelled before, in the cache" if held else ""
    return (f"cxforge review: {progress_bars.count(len(games), 'game')}, {progress_bars.count(moves, 'move')}, "
            f"the {labeller.engine_used} solver at most {labeller.time_limit:g} s a position, -w {workers}{cached}")


def run(args: argparse.Namespace) -> int:
    """Review the games, print the result; 0."""
    connectx_only("cxforge review (the solver's labels)", args.game or CONNECTX)
    us = [label_of(u) for u in args.us or ()]
    games = load_all(args.games, args.episodes, args.index)
    reviews = review_all(only_ours(games, us) if us else games, args, LabelCache(label_cache.default_path()))
    summary = summarise(reviews, us)
    summary_text = format_summary(summary)
    if args.json:
        if args.summary:
            print(json.dumps(summary.to_json()))
        else:
            for r in reviews:
                print(json.dumps(r.to_json()))
    elif args.summary:
        print(summary_text)
    else:
        print("\n\n".join(format_review(r) for r in reviews))
        if len(reviews) > 1:
            print("\n" + summary_text)
    if args.html is not None:
        index = write_html(reviews, args.html, format_summary(summary, color=False))  # no ANSI codes in a page
        print(f"wrote {index} and {len(reviews)} game pages", file=sys.stderr if args.json else sys.stdout)
    return 0
