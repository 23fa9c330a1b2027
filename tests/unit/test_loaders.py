"""No code from data: no module of the toolkit loads a file, or bytes, with a loader that can run code.

Every ``.py`` under agents/, build/ and tools/ is parsed with ``ast`` and each call is named through the module's
imports (``import pickle as p``, ``from numpy import load``).  Refused: ``pickle``/``_pickle`` ``load``,
``loads`` and ``Unpickler``; ``marshal.load(s)``; ``shelve``; ``cloudpickle``, ``dill``, ``joblib`` and
``jsonpickle`` (imported at all); ``yaml.load`` and its unsafe kin; ``pandas.read_pickle``; ``eval``, ``exec`` and
``ast.literal_eval`` (which recurses on what it is given); ``torch.load`` without ``weights_only=True``;
``numpy.load`` without ``allow_pickle=False``.  (Code in string templates, such as the bundle's loader and a
ghost's fallback, is not a call here: it runs as agent code, in the jail.)  A use that must stay is in
``ALLOWED`` with its reason, and an entry that no longer matches a use fails too, so the list never outlives
what it excuses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "build", "tools")

# calls that load code or run it, by the dotted name their module's imports give them
UNSAFE = frozenset({
    "pickle.load", "pickle.loads", "pickle.Unpickler", "_pickle.load", "_pickle.loads", "_pickle.Unpickler",
    "marshal.load", "marshal.loads", "shelve.open", "shelve.Shelf", "shelve.DbfilenameShelf",
    "yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load",
    "yaml.full_load_all", "pandas.read_pickle", "numpy.lib.format.read_array",
    "eval", "exec", "builtins.eval", "builtins.exec", "ast.literal_eval",
})
UNSAFE_MODULES = frozenset({"cloudpickle", "dill", "joblib", "jsonpickle", "shelve"})  # importing one is refused
# calls safe only with a keyword set to a constant: (keyword, value)
GUARDED = {"torch.load": ("weights_only", True), "numpy.load": ("allow_pickle", False)}

# (file, call): why this one use is not a file or bytes a user can be given
ALLOWED = {
    ("build/connectx_bundler/bundle.py", "ast.literal_eval"):
        "checks a string literal the bundler itself just wrote of a source "
                                             "text: one flat literal, no nesting",
    ("tools/connectx_forge/arena/schedule.py", "pickle.load"):
        "jobs and replies between the toolkit's own forked processes (a "
                                                "Dask worker's game apart) over pipes only they hold: never a file, "
                                                "and an agent's code runs in a host of its own, not in the writer",
}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Each name the module's imports bind, to the dotted name it stands for."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]  # "import a.b" binds a; "import a.b as c" binds c to a.b
                names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """The dotted name a called expression stands for (``np.load`` -> ``numpy.load``), if it is a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([names.get(node.id, node.id), *reversed(parts)])


def _guarded(call: ast.Call, keyword: str, value: object) -> bool:
    return any(k.arg == keyword and isinstance(k.value, ast.Constant) and k.value.value is value
               for k in call.keywords)


def unsafe_uses(file: str, tree: ast.Module) -> set[tuple[str, str]]:
    """The (file, call) of every unsafe loader in a module, and (file, "import M") of every unsafe module."""
    names = _aliases(tree)
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found |= {(file, f"import {m}") for m in modules if m.split(".")[0] in UNSAFE_MODULES}
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func, names)
        if name in UNSAFE:
            found.add((file, name))
        elif name in GUARDED and not _guarded(node, *GUARDED[name]):
            found.add((file, name))
    return found


def assert_allowed(uses: set[tuple[str, str]], allowed: dict[tuple[str, str], str], advice: str) -> None:
    """Every use is in the allowlist (``advice``: what to do instead), and every allowlist entry still a use."""
    new = sorted(uses - allowed.keys())
    assert not new, f"{advice}: {new}"
    stale = sorted(allowed.keys() - uses)
    assert not stale, f"allowlist entries that no longer match a use: {stale}"


def test_no_module_loads_data_with_a_loader_that_can_run_code() -> None:
    uses = {use for file, tree in _modules() for use in unsafe_uses(file, tree)}
    assert_allowed(uses, ALLOWED, "unsafe loaders (use JSON via boundedread, npz with allow_pickle=False, or "
                                  "allowlist with a reason)")


def test_the_walker_finds_every_kind_of_unsafe_loader() -> None:
    source = """
import pickle as p, numpy as np, torch, yaml, marshal, ast
from pickle import Unpickler
from numpy import load
import dill
p.loads(b"")
Unpickler(f).load()
np.load("w.npz")
load("w.npz", allow_pickle=True)
np.load("w.npz", allow_pickle=False)
torch.load("c.pt")
torch.load("c.pt", weights_only=False)
torch.load("c.pt", weights_only=True)
yaml.load(text)
marshal.loads(b"")
eval(text)
exec(text)
ast.literal_eval(text)
"""
    found = unsafe_uses("x.py", ast.parse(source))
    assert {call for _, call in found} == {"pickle.loads", "pickle.Unpickler", "numpy.load", "torch.load",
                                           "yaml.load", "marshal.loads", "eval", "exec", "ast.literal_eval",
                                           "import dill"}
    safe = "import numpy as np, torch\nnp.load(f, allow_pickle=False)\ntorch.load(f, weights_only=True)\n"
    assert not unsafe_uses("y.py", ast.parse(safe))
