"""The HTML replay in a real headless Chromium: offline, the board drawn, readable controls, moves that jump.

Playwright drives the system's Chromium (Debian's ``chromium-headless-shell``,
which ``make test`` installs where apt-get can; ``CXFORGE_CHROMIUM`` names
another).  Every request the page makes is recorded and any that would leave
the machine is refused; the test fails if there is one.  The screenshot goes
to the test's folder, and to ``docs/review-screenshot.png`` when
``CXFORGE_SCREENSHOT=docs`` (how the README's picture is made).  Without
Playwright or Chromium the test is skipped, saying which is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from connectx_forge.cli import main
from connectx_forge.leaderboard.review.games import read_replay
from tests.review_games import BLUNDER_PLY, blunder_replay

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
LOCAL = ("file:", "data:", "about:", "blob:")


def local_only(context, refused: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Let ``context``'s pages load only local files; each refused address goes to ``refused``."""
    def route(r):  # type: ignore[no-untyped-def]
        if r.request.url.startswith(LOCAL):
            return r.continue_()
        refused.append(r.request.url)
        return r.abort()

    context.route("**/*", route)
CANVAS_DIGEST = """() => { const c = document.querySelector('canvas'); const d = c.getContext('2d')
  .getImageData(0, 0, c.width, c.height).data; let h = 0, colours = new Set();
  for (let i = 0; i < d.length; i += 4) { h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) % 1000000007;
    if (i % 388 == 0) colours.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); }
  return [c.width, c.height, colours.size, h]; }"""


def chromium() -> str:
    """The Chromium to drive, or a skip saying what to install."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make test installs it)")
    named = os.environ.get("CXFORGE_CHROMIUM")
    if named:
        return named
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium found: apt-get install chromium-headless-shell (make test does where apt-get works), "
                "or set CXFORGE_CHROMIUM")


@pytest.fixture(scope="module")
def executable() -> str:
    return chromium()


@pytest.fixture(scope="module")
def page_file(executable: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    replay = folder / "episode-75000001-replay.json"
    data = blunder_replay()
    data["info"] = {"TeamNames": ["Forge (blunders at 9)", "Perfect"]}
    replay.write_text(json.dumps(data))
    out = folder / "game.html"
    assert main(["replay", str(replay), "-o", str(out), "--time-limit", "60"]) == 0
    return out


def test_the_replay_page_works_offline_in_chromium(executable: str, page_file: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    refused: list[str] = []
    shot = tmp_path / "review-screenshot.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": 1240, "height": 720}, device_scale_factor=1)

            local_only(context, refused)
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            frame = page.frame_locator("#viz")
            counter = frame.locator("text=/^\\d+ \\/ \\d+$/")
            counter.wait_for(timeout=20_000)
            viz = next(f for f in page.frames if f.name == "viz")
            steps = len(blunder_replay()["steps"])

            # the board is drawn: a canvas of many colours
            frame.locator("canvas").wait_for(timeout=20_000)
            viz.wait_for_function(f"({CANVAS_DIGEST})()[2] > 10", timeout=20_000)
            width, height, colours, start = viz.evaluate(CANVAS_DIGEST)
            assert width > 300 and height > 300 and colours > 10

            # the controls read as controls: every button shows an icon or a word, none a ligature name
            buttons = viz.evaluate("""() => [...document.querySelectorAll('button')].map(b => {
                const r = b.getBoundingClientRect(), svg = b.querySelector('svg');
                return [b.getAttribute('aria-label') || '', r.width, r.height,
                        svg ? svg.getBoundingClientRect().width : 0, b.innerText.trim()]; })""")
            assert len(buttons) >= 4
            for label, w, h, icon, text in buttons:
                assert w > 10 and h > 10 and (icon > 8 or text), (label, w, h, icon, text)
            visible = viz.evaluate("() => document.body.innerText")
            assert not re.search(r"\b[a-z]+_[a-z_]+\b", visible), visible  # e.g. play_arrow, skip_next
            assert counter.inner_text() == f"1 / {steps}"

            # a Material Symbols ligature, should a player version use one, shows a glyph, not the word
            glyph = viz.evaluate("""() => new Promise(done => { const s = document.createElement('span');
                s.className = 'material-icons'; s.textContent = 'play_arrow'; document.body.appendChild(s);
                setTimeout(() => done([getComputedStyle(s).fontSize,
                                       getComputedStyle(s, '::after').content]), 50); })""")
            assert glyph == ["0px", '"\u25b6"']

            # clicking a move in the review jumps the player to the board after it
            page.click(f"tr.move[data-step='{BLUNDER_PLY}']")
            page.wait_for_function(f"document.querySelector('tr.current') && "
                                   f"document.querySelector('tr.current').dataset.step === '{BLUNDER_PLY}'")
            frame.locator(f"text={BLUNDER_PLY + 1} / {steps}").wait_for(timeout=5_000)
            assert viz.evaluate("() => document.querySelector('input[type=range]').value") == str(BLUNDER_PLY)
            page.wait_for_timeout(300)
            after = viz.evaluate(CANVAS_DIGEST)[3]
            assert after != start  # the board changed
            page.click("tr.move[data-step='0']")
            frame.locator(f"text=1 / {steps}").wait_for(timeout=5_000)
            page.wait_for_timeout(300)
            assert viz.evaluate(CANVAS_DIGEST)[3] == start  # and back to the empty board
            page.click(f"tr.move[data-step='{BLUNDER_PLY}']")
            frame.locator(f"text={BLUNDER_PLY + 1} / {steps}").wait_for(timeout=5_000)
            page.wait_for_timeout(300)
            row = page.locator(f"tr.move[data-step='{BLUNDER_PLY}']")
            assert "first losing move" in row.inner_text() and "blunder" in row.inner_text()
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert refused == [], f"the page asked the network for {refused}"
    assert requests and all(u.startswith(LOCAL) for u in requests), requests
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    if os.environ.get("CXFORGE_SCREENSHOT") == "docs":
        shutil.copyfile(shot, ROOT / "docs" / "review-screenshot.png")


def test_the_review_index_links_to_game_pages_offline(executable: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    replay = tmp_path / "episode-75000001-replay.json"
    replay.write_text(json.dumps(blunder_replay()))
    games = tmp_path / "games.jsonl"
    moves = read_replay(blunder_replay(), "the blunder game").moves
    games.write_text(json.dumps({"players": ["alpha", "beta"], "size": [6, 7, 4], "moves": moves,
                                 "outcome": "win", "winner": 2, "opening": 2}) + "\n")
    site = tmp_path / "site"
    assert main(["review", str(replay), str(games), "--html", str(site), "--time-limit", "60",
                 "--no-progress"]) == 0
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto((site / "index.html").as_uri())
            links = page.locator("a[href^='game-']")
            assert links.count() == 2
            rows = page.locator("tbody tr").all_inner_texts()
            assert f"first: ply {BLUNDER_PLY}" in rows[0] and f"alpha: ply {BLUNDER_PLY}" in rows[1], rows
            links.nth(1).click()
            page.wait_for_url("**/game-002.html")
            steps = len(moves) + 1
            page.frame_locator("#viz").locator(f"text=/^\\d+ \\/ {steps}$/").wait_for(timeout=20_000)
            assert page.locator("tr.opening").count() == 2  # the saved game's two opening moves
            page.click("tr.move[data-step='7']")
            page.frame_locator("#viz").locator(f"text=8 / {steps}").wait_for(timeout=5_000)
        finally:
            browser.close()
    assert requests and all(u.startswith(LOCAL) for u in requests), requests
