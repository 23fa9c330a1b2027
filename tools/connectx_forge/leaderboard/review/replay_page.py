"""HTML replays: kaggle-environments' own ConnectX visualizer, made to work offline, beside the review's move list.

The visualizer is ``env.render(mode="html")`` of kaggle-environments (its
JavaScript inlined), for the game's Kaggle replay, or for one replayed move by
move through the environment when the game came from ``cxforge match``.  As
shipped it asks Google Fonts for two stylesheets when it starts; here both
addresses become empty ``data:`` stylesheets and a Content-Security-Policy
forbids every other request, so the page makes none.  Without the Material
Symbols font its ligature icons would show as words (``play_arrow``); its
controls are SVG today, and a small script gives any such icon a readable
glyph in case a version uses them.

The page puts the visualizer in an ``iframe`` (``srcdoc``: one file, same
origin) and the move list beside it.  Clicking a move posts ``{step: ply}`` to
the player, which is how kaggle-environments' player is told to show a step (its
``message`` listener); the list follows the player's slider to highlight the
step on screen.

What a replay says is anyone's (a Kaggle team name is its team's choice, a
project's name its ``cxforge.toml``'s): kaggle-environments embeds the replay in
the player with ``json.dumps``, which leaves a ``</script>`` in a name as it is,
so ``script_safe`` writes every ``<``, ``>`` and ``&`` of that data as a JSON
escape; the player writes the winner's name into ``innerHTML``, so
``text_names`` makes it escape the name first (the name shows as text); the
names the player shows are the ``Game``'s, whose control characters are escaped
(``games.py``); everything else on the page is ``html.escape``d.  And should
markup get in all the same, it cannot run: each page's policy allows its own
scripts by their SHA-256 hashes only (no inline script, no event handler
attribute, no ``eval``), and a review page's policy holds its player's hashes
too, since the player's ``srcdoc`` frame inherits it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import re
from collections.abc import Mapping

from connectx_forge import kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.leaderboard.review.annotate import Review, wdl_name
from connectx_forge.leaderboard.review.games import Game
from connectx_forge.progress import count

FONT_URLS = ("https://fonts.googleapis.com/css2?family=Inter:wght@400;500;700&display=swap",
             "https://fonts.googleapis.com/css2?family=Material+Symbols+Outlined:opsz,wght,FILL,GRAD@24,400,0,0")
EMPTY_CSS = "data:text/css,"
# the policy of every page; script-src: the hashes of the page's own scripts (``policy``)
CSP = ("default-src 'none'; script-src %s; style-src 'unsafe-inline' data:; img-src data: blob:; font-src data:; "
       "frame-src 'self' about:; child-src 'self' about: blob:; worker-src blob:; base-uri 'none'; form-action 'none'")
SCRIPTS = re.compile(r"<script\b([^>]*)>(.*?)</script", re.S | re.I)
DATA_TYPE = re.compile(r"""\btype\s*=\s*["']?application/json""", re.I)
KAGGLE_STATUS = {"invalid": "INVALID", "timeout": "TIMEOUT"}
# Material Symbols ligatures a player may use, and a glyph that reads the same without the font
GLYPHS = {"play_arrow": "\u25b6", "pause": "\u23f8", "skip_next": "\u23ed", "skip_previous": "\u23ee",
          "replay": "\u21ba", "restart_alt": "\u21ba", "fast_forward": "\u23e9", "fast_rewind": "\u23ea",
          "chevron_left": "\u2039", "chevron_right": "\u203a", "navigate_before": "\u2039",
          "navigate_next": "\u203a", "first_page": "\u23ee", "last_page": "\u23ed", "close": "\u2715",
          "settings": "\u2699", "speed": "\u23f1", "expand_more": "\u25be", "expand_less": "\u25b4"}
ICON_SELECTOR = ".material-icons, .material-symbols-outlined, .material-symbols-rounded, .material-symbols-sharp"
GLYPH_HEAD = """<style>[data-cx-glyph]{font-size:0 !important}
[data-cx-glyph]::after{content:attr(data-cx-glyph);font-size:20px;font-family:sans-serif;line-height:1}</style>
<script>(function(){var G=%(glyphs)s,S=%(selector)s;
function fix(){document.querySelectorAll(S).forEach(function(e){var t=(e.textContent||"").trim();
if(/^[a-z0-9_]+$/.test(t)){var g=G[t]||t.replace(/_/g," ");if(e.getAttribute("data-cx-glyph")!==g)
e.setAttribute("data-cx-glyph",g);}});}
new MutationObserver(fix).observe(document.documentElement,{childList:true,subtree:true,characterData:true});
document.addEventListener("DOMContentLoaded",fix);})();</script>
"""
# where the player writes the winner's name into innerHTML, and the same with the name escaped first
WINNER_SINK = "<span>${w}</span>`"
WINNER_TEXT = ("<span>${String(w).replace(/[&<>\"']/g,function(c){return\"&#\"+c.charCodeAt(0)+\";\"})}"
               "</span>`")


def script_hashes(page: str) -> list[str]:
    """The CSP sources of every inline script of ``page`` (``'sha256-...'``), in order, once each; data blocks
    (``type="application/json"``) are not scripts."""
    found: list[str] = []
    for attrs, body in SCRIPTS.findall(page):
        if DATA_TYPE.search(attrs):
            continue
        source = "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        if source not in found:
            found.append(source)
    return found


def policy(*pages: str) -> str:
    """The page policy allowing the inline scripts of ``pages`` (a page and the frames that inherit its
    policy) by hash, and no other script."""
    sources = [h for page in pages for h in script_hashes(page)]
    return CSP % (" ".join(dict.fromkeys(sources)) or "'none'")


def text_names(page: str) -> str:
    """The player ``page`` with the winner's name written as text: the player puts ``Winner: NAME`` into
    ``innerHTML``, where a name that is markup would be obeyed; here it is HTML-escaped first."""
    if page.count(WINNER_SINK) != 1:
        raise UserError("this kaggle-environments visualizer is not the one this page was written for "
                        "(its winner line changed): install kaggle-environments 1.33.2")
    return page.replace(WINNER_SINK, WINNER_TEXT)


def offline(page: str) -> str:
    """The visualizer page with its web fonts replaced by empty stylesheets, every other request forbidden, and
    only its own scripts (by hash) allowed to run."""
    for url in FONT_URLS:
        if url not in page:
            raise UserError("this kaggle-environments visualizer is not the one this page was written for "
                            "(its font addresses changed): install kaggle-environments 1.33.2")
        page = page.replace(url, EMPTY_CSS)
    page = page.replace('<link rel="icon" type="image/svg+xml" href="/vite.svg" />', "")
    glyphs = GLYPH_HEAD % {"glyphs": json.dumps(GLYPHS), "selector": json.dumps(ICON_SELECTOR)}
    at = page.find("<head>")
    if at < 0:
        raise UserError("the kaggle-environments visualizer has no <head>: install kaggle-environments 1.33.2")
    page = page[:at + 6] + "\n" + glyphs + page[at + 6:]
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(page)}">\n'
    return page[:at + 6] + "\n" + meta + page[at + 6:]


def replay_of(game: Game) -> dict[str, object]:
    """The game as a Kaggle replay: its own (its team names as the game's: escaped), or one played move by move
    through kaggle-environments."""
    if game.replay is not None:
        info = game.replay.get("info")
        if isinstance(info, dict) and "TeamNames" in info:
            return {**game.replay, "info": {**info, "TeamNames": list(game.names)}}
        return game.replay
    kaggle_env.load()
    from kaggle_environments import make

    rows, columns, inarow = game.size
    env = make("connectx", configuration={"rows": rows, "columns": columns, "inarow": inarow})
    env.reset()
    for i, col in enumerate(game.moves):
        env.step([col, None] if i % 2 == 0 else [None, col])
    replay = copy.deepcopy(env.toJSON())
    if game.culprit is not None and game.outcome not in ("win", "draw"):  # a broken rule ends it: say so
        last = copy.deepcopy(replay["steps"][-1])
        for i, agent in enumerate(last):
            broke = i == game.culprit - 1
            agent["status"] = KAGGLE_STATUS.get(game.outcome, "ERROR") if broke else "DONE"
            agent["reward"] = None if broke else 1
        replay["steps"].append(last)
    replay["info"] = {**(replay.get("info") or {}), "TeamNames": list(game.names)}
    made: dict[str, object] = replay  # kaggle-environments' JSON (its toJSON is untyped)
    return made


PLAYER_DATA = "<script>window.kaggle = "  # how kaggle-environments gives its player the replay


def script_safe(page: str) -> str:
    """The player ``page`` with the replay's JSON unable to end its script: the data is read back as JSON (so
    a ``</script>`` inside a string cannot cut it short) and written again with ``<``, ``>`` and ``&`` as JSON
    escapes (``\\u003c``...), which read as the same data."""
    at = page.find(PLAYER_DATA)
    if at < 0:
        raise UserError("the kaggle-environments visualizer does not embed the replay as this page expects: "
                        "install kaggle-environments 1.33.2")
    start = at + len(PLAYER_DATA)
    data, end = json.JSONDecoder().raw_decode(page, start)
    text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return page[:start] + text + page[end:]


def visualizer(replay: Mapping[str, object]) -> str:
    """kaggle-environments' HTML player for ``replay``, paused on the last step, working offline."""
    kaggle_env.load()
    from kaggle_environments import make

    try:
        env = make("connectx", configuration=replay.get("configuration") or {}, steps=replay["steps"],
                   info=replay.get("info") or {})
        page = env.render(mode="html", playing=False)
    except Exception as exc:  # the environment's own validation: a replay it cannot show
        raise UserError(f"kaggle-environments cannot render this replay: {type(exc).__name__}: {exc}") from None
    return offline(text_names(script_safe(str(page))))


def value_text(wdl: int | None, score: int | None) -> str:
    """A move's value for the mover as text: ``win``, ``draw`` or ``loss`` (``?`` unknown) and Pons' score."""
    name = wdl_name(wdl) or "?"
    return name if score is None else f"{name} {score:+d}"


STYLE = """
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;background:#111;color:#eee}
header{padding:10px 16px;border-bottom:1px solid #333}
header h1{font-size:18px;margin:0 0 4px}
header p{margin:2px 0;font-size:14px;color:#bbb}
main{display:flex;gap:16px;padding:12px 16px;align-items:flex-start}
iframe{width:600px;height:580px;border:0;flex:none;background:#000}
#review{flex:1;min-width:380px;max-height:580px;overflow:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:3px 6px;text-align:left;border-bottom:1px solid #2a2a2a;white-space:nowrap}
th{position:sticky;top:0;background:#1b1b1b}
tr.move{cursor:pointer}
tr.move:hover{background:#222}
tr.current{background:#123a5a !important}
td.tag{white-space:normal;min-width:90px}
tr.blunder td.tag{color:#ff6b6b;font-weight:600}
tr.slower-win td.tag{color:#f0b64a}
tr.first-losing td{font-weight:700}
tr.opening td{color:#888}
button.step{all:unset;cursor:pointer;color:#7cc4ff;text-decoration:underline}
a{color:#7cc4ff}
"""

SCRIPT = """
(function(){
var frame=document.getElementById("viz");
function show(step){frame.contentWindow.postMessage({step:step},"*");mark(step);}
function mark(step){document.querySelectorAll("tr.move").forEach(function(r){
  r.classList.toggle("current",+r.dataset.step===step);});}
document.querySelectorAll("tr.move").forEach(function(r){
  r.addEventListener("click",function(){show(+r.dataset.step);});});
setInterval(function(){try{var s=frame.contentDocument.querySelector("input[type=range]");
  if(s){var v=+s.value;if(document.body.dataset.step!==String(v)){document.body.dataset.step=v;mark(v);}}}
  catch(e){}},200);
})();
"""


def move_rows(review: Review) -> str:
    """The move list's table rows: step 0 (the empty board), then one row per move."""
    rows = ['<tr class="move" data-step="0"><td>0</td><td colspan="6"><button class="step">start</button></td></tr>']
    names = review.game.names
    for m in review.moves:
        classes = ["move"] + ([m.tag] if m.tag else []) + (["first-losing"] if m.first_losing else []) \
            + (["opening"] if m.opening else [])
        tag = "opening" if m.opening else (m.tag or "")
        if m.first_losing:
            tag = (tag + ", " if tag else "") + "first losing move"
        best = ",".join(str(c) for c in m.best) or "?"
        rows.append(
            f'<tr class="{" ".join(classes)}" data-step="{m.ply}" data-ply="{m.ply}">'
            f'<td><button class="step">{m.ply}</button></td><td title="{html.escape(names[m.mark - 1])}">{m.mark}</td>'
            f"<td>{m.column}</td><td>{value_text(m.before, m.score_before)}</td>"
            f"<td>{value_text(m.after, m.score_after)}</td>"
            f'<td>{best}</td><td class="tag">{html.escape(tag)}</td></tr>')
    return "\n".join(rows)


def header_lines(review: Review) -> list[str]:
    """The page's summary lines: how the game ended, each side's first losing move."""
    g = review.game
    lines = [g.describe(), f"player 1 (moves first): {g.names[0]}; player 2: {g.names[1]}"]
    for mark in (1, 2):
        losing = review.losing_note(mark)
        if losing is not None:
            best = ",".join(str(c) for c in losing.best) or "?"
            lines.append(f"{g.names[mark - 1]}'s first losing move: ply {losing.ply}, column {losing.column} "
                         f"(best {best})")
    unlabelled = review.unlabelled()
    lines.append(f"values by the opening book and the solver ({review.engine}, {review.time_limit:g} s a position)"
                 + (f"; {count(unlabelled, 'move')} unlabelled (?)" if unlabelled else ""))
    return lines


def game_page(review: Review, player: str, title: str, back: str | None = None) -> str:
    """One self-contained page: the visualizer ``player`` and the review's move list beside it."""
    lines = "".join(f"<p>{html.escape(line)}</p>" for line in header_lines(review))
    link = f'<p><a href="{html.escape(back)}">all games</a></p>' if back else ""
    script = f"<script>{SCRIPT}</script>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy(script, player)}">
<title>{html.escape(title)}</title><style>{STYLE}</style></head>
<body><header><h1>{html.escape(title)}</h1>{lines}{link}</header>
<main><iframe id="viz" title="ConnectX replay" srcdoc="{html.escape(player, quote=True)}"></iframe>
<div id="review"><table><thead><tr><th>ply</th><th>player</th><th>column</th><th>before</th><th>after</th>
<th>best</th><th>mark</th></tr></thead><tbody>
{move_rows(review)}
</tbody></table>
<p style="font-size:12px;color:#999">Values are the mover's: win, draw or loss with Pons' exact score where
known. Columns count from 0, as in Kaggle's actions. Click a move to show the board after it.</p></div></main>
{script}</body></html>
"""


def index_page(entries: list[tuple[str, Review]], summary_text: str) -> str:
    """The index of ``review --html``: one line per game (its page, players, result, first losing moves)."""
    rows = []
    for href, r in entries:
        losing = "; ".join(f"{r.game.names[k - 1]}: ply {v}" for k, v in r.first_losing.items() if v) or "-"
        blunders = sum(1 for m in r.moves if m.tag == "blunder")
        rows.append(f'<tr><td><a href="{html.escape(href)}">{html.escape(r.game.source)}</a></td>'
                    f"<td>{html.escape(r.game.describe())}</td><td>{blunders}</td><td>{html.escape(losing)}</td></tr>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy()}">
<title>Reviewed games</title><style>{STYLE}</style></head>
<body><header><h1>Reviewed games</h1><pre>{html.escape(summary_text)}</pre></header>
<main><table><thead><tr><th>game</th><th>result</th><th>blunders</th><th>first losing move</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></main></body></html>
"""
