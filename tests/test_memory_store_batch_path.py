"""The SQLite store's batch path: rows built in one step (``new_row``) hold the bytes the
general encoder writes, the quick node check passes only what the full check passes,
``put_many`` inserts first and checks after a refusal (inside a caller's batch too), and
savepoint journals stay in memory except for ``compact``'s VACUUM."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxsdk.memory._sqlite as sqlite_store
from ctxsdk.errors import InvalidArgument
from ctxsdk.memory._model import NODE_TYPES, Node, Source
from ctxsdk.memory._rows import (
    NODE_ORDER,
    _check_node_fully,
    _plainly_storable,
    check_node,
    dumps_value,
    new_node_id,
    new_node_ids,
    new_row,
    node_columns,
    stamped,
)
from ctxsdk.memory._sqlite import SQLiteStore

# what the store wrote with before (``json.dumps`` with these options): the bytes to keep
_REFERENCE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True)

_text = st.text(st.characters(blacklist_categories=()), max_size=12)  # lone surrogates too
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=12,
)


def _reference(value: Any, what: str) -> str:
    """What ``dumps_value`` gave with the encoder alone: the text, or the error's message."""
    if not value and isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    try:
        text = _REFERENCE.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"error: {what} is not JSON-serialisable: {exc}"
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return "error: surrogate"
    return text


def _dumped(value: Any, what: str) -> str:
    try:
        return dumps_value(value, what)
    except InvalidArgument as exc:
        return "error: surrogate" if "lone surrogate" in str(exc) else f"error: {exc}"


@settings(max_examples=300, deadline=None)
@given(_values)
def test_a_value_is_encoded_as_the_encoder_encodes_it(value: Any) -> None:
    assert _dumped(value, "extra") == _reference(value, "extra")


def test_a_value_json_cannot_hold_is_refused_with_the_encoders_message() -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    odd: list[Any] = [loop, {"n": math.nan}, {"inf": -math.inf}, {"s": {1, 2}}, [object()]]
    for value in odd:
        assert _dumped(value, "extra") == _reference(value, "extra")
        assert _dumped(value, "extra").startswith("error: extra is not JSON-serialisable")
    # a failed encode leaves nothing behind: the same dict encodes after a cycle was refused
    shared = {"k": "v"}
    assert _dumped([shared, shared], "x") == '[{"k": "v"}, {"k": "v"}]'


_sources = st.builds(
    Source,
    session=st.one_of(st.none(), _text),
    seq=st.one_of(st.none(), st.integers(min_value=-(2**40), max_value=2**70)),
    quote=_text,
    via=_text,
)
_nodes = st.builds(
    Node,
    id=st.just(""),
    type=st.sampled_from(NODE_TYPES),
    name=_text,
    text=_text,
    aliases=st.lists(_text, max_size=3).map(tuple),
    uri=st.one_of(st.just(""), _text.map(lambda t: f"ctx://x/{t}")),
    sources=st.lists(_sources, max_size=3).map(tuple),
    until=st.one_of(st.none(), _text),
    fail=st.one_of(st.none(), _text),
    extra=st.dictionaries(_text, _values, max_size=3),
    created_at=st.sampled_from(["", "2026-01-01T00:00:00.000Z"]),
)


def _row_or_error(node: Node) -> Any:
    try:
        return new_row(node, "n0123456789abcdef0123", node.uri or "ctx://x/u", "now")
    except InvalidArgument as exc:
        return str(exc)


@settings(max_examples=300, deadline=None)
@given(_nodes)
def test_a_new_row_is_the_stamped_node_and_its_columns(node: Node) -> None:
    got = _row_or_error(node)
    uri = node.uri or "ctx://x/u"
    kept = stamped(node, "n0123456789abcdef0123", uri, node.created_at or "now", "now")
    try:
        columns = node_columns(kept)
    except InvalidArgument as exc:
        assert got == str(exc)
        return
    assert got == (kept, tuple(columns[c] for c in NODE_ORDER))
    # the sources column is the general encoder's text of their dicts
    sources = [s.to_json() for s in node.sources]
    assert columns["sources"] == _reference(sources, "sources")


def test_sources_of_other_kinds_are_encoded_the_general_way() -> None:
    odd = Source(session="s", seq=True, quote="q", via="user")  # type: ignore[arg-type]
    node = Node(id="", type="decision", name="n", sources=(odd, Source("s", 3, "q\u00e9\n")))
    _, row = new_row(node, "n1", "ctx://x", "now")
    assert row[NODE_ORDER.index("sources")] == _REFERENCE.encode(
        [s.to_json() for s in node.sources]
    )


def _full_check(node: Node) -> str | None:
    try:
        _check_node_fully(node)
    except Exception as exc:  # the full check's own errors, whatever they are
        return f"{type(exc).__name__}: {exc}"
    return None


@settings(max_examples=300, deadline=None)
@given(
    _nodes,
    st.one_of(st.just(""), _text, st.text(min_size=60, max_size=80)),
    st.sampled_from(["active", "archived", "deleted"]),
)
def test_the_quick_node_check_passes_only_what_the_full_check_passes(
    node: Node, node_id: str, status: str
) -> None:
    node = replace(node, id=node_id, status=status)  # type: ignore[arg-type]
    full = _full_check(node)
    if _plainly_storable(node):
        assert full is None
    try:
        check_node(node)
        quick = None
    except Exception as exc:
        quick = f"{type(exc).__name__}: {exc}"
    assert quick == full


def test_the_quick_node_check_sends_odd_nodes_to_the_full_check() -> None:
    long_id = Node(id="n" * 70, type="decision", name="x")  # 70 chars, 70 bytes: fits
    assert not _plainly_storable(long_id) and _full_check(long_id) is None
    too_long = Node(id="é" * 200, type="decision", name="x")  # 400 bytes: refused
    assert _full_check(too_long) is not None
    with pytest.raises(InvalidArgument, match="at most 256 bytes"):
        check_node(too_long)
    lone = Node(id="", type="decision", name="x", fix="ok \udc80")
    with pytest.raises(InvalidArgument, match="lone surrogate"):
        check_node(lone)
    with pytest.raises(InvalidArgument, match="takes a Node"):
        check_node("not a node")  # type: ignore[arg-type]


def test_ids_drawn_together_are_new_and_in_order() -> None:
    before = new_node_id()
    ids = new_node_ids(5000)
    after = new_node_id()
    assert len(set(ids)) == 5000
    assert [before, *ids, after] == sorted([before, *ids, after])
    assert all(len(i) == 20 and i.startswith("n") for i in ids)
    assert new_node_ids(0) == []


def _entity(name: str, **fields: Any) -> Node:
    return Node(id="", type="entity", name=name, **fields)


def test_a_refused_put_many_inside_a_batch_keeps_the_batchs_other_writes(
    tmp_path: Path,
) -> None:
    with SQLiteStore(tmp_path / "m.db") as s:
        taken = s.put(_entity("taken"))
        before = s.revision()
        with s.batch():
            first = s.put(_entity("first"))
            with pytest.raises(InvalidArgument, match="already node"):
                s.put_many([_entity(f"x{i}") for i in range(50)] + [_entity("y", uri=taken.uri)])
            with pytest.raises(InvalidArgument, match="two new nodes"):
                s.put_many([_entity("a", uri="ctx://entity/u"), _entity("b", uri="ctx://entity/u")])
            kept = s.put_many([_entity("last")])
        assert s.revision() == before + 1
        names = sorted(n.name for n in s.nodes())
        assert names == ["first", "last", "taken"]
        assert s.get(first.id) == first and s.get(kept[0].id) == kept[0]
        assert s.changes(before) is not None
        assert sorted(n.name for n in s.changes(before).nodes) == ["first", "last"]  # type: ignore[union-attr]


def test_put_many_draws_again_an_id_another_writer_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(tmp_path / "m.db") as s:
        other = s.put(_entity("other's"))
        real = sqlite_store.new_node_ids

        def colliding(count: int) -> list[str]:
            return [other.id, *real(count - 1)]

        monkeypatch.setattr(sqlite_store, "new_node_ids", colliding)
        with s.batch():
            got = s.put_many([_entity("mine"), _entity("second")])
        assert got[0].id != other.id and got[0].name == "mine"
        assert s.get(other.id) == other
        assert sorted(n.name for n in s.nodes()) == ["mine", "other's", "second"]
        assert [s.get(n.id) for n in got] == got


def test_savepoint_journals_stay_in_memory_and_vacuum_still_compacts(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.db") as s:
        db = s._conn()
        assert db.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY
        nodes = s.put_many([_entity(f"e{i}", text="x" * 200) for i in range(2000)])
        for n in nodes[:1500]:
            s.delete(n.id)
        size = (tmp_path / "m.db").stat().st_size
        assert s.compact() is True
        assert (tmp_path / "m.db").stat().st_size < size
        assert db.execute("PRAGMA temp_store").fetchone()[0] == 2
        assert s.integrity_check() == ["ok"]
        assert len(s.nodes()) == 500
