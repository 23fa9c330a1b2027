"""A training run's checkpoint as a file that holds data and no code: numpy arrays and JSON, in a zip.

``cxforge train`` writes ``runs/<name>/checkpoint.pt`` after every epoch, and ``--resume`` and ``cxforge bench
net`` read it back.  A checkpoint may come from anyone (a teammate's run folder, a download), so it is never
unpickled: ``torch.save``'s format is a pickle, which runs code when it is loaded.  Here a checkpoint is a zip
of ``state.json`` and one ``t<i>.npy`` per tensor, stored uncompressed:

* ``state.json``: the state as JSON, each value a number, a string, true, false, null or a list, or an object of
  one key: ``{"dict": [[key, value], ...]}`` (keys of any of these kinds: an optimizer's state is keyed by
  ints), ``{"tuple": [...]}`` (``random.getstate()`` must be a tuple), ``{"tensor": i}`` (member ``t<i>.npy``),
  ``{"float": "nan"}`` (also ``"inf"``, ``"-inf"``: JSON has none);
* ``t<i>.npy``: a tensor as a numpy array of numbers (bool, int, uint, float), never of objects.

Reading is bounded: the file is a regular file of at most ``MAX_BYTES``, its members at most ``MAX_MEMBERS``
and ``MAX_BYTES`` in all once unpacked (a zip bomb is refused before it is unpacked), ``state.json`` is parsed by
``boundedread`` (nesting, numbers), and an array's header must describe exactly the bytes that follow it.  Every
refusal is one line naming the file.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from connectx_forge.boundedread import parse_json, read_bytes
from connectx_forge.errors import UserError
from connectx_forge.safe_write import write_bytes
from connectx_forge.train import arrays

MAX_BYTES = 1 << 30  # a checkpoint's file, and its members unpacked (a 384,256,128 MLP's run: about 2 MiB)
MAX_MEMBERS = 10_000  # tensors in a checkpoint (a model's and its optimizer's: a few dozen)
STATE = "state.json"
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def save(path: Path, state: Mapping[str, object]) -> None:
    """Write ``state`` (dicts, lists, tuples, numbers, strings, None and tensors) to ``path``, atomically."""
    arrays: list[np.ndarray] = []
    tree = _encode(state, arrays)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(STATE, json.dumps(tree, allow_nan=False))
        for i, array in enumerate(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, array, allow_pickle=False)
            zf.writestr(f"t{i}.npy", member.getvalue())
    write_bytes(Path(path), buf.getvalue(), replace=True)


def load(path: Path) -> dict[str, Any]:
    """The state ``save`` wrote to ``path``, tensors on the CPU; ``UserError`` naming the file for anything else
    (a ``torch.save`` pickle included: it is refused, never loaded)."""
    name = str(path)
    data = read_bytes(path, MAX_BYTES, name)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = _members(zf, name)
            if STATE not in members:
                raise _not_ours(name, f"no {STATE}")
            tree = parse_json(_member(zf, STATE, name).decode("utf-8"), f"{name}: {STATE}")
            state = _decode(tree, lambda i: _tensor(zf, members, i, name), name)
    except (zipfile.BadZipFile, UnicodeDecodeError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise _not_ours(name, type(exc).__name__) from None
    if not isinstance(state, dict):
        raise _not_ours(name, "its state is not a dict")
    return state


def _not_ours(name: str, why: str) -> UserError:
    return UserError(f"{name}: not a checkpoint cxforge train wrote ({why}); it reads only its own format, "
                     "never a pickle")


def _members(zf: zipfile.ZipFile, name: str) -> set[str]:
    """The members' names, once each, refused when there are too many or they unpack to too many bytes
    (``arrays.members``)."""
    try:
        return arrays.members(zf, name, "a checkpoint", MAX_MEMBERS, MAX_BYTES)
    except ValueError as exc:
        raise _not_ours(name, str(exc)) from None


def _member(zf: zipfile.ZipFile, member: str, name: str) -> bytes:
    """A member's bytes, at most its declared size (zipfile stops there) and ``MAX_BYTES``."""
    return arrays.member(zf, member, name, MAX_BYTES)


def _tensor(zf: zipfile.ZipFile, members: set[str], index: object, name: str) -> torch.Tensor:
    """Tensor ``index`` (member ``t<index>.npy``): its header must name a numeric dtype and exactly its bytes
    (``arrays.array``)."""
    member = f"t{index}.npy"
    if not isinstance(index, int) or isinstance(index, bool) or member not in members:
        raise _not_ours(name, f"a tensor reference {str(index)[:20]!r} with no member")
    try:
        array = arrays.array(_member(zf, member, name), member)
    except ValueError as exc:
        raise _not_ours(name, str(exc)) from None
    try:
        return torch.from_numpy(array)
    except TypeError as exc:  # a dtype torch has no tensor of
        raise _not_ours(name, f"{member}: {' '.join(str(exc).split())[:80]}") from None


def _encode(value: object, arrays: list[np.ndarray]) -> object:
    """``value`` as the JSON tree of ``state.json``, its tensors appended to ``arrays``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, torch.Tensor):
        arrays.append(value.detach().cpu().numpy())
        return {"tensor": len(arrays) - 1}
    if isinstance(value, list):
        return [_encode(v, arrays) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, arrays) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encode(k, arrays), _encode(v, arrays)] for k, v in value.items()]}
    raise TypeError(f"a checkpoint holds no {type(value).__name__}")


def _decode(tree: object, tensor: Callable[[object], torch.Tensor], name: str) -> object:
    """The value ``_encode`` made ``tree`` of (``tensor(i)``: tensor ``i``); ``UserError`` for any other tree.
    Recursion is bounded: ``parse_json`` refused a tree nested deeper than ``boundedread.MAX_DEPTH``."""
    if tree is None or isinstance(tree, bool | int | float | str):
        return tree
    if isinstance(tree, list):
        return [_decode(v, tensor, name) for v in tree]
    if isinstance(tree, dict) and len(tree) == 1:
        (tag, inner), = tree.items()
        if tag == "tensor":
            return tensor(inner)
        if tag == "float" and isinstance(inner, str) and inner in _FLOATS:
            return _FLOATS[inner]
        if tag == "tuple" and isinstance(inner, list):
            return tuple(_decode(v, tensor, name) for v in inner)
        if tag == "dict" and isinstance(inner, list) and all(isinstance(p, list) and len(p) == 2 for p in inner):
            return {_key(_decode(k, tensor, name), name): _decode(v, tensor, name) for k, v in inner}
    raise _not_ours(name, f"an unknown value in {STATE}")


def _key(key: object, name: str) -> int | float | str | None:
    """A dict key: a number, a string or None (a model's and an optimizer's state are keyed so)."""
    if key is not None and not isinstance(key, int | float | str):
        raise _not_ours(name, f"a dict key of type {type(key).__name__}")
    return key
