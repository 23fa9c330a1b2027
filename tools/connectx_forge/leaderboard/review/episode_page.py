"""An offline HTML replay of a game other than ConnectX: kaggle-environments' own renderer for the game.

The page is ``make(NAME, steps=...).render(mode="html")`` of the replay's game (``name``), made as safe as
ConnectX's (``replay_page``): the replay's data is written back with ``<``, ``>`` and ``&`` escaped
(``script_safe``), every stylesheet and font the renderer asks the web for is dropped, and a
Content-Security-Policy allows the page's own scripts by hash and no request at all.  What the replay says is
anyone's: it is checked as data (a game the toolkit knows, two seats, steps within the game's own count) before
the renderer sees it.  There is no review: the solver is ConnectX's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from connectx_forge import kaggle_env
from connectx_forge.errors import UserError
from connectx_forge.games import catalog
from connectx_forge.leaderboard.review.replay_page import policy, script_safe

WEB_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']https?://[^>]*>", re.I)  # fonts and stylesheets from the web


def replay_game(replay: Mapping[str, object], source: str) -> str | None:
    """The game a Kaggle replay is of, when it is not ConnectX (None for ConnectX's: ``replay_page``'s);
    ``UserError`` for a game the toolkit does not play or a replay that is not two seats' steps."""
    name = replay.get("name")
    if name in (None, catalog.CONNECTX):
        return None
    if not isinstance(name, str) or name not in catalog.known():
        raise UserError(f"{source}: a replay of {str(name)[:40]!r}, which cxforge does not play (cxforge games)")
    steps = replay.get("steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(s, list) and len(s) == 2 for s in steps):
        raise UserError(f"{source}: not a two-player {name} replay (\"steps\" is not a list of two seats' states)")
    return name


def episode_page(name: str, replay: Mapping[str, object], source: str) -> str:
    """The offline page of a replay of game ``name`` (``replay_game``'s)."""
    catalog.get(name)  # one line when its packages are missing here
    kaggle_env.load()
    from kaggle_environments import make  # loaded quietly by kaggle_env.load above
    from kaggle_environments.utils import structify

    config = replay.get("configuration")
    configuration = config if isinstance(config, dict) else {}
    info = replay.get("info") if isinstance(replay.get("info"), dict) else {}
    try:
        try:
            env = make(name, configuration=configuration, steps=replay["steps"], info=info)
        except Exception:  # noqa: BLE001 - its schema refuses what its own episodes hold (rps' summed rewards)
            env = make(name, configuration=configuration, info=info)
            env.steps = structify(replay["steps"])  # shown, never run: the page is made script-safe below
        page = str(env.render(mode="html", playing=False))
    except Exception as exc:  # the environment's own validation: a replay it cannot show
        raise UserError(f"{source}: kaggle-environments cannot render this {name} replay: "
                        f"{type(exc).__name__}: {str(exc)[:200]}") from None
    page = WEB_LINK.sub("", script_safe(page))
    at = page.find("<head>")
    if at < 0:
        raise UserError(f"the {name} renderer's page has no <head>: install kaggle-environments 1.33.2")
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(page)}">\n'
    return page[:at + 6] + "\n" + meta + page[at + 6:]
