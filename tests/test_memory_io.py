"""Memory export and import: the exact JSON round trip, validation naming the JSON path,
the read-only Markdown projection and the strict MEMORY.md import."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from ctxsdk.errors import InvalidArgument
from ctxsdk.memory._io import (
    MARKDOWN_HEADER,
    export_graph,
    import_graph,
    node_from_json,
    parse_memory_md,
    to_markdown,
)
from ctxsdk.memory._model import Edge, Node, Source

MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
KEY = "sk-" + "".join(["Zy9X"] * 6)


def _graph() -> tuple[list[Node], list[Edge]]:
    ws = Node("n0", "workspace", "ws", uri="ctx://workspace/0")
    gw = Node(
        "n1",
        "entity",
        "AuthGateway",
        "AuthGateway",
        aliases=("auth-gw",),
        uri="ctx://entity/1",
        sources=(Source("s-a", 12, "AuthGateway 校验", "rule"),),
        created_at="2026-11-30T09:00:00Z",
        updated_at="2026-11-30T09:01:00Z",
    )
    pref = Node("n2", "preference", "鉴权", "记住：鉴权走 header X", uri="ctx://preference/2")
    dec = Node(
        "n3",
        "decision",
        "先别动",
        "AuthGateway 的重构先别动，下周再说。",
        until="下周",
        until_at="2026-12-07T00:00:00Z",
    )
    exp = Node(
        "n4",
        "experience",
        "mkdir",
        "bash `mkdir x/y` failed",
        fail="No such file",
        fix="mkdir -p x/y",
        status="archived",
        extra={"k": [1, {"z": None}]},
    )
    edges = [
        Edge("n2", "n1", "about"),
        Edge("n3", "n1", "decided"),
        Edge("n1", "n0", "in_workspace", 0.15, "2026-11-30T09:00:00Z"),
    ]
    return [ws, gw, pref, dec, exp], edges


def test_export_shape() -> None:
    nodes, edges = _graph()
    data = export_graph(nodes, edges)
    assert data["format"] == "ctxsdk-memory-graph" and data["version"] == 1
    assert data["nodes"][1]["untilAt"] is None and data["nodes"][3]["untilAt"].startswith("2026")
    assert data["edges"][2] == {
        "src": "n1",
        "dst": "n0",
        "label": "in_workspace",
        "weight": 0.15,
        "createdAt": "2026-11-30T09:00:00Z",
    }


def test_round_trip_is_exact() -> None:
    nodes, edges = _graph()
    data = export_graph(nodes, edges)
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    back_nodes, back_edges = import_graph(json.loads(text))
    assert back_nodes == nodes and back_edges == edges
    again = json.dumps(export_graph(back_nodes, back_edges), ensure_ascii=False, sort_keys=True)
    assert again == text


def test_import_defaults_missing_optional_fields() -> None:
    node = node_from_json({"id": "a", "type": "entity", "name": "X"})
    assert node == Node("a", "entity", "X")


def _broken(path: list[Any], value: Any, *, delete: bool = False) -> dict[str, Any]:
    nodes, edges = _graph()
    data = copy.deepcopy(export_graph(nodes, edges))
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "delete", "where"),
    [
        (["format"], "dsh-trivium-graph", False, "$.format"),
        (["version"], 2, False, "$.version"),
        (["version"], True, False, "$.version"),
        (["nodes"], {}, False, "$.nodes"),
        (["nodes", 2], "x", False, "$.nodes[2]"),
        (["nodes", 3, "type"], "fact", False, "$.nodes[3].type"),
        (["nodes", 1, "id"], None, True, "$.nodes[1].id"),
        (["nodes", 1, "id"], "", False, "$.nodes[1].id"),
        (["nodes", 1, "name"], 7, False, "$.nodes[1].name"),
        (["nodes", 1, "aliases", 0], 3, False, "$.nodes[1].aliases[0]"),
        (["nodes", 1, "sources", 0, "seq"], "12", False, "$.nodes[1].sources[0].seq"),
        (["nodes", 1, "sources", 0, "seq"], -1, False, "$.nodes[1].sources[0].seq"),
        (["nodes", 3, "untilAt"], 5, False, "$.nodes[3].untilAt"),
        (["nodes", 4, "status"], "deleted", False, "$.nodes[4].status"),
        (["nodes", 4, "extra"], [], False, "$.nodes[4].extra"),
        (["nodes", 2, "id"], "n1", False, "$.nodes[2].id"),  # a repeated id
        (["edges", 0, "label"], "likes", False, "$.edges[0].label"),
        (["edges", 1, "weight"], "1", False, "$.edges[1].weight"),
        (["edges", 1, "weight"], float("nan"), False, "$.edges[1].weight"),
        (["edges", 1, "dst"], "n9", False, "$.edges[1].dst"),
        (["edges", 0, "src"], None, True, "$.edges[0].src"),
    ],
)
def test_import_errors_name_the_path(path: list[Any], value: Any, delete: bool, where: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        import_graph(_broken(path, value, delete=delete))
    assert f"{where} " in str(info.value)


def test_import_refuses_a_non_object() -> None:
    with pytest.raises(InvalidArgument, match=r"\$ must be an object"):
        import_graph([1, 2])


# -- markdown --------------------------------------------------------------------------------
def test_markdown_projection() -> None:
    nodes, edges = _graph()
    md = to_markdown(nodes, edges)
    lines = md.splitlines()
    assert lines[0] == MARKDOWN_HEADER
    assert "## Entities" in lines and "## Preferences" in lines and "## Decisions" in lines
    assert "## Experiences" not in lines  # the only experience is archived
    assert "- 记住：鉴权走 header X —about→ AuthGateway" in lines
    assert "- AuthGateway 的重构先别动，下周再说。 —decided→ AuthGateway" in lines
    assert "  - until: 下周 (untilAt 2026-12-07T00:00:00Z)" in lines
    assert "  - aliases: auth-gw" in lines
    assert "in_workspace" not in md and "ws" not in lines  # no workspace section or edge
    assert lines.index("## Entities") < lines.index("## Preferences") < lines.index("## Decisions")


def test_markdown_lines_are_clipped_and_show_fail_fix() -> None:
    long = Node("e", "experience", "x", "失败" * 300, fail="F" * 500, fix="mkdir -p")
    target = Node("t", "entity", "T" * 100)
    md = to_markdown([long, target], [Edge("e", "t", "fixed")])
    assert all(len(line) <= 240 for line in md.splitlines())
    assert any(line.startswith("  - fail: FFF") for line in md.splitlines())
    assert "  - fix: mkdir -p" in md.splitlines()
    assert "—fixed→ TTT" in md


# -- MEMORY.md -------------------------------------------------------------------------------
MEMORY_MD = f"""# MEMORY

## Preferences
- 必须用 pnpm 安装依赖
- Always answer in English.
- 用 ruff 不用 black
- 嗯好的

## AuthGateway
- 鉴权走 header X，务必校验
- 先别动重构，下周再说
- Database: PostgreSQL
- 把这个文件改一下
- api_key = {KEY}
- 今天聊了很多

## 2026-11-30
- Do not push on Fridays.

```
never parsed: always inside a fence
```
"""


def test_memory_md_import() -> None:
    ex = parse_memory_md(MEMORY_MD, now=MONDAY)
    got = [(c.type, c.text, c.links) for c in ex.candidates]
    # each line as the base's fact kernel reads it (no cue table in the memory): a rule is a
    # preference, a choice ("用 ruff 不用 black") a decision; the kernel reads a one-shot edit
    # as an instruction and nothing in "Always answer in English." yet
    assert got == [
        ("entity", "AuthGateway", ()),
        ("entity", "Database: PostgreSQL", ()),
        ("preference", "必须用 pnpm 安装依赖", ()),
        ("preference", "鉴权走 header X，务必校验", (("about", "AuthGateway"),)),
        ("preference", "把这个文件改一下", (("about", "AuthGateway"),)),
        ("preference", "Do not push on Fridays.", ()),
        ("decision", "用 ruff 不用 black", ()),
        ("decision", "先别动重构，下周再说", (("decided", "AuthGateway"),)),
    ]
    d = ex.candidates[-1]
    assert (d.until, d.until_at) == ("下周", "2026-12-07T00:00:00Z")
    assert all(c.source.via == "import" for c in ex.candidates)
    why = dict(ex.dropped)
    assert why["嗯好的"] == "no cue"
    assert why["今天聊了很多"] == "no cue"
    assert "secret" in why.values()
    assert KEY not in repr(ex)


def test_memory_md_caps() -> None:
    text = "\n".join(f"- 必须遵守第 {i} 条" for i in range(30))
    ex = parse_memory_md(text, now=MONDAY)
    assert len(ex.candidates) == 24
    assert [w for _, w in ex.dropped].count("over the cap") == 6


def test_memory_md_batch_holds_at_most_24_items_and_3000_chars() -> None:
    # 10 entities and 20 preferences pass their type caps (24 each) but not the batch's 24.
    keys = "\n".join(f"- Service{i}: port {8000 + i}" for i in range(10))
    rules = "\n".join(f"- always tag release {i} before shipping" for i in range(20))
    ex = parse_memory_md(keys + "\n" + rules, now=MONDAY)
    kinds = [c.type for c in ex.candidates]
    assert len(kinds) == 24 and kinds.count("entity") == 10  # entities first
    assert [w for _, w in ex.dropped].count("over the batch cap") == 6
    # Long lines: the 3,000-character guard cuts before the 24 items do.
    long = "\n".join(f"- always {'check the deploy log carefully ' * 7}step {i}" for i in range(20))
    ex = parse_memory_md(long, now=MONDAY)
    total = sum(len(c.text) for c in ex.candidates)
    assert total <= 3000 and len(ex.candidates) < 20
    assert total + len(ex.candidates[0].text) > 3000  # one more would not have fit
    assert {w for _, w in ex.dropped} == {"over the batch cap"}


def test_a_heading_that_holds_a_secret_names_no_entity() -> None:
    ex = parse_memory_md(f"# api_key={KEY}\n- always rotate it weekly\n# Billing\n", now=MONDAY)
    assert [(c.type, c.text, c.links) for c in ex.candidates] == [
        ("entity", "Billing", ()),
        ("preference", "always rotate it weekly", ()),  # not linked to the refused heading
    ]
    assert dict((w, t) for t, w in ex.dropped)["secret"]
    assert KEY not in repr(ex)
