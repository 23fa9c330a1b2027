"""A run's settings read back from a store (``--resume`` alone), checked before anything uses them.

The store is a file anyone may have written, so its settings are checked as
strictly as the flags that made them, each failure one line naming the store,
the run and the setting:

* the keys are exactly the run's fields (``Tournament``, ``Sprt``, ``Match``, ``Ladder``): none unknown, none
  missing;
* the run built from them (its ``from_json``, whose ``__post_init__`` checks the ranges the flags check)
  writes them back unchanged (``to_json``): nothing was coerced (a string taken for a list of players);
* every field of the run, and of the settings inside it (``GameSettings``, ``Limits``, ``RatingSettings``),
  is of its annotated type: an ``int`` (not a bool) within 64 bits, a finite number, a string, a tuple
  of those;
* its board is within ``boundedread.board_size``'s bounds, as a games file's is.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypeVar

from connectx_forge import boundedread
from connectx_forge.errors import UserError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

LIMIT = 1 << 63  # the largest magnitude a stored integer may have (a seed, a count)


class RunSettings(Protocol):
    """What a run kind's settings class offers (``Run``'s JSON half): a dataclass, written and read as JSON."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]

    def to_json(self) -> Mapping[str, object]:
        ...

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Self:
        ...


R = TypeVar("R", bound=RunSettings)


def checked(cls: type[R], data: Mapping[str, object], where: str) -> R:
    """The run of kind ``cls`` that the stored ``data`` describes; ``UserError`` naming ``where`` for data
    ``cls.to_json`` does not write."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    missing = sorted(names - set(data))
    if unknown or missing:
        what = f"unknown setting {unknown[0]!r}" if unknown else f"no setting {missing[0]!r}"
        raise UserError(f"{where}: {what}; not settings cxforge writes")
    try:
        run = cls.from_json(dict(data))
        again = run.to_json()
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        raise UserError(f"{where}: not settings cxforge writes ({boundedread.one_line(exc)})") from None
    if again != data:
        changed = next(k for k in sorted(data) if again.get(k) != data[k])
        raise UserError(f"{where}: its setting {changed!r} is not what cxforge writes ({_short(data[changed])})")
    why = mistyped(run)
    if why is not None:
        raise UserError(f"{where}: {why}")
    game = getattr(run, "game", None)
    if game is not None:  # every kind plays under a GameSettings: its board as bounded as a games file's
        rows, columns, inarow = game.size
        boundedread.board_size(rows, columns, inarow, name=f"{where}, its board")
    return run


def mistyped(obj: DataclassInstance) -> str | None:
    """What field of the dataclass ``obj`` (or of one inside it) is not of its annotated type, or None."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if not _fits(value, hints[f.name]):
            return f"its setting {f.name!r} is {_short(value)}, not {_name(hints[f.name])}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            inner = mistyped(value)
            if inner is not None:
                return inner
    return None


def _fits(value: object, hint: object) -> bool:
    """Whether ``value`` is of the type ``hint`` (the kinds a run's settings use)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(v, args[0]) for v in value)
        return len(value) == len(args) and all(_fits(v, a) for v, a in zip(value, args, strict=True))
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if hint is bool:
        return type(value) is bool
    if hint is int:
        return type(value) is int and -LIMIT < value < LIMIT
    if hint is float:
        return (type(value) is int or type(value) is float) and -LIMIT < value < LIMIT and math.isfinite(value)
    if hint is str:
        return type(value) is str
    return isinstance(hint, type) and isinstance(value, hint)


def _name(hint: object) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _short(value: object) -> str:
    """``value`` as a short line (a store's strings may be long, or hold line breaks)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
