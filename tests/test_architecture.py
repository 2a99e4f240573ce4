"""The layers hold: read from the code's own import graph (every module, parsed).

``session`` is the base and imports no engine, not even lazily; an engine imports only the
public names of ``ctxsdk.session`` (and ``ctxsdk.errors``), never another engine, never the
layers above it (the model client, tools, widgets, benchmarks, CLI).
"""

from __future__ import annotations

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
    "ctxsdk.model",
    "ctxsdk._progress",
    "ctxsdk._public",
)


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
            if _under(target, ("ctxsdk.session", *BASE_MAY_USE)) or target == "ctxsdk":
                continue
            if target == "ctxsdk._engines" and module in (
                "ctxsdk.session._session",
                "ctxsdk.session._widget_link",
            ):
                continue  # the table that lets s.assemble() and .widget() reach above by name
            bad.append(f"{module} -> {target}{'' if runtime else ' (type only)'}")
    assert bad == []


def test_base_names_no_engine_even_by_string() -> None:
    for path in (PACKAGE / "session").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for engine in ENGINES:
            assert f'"{engine}' not in text and f"'{engine}" not in text, (path, engine)


@pytest.mark.parametrize("engine", [e for e in ENGINES if e in GRAPH])
def test_engines_use_only_public_base_names(engine: str) -> None:
    bad = []
    for module, imports in GRAPH.items():
        if not _under(module, (engine,)):
            continue
        for target, _runtime in imports:
            if _under(target, (engine,)) or target in ("ctxsdk.session", *BASE_MAY_USE):
                continue
            bad.append(f"{module} -> {target}")
    assert bad == []


@pytest.mark.parametrize("engine", [e for e in ENGINES if e in GRAPH])
def test_engines_import_only_names_the_base_exports(engine: str) -> None:
    import ctxsdk.session

    exported = set(ctxsdk.session.__all__)
    for module, names in _IG.imported_names().items():
        if _under(module, (engine,)):
            unknown = [n for m, n in names if m == "ctxsdk.session" and n not in exported]
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
