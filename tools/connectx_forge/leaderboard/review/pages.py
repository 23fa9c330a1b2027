"""The HTML pages ``cxforge review --html DIR`` writes: a replay of each game with its review, and an index
(tools/connectx_forge/leaderboard/review/replay_page.py makes each page)."""

from __future__ import annotations

from pathlib import Path

from connectx_forge import safe_write
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.annotate import Review
from connectx_forge.leaderboard.review.replay_page import game_page, index_page, replay_of, visualizer

PAGES = ("index.html", "game-*.html")  # what --html DIR holds after a review


def write_html(reviews: list[Review], folder: Path, summary_text: str) -> Path:
    """A page per game and an index in ``folder``; the index's path."""
    try:
        safe_write.make_folder(folder)
        entries = []
        for i, r in enumerate(reviews, 1):
            name = f"game-{i:03d}.html"
            title = f"Game {i}: {r.game.source}"
            page = game_page(r, visualizer(replay_of(r.game)), title, back="index.html")
            safe_write.write_text(folder / name, page, replace=True)  # the folder's pages are the command's own
            entries.append((name, r))
        index = folder / "index.html"
        safe_write.write_text(index, index_page(entries, summary_text), replace=True)
    except OSError as exc:
        raise UserError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    return index
