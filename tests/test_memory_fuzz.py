"""Hostile input to a memory: a mutated JSON export, a random MEMORY.md and texts that are
not valid Unicode (a lone surrogate, which ``json`` decodes from ``"\\ud800"``) either work
or raise a located ``CtxError``, and a refused import leaves the memory as it was."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxsdk.errors import CtxError, InvalidArgument
from ctxsdk.memory import Memory
from ctxsdk.memory._model import Node
from ctxsdk.memory._sqlite import SQLiteStore
from ctxsdk.session.kernel import MAX_JSON_DEPTH

from .test_fuzz import _paths

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_LONE = "\ud800"
_VALUES = [None, 0, -1, 1.5, 10**30, True, "", "x", _LONE, "a" * 5000, [], {}, [1, "b"], {"a": 1}]


def _export() -> dict[str, Any]:
    with Memory(None) as mem:
        gw = mem.remember("AuthGateway", type="entity")
        mem.remember("always run the tests with -x", type="preference", link_to=gw.id)
        mem.remember(
            "AuthGateway refactor waits until Friday",
            type="decision",
            link_to=gw.id,
            until="Friday",
        )
        return mem.export_json()


_BASE = _export()


_PATHS = [p for p in _paths(_BASE) if p]


def _sqlite(mem: Memory) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


def _exercise(mem: Memory) -> None:
    """Everything a user does with a memory after an import."""
    mem.find("AuthGateway refactor")
    mem.map()
    mem.to_markdown()
    mem.graph()
    mem.to_polars()
    for n in mem.nodes(include_archived=True):
        mem.read(n.id)
    json.dumps(mem.export_json())


@_SETTINGS
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(_PATHS), st.sampled_from(_VALUES), st.booleans()),
        min_size=1,
        max_size=3,
    )
)
def test_a_mutated_export_imports_or_is_refused_whole(
    edits: list[tuple[tuple[Any, ...], Any, bool]],
) -> None:
    data = copy.deepcopy(_BASE)
    for path, value, delete in edits:
        parent: Any = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            if delete:
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    with Memory(None) as mem:
        mem.remember("kept before the import", type="preference")
        before = mem.export_json()
        try:
            mem.import_json(data)
        except CtxError as exc:
            assert str(exc)
            assert mem.export_json() == before, "a refused import wrote something"
        _exercise(mem)
        assert _sqlite(mem).integrity_check() == ["ok"]


_MD_PIECES = [
    "# ",
    "## Preferences\n",
    "## Decisions\n",
    "- ",
    "* ",
    "\n",
    "prefer tabs ",
    "we decided to freeze the API ",
    "until Friday ",
    "```\n",
    "\x00",
    _LONE,
    "偏好：用中文回复 ",
    "api_key=sk-" + "Zy9X" * 6,
    ":",
    "[",
    "AuthGateway ",
    "\t",
]


@_SETTINGS
@given(pieces=st.lists(st.sampled_from(_MD_PIECES), max_size=60))
def test_any_memory_md_imports_or_raises_a_ctx_error(pieces: list[str]) -> None:
    with Memory(None) as mem:
        try:
            report = mem.import_memory_md("".join(pieces))
        except CtxError:
            return
        for node_id in report.added:
            node = mem.get(node_id)
            assert _LONE not in node.text + node.name
            assert "sk-Zy9X" not in node.text
        _exercise(mem)


@pytest.mark.parametrize(
    ("where", "edit"),
    [
        ("$.nodes[1].name", lambda d: d["nodes"][1].__setitem__("name", "x" + _LONE)),
        ("$.nodes[1].aliases[0]", lambda d: d["nodes"][1].__setitem__("aliases", [_LONE])),
        (
            "$.nodes[1].sources[0].quote",
            lambda d: d["nodes"][1]["sources"][0].__setitem__("quote", _LONE),
        ),
        ("$.nodes[1].extra key", lambda d: d["nodes"][1].__setitem__("extra", {_LONE: 1})),
        ("$.nodes[1].extra.k[0]", lambda d: d["nodes"][1].__setitem__("extra", {"k": [_LONE]})),
        ("$.edges[0].createdAt", lambda d: d["edges"][0].__setitem__("createdAt", _LONE)),
    ],
)
def test_a_lone_surrogate_in_an_import_is_refused_at_its_path(where: str, edit: Any) -> None:
    data = copy.deepcopy(_BASE)
    edit(data)
    with Memory(None) as mem:
        before = mem.export_json()
        with pytest.raises(InvalidArgument, match="lone surrogate") as info:
            mem.import_json(data)
        assert where in str(info.value)
        assert mem.export_json() == before


def test_extra_nested_too_deep_is_refused() -> None:
    deep: list[Any] = []
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = [deep]
    data = copy.deepcopy(_BASE)
    data["nodes"][1]["extra"] = {"deep": deep}
    with Memory(None) as mem, pytest.raises(InvalidArgument, match="nests deeper"):
        mem.import_json(data)


def test_texts_given_in_python_keep_a_replacement_character() -> None:
    with Memory(None) as mem:
        pref = mem.remember("prefer tabs" + _LONE, type="preference", name="tabs" + _LONE)
        assert pref.text == "prefer tabs\ufffd" and pref.name == "tabs\ufffd"
        gw = mem.remember("AuthGateway", type="entity")
        assert mem.rename(gw.id, "Gateway" + _LONE).name == "Gateway\ufffd"
        assert mem.find("prefer tabs" + _LONE).hits[0].node.id == pref.id
        for call in (lambda: mem.get("x" + _LONE), lambda: mem.pin("s" + _LONE, gw.id)):
            with pytest.raises(InvalidArgument, match="lone surrogate"):
                call()
        assert _sqlite(mem).integrity_check() == ["ok"]


def test_the_store_refuses_a_node_it_cannot_encode() -> None:
    with SQLiteStore.memory() as store:
        with pytest.raises(InvalidArgument, match=r"a new preference: text holds a lone"):
            store.put(Node("", "preference", "ok", "bad" + _LONE))
        with pytest.raises(InvalidArgument, match="extra holds a lone"):
            store.put(Node("", "preference", "ok", "fine", extra={"k": _LONE}))
        assert store.nodes() == []


def test_a_header_whose_tools_are_not_all_objects_is_ingested() -> None:
    """Found by the engines' fuzz: ``request/header.tools`` holding null, or a tool whose
    name is not a string, made ingest raise AttributeError."""
    from ctxsdk.session import Session
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(session_id="odd-tools", runtime_context=None)
    for _ in range(2):
        b.turn("Always run the tests with -x before you push AuthGateway.").assistant(
            text="ok"
        ).end_turn()
    events = [dict(e) for e in b.events]
    for e in events:
        if e.get("type") == "request/header":
            header = dict(e["data"]["header"])
            header["tools"] = [None, {"name": 5}, "bash", *header.get("tools", [])]
            e["data"] = {**e["data"], "header": header}
    damaged = Session.from_events(b.header, events)
    assert all(isinstance(t, dict) for t in damaged.tools)
    with Memory(None) as mem:
        report = mem.ingest(damaged, verbatim=True)
        assert report.added
