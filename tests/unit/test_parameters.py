"""No function of the package takes more than ten parameters: a long list is a settings object waiting to be
named (``GameSettings``, a run's settings, ``Execution``, ``Gate``).  ``*args`` and ``**kwargs`` count
one each; ``self`` and ``cls`` do not."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.typecheck import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
MOST = 10


def _folders() -> list[Path]:
    """The installed packages' folders, the bundle-safe agents among them."""
    return sorted({ROOT / folder for folder in PACKAGES.values()})


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's parameters, ``self``/``cls`` left out, ``*args`` and ``**kwargs`` one each."""
    a = node.args
    named = [*a.posonlyargs, *a.args]
    count = len(named) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (bool(named) and named[0].arg in ("self", "cls"))


def long_functions(folders: list[Path]) -> list[str]:
    """``path:line name (count)`` for each function over ``MOST`` parameters."""
    out = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameters(node) > MOST:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({parameters(node)})")
    return out


def test_the_count_sees_every_kind_of_parameter() -> None:
    (f,) = ast.parse("def f(self, a, /, b, *c, d, **e): pass").body
    (g,) = ast.parse("def g(a, b, c, d, e, f, g, h, i, j, k): pass").body
    assert isinstance(f, ast.FunctionDef) and isinstance(g, ast.FunctionDef)
    assert parameters(f) == 5 and parameters(g) == 11


def test_no_function_takes_more_than_ten_parameters() -> None:
    assert long_functions(_folders()) == []
