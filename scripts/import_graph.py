"""The import graph of the ctxsdk package, read from its source (every module, parsed).

Used by ``tests/test_architecture.py`` (the layer rules) and by the docs build (the picture
on the architecture page). ``python scripts/import_graph.py`` prints the package-level edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ctxsdk"

# The units of the picture: the base, the engines, and what sits on top.
UNITS = (
    "ctxsdk.session",
    "ctxsdk.assemble",
    "ctxsdk.fold",
    "ctxsdk.merge",
    "ctxsdk.memory",
    "ctxsdk.llm",
    "ctxsdk.tools",
    "ctxsdk._agent",
    "ctxsdk.widgets",
    "ctxsdk.bench",
    "ctxsdk.testing",
    "ctxsdk.samples",
    "ctxsdk._cli",
    "ctxsdk._conveniences",  # lends s.assemble(), s.fold(), .widget() to the base, from above
    "ctxsdk.model",  # the model seam: the protocol, the outcome, ask_text / ask_json
    "ctxsdk.errors",
)


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Every import of one module: (target, runtime?); relative imports resolved."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[tuple[str, bool]] = []
        self.names: list[tuple[str, str]] = []  # (module, name) of each ``from module import name``
        self._type_only = 0

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._type_only += 1
            for child in node.body:
                self.visit(child)
            self._type_only -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _add(self, target: str) -> None:
        self.found.append((target, self._type_only == 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base)
            target = f"{prefix}.{node.module}" if node.module else prefix
        else:
            target = node.module or ""
        # ``from pkg import sub`` imports the submodule when it is one.
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            self._add(sub if _exists(sub) else target)
            self.names.append((target, alias.name))

    def visit_Call(self, node: ast.Call) -> None:
        # importlib.import_module("ctxsdk....") with a literal names a module too.
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
            value = node.args[0].value
            if isinstance(value, str):
                self._add(value)
        self.generic_visit(node)


def _exists(module: str) -> bool:
    rel = Path(*module.split("."))
    return (PACKAGE.parent / rel).is_dir() or (PACKAGE.parent / rel).with_suffix(".py").is_file()


def _visited() -> dict[str, _Imports]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        visitor = _Imports(module, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out[module] = visitor
    return out


def graph(*, external: bool = False) -> dict[str, list[tuple[str, bool]]]:
    """Module -> its imports: (target module, imported at run time?). Only the package's own
    modules, unless ``external`` (then every import, third-party and standard library too)."""
    return {
        module: [(t, rt) for t, rt in v.found if external or t.startswith("ctxsdk")]
        for module, v in _visited().items()
    }


def imported_names() -> dict[str, list[tuple[str, str]]]:
    """Module -> the (module, name) pairs of its ``from module import name`` statements."""
    return {module: v.names for module, v in _visited().items()}


def cycles(*, type_only: bool = True) -> list[list[str]]:
    """The import cycles between files: each strongly connected component of the module
    graph with more than one module (or a module that imports itself), its modules sorted;
    the components sorted.

    A node is a file, so a package's ``__init__`` is one: ``from ctxsdk.session import X``
    in ``ctxsdk/session/_foo.py`` closes a cycle when ``ctxsdk/session/__init__.py`` imports
    ``_foo``. Every import counts wherever it stands, at module level or inside a function
    (a function-level import hides a cycle from Python's import order, not from the design),
    and so do ``importlib.import_module`` calls with a literal name. ``TYPE_CHECKING``-only
    imports count too unless ``type_only=False``: the cycles they close are as cheap to
    break (the shared type moves to its own module), and mypy reads them all the same.
    Importing ``a.b.c`` runs ``a/b/__init__`` first, so that package is an edge too, unless
    it encloses the importing module (every package would be a cycle with its own modules).
    """
    edges: dict[str, set[str]] = {}
    known = _visited()
    for module, imports in graph().items():
        edges[module] = {t for t, rt in imports if (rt or type_only) and t in known}
    edges = with_parent_packages(edges, set(known))
    found = [
        sorted(c) for c in _components(edges) if len(c) > 1 or next(iter(c)) in edges[next(iter(c))]
    ]
    return sorted(found)


def with_parent_packages(edges: dict[str, set[str]], known: set[str]) -> dict[str, set[str]]:
    """``edges`` with each target's enclosing packages added (Python imports them first),
    except a package that encloses the importing module itself."""
    out: dict[str, set[str]] = {}
    for module, targets in edges.items():
        found = set(targets)
        for target in targets:
            parts = target.split(".")
            for k in range(1, len(parts)):
                package = ".".join(parts[:k])
                if package in known and not (module + ".").startswith(package + "."):
                    found.add(package)
        out[module] = found
    return out


def _components(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iterative (the graph is a few hundred files)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                out.append(component)
    return out


def unit_of(module: str) -> str | None:
    return next((u for u in UNITS if module == u or module.startswith(u + ".")), None)


def unit_edges() -> list[tuple[str, str]]:
    """The run-time dependencies between units, sorted (``a`` imports from ``b``)."""
    edges = set()
    for module, imports in graph().items():
        a = unit_of(module)
        for target, runtime in imports:
            b = unit_of(target)
            if runtime and a is not None and b is not None and a != b:
                edges.add((a, b))
    return sorted(edges)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--cycles"]:
        for cycle in cycles():
            print(" <-> ".join(cycle))
    else:
        for a, b in unit_edges():
            print(f"{a} -> {b}")
