"""HTML never runs what a user was given; results display once in Jupyter, small.

A team name is its team's choice, and a project's name is whatever its ``cxforge.toml`` says: the names here
are markup that would set ``window.cxPwned`` and the title if a page obeyed them.  ``cxforge replay``'s page is
loaded in a real headless Chromium (as ``tests/integration/test_review_browser.py`` does): it plays, shows the names as
text, and none of the payloads runs.  A notebook result's HTML is put in a host page as Jupyter puts it (in the
host's own origin): its frame is sandboxed without ``allow-same-origin``, plays, and shows the names as text.
Without Playwright or Chromium the browser tests are skipped, saying which is missing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import io
import json
import re
import sys
import types
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import connectx_forge as cf
from connectx_forge.cli import main
from connectx_forge.leaderboard.review.annotate import review_game
from connectx_forge.leaderboard.review.games import read_replay
from connectx_forge.leaderboard.review.labeller import Labeller
from connectx_forge.leaderboard.review.replay_page import game_page, index_page, replay_of, visualizer
from tests.integration.test_review_browser import chromium, local_only
from tests.review_games import BLUNDER_PLY, blunder_replay

PWN = "window.cxPwned=(window.cxPwned||0)+1;document.title='pwned'"
WINNER = f'<img src=x onerror="{PWN}">'  # the blunder game's second player wins: the visualizer names it
LOSER = f"</script><script>{PWN}</script><svg onload=\"{PWN}\">"
PWNED = "() => [window.cxPwned === undefined, document.title]"


@pytest.fixture(scope="module")
def hostile_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The blunder game as a Kaggle replay whose team names are markup."""
    data = blunder_replay()
    data["info"] = {"TeamNames": [LOSER, WINNER]}
    path = tmp_path_factory.mktemp("hostile") / "episode-75000002-replay.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def executable() -> str:
    return chromium()


@contextlib.contextmanager
def browser_page(executable: str) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page that may load local files only; the list collects what was refused."""
    from playwright.sync_api import sync_playwright

    refused: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": 1240, "height": 720})

            local_only(context, refused)
            yield context.new_page(), refused
        finally:
            browser.close()


# -- the policy ---------------------------------------------------------------------------------------------
class Scripts(HTMLParser):
    """A page's policy, its inline scripts (not data blocks), its inline event handlers and its iframes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.policy: list[str] = []
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self.frames: list[dict[str, str | None]] = []
        self._in_script = False
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.policy.append(a.get("content") or "")
        self.handlers += [k for k, _ in attrs if k.startswith("on")]
        if tag == "iframe":
            self.frames.append(a)
        if tag == "script" and a.get("type") in (None, "", "module", "text/javascript"):
            self._in_script, self._text = True, ""

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_script:
            self.scripts.append(self._text)
            self._in_script = False


def parsed(page: str) -> Scripts:
    p = Scripts()
    p.feed(page)
    p.close()
    return p


def script_sources(policy: str) -> list[str]:
    directive = next(d.strip() for d in policy.split(";") if d.strip().startswith("script-src"))
    return directive.split()[1:]


def assert_strict(page: str) -> Scripts:
    """One policy; its scripts only by hash (each of the page's, no inline script, no handler, no eval)."""
    p = parsed(page)
    assert len(p.policy) == 1, p.policy
    sources = script_sources(p.policy[0])
    assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources and "'unsafe-hashes'" not in sources
    assert sources == ["'none'"] or all(s.startswith("'sha256-") for s in sources), sources
    for script in p.scripts:
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in sources
    assert p.handlers == []
    return p


@pytest.fixture(scope="module")
def pages(hostile_replay: Path) -> dict[str, str]:
    game = read_replay(json.loads(hostile_replay.read_text()), str(hostile_replay))
    review = review_game(game, Labeller("auto", 5.0))
    player = visualizer(replay_of(game))
    return {"player": player, "game": game_page(review, player, f"{game.names[0]} vs {game.names[1]}"),
            "index": index_page([("game-001.html", review)], f"{LOSER} {WINNER}")}


@pytest.mark.parametrize("name", ["player", "game", "index"])
def test_every_page_runs_only_its_own_scripts_by_hash(pages: dict[str, str], name: str) -> None:
    assert_strict(pages[name])


def test_the_page_carries_its_players_hashes_for_the_frame_that_inherits_its_policy(pages: dict[str, str]) -> None:
    outer = assert_strict(pages["game"])
    [frame] = outer.frames
    inner = assert_strict(frame["srcdoc"] or "")
    assert set(script_sources(inner.policy[0])) <= set(script_sources(outer.policy[0]))


def test_no_name_is_markup_in_any_page(pages: dict[str, str]) -> None:
    for page in pages.values():
        assert WINNER not in page and LOSER not in page and "<img src=x" not in page


def test_the_visualizer_writes_the_winners_name_as_text(pages: dict[str, str]) -> None:
    assert "<span>${w}</span>" not in pages["player"]


# -- in Chromium ---------------------------------------------------------------------------------------------
def test_cxforge_replay_shows_hostile_names_as_text_and_runs_none_of_them(
        executable: str, hostile_replay: Path, tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    assert main(["replay", str(hostile_replay), "-o", str(out), "--time-limit", "5"]) == 0
    steps = len(blunder_replay()["steps"])
    with browser_page(executable) as (page, refused):
        violations: list[str] = []
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(out.as_uri())
        title = page.title()
        assert title == f"{LOSER} vs {WINNER}"
        frame = page.frame_locator("#viz")
        frame.locator(f"text=1 / {steps}").wait_for(timeout=20_000)
        viz = next(f for f in page.frames if f.name == "viz")
        frame.locator("canvas").wait_for(timeout=20_000)
        # the replay plays: a move of the list shows its board; the last shows the winner, by name
        page.click(f"tr.move[data-step='{BLUNDER_PLY}']")
        frame.locator(f"text={BLUNDER_PLY + 1} / {steps}").wait_for(timeout=5_000)
        page.click(f"tr.move[data-step='{steps - 1}']")
        frame.locator(f"text={steps} / {steps}").wait_for(timeout=5_000)
        winner = frame.locator("span", has_text="Winner:")
        winner.wait_for(timeout=5_000)
        assert winner.inner_text() == f"Winner: {WINNER}"
        assert viz.evaluate("() => document.querySelectorAll('img:not(.token), svg[onload]').length") == 0
        page.wait_for_timeout(300)
        assert page.evaluate(PWNED) == [True, title]
        assert viz.evaluate(PWNED)[0] is True
        header = page.locator("header").inner_text()
        assert f"player 1 (moves first): {LOSER}; player 2: {WINNER}" in header
        assert not [v for v in violations if "inline script" in v or "load the script" in v], violations
    assert refused == []


# -- in a notebook -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose ``cxforge.toml`` names it with markup."""
    folder = tmp_path_factory.mktemp("project") / "proj"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["new", str(folder)]) == 0
    toml = folder / "cxforge.toml"
    toml.write_text(re.sub(r'(?m)^name = .*$', lambda _: f"name = {json.dumps(WINNER)}", toml.read_text()))
    return folder


@pytest.fixture(scope="module")
def notebook_results(hostile_replay: Path, hostile_project: Path) -> list[Any]:
    """A one-game match of the hostile project, and the review of the hostile replay."""
    match = cf.match(hostile_project, "leftmost", games=1, workers=1)
    assert match.a == WINNER
    return [match, cf.review(hostile_replay, time_limit=5)]


def test_a_notebook_result_frames_its_game_sandboxed_and_runs_only_its_own_script(notebook_results: list[Any]) -> None:
    for result in notebook_results:
        outer = parsed(result._repr_html_())
        [frame] = outer.frames
        assert frame["sandbox"] == "allow-scripts"  # scripts, in an origin of its own: not the notebook's
        assert outer.scripts == [] and outer.handlers == []
        assert_strict(frame["srcdoc"] or "")
        assert WINNER not in result._repr_html_()


def test_hostile_names_in_a_notebook_show_as_text_and_run_nothing(
        executable: str, notebook_results: list[Any], tmp_path: Path) -> None:
    host = tmp_path / "notebook.html"  # as Jupyter puts an output: in the notebook's own page and origin
    host.write_text("<!DOCTYPE html><html><head><title>notebook</title></head><body>"
                    + "".join(r._repr_html_() for r in notebook_results) + "</body></html>")
    match, review = notebook_results
    with browser_page(executable) as (page, refused):
        page.goto(host.as_uri())
        assert page.locator("iframe").count() == 2
        frames = [f for f in page.frames if f != page.main_frame]
        for f in frames:
            f.wait_for_function("() => document.getElementById('counter').textContent.includes(' / ')")
        assert page.evaluate("() => [...document.querySelectorAll('iframe')].map(f => f.contentDocument)") \
            == [None, None]  # the notebook cannot reach into the frames, nor they out
        played, reviewed = frames
        assert played.locator("#p1").inner_text() == WINNER and reviewed.locator("#p2").inner_text() == WINNER
        assert reviewed.locator("#p1").inner_text() == LOSER
        # the game plays: from the start, move by move, to the review's verdict on the blunder
        moves = len(review.reviews[0].game.moves)
        assert reviewed.locator("#counter").inner_text() == f"{moves} / {moves}"
        assert f"{WINNER} won with a line" in reviewed.locator("#note").inner_text()
        reviewed.click("#first")
        assert reviewed.locator("#board .p1, #board .p2").count() == 0
        for _ in range(BLUNDER_PLY):
            reviewed.click("#next")
        assert reviewed.locator("#counter").inner_text() == f"{BLUNDER_PLY} / {moves}"
        assert reviewed.locator("#board .p1, #board .p2").count() == BLUNDER_PLY
        note = reviewed.locator("#note").inner_text()
        assert note.startswith(f"ply {BLUNDER_PLY}: first played column") and "first losing move" in note
        reviewed.click("#play")  # it plays on by itself
        reviewed.wait_for_function(f"() => parseInt(document.getElementById('counter').textContent) >= "
                                   f"{BLUNDER_PLY + 2}", timeout=20_000)
        reviewed.click("#last")
        assert reviewed.locator("#counter").inner_text() == f"{moves} / {moves}"
        assert reviewed.locator("#board .p1, #board .p2").count() == moves
        assert reviewed.locator("#play").inner_text() == "\u25b6"  # stopped
        for f in [page.main_frame, *frames]:
            assert f.evaluate("() => document.querySelectorAll('img, svg').length") == 0
            assert f.evaluate("() => window.cxPwned === undefined")
        assert page.title() == "notebook"
    assert refused == []


def test_hostile_names_in_saved_games_are_text_in_compare_and_models(notebook_results: list[Any]) -> None:
    """A saved game's player names are anyone's: the analysis results show them escaped, with no element or
    handler of theirs."""
    match = notebook_results[0]
    hostile_b = [{**g, "players": [LOSER if i != g["a_seat"] - 1 else p for i, p in enumerate(g["players"])],
                  "opening": max(0, len(g["moves"]) - 8)} for g in match.games]
    results = [cf.compare(match, match), cf.models(hostile_b, seconds=5, engine="python")]  # late positions: quick
    for result in results:
        page = result._repr_html_()
        found = parsed(page)
        assert WINNER not in page and LOSER not in page
        assert found.scripts == [] and found.handlers == [] and found.frames == []
    assert html.escape(WINNER) in results[0]._repr_html_() and html.escape(LOSER) in results[1]._repr_html_()


# -- displayed once, and small ----------------------------------------------------------------------------
@pytest.fixture
def displays(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """IPython's ``display``, recorded: what a result would show in Jupyter besides its cell's value."""
    shown: list[Any] = []
    ipython = types.ModuleType("IPython")
    display = types.ModuleType("IPython.display")
    display.display = lambda *a, **k: shown.append(a)  # type: ignore[attr-defined]
    display.HTML = lambda *a, **k: a  # type: ignore[attr-defined]
    ipython.display = display  # type: ignore[attr-defined]
    ipython.get_ipython = lambda: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return shown


CALLS = {
    "match": lambda: cf.match("random", "leftmost", games=1, workers=1),
    "check": lambda: cf.check("leftmost", games=2, max_games=2, workers=1),
    "tournament": lambda: cf.tournament("leftmost", "random", openings=1, workers=1),
    "review": lambda: cf.review([cf.match("random", "leftmost", games=1, workers=1).games[0]], time_limit=0.2),
    "ladder": lambda: cf.ladder("leftmost", pool=["random"], days=1, per_day=2, new_per_day=2, replicates=2,
                                workers=1),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_making_a_result_prints_and_displays_nothing(call: str, displays: list[Any], capfd: pytest.CaptureFixture[str],
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CALLS[call]()
    out, err = capfd.readouterr()
    assert (out, displays) == ("", [])
    assert "Loading environment" not in err
    assert result._repr_html_().startswith('<div class="cxforge-result">')


RESULT_BYTES = 16_000  # a result's HTML, one game's player included (with kaggle-environments': 0.73 MB)
REPLAY_BYTES = 12_000  # one game's player in a notebook, a full board's 42 plies with their verdicts included


def test_results_and_their_replays_stay_small(notebook_results: list[Any], empty_cwd: Path) -> None:
    match, review = notebook_results
    assert len(review.reviews[0].game.moves) == 42  # the longest game there is, each move with its verdict
    assert len(review.replay(0)._repr_html_()) < REPLAY_BYTES
    assert len(review._repr_html_()) < RESULT_BYTES and len(match._repr_html_()) < RESULT_BYTES
    ten = cf.match("random", "leftmost", games=10, workers=1)
    assert len(ten._repr_html_()) < RESULT_BYTES
    replays = [ten.replay(i)._repr_html_() for i in range(10)]  # a notebook of ten games
    assert sum(map(len, replays)) < 10 * REPLAY_BYTES
    assert "kaggle" not in review._repr_html_().lower()  # the 0.6 MB player is not in it
    assert len(ten.replay(3).html) > 100_000  # it is the page .save() writes
