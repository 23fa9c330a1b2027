"""connectx-forge from Python and notebooks: ``import connectx_forge as cf``.

::

    import connectx_forge as cf

    m = cf.match("lookahead", "kaggle:negamax", games=20)   # players as the CLI takes them, or agent(obs, config)
    m.score, m.wins, m.win_interval                        # A's side
    m.games[0]                                             # a game, as a line of ``cxforge match --save``
    m.to_pandas()                                          # where pandas is installed
    cf.check("random"), cf.tournament("a", "b", "c", openings=4), cf.sprt("new", "base"), cf.review(m)
    cf.compare(new_match, base_match), cf.models(m)        # paired comparison; which opponent model fits
    cf.mistakes("solver", sample=50)                       # mistake rates on the held-out sets

Each function is the command of the same name (``cxforge match``, ``check``, ``tournament``, ``sprt``,
``review``; ``ladder``, ``ladder_fit``, ``ghosts``, ``regress_add`` and ``regress_list`` are ``cxforge ladder``,
``ladder --fit``, ``ghosts``, ``regress add`` and ``regress list``; ``compare`` and ``models`` read saved games,
``mistakes`` runs ``cxforge mistakes --agents``)
and returns a result object
(``connectx_forge.api.results``, ``league_results``, ``analysis_results``): ``.games`` (the records), ``.to_pandas()``,
``.text`` (what the command prints), and an HTML table in a notebook.  Nothing is written into the working folder
unless asked (``save=``, ``store=``, ``out=``, ``html=``, ``write=``; ``regress_add`` writes into the project it
is given).  docs/notebook.md.

This module imports nothing until a name is used: ``import connectx_forge`` stays cheap (it runs before every
``connectx_forge.runtime`` import an agent makes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from connectx_forge.api.analysis import compare, mistakes, models
    from connectx_forge.api.analysis_results import CompareResult, MistakesResult, ModelsResult
    from connectx_forge.api.functions import check, match, review, sprt, tournament
    from connectx_forge.api.league import ghosts, ladder, ladder_fit, regress_add, regress_list
    from connectx_forge.api.league_results import GhostsResult, LadderFitResult, LadderResult, RegressResult
    from connectx_forge.api.results import (
        CheckResult,
        MatchResult,
        Replay,
        ReviewResult,
        SprtResult,
        TournamentResult,
    )
    from connectx_forge.arena.ladder.simulate import Ladder
    from connectx_forge.arena.match_run import Match
    from connectx_forge.arena.sprt_run import Sprt
    from connectx_forge.arena.tournament import Tournament
    from connectx_forge.errors import UserError
    from connectx_forge.play.settings import GameSettings
    from connectx_forge.solver.mistakes import MistakeRun

_FUNCTIONS = ("match", "check", "tournament", "sprt", "review")
_RESULTS = ("MatchResult", "CheckResult", "TournamentResult", "SprtResult", "ReviewResult", "Replay")
_LEAGUE = ("ladder", "ladder_fit", "ghosts", "regress_add", "regress_list")
_LEAGUE_RESULTS = ("LadderResult", "LadderFitResult", "GhostsResult", "RegressResult")
_ANALYSIS = ("compare", "models", "mistakes")
_ANALYSIS_RESULTS = ("CompareResult", "ModelsResult", "MistakesResult")
_CALLS = {"connectx_forge.api.functions": _FUNCTIONS, "connectx_forge.api.league": _LEAGUE,
          "connectx_forge.api.analysis": _ANALYSIS}  # the functions, by the module that holds them
_SETTINGS = {"GameSettings": "connectx_forge.play.settings", "Match": "connectx_forge.arena.match_run",
             "Tournament": "connectx_forge.arena.tournament", "Sprt": "connectx_forge.arena.sprt_run",
             "Ladder": "connectx_forge.arena.ladder.simulate",
             "MistakeRun": "connectx_forge.solver.mistakes"}  # what settings= takes
__all__ = ["match", "check", "tournament", "sprt", "review", "MatchResult", "CheckResult", "TournamentResult",
           "SprtResult", "ReviewResult", "Replay", "UserError", "ladder", "ladder_fit", "ghosts", "regress_add",
           "regress_list", "LadderResult", "LadderFitResult", "GhostsResult", "RegressResult", "GameSettings", "Match",
           "Tournament", "Sprt", "Ladder", "compare", "models", "mistakes", "CompareResult", "ModelsResult",
           "MistakesResult", "MistakeRun"]


def __getattr__(name: str) -> object:
    """The API's names, imported on first use (each function once, raising only ``UserError`` for bad input)."""
    import importlib

    module = next((m for m, names in _CALLS.items() if name in names), None)
    if module is not None:
        api = importlib.import_module("connectx_forge.api")
        function = globals()[name] = api.user_errors(getattr(importlib.import_module(module), name))
        return function
    if name in _RESULTS:
        return getattr(importlib.import_module("connectx_forge.api.results"), name)
    if name in _LEAGUE_RESULTS:
        return getattr(importlib.import_module("connectx_forge.api.league_results"), name)
    if name in _ANALYSIS_RESULTS:
        return getattr(importlib.import_module("connectx_forge.api.analysis_results"), name)
    if name in _SETTINGS:
        return getattr(importlib.import_module(_SETTINGS[name]), name)
    if name == "UserError":
        return importlib.import_module("connectx_forge.errors").UserError
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("connectx-forge")
        except PackageNotFoundError:
            return "unknown"
    raise AttributeError(f"module 'connectx_forge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
