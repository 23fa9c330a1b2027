"""The notebook API's functions and result objects, behind ``import connectx_forge as cf`` (connectx_forge's
``__init__`` imports them on first use): ``functions`` and ``league`` call the commands' own code, ``results`` and
``league_results`` hold what they return, ``html`` draws it in a notebook;
``user_errors`` makes each function raise ``UserError`` for the game core's one-line errors too."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from agents.board import BoardError
from agents.registry import UnknownAgent
from connectx_forge.errors import UserError

P = ParamSpec("P")
T = TypeVar("T")


def user_errors(function: Callable[P, T]) -> Callable[P, T]:
    """``function`` raising ``UserError`` for every bad input: the one-line errors of the game core (a bad board
    size, an unknown agent name), which the command line prints as its own, become ``UserError`` too."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return function(*args, **kwargs)
        except (BoardError, UnknownAgent) as exc:
            raise UserError(str(exc)) from None

    return call
