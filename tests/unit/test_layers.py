"""The layers of the code, checked by import-linter (pyproject.toml's ``[tool.importlinter]``, run by
tests/importlayers.py over the installed layout): every import, at module level or in a function, goes down."""

from __future__ import annotations

import re
import tomllib
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
    (build/) importing them too and the API (tools/api/) importing the errors are each reported
    as a broken contract."""
    pytest.importorskip("importlinter")
    config = tmp_path / "contracts.toml"
    config.write_text("""
[tool.importlinter]
root_packages = ["connectx_forge", "agents"]

[[tool.importlinter.contracts]]
name = "the CLI above the errors, upside down"
type = "layers"
layers = ["connectx_forge.errors", "connectx_forge.cli"]

[[tool.importlinter.contracts]]
name = "the bundler above the errors, upside down"
type = "forbidden"
source_modules = ["connectx_forge.build"]
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


def test_the_tree_holds_every_source_file(tmp_path: Path) -> None:
    """The laid-out tree has a module for each source file of the installed packages (so no folder escapes the
    contracts), and links into the checkout rather than copies."""
    tree = importlayers.lay_out(tmp_path / "tree")
    for path, module in module_sources():
        parts = module.split(".")
        laid = tree.joinpath(*parts, "__init__.py") if path.endswith("__init__.py") else \
            tree.joinpath(*parts[:-1], parts[-1] + ".py")
        assert laid.resolve() == (importlayers.ROOT / path).resolve(), (path, laid)


def test_every_module_is_named_by_a_contract() -> None:
    """Each module of the packages is in a module or package that a contract names (a new module or folder
    is placed in a layer, not left out of every contract)."""
    config = tomllib.loads((importlayers.ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named = set()
    for contract in config["contracts"]:
        for key in ("layers", "source_modules", "forbidden_modules", "modules"):
            for entry in contract.get(key, []):
                named.update(re.split(r"\s*[:|]\s*", entry.strip()))
    roots = {"connectx_forge"}  # folders of packages, named by no layer of their own
    named -= roots
    left_out = [module for _, module in module_sources() if module not in roots
                and not any(module == name or module.startswith(name + ".") for name in named)]
    assert not left_out, left_out
