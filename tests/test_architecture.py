"""The layers hold: read from the code's own import graph (every module, parsed).

``session`` is the base and imports no engine, not even lazily; an engine imports only the
public names of ``ctxsdk.session`` (and ``ctxsdk.errors``), never another engine, never the
layers above it (the model client, tools, widgets, benchmarks, CLI).
"""

from __future__ import annotations

import ast
import importlib
import re

import pytest

from .conftest import load_script

_IG = load_script("import_graph")
PACKAGE = _IG.PACKAGE
ENGINES = ("ctxsdk.assemble", "ctxsdk.fold", "ctxsdk.merge", "ctxsdk.memory")
ABOVE = (
    "ctxsdk.llm",
    "ctxsdk.tools",
    "ctxsdk._agent",
    "ctxsdk.bench",
    "ctxsdk._cli",
    "ctxsdk.samples",
    "ctxsdk.testing",
    "ctxsdk.widgets",
)
# What the base may use outside itself: the error tree and small shared helpers.
BASE_MAY_USE = (
    "ctxsdk.errors",
    "ctxsdk._display",
    "ctxsdk._gc",
    "ctxsdk._hooks",
    "ctxsdk._progress",
    "ctxsdk._public",
    "ctxsdk._version",
)
# The one model seam, just above the base: every engine may type and call a model through it.
MODEL_SEAM = "ctxsdk.model"
# Everything above the base, as a module path a lookup table could hold.
ABOVE_BASE = (*ENGINES, *ABOVE, "ctxsdk._conveniences")


def _under(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == r or module.startswith(r + ".") for r in roots)


GRAPH = _IG.graph()


def test_the_graph_is_read() -> None:
    # The parser finds what is there, so an empty graph cannot pass the rules below.
    assert "ctxsdk.session" in GRAPH and "ctxsdk.assemble" in GRAPH
    assert any(("ctxsdk.session", True) in v for m, v in GRAPH.items() if "assemble" in m)
    assert len(GRAPH) > 40


def test_session_imports_no_engine_or_layer_above() -> None:
    bad = []
    for module, imports in GRAPH.items():
        if not _under(module, ("ctxsdk.session",)):
            continue
        for target, runtime in imports:
            if _under(target, ("ctxsdk.session", *BASE_MAY_USE)):
                continue
            bad.append(f"{module} -> {target}{'' if runtime else ' (type only)'}")
    assert bad == []


def test_base_names_no_layer_above_even_by_string() -> None:
    # No lookup table either: a string that names a module above (what importlib would take)
    # hides an upward edge from the graph. Prose naming one in a docstring or message is fine.
    above = re.compile(rf"ctxsdk\.(?:{'|'.join(re.escape(m[7:]) for m in ABOVE_BASE)})(?:\.\w+)*")
    bad = []
    for path in sorted((PACKAGE / "session").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for module in ABOVE_BASE:
            if f'"{module}' in text or f"'{module}" in text:
                bad.append(f"{path.name}: {module}")
        for node in ast.walk(ast.parse(text)):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and above.fullmatch(value.strip()):
                bad.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert bad == []


def test_the_extension_point_is_a_leaf() -> None:
    # The slots the top fills for the base import nothing of the project but the error tree.
    for module in ("ctxsdk._hooks", "ctxsdk._version"):
        assert {t for t, _ in GRAPH[module]} <= {"ctxsdk.errors"}, module


def test_the_conveniences_are_lent_from_the_top() -> None:
    # The upward edges of s.assemble(), s.fold() and .widget() show in the graph, at the top.
    lent = {t for t, _ in GRAPH["ctxsdk._conveniences"]}
    assert {"ctxsdk.assemble", "ctxsdk.fold", "ctxsdk.widgets", "ctxsdk._hooks"} <= lent
    assert ("ctxsdk._conveniences", True) in GRAPH["ctxsdk"]


def test_a_convenience_nobody_lent_says_so() -> None:
    from ctxsdk import _hooks, errors
    from ctxsdk.samples import sample
    from ctxsdk.session import Session

    s = Session.open(sample("fix-flaky-test"))
    assert type(s.assemble()).__name__ == "Assembly"
    before = _hooks.lent()
    _hooks.restore(_hooks.Conveniences())
    try:
        for call in (s.assemble, s.fold, s.widget):
            with pytest.raises(errors.CtxError, match="has nothing to build it with"):
                call()
    finally:
        _hooks.restore(before)
    assert _hooks.lent() == before


def test_the_cycle_finder_finds_a_cycle() -> None:
    # An __init__ is a file: a module that imports its own package, which imports it back.
    edges = {"p": {"p._a"}, "p._a": {"p"}, "p._b": {"p._a"}}
    assert [sorted(c) for c in _IG._components(edges) if len(c) > 1] == [["p", "p._a"]]


def test_the_cycle_finder_counts_the_package_an_import_runs_first() -> None:
    # q._b imports p._a, which runs p/__init__ first; p/__init__ imports q._b: a cycle
    # that no import statement names, found. A module's own package is not an edge.
    edges = {"p": {"q._b"}, "p._a": {"p._c"}, "p._c": set(), "q": set(), "q._b": {"p._a"}}
    full = _IG.with_parent_packages(edges, set(edges))
    assert full["q._b"] == {"p._a", "p"} and full["p._a"] == {"p._c"}
    assert [sorted(c) for c in _IG._components(full) if len(c) > 1] == [["p", "q._b"]]


def test_no_import_cycle_between_files() -> None:
    # Each file's imports, at module level, in functions or for the type checker alone,
    # form no cycle; a package's __init__ is a file like any other.
    assert _IG.cycles() == []


# The base's two faces: what a user needs, and the kernel the engines share.
BASE_FACES = ("ctxsdk.session", "ctxsdk.session.kernel")
UPPER = (
    "ctxsdk.bench",
    "ctxsdk._cli",
    "ctxsdk.tools",
    "ctxsdk.widgets",
    "ctxsdk.testing",
    "ctxsdk._agent",
)


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_layers_above_use_only_public_faces() -> None:
    # A layer above reaches another package through its user face or its kernel, never a
    # private module; the ground floor's shared modules (ctxsdk._display, _progress, ...)
    # belong to the root package and are for every layer.
    bad = []
    for module, imports in GRAPH.items():
        if not _under(module, UPPER):
            continue
        for target, _runtime in imports:
            parts = target.split(".")
            if _package(target) == _package(module) or len(parts) == 2:
                continue
            if any(part.startswith("_") for part in parts[2:]):
                bad.append(f"{module} -> {target}")
    assert bad == []


@pytest.mark.parametrize("engine", [e for e in ENGINES if e in GRAPH])
def test_engines_use_only_public_base_names(engine: str) -> None:
    bad = []
    for module, imports in GRAPH.items():
        if not _under(module, (engine,)):
            continue
        for target, _runtime in imports:
            if _under(target, (engine,)) or target in (*BASE_FACES, *BASE_MAY_USE, MODEL_SEAM):
                continue
            bad.append(f"{module} -> {target}")
    assert bad == []


@pytest.mark.parametrize("engine", [e for e in ENGINES if e in GRAPH])
def test_engines_import_only_names_the_base_exports(engine: str) -> None:
    exported = {face: set(importlib.import_module(face).__all__) for face in BASE_FACES}
    for module, names in _IG.imported_names().items():
        if _under(module, (engine,)):
            unknown = [n for m, n in names if m in exported and n not in exported[m]]
            assert unknown == [], module


@pytest.mark.parametrize("engine", [e for e in ENGINES if e in GRAPH])
def test_engines_import_no_http_notebook_or_widget_code(engine: str) -> None:
    # A model enters an engine as an object passed in; widgets view what an engine returns.
    banned = ("httpx", "IPython", "ipywidgets", "anywidget", "ctxsdk.llm", "ctxsdk.widgets")
    for module, imports in _IG.graph(external=True).items():
        if _under(module, (engine,)):
            found = [t for t, _ in imports if _under(t, banned)]
            assert found == [], module


def test_no_engine_imports_another() -> None:
    for module, imports in GRAPH.items():
        mine = next((e for e in ENGINES if _under(module, (e,))), None)
        if mine is None:
            continue
        others = [t for t, _ in imports if _under(t, ENGINES) and not _under(t, (mine,))]
        assert others == [], module


def test_nothing_below_imports_the_layers_above() -> None:
    for module, imports in GRAPH.items():
        if not _under(module, ("ctxsdk.session", *ENGINES)):
            continue
        above = [t for t, rt in imports if rt and _under(t, ABOVE)]
        assert above == [], module


def test_every_engine_asks_its_model_through_the_seam() -> None:
    # One model seam (ctxsdk.model): an engine types its model as ModelProtocol and calls it
    # through ask_text / ask_json, never chat directly.
    seam = re.compile(r"llm: Any|llm\.chat\(")
    bad = []
    for engine in ENGINES:
        for path in sorted((PACKAGE / engine.split(".")[1]).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if seam.search(line):
                    bad.append(f"{engine}/{path.name}:{n}: {line.strip()}")
    assert bad == []


def test_the_model_seam_stands_on_the_ground_floor() -> None:
    # ctxsdk.model imports the error tree and the base's JSON reader, nothing above them.
    base = {"ctxsdk.errors", "ctxsdk.session", "ctxsdk.session.kernel"}
    assert {t for t, _ in GRAPH["ctxsdk.model"]} <= base
