"""Counts read right: "1 game", "2 games", through one helper (``progress.count``), in the notebook's results and
the review's summary; and no result writes a number before a plural noun of its own."""

from __future__ import annotations

import re
from pathlib import Path

from connectx_forge.leaderboard.review.summary import Summary, format_summary
from connectx_forge.progress import count

ROOT = Path(__file__).resolve().parents[2]
NOUNS = "games|players|pairs|moves|blunders|mistakes|days|submissions|episodes|rows|positions|replicates"
COUNTED = re.compile(r"\{[^{}]*\} (?:paired )?(?:" + NOUNS + r")\b")  # "{n} games" in an f-string


def test_one_game_two_games() -> None:
    assert (count(1, "game"), count(2, "game"), count(0, "game")) == ("1 game", "2 games", "0 games")
    assert count(1234, "paired game") == "1,234 paired games"
    assert (count(1, "batch"), count(2, "batch"), count(2, "pass")) == ("1 batch", "2 batches", "2 passes")


def test_the_review_summary_counts_read_right() -> None:
    one = format_summary(Summary(["us"], games=1, blunders=1), color=False)
    assert "1 game," in one and "1 blunder" in one and "1 games" not in one and "1 blunders" not in one
    two = format_summary(Summary(["us"], games=2, blunders=2), color=False)
    assert "2 games," in two and "2 blunders" in two


def test_no_result_puts_a_number_before_a_plural_of_its_own() -> None:
    files = [*sorted((ROOT / "tools" / "connectx_forge" / "api").glob("*.py")),
             ROOT / "tools/connectx_forge/leaderboard/review/summary.py",
             ROOT / "tools/connectx_forge/leaderboard/review/replay_page.py"]
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in files
            for n, line in enumerate(path.read_text().splitlines(), 1) if COUNTED.search(line)]
    assert not hits, "count(n, noun) reads '1 game', '2 games':\n" + "\n".join(hits)
