"""No import circle in ``ark``, deferred imports included.

import-linter's contracts (``pyproject.toml``) keep imports between packages pointing one
way, but they say nothing about the modules of one package: two private modules that
import each other pass them, and a circle survives at run time as long as one side defers
its import into a function. Such a circle hides where code belongs (each half needs the
other) and breaks as soon as someone moves the deferred import to the top. This test reads
every module of ``src/ark`` with ``ast``, takes all its imports of ``ark`` (at module
level and inside functions alike), resolves each to the file it loads and asserts that
graph has no cycle. A deferred import stays fine where it defers a heavy optional
dependency (torch, llama.cpp, sentence-transformers, spaCy, Ray) or a cost a command
should not pay; it must not be what keeps two modules from importing each other at load.

Imports under ``if TYPE_CHECKING:`` do not count: they never run, so they load nothing
and close no circle at run time, and they are the one way to name a type of a module
that imports yours (a type annotation is not a dependency of behaviour).

A second test keeps ``tests/`` and ``benchmarks/`` on the public faces of ``ark``: they
import no private module (``ark.x._y``, ``ark._y``), only the packages' ``__init__``
names, public modules (``ark.graph.columns``), and the two named faces for internals,
``ark.testing`` (chat models for tests) and ``ark.probes`` (what a benchmark or test
measures below the API). ``lint-imports`` keeps the same rule (``benchmarks`` and
``tests``, the latter a namespace package with no ``__init__.py``, are root packages of
the ``private`` contract); this test says it at pytest time too, naming each import.
(Code in a string that a test runs in a child process is read by neither: keep such
scripts on ``ark.probes``.)
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "ark"


def _module_name(path: Path) -> str:
    """``src/ark/x/_y.py`` -> ``ark.x._y``; ``src/ark/x/__init__.py`` -> ``ark.x``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: module level, in functions, in classes, under
    ``try`` or ``if``, but not in the body of ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a ``from`` import names, relative imports resolved against the
    importer."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def loaded_modules(
    source: str, importer: str, is_package: bool, modules: Collection[str]
) -> Iterator[tuple[str, int]]:
    """The modules of ``ark`` that each import in ``source`` (the module ``importer``)
    loads, with its line: ``import ark.x.y`` loads ``ark.x.y``; ``from ark.x import y``
    loads the submodule ``ark.x.y`` where there is one, and ``ark/x/__init__.py`` for a
    name defined there. (A module's own package is initialised before the module runs,
    so the parents an import passes through add no edge of their own.)"""
    for node in _imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, node.lineno
            continue
        module = _absolute(node, importer, is_package)
        subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules]
        if module in modules and len(subs) < len(node.names):
            yield module, node.lineno
        for sub in subs:
            yield sub, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """Edges importer -> imported module of ``ark``, with the first line of the import.

    The whole package, not only the modules of one directory: a circle inside a package
    (a private module and its ``__init__``, two private modules) is the case the layers
    contract cannot see, and one between packages that contract forbids already, except
    through the root ``ark/__init__`` and the modules beside it, which this sees too."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        for target, line in loaded_modules(source, name, path.name == "__init__.py", modules):
            if target != name:
                graph[name][target] = min(line, graph[name].get(target, line))
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one
    cycle through all of them where possible, sorted for a stable report."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(components)


def _describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [
        f"    {a} -> {b} (line {line})"
        for a in component
        for b, line in sorted(graph[a].items())
        if b in members
    ]
    return " <-> ".join(component) + "\n" + "\n".join(edges)


def test_no_import_circle() -> None:
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import circles in ark:\n" + "\n".join(_describe(c, graph) for c in cycles)


def test_the_check_sees_deferred_imports() -> None:
    """The finder itself: an import inside a function is an edge, one under
    TYPE_CHECKING is not; ``from ark.p import _a`` loads the submodule, ``from ark.p
    import name`` the package's ``__init__``; a cycle is reported with its modules."""
    modules = {"ark.p", "ark.p._a", "ark.p._b"}

    def edges(source: str, importer: str = "ark.p._b") -> list[tuple[str, int]]:
        return list(loaded_modules(source, importer, False, modules))

    assert edges("def f():\n    from ark.p import _a\n") == [("ark.p._a", 2)]
    assert edges("from ark.p import name\n") == [("ark.p", 1)]
    assert sorted(edges("from ark.p import _a, name\n")) == [("ark.p", 1), ("ark.p._a", 1)]
    assert edges("import ark.p._a\n") == [("ark.p._a", 1)]
    assert edges("from ._a import x\n") == [("ark.p._a", 1)]
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ark.p._a\n"
    assert edges(typing_only) == []
    graph = {"ark.p._a": {"ark.p._b": 1}, "ark.p._b": {"ark.p._a": 2}, "ark.p": {}}
    assert find_cycles(graph) == [["ark.p._a", "ark.p._b"]]
    assert find_cycles({"ark.p._a": {"ark.p._b": 1}, "ark.p._b": {}}) == []


def _private_imports(folder: Path) -> Iterator[str]:
    modules = _modules()
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module] + [
                    f"{node.module}.{alias.name}"
                    for alias in node.names
                    if f"{node.module}.{alias.name}" in modules
                ]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "ark" and any(part.startswith("_") for part in parts[1:]):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {name}"


def test_tests_and_benchmarks_import_only_public_faces() -> None:
    found = [*_private_imports(ROOT / "tests"), *_private_imports(ROOT / "benchmarks")]
    assert not found, (
        "private ark modules imported from tests/ or benchmarks/ (use the package's "
        "exported name, ark.testing or ark.probes):\n" + "\n".join(found)
    )
