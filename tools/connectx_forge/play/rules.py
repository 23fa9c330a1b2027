"""Kaggle's ConnectX rules, as kaggle_environments applies them: the constants and the judging predicates.

Both the game loop (``game.py``) and the submission checker (``tools/connectx_forge/submit``)
play by these rules, so they live apart from any loop:

* agents get ``obs`` and ``config`` (Kaggle ``Struct``s) and take one or two of
  them, as their code object's argument count says (``arg_count``);
* a returned ``None`` is the action schema's default, column 0 (``NONE_ACTION``);
* an action is valid iff it is an ``int`` (not a ``bool``, not a numpy integer,
  not a float) naming a column whose top cell is empty (``is_valid_action``);
* a move longer than ``actTimeout`` plus the player's remaining overage is a
  timeout; each move's excess over ``actTimeout`` is taken from the overage
  (``overage_after``, ``is_timeout``);
* an agent run in a host (``tools/connectx_forge/sandbox``) can also break by dying (``crash``),
  running out of memory (``memory``), garbling the channel (``protocol``) or
  failing to load (``load``): all ERROR on Kaggle;
* the player who breaks a rule (``RULE_BREAKS``) loses: Kaggle gives it the status
  in ``KAGGLE_STATUS`` and reward ``None``, and the other reward 0;
* a game's claimed end follows from its moves (``end_disagreement``): how a games file or a
  store, which anyone may write, is known to hold the result its moves played.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeGuard

from agents.board import Size, geometry, has_alignment

RULE_BREAKS = ("invalid", "error", "timeout", "crash", "memory", "protocol", "load")
# crash, memory, protocol and load only happen to an agent in a host (tools/connectx_forge/sandbox): on Kaggle they
# are ERRORs
HOST_BREAKS = ("crash", "memory", "protocol", "load")
KAGGLE_STATUS = {"invalid": "INVALID", "error": "ERROR", "timeout": "TIMEOUT", "crash": "ERROR", "memory": "ERROR",
                 "protocol": "ERROR", "load": "ERROR"}
ACT_TIMEOUT = 2  # Kaggle's config.actTimeout, seconds
OVERAGE = 60  # Kaggle's initial obs.remainingOverageTime, seconds
EPISODE_STEPS = 1000  # Kaggle's config.episodeSteps
NONE_ACTION = 0  # what a returned None becomes: the action schema's default


def kaggle_config(size: Size, act_timeout: float = ACT_TIMEOUT) -> dict[str, object]:
    """The ``config`` Kaggle passes to ConnectX agents for a board ``size``."""
    rows, columns, inarow = size
    return {"rows": rows, "columns": columns, "inarow": inarow, "episodeSteps": EPISODE_STEPS,
            "actTimeout": act_timeout, "runTimeout": 1200, "agentTimeout": 60, "timeout": act_timeout}


def kaggle_number(x: float) -> float:
    """``2.0`` as ``2``: Kaggle passes whole times as ints, which an agent may notice."""
    return int(x) if float(x).is_integer() else x


def arg_count(agent: Callable[..., object]) -> int:
    """How many of ``(obs, config)`` to pass, as Kaggle decides it (2 when it cannot tell)."""
    code = getattr(agent, "__code__", None)
    argc = getattr(code, "co_argcount", None)
    return 2 if argc is None else argc


def is_valid_action(action: object, columns: int, can_play: Callable[[int], bool]) -> TypeGuard[int]:
    """Kaggle's validity rule: a plain ``int`` naming a column on the board that ``can_play``."""
    return (isinstance(action, int) and not isinstance(action, bool)
            and 0 <= action < columns and can_play(int(action)))


def is_timeout(duration: float, act_timeout: float, overage_left: float) -> bool:
    """Whether a move of ``duration`` seconds breaks the time rule with ``overage_left`` in the bank."""
    return duration - act_timeout > overage_left


def overage_after(duration: float, act_timeout: float, overage_left: float) -> float:
    """The overage bank after a move: its excess over ``act_timeout`` (to the microsecond) is spent."""
    return overage_left - max(0.0, round(duration, 6) - act_timeout)


def end_disagreement(moves: Sequence[int], size: Size, outcome: object, winner: object,
                     culprit: object) -> str | None:
    """Why a game's claimed end (``outcome``, ``winner``, ``culprit``) does not follow from its ``moves`` under
    the rules, or None when it does: every move playable and none after a line; a ``win`` made by the last
    move's line, for its mover; a ``draw`` a full board (or Kaggle's last step) without a line; a rule break
    (``RULE_BREAKS``) before any line or full board, its culprit losing.  ``size`` is a board already bounded
    (``boundedread.board_size``); the loop is linear in the moves (one bitboard step each)."""
    geo = geometry(*size)
    current = mask = 0
    line = None  # the 0-based ply whose stone made a line
    for ply, col in enumerate(moves):
        if line is not None:
            return f"move {ply + 1} comes after move {line + 1} made a line of {geo.inarow}"
        if not (type(col) is int and 0 <= col < geo.columns) or mask & geo.top_masks[col]:
            return f"move {ply + 1} (column {col!r}) is not playable"
        drop = (mask + geo.bottom_masks[col]) & geo.column_masks[col]
        if has_alignment(current | drop, geo):
            line = ply
        current, mask = current ^ mask, mask | drop
    if outcome == "win":
        if line is None:
            return "it claims a win, but no move makes a line"
        if not _mark(winner) or winner != 1 + line % 2 or culprit is not None:
            return f"it claims mark {winner!r} won, but the line is mark {1 + line % 2}'s"
        return None
    if line is not None:
        return f"it claims {outcome!r}, but move {line + 1} makes a line of {geo.inarow}"
    if outcome == "draw":
        if winner is not None or culprit is not None:
            return f"it claims a draw with winner {winner!r} and culprit {culprit!r}"
        if mask != geo.full and len(moves) < EPISODE_STEPS - 1:
            return "it claims a draw, but the board is not full"
        return None
    if outcome in RULE_BREAKS:
        if not _mark(culprit) or winner != 3 - culprit:
            return f"it claims {outcome!r} by mark {culprit!r}, but says mark {winner!r} won"
        if mask == geo.full:
            return f"it claims {outcome!r} after the board was full"
        return None
    return f"its outcome {outcome!r} is none the rules know"


def _mark(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a player's mark: the int 1 or 2 (not a bool, not a float)."""
    return type(value) is int and value in (1, 2)
