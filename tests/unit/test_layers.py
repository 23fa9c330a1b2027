"""The layers of the code, checked by import-linter (pyproject.toml's ``[tool.importlinter]``, run by
tests/importlayers.py over the checkout): every import, at module level or in a function, goes down."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import importlayers
from tests.typecheck import module_sources


def test_the_import_contracts_hold() -> None:
    pytest.importorskip("importlinter")
    result = importlayers.run()
    assert result.returncode == 0, (result.stdout + result.stderr)[-8000:]


def test_no_import_cycle() -> None:
    """No module reaches itself through imports, counting those inside functions: the structure drawn from the
    imports is a hierarchy (lazy imports are for heavy optional libraries, not for hiding a cycle)."""
    pytest.importorskip("grimp")
    assert importlayers.cycles() == []


def test_an_import_that_goes_up_breaks_a_contract(tmp_path: Path) -> None:
    """The check sees every folder of the package: the CLI (tools/) importing the errors (tools/), the bundler
    (build/) importing them too and the API (tools/connectx_forge/api/) importing the errors are each reported
    as a broken contract."""
    pytest.importorskip("importlinter")
    config = tmp_path / "contracts.toml"
    config.write_text("""
[tool.importlinter]
root_packages = ["connectx_forge", "connectx_bundler", "agents"]

[[tool.importlinter.contracts]]
name = "the CLI above the errors, upside down"
type = "layers"
layers = ["connectx_forge.errors", "connectx_forge.cli"]

[[tool.importlinter.contracts]]
name = "the bundler above the errors, upside down"
type = "forbidden"
source_modules = ["connectx_bundler"]
forbidden_modules = ["connectx_forge.errors"]

[[tool.importlinter.contracts]]
name = "the API above the errors, upside down"
type = "forbidden"
source_modules = ["connectx_forge.api.functions"]
forbidden_modules = ["connectx_forge.errors"]
""")
    result = importlayers.run(config)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Contracts: 0 kept, 3 broken." in result.stdout, result.stdout
    assert "connectx_forge.cli -> connectx_forge.errors" in result.stdout, result.stdout


def test_import_linter_reads_the_checkout() -> None:
    """import-linter reads each package from its folder in the checkout: no laid-out copy or link tree."""
    import importlib.util

    for name, folder in (("agents", "agents"), ("connectx_forge", "tools/connectx_forge"),
                         ("connectx_bundler", "build/connectx_bundler")):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        assert Path(spec.origin).resolve().parent == (importlayers.ROOT / folder).resolve(), name
    assert set(importlayers.root_packages()) == {"agents", "connectx_forge", "connectx_bundler"}


def test_every_module_is_named_by_a_contract() -> None:
    """Each module of the packages is in a module or package that a contract names (a new module or folder
    is placed in a layer, not left out of every contract)."""
    config = tomllib.loads((importlayers.ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named = set()
    for contract in config["contracts"]:
        for key in ("layers", "source_modules", "forbidden_modules", "modules"):
            for entry in contract.get(key, []):
                named.update(re.split(r"\s*[:|]\s*", entry.strip()))
    roots = {"connectx_forge", "connectx_forge.leaderboard"}  # folders of packages, named by no layer of their own
    named -= roots
    left_out = [module for _, module in module_sources() if module not in roots
                and not any(module == name or module.startswith(name + ".") for name in named)]
    assert not left_out, left_out


def _lazy_imports(tree: ast.AST) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.stmt]]]:
    """Each function of ``tree`` that imports one of our own modules in its body, with its import statements."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = _direct_body(node)
            if any(_imports_ours(s) for s in body):
                yield node, [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]


def _direct_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The statements of ``function`` itself, not of the functions and classes inside it."""
    found: list[ast.stmt] = []
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.stmt):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _imports_ours(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").startswith(OURS)
    return isinstance(node, ast.Import) and any(a.name.startswith(OURS) for a in node.names)


OURS = ("connectx_forge", "agents")


def test_a_lazy_import_says_why() -> None:
    """Our own modules are imported at the top (the graph has no cycle to hide); a function that imports one
    inside (it loads torch or gymnasium, loads the net's weights, or would weigh on ``cxforge --help``) says
    why in a comment on one of its import lines."""
    silent = []
    for folder in ("tools", "build"):
        for path in sorted((importlayers.ROOT / folder).rglob("*.py")):
            rel = path.relative_to(importlayers.ROOT).as_posix()
            source = path.read_text(encoding="utf-8")
            lines = source.splitlines()
            for function, imports in _lazy_imports(ast.parse(source)):
                said = [lines[i] for s in imports for i in range(s.lineno - 1, s.end_lineno or s.lineno)
                        if re.search(r"#(?!\s*(noqa|type:))", lines[i])]
                if not said:
                    silent.append(f"{rel}:{function.lineno} {function.name}")
    assert silent == []


LAZY_IMPORTS = 21  # today's count: lower it as a lazy import goes; never raise it


def test_lazy_imports_do_not_grow() -> None:
    """Function-level imports of our own modules stay at most ``LAZY_IMPORTS``: a new one is a sign that a
    module sits in the wrong layer, not a way around a cycle."""
    found = [f"{path.relative_to(importlayers.ROOT)}:{statement.lineno}"
             for folder in ("agents", "build", "tools") for path in sorted((importlayers.ROOT / folder).rglob("*.py"))
             for _, imports in _lazy_imports(ast.parse(path.read_text(encoding="utf-8")))
             for statement in imports if _imports_ours(statement)]
    assert 0 < len(found) <= LAZY_IMPORTS, found


def _modules_named(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Each module an import of ``tree`` names (at module level or in a function, ``TYPE_CHECKING`` included),
    with its line: ``import a.b`` names ``a.b``; ``from a import b`` names ``a`` and ``a.b`` (``b`` may be a
    module); and each ``"connectx_forge...."`` string, as the lazy table of ``tools/connectx_forge/__init__.py``
    imports by
    name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                re.fullmatch(r"(connectx_forge|agents)(\.\w+)+", node.value):
            yield node.lineno, node.value


def test_the_notebook_api_imports_no_command_module() -> None:
    """The notebook API (``tools/connectx_forge/__init__.py``, ``tools/connectx_forge/api/``) calls what a command
    calls, from the modules
    beside it, never a command-line module (``*_cmd``): no import names a module whose last part ends in
    ``_cmd``."""
    found = []
    api = importlayers.ROOT / "tools" / "connectx_forge" / "api"
    for path in [importlayers.ROOT / "tools" / "connectx_forge" / "__init__.py", *sorted(api.glob("*.py"))]:
        rel = path.relative_to(importlayers.ROOT).as_posix()
        for line, module in _modules_named(ast.parse(path.read_text(encoding="utf-8"))):
            if module.rsplit(".", 1)[-1].endswith("_cmd"):
                found.append(f"{rel}:{line} {module}")
    assert found == []


def test_the_command_module_scan_sees_every_spelling() -> None:
    tree = ast.parse("import connectx_forge.play.compare_cmd\nfrom connectx_forge.arena import sprt_cmd\n"
                     "def f():\n    from .check_cmd import default_agent\n"
                     "M = {'x': 'connectx_forge.solver.models_cmd'}\nfrom connectx_forge.play import comparison\n")
    named = [m for _, m in _modules_named(tree) if m.rsplit(".", 1)[-1].endswith("_cmd")]
    assert named == ["connectx_forge.play.compare_cmd", "connectx_forge.arena.sprt_cmd", ".check_cmd",
                     "connectx_forge.solver.models_cmd"]


# The functions every command module defines (cli.py's protocol): one name for one role, in each.
COMMAND_PROTOCOL = {"add_arguments", "run", "main", "agent"}
SHARED_FUNCTION_NAMES = 61  # today's count of other function names defined in two modules or more; never raise it


def _public_definitions() -> dict[tuple[str, str], list[str]]:
    """Each public top-level class or function name, by kind, with the modules that define it."""
    found: dict[tuple[str, str], list[str]] = {}
    for folder in ("agents", "build", "tools"):
        for path in sorted((importlayers.ROOT / folder).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_"):
                    kind = "class" if isinstance(node, ast.ClassDef) else "function"
                    found.setdefault((kind, node.name), []).append(path.relative_to(importlayers.ROOT).as_posix())
    return found


def test_no_class_name_is_defined_twice() -> None:
    """A class name says one thing: no two modules define a public class of one name (a reader searching for
    ``Plan`` finds one)."""
    twice = {name: where for (kind, name), where in _public_definitions().items() if kind == "class" and len(where) > 1}
    assert twice == {}


def test_shared_function_names_do_not_grow() -> None:
    """Function names defined in two modules or more (``load``, ``write``: small, module-qualified helpers) stay
    at most ``SHARED_FUNCTION_NAMES``; the command modules' protocol is left out."""
    shared = sorted(name for (kind, name), where in _public_definitions().items()
                    if kind == "function" and len(where) > 1 and name not in COMMAND_PROTOCOL)
    assert 0 < len(shared) <= SHARED_FUNCTION_NAMES, shared


def test_only_the_command_line_takes_parsed_flags() -> None:
    """The flags are parsed once, into typed values (a run's settings, an ``Execution``, a ``GameSettings``, a
    ``TrainSettings``): a function that takes ``argparse.Namespace`` is a command module's (``*_cmd``), a flag
    parser's (``options``, ``arena/flags``) or a settings class's ``from_args``."""
    parsers = {"tools/connectx_forge/options.py", "tools/connectx_forge/arena/flags.py"}
    found = []
    for folder in ("agents", "build", "tools"):
        for path in sorted((importlayers.ROOT / folder).rglob("*.py")):
            rel = path.relative_to(importlayers.ROOT).as_posix()
            if path.stem.endswith("_cmd") or rel in parsers:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "from_args" and any(
                        "argparse.Namespace" in ast.unparse(a.annotation)
                        for a in node.args.args if a.annotation is not None):
                    found.append(f"{rel}:{node.lineno} {node.name}")
    assert found == []
