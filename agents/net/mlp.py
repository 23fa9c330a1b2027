"""A small multilayer perceptron evaluated with numpy, and its weight file format.

A weight file is a numpy ``.npz`` archive:

* ``w0, b0, w1, b1, ...``: layer ``i`` computes ``x @ w_i + b_i`` (``w_i`` has
  shape ``(inputs, outputs)``), with ReLU between layers and none after the last;
* ``meta``: a JSON string (as a uint8 array) with ``kind`` ("policy_value": the last
  layer gives ``columns`` move logits then one value, squashed by tanh; "q": the
  last layer gives ``columns`` action values), ``rows``, ``columns``,
  ``features`` (the encoder version) and ``dtype``.

Weights are stored as float16 (or int8 with a per-column scale, ``s_i``) and
computed in float32.  Training (tools/) writes these files from torch models.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

MAX_META_BRACKETS = 64  # a weight file's meta is a flat object (a list or two inside): a bound on its nesting


@dataclass(frozen=True)
class MLP:
    """The layers of a network and what its outputs mean."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    meta: dict[str, object]  # the weight file's JSON object: read its numbers with ``meta_int``

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Raw outputs ``(n, outputs)`` for a batch ``x`` of shape ``(n, inputs)`` (or one vector: n = 1)."""
        h = np.atleast_2d(np.asarray(x, dtype=np.float32))
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def policy_value(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Move logits ``(n, columns)`` and values in ``[-1, 1]`` ``(n,)``."""
        out = self.forward(x)
        cols = meta_int(self.meta, "columns")
        return out[:, :cols], np.tanh(out[:, cols])


def masked_argmax(scores: np.ndarray, legal: list[int]) -> int:
    """The legal column with the highest score (a plain int); ties go to the lowest column."""
    best = max(legal, key=lambda c: (float(scores[c]), -c))
    return int(best)


def load_mlp(data: bytes) -> MLP:
    """An ``MLP`` from the bytes of a weight file."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        text = bytes(z["meta"]).decode("utf-8")
        if text.count("[") + text.count("{") > MAX_META_BRACKETS:  # json recurses once per level
            raise ValueError(f"weight file meta holds more than {MAX_META_BRACKETS} brackets")
        meta = json.loads(text)
        if not isinstance(meta, dict):
            raise ValueError("weight file meta is not a JSON object")
        weights, biases = [], []
        i = 0
        while f"w{i}" in z.files:
            w = z[f"w{i}"].astype(np.float32)
            if f"s{i}" in z.files:  # int8 with per-output-column scale
                w = w * z[f"s{i}"].astype(np.float32)
            weights.append(w)
            biases.append(z[f"b{i}"].astype(np.float32))
            i += 1
    if not weights:
        raise ValueError("weight file holds no layers")
    return MLP(tuple(weights), tuple(biases), meta)


def meta_int(meta: dict[str, object], key: str, default: int | None = None) -> int:
    """``int(meta[key])`` (``default`` where the key is missing and a default is given; else ``KeyError``), for a
    number or a numeric string, as ``int`` reads them; ``TypeError`` for another JSON value, as ``int`` raises."""
    value = meta[key] if default is None else meta.get(key, default)
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"int() argument must be a string or a real number, not '{type(value).__name__}'")
    return int(value)


def checked(mlp: MLP, name: str, version: int) -> MLP:
    """``mlp`` if it was trained on feature encoding ``version``; else a clear error."""
    if meta_int(mlp.meta, "features", -1) != version:
        raise ValueError(f"{name} was trained on features v{mlp.meta.get('features')}, "
                         f"the encoder is v{version}: retrain or re-export it")
    return mlp


def save_mlp(weights: list[np.ndarray], biases: list[np.ndarray], meta: Mapping[str, object],
             dtype: str = "float16") -> bytes:
    """The bytes of a weight file (``dtype``: "float16", "float32" or "int8")."""
    arrays: dict[str, np.ndarray] = {}  # savez_compressed's keyword arrays
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        w = np.asarray(w, dtype=np.float32)
        if dtype == "int8":
            scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0
            arrays[f"w{i}"] = np.round(w / scale).astype(np.int8)
            arrays[f"s{i}"] = scale.astype(np.float32)
        else:
            arrays[f"w{i}"] = w.astype(dtype)
        arrays[f"b{i}"] = np.asarray(b, dtype=np.float32)
    meta = dict(meta, dtype=dtype)
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, allow_pickle=True, **arrays)  # the default, named: then no array can be taken for it
    return buf.getvalue()
