"""A memory's first find reads every node, shapes every observation and indexes every text:
the cheaper paths it takes give what the plain ones give (the shapes, the nodes, the
index), so the first find ranks as it did."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.errors import CorruptStore
from ctxsdk.memory import Memory
from ctxsdk.memory._find import _VARYING, boilerplate, said_text, template_shape
from ctxsdk.memory._model import Node, Source
from ctxsdk.memory._rows import node_of
from ctxsdk.session import Retriever


def _shape_as_defined(text: str) -> str:
    """``template_shape`` by its definition: the one pattern, case-insensitive, any text."""
    return " ".join(_VARYING.sub(" ", text).casefold().split())


_PIECES = [
    "Session 9",
    " 14:05 ",
    "on",
    "AT",
    "Am",
    "pM",
    "May",
    "SEPT",
    "sep",
    "december",
    "Dec.",
    "0xff",
    "deadbeef1",
    "3pm",
    "2nd",
    "_7",
    "a1_b2",
    "monday",
    "onto",
    "atlas",
    "ſept",  # long s: re.I matches it to s
    "İ",
    "ı",
    "K",
    "٣",  # an Arabic-Indic digit: \d
    "ß",
    "\x1c",
    "\u00a0",
    "\t\n",
    ",",
    "-",
    "é",
    "东京",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=6), max_size=12))
def test_template_shape_is_the_patterns_shape(parts: list[str]) -> None:
    for text in ("".join(parts), " ".join(parts)):
        assert template_shape(text) == _shape_as_defined(text)


def test_template_shape_of_an_importers_header_and_turns() -> None:
    header = "Session 9 — Date and time: 1:56 pm on 8 May, 2023"
    assert template_shape(header) == _shape_as_defined(header) == "session — date and time: : ,"
    turn = "Caroline: I went to the LGBTQ support group yesterday; it was so powerful."
    assert template_shape(turn) == _shape_as_defined(turn)
    assert "yesterday;" in template_shape(turn) and "caroline:" in template_shape(turn)
    # three headers of one template are boilerplate; a turn is not
    nodes = [
        Node(id=f"n{i}", type="observation", name="", text=t)
        for i, t in enumerate(
            [
                header,
                "Session 10 - Date and time: 10:04 AM on 1 June, 2023",
                "session 11 — date and time: 7:00 am on 12 jan, 2024",
                turn,
            ]
        )
    ]
    nodes[1] = Node(id="n1", type="observation", name="", text=header.replace("9", "10"))
    assert boilerplate(nodes) == frozenset({"n0", "n1", "n2"})


_COLUMNS = (
    "id",
    "type",
    "name",
    "text",
    "aliases",
    "uri",
    "sources",
    "until",
    "until_at",
    "fail",
    "fix",
    "status",
    "created_at",
    "updated_at",
    "extra",
)


def _row(**values: object) -> dict[str, object]:
    row: dict[str, object] = {c: None for c in _COLUMNS}
    row.update(
        id="n1",
        type="observation",
        name="",
        text="hello",
        aliases="[]",
        uri="ctx://observation/x",
        sources='[{"quote": "hello", "seq": 3, "session": "s", "via": "rule"}]',
        status="active",
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
        extra="{}",
    )
    row.update(values)
    return row


def test_a_row_without_aliases_or_extra_reads_as_one_with_them() -> None:
    plain = node_of(_row(), "db")
    assert (
        plain.aliases == ()
        and plain.extra == {}
        and plain.sources == (Source("s", 3, "hello", "rule"),)
    )
    full = node_of(_row(aliases='["Hi"]', extra='{"turn": 4}', until="Friday"), "db")
    assert full.aliases == ("Hi",) and full.extra == {"turn": 4} and full.until == "Friday"
    # each node its own extra: one read is not shared with the next
    other = node_of(_row(), "db")
    assert other.extra is not plain.extra
    # a str subclass (a driver's own) is text, as before
    sub = type("Text", (str,), {})
    assert node_of(_row(text=sub("hello")), "db").text == "hello"


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("text", b"bytes", "not text"),
        ("created_at", 7, "not text"),
        ("until", 3.5, "not text or NULL"),
        ("type", "thing", "not a node type"),
        ("status", "gone", "not active or archived"),
        ("aliases", "[1]", "not a list of strings"),
        ("aliases", "{}", "not a list of strings"),
        ("aliases", "[", "not JSON"),
        ("sources", "{}", "not a list of objects"),
        ("extra", "[]", "not an object"),
        ("extra", "{", "not JSON"),
    ],
)
def test_a_damaged_row_still_names_its_column(column: str, value: object, says: str) -> None:
    with pytest.raises(CorruptStore, match=re.escape(column)) as got:
        node_of(_row(**{column: value}), "db")
    assert says in str(got.value)


def test_a_document_added_after_a_search_is_found_by_its_words() -> None:
    """The index's per-term arrays, made at a search, are dropped when a later document
    adds to the term (skipped only while no search has made any)."""
    r = Retriever(feedback=0)
    r.add("a", "the lighthouse keeper")
    assert [h.doc_id for h in r.search("lighthouse")] == ["a"]
    r.add("b", "a lighthouse at dusk")
    assert {h.doc_id for h in r.search("lighthouse")} == {"a", "b"}
    r.remove("a")
    assert [h.doc_id for h in r.search("lighthouse")] == ["b"]


def test_a_reopened_memory_finds_what_the_writer_found(tmp_path: Path) -> None:
    """The first find of a new ``Memory`` (every node read from the store) ranks as the
    writer's own, kept in step change by change."""
    path = tmp_path / "memory.db"
    words = "hail sleet fog wind rain snow ice thunder gale mist spray frost".split()
    with Memory(path, embedder=None) as mem:
        for i in range(12):
            mem.remember(
                f"Session {i} - Date and time: {i}:00 pm on {i + 1} May, 2023", type="observation"
            )
            mem.remember(
                f"the lighthouse keeper logged a storm with {words[i]} ({i} hours)",
                type="observation",
            )
        mem.remember("Keep the lighthouse lamp lit until Friday", type="decision")
        queries = ["lighthouse keeper", "storm 7", "Session 3", "May 2023"]
        before = [json.dumps(mem.find(q).to_json()) for q in queries]
        hidden = mem._boilerplate
    assert len(hidden) == 12  # the headers, not the turns (their words differ)
    with Memory(path, embedder=None) as again:
        assert [json.dumps(again.find(q).to_json()) for q in queries] == before
        assert again._boilerplate == hidden


def _said_as_defined(node: Node) -> str:
    """``said_text`` by its definition: the name and aliases the text does not say yet,
    then the text, fail, fix and until."""
    body = [node.text, node.fail or "", node.fix or "", node.until or ""]
    seen = " ".join(body).casefold()
    head: list[str] = []
    for part in (node.name, *node.aliases):
        stem = part.rstrip("…").strip()
        if stem and stem.casefold() not in seen:
            head.append(part)
            seen += " " + stem.casefold()
    return " ".join(p for p in (*head, *body) if p)


_WORDS = st.sampled_from(
    ["", " ", "user@5", "Mel", "mel ", "MEL…", "…", "ß", "SS", "\u00a0", "x y"]
)


@settings(max_examples=2000, deadline=None)
@given(
    name=_WORDS | st.text(max_size=5),
    text=st.lists(_WORDS | st.text(max_size=5), max_size=4).map(" ".join),
    aliases=st.lists(_WORDS, max_size=2),
    until=st.none() | _WORDS,
    fail=st.none() | _WORDS,
)
def test_said_text_is_its_definition(
    name: str, text: str, aliases: list[str], until: str | None, fail: str | None
) -> None:
    node = Node(
        id="n1",
        type="observation",
        name=name,
        text=text,
        aliases=tuple(aliases),
        until=until,
        fail=fail,
    )
    assert said_text(node) == _said_as_defined(node)
