"""Static import analysis: which project modules an agent uses, and in what order.

Sources are read with ``ast`` and never imported or run.  Starting from the
agent's module, every ``import`` and ``from ... import`` (relative ones and those
inside functions included) is resolved: the project's own modules (any top-level
module or package in its root folder) are followed, with their package
``__init__.py`` files, and so are the toolkit's bundle-safe libraries
(``connectx_forge.runtime``, and the shipped ``agents.*`` such as the game core
``agents.board``); the standard library and numpy are left to the runtime, and
anything else is refused with the file and line, because Kaggle's runtime may
lack it.  Imported names are checked against the target
module's top-level definitions, so a typo fails the build, not the first game.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from connectx_bundler.errors import BuildError
from connectx_bundler.files import read_text_inside
from connectx_forge.paths import agents_root, runtime_file

PROJECT_PACKAGE = "agents"  # the shipped agents' package, a library for every project
TOOLKIT = "connectx_forge"
RUNTIME = "connectx_forge.runtime"  # the one part of the toolkit a submission may import
RUNTIME_MODULES = frozenset(sys.stdlib_module_names) | {"numpy"}
NEVER_BUNDLED = {"agents.registry": "it is for the tools (build, check, match) and is never bundled"}


@dataclass(frozen=True)
class ImportRef:
    """One project import: ``target`` must run before the importer when ``ordering``."""

    target: str
    line: int
    ordering: bool  # executed at import time (not inside a function)


@dataclass
class SourceModule:
    """One project module: its name, its file (relative to the project root) and its parsed source."""

    name: str
    path: str  # posix path relative to the project root: the filename in tracebacks
    source: str
    tree: ast.Module
    is_package: bool
    imports: list[ImportRef] = field(default_factory=list)
    root: Path = Path(".")  # the folder it is imported from: its data paths are relative to it
    library: bool = False  # the toolkit's (connectx_forge.runtime, the shipped agents), not the project's

    @property
    def package(self) -> str:
        """The package that relative imports start from (Python's ``__package__``)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class ModuleGraph:
    """The modules an agent needs, in an order where each module's import-time imports come first."""

    modules: tuple[SourceModule, ...]  # dependency order; the entry module is last among its dependencies
    entry: SourceModule


def locate(root: Path, name: str) -> tuple[Path, bool] | None:
    """The file of project module ``name`` under ``root`` and whether it is a package, or None."""
    base = root.joinpath(*name.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


def relative_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in posix form (the absolute path when it lies outside)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def named(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` as it is written, links not followed (the name a link has), or None."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return None


def parse_module(root: Path, name: str, path: Path, is_package: bool, rel: str | None = None) -> SourceModule:
    """Read and parse one source file; a syntax error becomes a ``BuildError`` at file:line."""
    rel = rel or relative_path(root, path)
    try:
        source = read_text_inside(root, path, named(root, path) or rel)
    except UnicodeDecodeError as exc:
        raise BuildError(f"{rel}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise BuildError(f"{rel}: cannot read ({exc.strerror})") from None
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError as exc:
        raise BuildError(f"{rel}:{exc.lineno}: syntax error: {exc.msg}") from None
    return SourceModule(name, rel, source, tree, is_package, root=root)


def top_level_names(tree: ast.Module) -> tuple[set[str], bool]:
    """The names a module defines at top level, and whether it may define any name.

    Looks through top-level ``if``/``try``/``with``/``for`` blocks, not into
    functions or classes (except ``global`` statements).  A ``from x import *`` or
    a module ``__getattr__`` makes any name possible.
    """
    names: set[str] = set()
    anything = False

    def targets(node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                names.add(sub.id)

    def visit(body: list[ast.stmt]) -> None:
        nonlocal anything
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    targets(t)
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                targets(stmt.target)
            elif isinstance(stmt, ast.Import):
                names.update(a.asname or a.name.partition(".")[0] for a in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    if a.name == "*":
                        anything = True
                    names.add(a.asname or a.name)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                targets(stmt.target)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars)
            for child in ("body", "orelse", "finalbody"):
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(getattr(stmt, child, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                if handler.name:
                    names.add(handler.name)
                visit(handler.body)
    visit(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names, anything or "__getattr__" in names


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it runs at import time (outside any function)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, not in_function))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner)
    visit(tree, False)
    return found


class _Resolver:
    """Resolves the imports of project modules, reading each file once.

    ``tops`` are the project's top-level names (default: every module and
    package in ``root``); the toolkit's ``agents`` package and
    ``connectx_forge.runtime`` are libraries any project may import.
    """

    def __init__(self, root: Path, tops: frozenset[str] | None = None) -> None:
        self.root = root
        self.modules: dict[str, SourceModule] = {}
        self.names: dict[str, tuple[set[str], bool]] = {}
        self.project_tops = tops if tops is not None else project_tops(root)

    def find(self, name: str) -> SourceModule | None:
        """Parse module ``name`` from the project or the toolkit's libraries; None where it has no file."""
        top = name.partition(".")[0]
        if top in self.project_tops:
            found = locate(self.root, name)
            if found is None and self.root.joinpath(*name.split(".")).is_dir():  # a namespace package
                rel = "/".join(name.split(".")) + "/__init__.py"
                return SourceModule(name, rel, "", ast.parse(""), True, root=self.root)
            return None if found is None else parse_module(self.root, name, *found)
        if name == TOOLKIT:  # the toolkit's package: empty in a bundle (its API is not bundled)
            return SourceModule(name, f"{TOOLKIT}/__init__.py", "", ast.parse(""), True, library=True)
        if name == RUNTIME:
            return _library(parse_module(runtime_file().parent.parent, name, runtime_file(), True,
                                         rel=f"{TOOLKIT}/runtime/__init__.py"))
        found = locate(agents_root(), name)
        return None if found is None else _library(parse_module(agents_root(), name, *found))

    def has_file(self, name: str) -> bool:
        """Whether module ``name`` has a source file (a submodule, rather than a name its package defines)."""
        if name in self.modules:
            return True
        if name.partition(".")[0] in self.project_tops:
            return locate(self.root, name) is not None
        return name.startswith(PROJECT_PACKAGE + ".") and locate(agents_root(), name) is not None

    def module(self, name: str, where: str) -> SourceModule:
        """Project module ``name``, parsed; ``where`` (file:line) is blamed if it does not exist."""
        if name in self.modules:
            return self.modules[name]
        if name in NEVER_BUNDLED:
            raise BuildError(f"{where}: imports {name}: {NEVER_BUNDLED[name]}")
        module = self.find(name)
        if module is None:
            stem = "/".join(name.split("."))
            raise BuildError(f"{where}: cannot resolve import {name!r}: "
                             f"no {stem}.py or {stem}/__init__.py in the project")
        self.modules[name] = module
        return module

    def defines(self, module: SourceModule, name: str) -> bool:
        if module.name not in self.names:
            self.names[module.name] = top_level_names(module.tree)
        names, anything = self.names[module.name]
        return anything or name in names or (name.startswith("__") and name.endswith("__"))

    def classify(self, importer: SourceModule, name: str, line: int) -> bool:
        """True for a module to bundle; False for one Kaggle's runtime has; BuildError otherwise."""
        top = name.partition(".")[0]
        where = f"{importer.path}:{line}"
        if top in self.project_tops or top == importer.name.partition(".")[0]:
            return True
        if top == TOOLKIT:
            if name in (TOOLKIT, RUNTIME) or name.startswith(RUNTIME + "."):
                return True
            raise BuildError(f"{where}: imports {name}, a part of connectx-forge that is not bundle-safe; "
                             f"a submission may import only {RUNTIME} from the toolkit")
        if top == PROJECT_PACKAGE:
            return True
        if top in RUNTIME_MODULES:
            return False
        raise BuildError(f"{where}: imports {name}, which is not a module of the project (no {top}.py or {top}/ "
                         f"in {self.root}), nor in the standard library or numpy; Kaggle's runtime may lack it: "
                         "put that code in the project, or drop the import")

    def absolute(self, importer: SourceModule, node: ast.ImportFrom) -> str:
        """The absolute module name of a (possibly relative) ``from`` import."""
        if not node.level:
            return node.module or ""
        parts = importer.package.split(".") if importer.package else []
        if node.level > len(parts):
            raise BuildError(f"{importer.path}:{node.lineno}: relative import goes above the top-level package")
        base = ".".join(parts[: len(parts) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base

    def resolve(self, importer: SourceModule) -> list[ImportRef]:
        """The project modules ``importer`` needs, each with its file line and ordering role."""
        refs: list[ImportRef] = []
        for node, ordering in _imports(importer.tree):
            where = f"{importer.path}:{node.lineno}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not self.classify(importer, alias.name, node.lineno):
                        continue
                    parts = alias.name.split(".")
                    for i in range(1, len(parts) + 1):  # `import a.b.c` runs a, a.b and a.b.c
                        self.module(".".join(parts[:i]), where)
                        refs.append(ImportRef(".".join(parts[:i]), node.lineno, ordering and i == len(parts)))
                continue
            target = self.absolute(importer, node)
            if not self.classify(importer, target, node.lineno):
                continue
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                self.module(".".join(parts[:i]), where)
                refs.append(ImportRef(".".join(parts[:i]), node.lineno, False))
            module = self.modules[target]
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if alias.name != "*" and self.has_file(sub):
                    self.module(sub, where)
                    refs.append(ImportRef(sub, node.lineno, ordering))
                elif alias.name == "*" or self.defines(module, alias.name):
                    refs.append(ImportRef(target, node.lineno, ordering))
                else:
                    raise BuildError(f"{where}: cannot import name {alias.name!r} from {target} "
                                     f"({module.path} defines no such name and has no such submodule)")
        return refs


def _order(entry: SourceModule, modules: dict[str, SourceModule]) -> list[SourceModule]:
    """Depth-first post-order over import-time edges: dependencies first; a cycle is a BuildError.

    A package comes before its modules, as Python runs it first; a package that
    imports its own modules is not a cycle (Python allows it), a real loop of
    import-time imports is.  The walk keeps its own stack (``visit`` yields the
    module to visit next): a project's chain of thousands of imports is no
    recursion.
    """
    done: list[str] = []
    state: dict[str, int] = {}  # 1: being visited, 2: done
    stack: list[tuple[str, int | None]] = []  # (module, line of its import of the next one; None: its package)

    def visit(name: str) -> Iterator[str]:
        parent = name.rpartition(".")[0]
        if parent in modules and parent not in state:
            stack.append((name, None))
            yield parent
            stack.pop()
            if name in state:  # the package imported it
                return
        state[name] = 1
        for target, line in sorted({(r.target, r.line) for r in modules[name].imports
                                    if r.ordering and r.target != name}):
            if state.get(target) == 1:
                start = max(i for i, (n, _) in enumerate(stack) if n == target)
                chain = stack[start:] + [(name, line)]
                path = " -> ".join(n for n, _ in chain) + f" -> {target}"
                lines = ", ".join(f"{modules[n].path}:{ln}" for n, ln in chain if ln is not None)
                raise BuildError(f"import cycle the bundler cannot order: {path} (imports at {lines})")
            if target not in state:
                stack.append((name, line))
                yield target
                stack.pop()
        state[name] = 2
        done.append(name)

    def walk(name: str) -> None:
        visits = [visit(name)]
        while visits:
            following = next(visits[-1], None)
            if following is None:
                visits.pop()
            else:
                visits.append(visit(following))

    walk(entry.name)
    for name in sorted(modules):  # modules needed only inside functions
        if name not in state:
            walk(name)
    return [modules[n] for n in done]


def project_tops(root: Path) -> frozenset[str]:
    """The top-level module and package names of project folder ``root``."""
    names = {p.stem if p.suffix == ".py" else p.name for p in root.iterdir()
             if (p.is_dir() or p.suffix == ".py") and not p.name.startswith(".")}
    return frozenset(n for n in names if n.isidentifier())


def _library(module: SourceModule) -> SourceModule:
    module.library = True
    return module


def collect(root: Path, entry_module: str, entry_path: Path | None = None,
            tops: frozenset[str] | None = None) -> ModuleGraph:
    """The import graph of ``entry_module`` (read from ``entry_path`` when given) under ``root``.

    Raises ``BuildError`` for a missing module, a syntax error, an unresolvable
    name, a module outside the standard library and numpy, or an import cycle.
    """
    resolver = _Resolver(root, tops)
    if entry_path is not None:
        is_package = entry_path.name == "__init__.py"
        resolver.modules[entry_module] = parse_module(root, entry_module, entry_path, is_package)
    entry = resolver.module(entry_module, "cxforge build")
    parts = entry_module.split(".")
    for i in range(1, len(parts)):  # the entry's parent packages run first
        resolver.module(".".join(parts[:i]), entry.path)
    pending = sorted(resolver.modules)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        module = resolver.modules[name]
        module.imports = resolver.resolve(module)
        pending.extend(sorted(set(resolver.modules) - seen))
    return ModuleGraph(tuple(_order(entry, resolver.modules)), entry)


def check_defines(graph: ModuleGraph, function: str, agent_name: str) -> None:
    """Fail unless the entry module defines ``function`` at top level."""
    names, anything = top_level_names(graph.entry.tree)
    if function not in names and not anything:
        raise BuildError(f"{graph.entry.path}: defines no {function!r} at top level "
                         f"(agent {agent_name!r} names {graph.entry.name}.{function})")


def positional_arity(graph: ModuleGraph, function: str) -> int | None:
    """How many positional parameters the entry function takes, when it is a plain ``def``."""
    for stmt in graph.entry.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == function:
            if stmt.args.vararg is not None:
                return None
            return len(stmt.args.posonlyargs) + len(stmt.args.args)
    return None
