"""``cxforge episodes SUBMISSION_ID``: a submission's Kaggle episodes, and with ``--download DIR`` their replays."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from connectx_forge import options
from connectx_forge import progress as progress_bars
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review import kaggle_client
from connectx_forge.leaderboard.review.episodes import EpisodeRow, episode_row, format_rows

HELP = "list a submission's Kaggle episodes (opponent, seat, result, agent states); download their replays"
EXAMPLE = """\
cxforge episodes 51234567
cxforge episodes 51234567 --download replays/ --logs"""
NOT_PLAYED = ("CREATED", "NEVER_STARTED")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge episodes``."""
    parser.add_argument("submission", metavar="SUBMISSION_ID",
                        help="the submission's id (the first column of `cxforge submissions`)")
    options.add_json(parser, "print the episodes as a JSON list instead of the table")
    parser.add_argument("--download", type=Path, default=None, metavar="DIR",
                        help="fetch each played episode's replay into DIR (files already there are kept, not "
                             "fetched again, unless --force)")
    parser.add_argument("--logs", action="store_true", help="with --download, also fetch our agent's logs")
    options.add_force(parser)
    options.add_progress(parser)


def parse_id(text: str, name: str, where: str) -> int:
    """A Kaggle id given on the command line; ``UserError`` naming ``where`` to find one otherwise."""
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{name} is a number ({where}), not {text!r}")
    return int(text)


def download(rows: list[EpisodeRow], folder: Path, logs: bool, progress: bool = True,
             replace: bool = False) -> tuple[int, int]:
    """Fetch the replays (and our agents' logs) of the played episodes into ``folder``: ``(fetched, kept)``; a
    file already there is kept, or with ``replace`` (``--force``) fetched again."""
    jobs: list[tuple[int, int | None]] = []
    for r in rows:
        if r.state in NOT_PLAYED:
            continue
        jobs.append((r.id, None))
        if logs:
            indices = [a["index"] for a in r.agents] if r.validation else [] if r.our_index is None else [r.our_index]
            jobs.extend((r.id, i) for i in indices)
    fetched = kept = 0
    plan = f"cxforge episodes: {progress_bars.count(len(jobs), 'file')} to download into {folder}"
    with progress_bars.bar(len(jobs), "download", unit="file", enabled=progress, plan=plan) as bar:
        for episode, index in jobs:
            if index is None:
                _, new = kaggle_client.download_replay(episode, folder, replace)
            else:
                _, new = kaggle_client.download_logs(episode, index, folder, replace)
            fetched += new
            kept += not new
            bar.update()
    return fetched, kept


def run(args: argparse.Namespace) -> int:
    """Print the episodes, then download what was asked; 0."""
    if args.logs and args.download is None:
        raise UserError("--logs fetches files: give the folder with --download DIR")
    submission = parse_id(args.submission, "SUBMISSION_ID", "the first column of `cxforge submissions`")
    episodes = kaggle_client.list_episodes(submission)
    rows = sorted((episode_row(e, submission) for e in episodes), key=lambda r: r.id)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        print(format_rows(rows))
    if args.download is not None:
        fetched, kept = download(rows, args.download, args.logs, options.progress_of(args), args.force)
        print(f"{args.download}: {fetched} files downloaded, {kept} already there",
              file=sys.stderr if args.json else sys.stdout)
    return 0
