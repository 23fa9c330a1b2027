"""A small board player of our own: one game as a page of a few kilobytes, what a notebook result shows.

kaggle-environments' player is 0.6 MB of script, and a notebook's output frames cannot share one (a
sandboxed frame has an origin of its own), so a notebook of ten games would hold it ten times.  This page
draws the board with a few dozen lines of script instead: the moves, the players' names and a line per ply
(the review's verdict, where there is one) travel as a JSON data block, the script reads it and writes
everything as text (``textContent``: a name that is markup shows as markup, never runs), and the page's
policy allows that one script and that one style sheet by hash, nothing else.  ``cxforge replay`` and
``.replay(i).save(path)`` still write kaggle-environments' own player (``replay_page.py``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence

from connectx_forge.leaderboard.review.annotate import Review
from connectx_forge.leaderboard.review.games import Game
from connectx_forge.leaderboard.review.replay_page import value_text

CELL = 36  # pixels a cell, border included

STYLE = """body{margin:0;padding:8px;font:13px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;
background:#fff;color:#222}
#names span{font-weight:600;display:inline-block;max-width:150px;overflow:hidden;text-overflow:ellipsis;
white-space:nowrap;vertical-align:bottom}.disc{display:inline-block;width:11px;height:11px;border-radius:50%;
margin:0 4px 0 0;vertical-align:-1px}
#board{display:grid;gap:4px;padding:6px;background:#2456a6;border-radius:6px;width:max-content;margin:6px 0}
#board div{width:30px;height:30px;border-radius:50%;background:#fff}
.p1{background:#f2c12e !important}.p2{background:#d9363e !important}
#board .last{box-shadow:0 0 0 3px #7ee787}
#controls{display:flex;gap:4px;align-items:center}
#controls button{min-width:30px;height:26px;cursor:pointer}#controls input{flex:1}
#note{min-height:2.6em;margin:4px 0 0}"""

SCRIPT = """(function(){
var g=JSON.parse(document.getElementById("game").textContent),R=g.rows,C=g.columns,n=g.moves.length;
var $=function(id){return document.getElementById(id);},board=$("board"),range=$("step"),cells=[],timer=null;
board.style.gridTemplateColumns="repeat("+C+",30px)";
for(var i=0;i<R*C;i++){cells.push(board.appendChild(document.createElement("div")));}
[1,2].forEach(function(p){$("p"+p).textContent=$("p"+p).title=g.names[p-1];});range.max=n;
function show(s){s=Math.max(0,Math.min(n,s));range.value=s;var h=[],grid=[],last=-1,k,c,r;
  for(k=0;k<s;k++){c=g.moves[k];h[c]=(h[c]||0)+1;r=R-h[c];grid[r*C+c]=k%2+1;last=r*C+c;}
  cells.forEach(function(d,i){d.className=(grid[i]?"p"+grid[i]:"")+(i===last?" last":"");});
  $("counter").textContent=s+" / "+n;$("note").textContent=g.notes[s]||"";}
function stop(){if(timer){clearInterval(timer);timer=null;$("play").textContent="\\u25b6";}}
function step(d){stop();show(+range.value+d);}
$("first").addEventListener("click",function(){stop();show(0);});
$("prev").addEventListener("click",function(){step(-1);});
$("next").addEventListener("click",function(){step(1);});
$("last").addEventListener("click",function(){stop();show(n);});
range.addEventListener("input",function(){stop();show(+range.value);});
$("play").addEventListener("click",function(){if(timer){stop();return;}if(+range.value>=n)show(0);
  $("play").textContent="||";timer=setInterval(function(){if(+range.value>=n){stop();}
  else{show(+range.value+1);}},600);});
show(n);})();"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src %(script_hash)s; \
style-src %(style_hash)s; base-uri 'none'; form-action 'none'">
<title>%(title)s</title><style>%(style)s</style></head><body>
<div id="names"><i class="disc p1"></i><span id="p1"></span> (first) vs \
<i class="disc p2"></i><span id="p2"></span></div>
<div id="board"></div>
<div id="controls"><button id="first" title="start">\u00ab</button><button id="prev" title="back">\u2039</button>\
<button id="play" title="play">\u25b6</button><button id="next" title="next">\u203a</button>\
<button id="last" title="end">\u00bb</button><input id="step" type="range" min="0" value="0">\
<span id="counter"></span></div>
<p id="note"></p>
<script type="application/json" id="game">%(data)s</script>
<script>%(script)s</script>
</body></html>
"""


def digest(text: str) -> str:
    """``text``'s CSP source: ``'sha256-...'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def move_notes(game: Game, review: Review | None = None) -> list[str]:
    """A line per ply, 0 (the empty board) to the last: which side played which column (from 0, as Kaggle's
    actions; the names are above the board), and the review's verdict on it where there is one; the last line
    says how the game ended."""
    notes = ["the empty board"]
    verdicts = {m.ply: m for m in review.moves} if review is not None else {}
    for ply, column in enumerate(game.moves, 1):
        line = f"ply {ply}: {'first' if ply % 2 else 'second'} played column {column}"
        m = verdicts.get(ply)
        if m is not None:
            tags = ["opening"] if m.opening else ([m.tag] if m.tag else [])
            tags += ["first losing move"] if m.first_losing else []
            best = ",".join(str(c) for c in m.best) or "?"
            line += (f" ({value_text(m.before, m.score_before)} before, {value_text(m.after, m.score_after)} "
                     f"after; best {best}{'; ' + ', '.join(tags) if tags else ''})")
        notes.append(line)
    notes[-1] += f". {game.describe()}"
    return notes


def data_block(value: object) -> str:
    """``value`` as JSON that cannot end the ``<script>`` data block it sits in: ``<``, ``>`` and ``&`` as JSON
    escapes, which read as the same data."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def board_page(game: Game, review: Review | None = None) -> str:
    """The game as a small self-contained page: the board, step by step, and a line a ply."""
    rows, columns, _ = game.size
    data = {"rows": rows, "columns": columns, "names": list(game.names), "moves": list(game.moves),
            "notes": move_notes(game, review)}
    return PAGE % {"script_hash": digest(SCRIPT), "style_hash": digest(STYLE), "style": STYLE, "script": SCRIPT,
                   "title": html.escape(f"{game.names[0]} vs {game.names[1]}"), "data": data_block(data)}


def frame_size(size: Sequence[int]) -> tuple[int, int]:
    """The width and height, in pixels, a frame needs to show a board of ``size`` (rows, columns, ...)."""
    rows, columns = size[0], size[1]
    return max(columns * CELL + 40, 400), rows * CELL + 150
