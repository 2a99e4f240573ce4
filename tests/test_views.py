"""ctxsdk.session's polars views of events, surface, messages, tool calls, turns, tokens.

Schemas are checked exactly; joins are checked against the log itself (every tool call of the
samples once, with its own result; pruned and compacted-away results flagged); token counts
against ``Session.tokens()``.
"""

from __future__ import annotations

import copy
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import polars as pl
import pytest

import ctxsdk.session
from ctxsdk.samples import sample_paths
from ctxsdk.session import Session
from ctxsdk.session import _views as v
from ctxsdk.session._models import ReasoningBlock
from ctxsdk.session._tokens import TokenCounter, get_tokenizer

from .conftest import MODEL_SOURCE, v3_raw_session

I64, STR, BOOL = pl.Int64(), pl.String(), pl.Boolean()

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "events_df": {
        "seq": I64,
        "type": STR,
        "time": pl.Datetime("ms", "UTC"),
        "turn": I64,
        "step": I64,
        "surface_op": STR,
        "sources": pl.List(I64),
        "on_surface": BOOL,
        "shadowed_by": I64,
        "bytes": I64,
    },
    "surface_df": {
        "position": I64,
        "seq": I64,
        "type": STR,
        "role": STR,
        "op": STR,
        "shadowed": pl.List(I64),
        "message_id": STR,
        "text": STR,
        "tokens_estimate": I64,
    },
    "messages_df": {
        "index": I64,
        "seq": I64,
        "id": STR,
        "role": STR,
        "source_kind": STR,
        "text": STR,
        "n_blocks": I64,
        "n_tool_calls": I64,
        "tool_call_ids": pl.List(STR),
        "answers_call_id": STR,
        "reasoning_chars": I64,
    },
    "tools_df": {
        "call_id": STR,
        "name": STR,
        "arguments": STR,
        "assistant_seq": I64,
        "call_seq": I64,
        "result_seq": I64,
        "rewrite_seq": I64,
        "turn": I64,
        "step": I64,
        "is_error": BOOL,
        "error_code": STR,
        "result_chars": I64,
        "arguments_chars": I64,
        "on_surface": BOOL,
        "pruned": BOOL,
    },
    "turns_df": {
        "turn": I64,
        "start_seq": I64,
        "end_seq": I64,
        "reason": STR,
        "steps": I64,
        "prompt": STR,
        "input_tokens": I64,
        "output_tokens": I64,
        "cache_read_tokens": I64,
        "cache_write_tokens": I64,
        "reasoning_tokens": I64,
        "tool_calls": I64,
        "duration_ms": I64,
    },
    "tokens_df": {
        "seq": I64,
        "role": STR,
        "type": STR,
        "tool": STR,
        "tokens": I64,
        "estimate": I64,
    },
    "tokens_by_role": {
        "role": STR,
        "messages": I64,
        "tokens": I64,
        "estimate": I64,
        "share": pl.Float64(),
    },
    "tokens_by_tool": {
        "tool": STR,
        "type": STR,
        "messages": I64,
        "tokens": I64,
        "estimate": I64,
    },
}
VIEWS: dict[str, Callable[[Session], pl.DataFrame]] = {name: getattr(v, name) for name in SCHEMAS}


def _samples() -> dict[str, Session]:
    return {name: Session.open(p) for name, p in sample_paths().items()}


@pytest.fixture(scope="module")
def samples() -> dict[str, Session]:
    return _samples()


@pytest.fixture(scope="module")
def fixtures(shared_dir: Path) -> dict[str, Session]:
    paths = sorted((shared_dir / "data" / "dsh-fixtures").glob("*.jsonl"))
    if not paths:
        pytest.skip("no DSH fixtures in shared/data")
    return {p.name: Session.open(p, normalized=True) for p in paths}


def _all(samples: dict[str, Session], fixtures: dict[str, Session]) -> list[Session]:
    return [*samples.values(), *fixtures.values()]


def _v3(rows: list[dict[str, Any]] | None = None) -> Session:
    header, events = v3_raw_session()
    return Session.from_events(header, copy.deepcopy(events if rows is None else rows))


# --- schemas -------------------------------------------------------------------------------------


def test_public_names() -> None:
    assert set(v.__all__) == set(SCHEMAS)
    for name in SCHEMAS:  # the public home of the views
        assert getattr(ctxsdk.session, name) is getattr(v, name)
        assert name in ctxsdk.session.__all__


# --- the docs' column tables ---------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
DTYPES: dict[str, pl.DataType] = {
    "Int64": I64,
    "Utf8": STR,
    "Boolean": BOOL,
    "Float64": pl.Float64(),
    "List(Int64)": pl.List(I64),
    "List(Utf8)": pl.List(STR),
    "Datetime(ms, UTC)": pl.Datetime("ms", "UTC"),
}


def _hook() -> ModuleType:
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location(
        "views_columns", ROOT / "docs" / "_hooks" / "views_columns.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables(markdown: str) -> list[list[tuple[str, str, bool]]]:
    """The column tables of a page: (name, dtype, nullable) per row."""
    tables: list[list[tuple[str, str, bool]]] = []
    rows: list[tuple[str, str, bool]] | None = None
    for line in markdown.splitlines():
        if line == "| column | dtype | meaning |":
            rows = []
            tables.append(rows)
        elif rows is not None and line.startswith("| ") and not line.startswith("| ---"):
            name, dtype = (cell.strip() for cell in line.strip("|").split("|")[:2])
            rows.append((name, dtype.removesuffix(" (null)"), dtype.endswith(" (null)")))
        elif not line.startswith("|"):
            rows = None
    return tables


def test_docs_column_tables_are_the_frames_schemas(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    page = (ROOT / "docs" / "views.md").read_text(encoding="utf-8")
    placeholders = re.findall(r"^<!-- columns: (\w+) -->$", page, flags=re.MULTILINE)
    assert placeholders == list(SCHEMAS)  # every view, once, in the order of the page
    rendered = _hook().render(page)
    assert "<!-- columns:" not in rendered
    tables = _tables(rendered)
    assert len(tables) == len(SCHEMAS)
    header, _ = v3_raw_session()
    empty = Session.from_events(header, [])
    for name, table in zip(SCHEMAS, tables, strict=True):
        documented = {col: DTYPES[dtype] for col, dtype, _ in table}
        assert list(documented.items()) == list(SCHEMAS[name].items()), name
        frames = [VIEWS[name](s) for s in [empty, *_all(samples, fixtures)]]
        for df in frames:
            assert list(df.schema.items()) == list(documented.items()), name
        for col, _, nullable in table:  # a column not marked (null) holds no nulls
            if not nullable:
                assert all(df[col].null_count() == 0 for df in frames), (name, col)


def test_docs_hook_refuses_an_unknown_view() -> None:
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="no view called 'nope_df'"):
        _hook().render("# x\n\n<!-- columns: nope_df -->\n", "views.md")


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_docstrings_carry_the_column_table(name: str) -> None:
    doc = VIEWS[name].__doc__ or ""
    (table,) = _tables(doc)
    assert [(col, DTYPES[dtype]) for col, dtype, _ in table] == list(SCHEMAS[name].items())


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schema_exact_on_samples_and_fixtures(
    name: str, samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in _all(samples, fixtures):
        df = VIEWS[name](s)
        assert dict(df.schema) == SCHEMAS[name], (name, s.id)
    for s in samples.values():  # every sample has tool calls, turns, messages
        assert VIEWS[name](s).height > 0, (name, s.id)


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_empty_session_gives_empty_frames_with_the_schema(name: str) -> None:
    header, _ = v3_raw_session()
    df = VIEWS[name](Session.from_events(header, []))
    assert df.height == 0
    assert dict(df.schema) == SCHEMAS[name]


# --- events --------------------------------------------------------------------------------------


def test_events_df_matches_the_log(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in _all(samples, fixtures):
        df = v.events_df(s)
        raw = s.raw_events
        assert df["seq"].to_list() == list(range(len(s)))
        assert df["type"].to_list() == [e["type"] for e in raw]
        assert df["bytes"].to_list() == [len(orjson.dumps(e)) for e in raw]
        assert df["time"].dt.epoch("ms").to_list() == [e["time"] for e in raw]
        surface = set(s.surface().seqs)
        assert set(df.filter("on_surface")["seq"].to_list()) == surface
        for row in df.iter_rows(named=True):
            e = raw[row["seq"]]
            op = e.get("surfaceOp")
            assert row["surface_op"] == (
                None if op is None else "append" if op == "append" else "replace"
            )
            if e["type"] in ("turn/start", "turn/end"):
                assert row["turn"] == e["data"]["turn"]
                assert row["step"] is None
            if e["type"] in ("step/start", "step/end", "tool/call", "assistant/message") and (
                op is None or op == "append"
            ):
                assert (row["turn"], row["step"]) == (e["data"]["turn"], e["data"]["step"])
            if row["shadowed_by"] is not None:
                assert row["seq"] in s.index.replaced[row["shadowed_by"]]
                assert not row["on_surface"]
            if isinstance(op, dict):  # a replacement cites every node it shadows
                assert set(s.index.replaced[row["seq"]]) <= set(row["sources"])


def test_events_df_expands_source_ranges() -> None:
    summary = {
        "content": [{"type": "text", "text": "checkpoint"}],
        "source": {"kind": "plugin", "plugin": "compact"},
        "role": "user",
        "id": "c-1",
    }
    s = _v3().append(
        [
            {
                "type": "user/message",
                "time": 1790000001000,
                "data": summary,
                "sourceEventSeqs": [[3, 5], 7],
                "surfaceOp": {"op": "replace", "startSeq": 3, "endSeq": 7},
            }
        ]
    )
    df = v.events_df(s)
    row = df.row(-1, named=True)
    assert row["sources"] == [3, 4, 5, 7]
    assert row["surface_op"] == "replace" and row["on_surface"]
    assert df.filter(pl.col("shadowed_by") == row["seq"])["seq"].to_list() == [3, 5, 7]
    assert v.surface_df(s).row(1, named=True)["shadowed"] == [3, 5, 7]


def test_events_df_null_vs_empty_sources(fixtures: dict[str, Session]) -> None:
    for s in fixtures.values():
        df = v.events_df(s)
        for row in df.iter_rows(named=True):
            e = s.raw_events[row["seq"]]
            if "sourceEventSeqs" not in e:
                assert row["sources"] is None
            elif e["sourceEventSeqs"] == []:
                assert row["sources"] == []


def test_events_df_between_turns_has_null_turn() -> None:
    header, events = v3_raw_session()
    events = copy.deepcopy(events)
    events.append(
        {
            "type": "session/title",
            "seq": len(events),
            "time": events[-1]["time"] + 1,
            "data": {"title": "x", "messageSeqs": []},
        }
    )
    row = v.events_df(Session.from_events(header, events)).row(-1, named=True)
    assert row["turn"] is None and row["step"] is None


# --- surface and messages ------------------------------------------------------------------------


def test_surface_df_matches_surface(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    from ctxsdk.session._tokens import estimate_message

    for s in _all(samples, fixtures):
        df = v.surface_df(s)
        nodes = s.surface()
        assert df["seq"].to_list() == nodes.seqs
        assert df["position"].to_list() == list(range(len(nodes)))
        for row, node in zip(df.iter_rows(named=True), nodes, strict=True):
            assert row["type"] == node.type
            assert row["op"] == node.op
            assert row["shadowed"] == list(node.shadowed)
            assert row["message_id"] == node.message.id
            assert row["role"] == node.message.role
            expected = node.message.text + "".join(r.text for r in node.message.tool_results)
            assert row["text"] == expected
            assert row["tokens_estimate"] == estimate_message(node.message.to_json_dict())


def test_messages_df_matches_messages(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in _all(samples, fixtures):
        df = v.messages_df(s)
        msgs = s.messages()
        assert df["index"].to_list() == list(range(len(msgs)))
        assert df["seq"].to_list() == s.message_seqs()
        assert df["id"].to_list() == [m.id for m in msgs]
        assert df["role"].to_list() == [m.role for m in msgs]
        assert df["source_kind"].to_list() == [m.source.kind for m in msgs]
        assert df["n_blocks"].to_list() == [len(m.content) for m in msgs]
        assert df["tool_call_ids"].to_list() == [[c.id for c in m.tool_calls] for m in msgs]
        assert df["n_tool_calls"].to_list() == [len(m.tool_calls) for m in msgs]
        answers = [m.tool_results[0].tool_call_id if m.tool_results else None for m in msgs]
        assert df["answers_call_id"].to_list() == answers
        reasoning = [
            sum(len(b.text) for b in m.content if isinstance(b, ReasoningBlock)) for m in msgs
        ]
        assert df["reasoning_chars"].to_list() == reasoning


def test_messages_df_skips_empty_system_prompt_but_surface_keeps_it() -> None:
    header, events = v3_raw_session()
    events = copy.deepcopy(events)
    events[2]["data"]["message"]["content"] = []  # "no system prompt" (spec §5)
    s = Session.from_events(header, events)
    assert v.surface_df(s)["type"][0] == "system/message"
    assert "system" not in v.messages_df(s)["role"].to_list()
    assert v.tokens_df(s).height == v.messages_df(s).height


# --- tool calls ----------------------------------------------------------------------------------


def _calls_in_log(s: Session) -> list[str]:
    out = []
    for e in s.raw_events:
        if e["type"] == "assistant/message" and e.get("surfaceOp") == "append":
            out += [b["id"] for b in e["data"]["message"]["content"] if b["type"] == "tool-call"]
    return out


def test_every_sample_call_appears_once_with_its_result(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in _all(samples, fixtures):
        df = v.tools_df(s)
        assert df["call_id"].to_list() == _calls_in_log(s)
        assert df["call_id"].n_unique() == df.height
        assert df["result_seq"].null_count() == 0
        for row in df.iter_rows(named=True):
            result = s.raw_events[row["result_seq"]]
            assert result["type"] == "tool/result" and result["surfaceOp"] == "append"
            assert result["data"]["message"]["source"]["callId"] == row["call_id"]
            assert row["assistant_seq"] < row["call_seq"] < row["result_seq"]
            call = s.raw_events[row["call_seq"]]
            assert call["type"] == "tool/call" and call["data"]["callId"] == row["call_id"]
            assert call["data"]["name"] == row["name"]
            assert call["data"]["arguments"] == row["arguments"]
            assert row["arguments_chars"] == len(row["arguments"])
            block = result["data"]["message"]["content"][0]
            assert row["is_error"] == bool(block.get("isError"))
            text = "".join(b["text"] for b in block["content"] if b["type"] == "text")
            assert row["result_chars"] == len(text)
            assistant = s.raw_events[row["assistant_seq"]]["data"]
            assert (row["turn"], row["step"]) == (assistant["turn"], assistant["step"])


def test_sample_prune_and_compaction_are_flagged(samples: dict[str, Session]) -> None:
    s = samples["long-refactor"]
    df = v.tools_df(s)
    prune = next(e for e in s.raw_events if e["type"] == "compaction/prune")
    (pruned_seq,) = prune["data"]["shadowedSeqs"]
    pruned = df.filter("pruned")
    assert pruned["result_seq"].to_list() == [pruned_seq]
    rewrite = pruned["rewrite_seq"][0]
    assert s.index.shadowed_by[pruned_seq] == rewrite
    assert s.raw_events[rewrite]["type"] == "tool/result"
    # The sample later compacts the pruned result away too.
    assert pruned["on_surface"].to_list() == [rewrite in s.surface().seqs]
    surface = set(s.surface().seqs)
    compacted = 0
    for row in df.iter_rows(named=True):
        final = row["rewrite_seq"] if row["rewrite_seq"] is not None else row["result_seq"]
        assert row["on_surface"] == (final in surface)
        if not row["on_surface"]:
            compacted += 1
            replacer = s.index.shadowed_by[final]
            assert s.raw_events[replacer]["type"] == "user/message"  # the compaction checkpoint
    assert 0 < compacted < df.height


def test_tools_df_on_surface_agrees_with_surface_df(samples: dict[str, Session]) -> None:
    for s in samples.values():
        tools = v.tools_df(s)
        surface = v.surface_df(s).filter(pl.col("type") == "tool/result")
        current = tools.filter("on_surface").select(
            pl.coalesce("rewrite_seq", "result_seq").alias("seq")
        )
        assert sorted(current["seq"].to_list()) == sorted(surface["seq"].to_list())


def test_pruned_then_compacted_hand_made() -> None:
    s = _v3()
    s = s.rewrite_tool_result(7, "a.txt …", time=1790000001000)
    row = v.tools_df(s).row(0, named=True)
    assert row["pruned"] and row["on_surface"]
    assert row["result_seq"] == 7 and row["rewrite_seq"] == len(s) - 1
    assert row["result_chars"] == len("a.txt\nb.txt\n")  # the original result's size
    # a second rewrite of the rewrite
    s = s.rewrite_tool_result(row["rewrite_seq"], "gone", time=1790000001001)
    row = v.tools_df(s).row(0, named=True)
    assert row["rewrite_seq"] == len(s) - 1 and row["on_surface"]
    # compact the call and its result away
    s = s.replace(5, row["rewrite_seq"], "summary of the listing", time=1790000001002)
    row = v.tools_df(s).row(0, named=True)
    assert row["pruned"] and not row["on_surface"]
    tokens = v.tokens_df(s)
    assert "tool/result" not in tokens["type"].to_list()


def test_rewritten_result_keeps_its_tool_name_in_tokens() -> None:
    s = _v3().rewrite_tool_result(7, "short", time=1790000001000)
    df = v.tokens_df(s, "estimate")
    assert df.filter(pl.col("type") == "tool/result")["tool"].to_list() == ["bash"]


def test_pending_calls_of_an_interrupted_log() -> None:
    header, events = v3_raw_session()
    # cut after the assistant message: the call was never started
    s = Session.from_events(header, copy.deepcopy(events[:6]))
    assert s.is_interrupted
    row = v.tools_df(s).row(0, named=True)
    assert row["call_id"] == "call_1" and row["name"] == "bash"
    assert row["call_seq"] is None and row["result_seq"] is None
    assert row["is_error"] is None and row["on_surface"] is False and row["pruned"] is False
    # cut after tool/call: started, outcome unknown
    s = Session.from_events(header, copy.deepcopy(events[:7]))
    row = v.tools_df(s).row(0, named=True)
    assert row["call_seq"] == 6 and row["result_seq"] is None
    turn = v.turns_df(s).row(0, named=True)
    assert turn["end_seq"] is None and turn["reason"] is None and turn["duration_ms"] is None
    assert turn["tool_calls"] == 1
    # the crash-repair view answers it
    row = v.tools_df(s.repaired()).row(0, named=True)
    assert row["result_seq"] == 7 and row["is_error"] is True
    assert row["error_code"] == "TOOL_OUTCOME_UNKNOWN" and row["on_surface"]
    assert v.turns_df(s.repaired())["reason"].to_list() == ["interrupted"]


def _assistant(seq: int, step: int, content: list[dict[str, Any]], mid: str) -> dict[str, Any]:
    return {
        "type": "assistant/message",
        "seq": seq,
        "time": 1790000000100 + seq,
        "data": {
            "turn": 1,
            "step": step,
            "message": {"role": "assistant", "content": content, "source": MODEL_SOURCE, "id": mid},
            "stream": [],
        },
        "surfaceOp": "append",
    }


def _result(seq: int, step: int, call_id: str, text: str, **data: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool-result",
        "toolCallId": call_id,
        "content": [{"type": "text", "text": text}],
        "isError": bool(data),
    }
    ev: dict[str, Any] = {
        "type": "tool/result",
        "seq": seq,
        "time": 1790000000100 + seq,
        "data": {
            "turn": 1,
            "step": step,
            "message": {
                "source": {"kind": "tool", "callId": call_id},
                "content": [block],
                "role": "user",
                "id": f"r-{seq}",
            },
            **data,
        },
        "surfaceOp": "append",
    }
    return ev


def _simple(seq: int, etype: str, **data: Any) -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": 1790000000100 + seq, "data": data}


def test_reused_call_id_pairs_in_order_and_orphan_result_gets_its_own_row() -> None:
    header, base = v3_raw_session()
    events = copy.deepcopy(base[:10])  # through step 2's step/start
    call = {"type": "tool-call", "id": "call_1", "name": "read", "arguments": '{"p":"a"}'}
    events += [
        _assistant(10, 2, [call], "a-2"),
        _simple(
            11, "tool/call", turn=1, step=2, callId="call_1", name="read", arguments='{"p":"a"}'
        ),
        _result(12, 2, "call_1", "AAA"),
        _result(
            13,
            2,
            "ghost",
            "never started",
            error={"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
        ),
        _simple(14, "step/end", turn=1, step=2),
        _simple(15, "turn/end", turn=1, reason={"kind": "completed"}),
    ]
    s = Session.from_events(header, events)
    df = v.tools_df(s)
    assert df["call_id"].to_list() == ["call_1", "call_1", "ghost"]
    assert df["name"].to_list() == ["bash", "read", None]
    assert df["result_seq"].to_list() == [7, 12, 13]
    assert df["call_seq"].to_list() == [6, 11, None]
    assert df["assistant_seq"].to_list() == [5, 10, None]
    ghost = df.row(2, named=True)
    assert ghost["is_error"] and ghost["error_code"] == "TOOL_NOT_STARTED"
    assert (ghost["turn"], ghost["step"]) == (1, 2)
    assert v.turns_df(s)["tool_calls"].to_list() == [2]
    tools = v.tokens_df(s, "estimate")["tool"].to_list()
    assert tools == [None, None, "bash", "bash", "read", "read", None]


def test_tool_column_joins_distinct_names_in_call_order() -> None:
    header, base = v3_raw_session()
    events = copy.deepcopy(base[:5])
    calls = [
        {"type": "tool-call", "id": f"c{i}", "name": n, "arguments": "{}"}
        for i, n in enumerate(["grep", "bash", "grep"])
    ]
    events.append(_assistant(5, 1, [{"type": "text", "text": "go"}, *calls], "a-1"))
    s = Session.from_events(header, events)
    assert v.tokens_df(s, "estimate")["tool"].to_list()[-1] == "grep,bash"
    assert v.tools_df(s)["name"].to_list() == ["grep", "bash", "grep"]
    by_tool = v.tokens_by_tool(s, "estimate")
    assert by_tool["tool"].to_list() == ["grep,bash"]
    assert by_tool["type"].to_list() == ["assistant/message"]


# --- turns ---------------------------------------------------------------------------------------


def test_turns_df_matches_turns(samples: dict[str, Session], fixtures: dict[str, Session]) -> None:
    for s in _all(samples, fixtures):
        df = v.turns_df(s)
        turns = s.turns()
        assert df["turn"].to_list() == [t.turn for t in turns]
        assert df["reason"].to_list() == [t.reason for t in turns]
        assert df["steps"].to_list() == [len(t.steps) for t in turns]
        assert df["prompt"].to_list() == [t.prompt for t in turns]
        usage = dict(s.usage())
        for row in df.iter_rows(named=True):
            inside = [u for q, u in usage.items() if row["start_seq"] <= q <= row["end_seq"]]
            assert row["input_tokens"] == sum(u.input_tokens for u in inside)
            assert row["output_tokens"] == sum(u.output_tokens for u in inside)
            assert row["cache_read_tokens"] == sum(u.cache_read_tokens or 0 for u in inside)
            raw = s.raw_events
            assert row["duration_ms"] == raw[row["end_seq"]]["time"] - raw[row["start_seq"]]["time"]
        tools = v.tools_df(s)
        per_turn = tools.group_by("turn").len().sort("turn")
        counts = dict(zip(per_turn["turn"].to_list(), per_turn["len"].to_list(), strict=True))
        assert df["tool_calls"].to_list() == [counts.get(t, 0) for t in df["turn"].to_list()]


def test_turns_df_usage_null_without_usage() -> None:
    header, events = v3_raw_session()
    events = copy.deepcopy(events)
    for e in events:
        if e["type"] == "assistant/message":
            del e["data"]["usage"]
    row = v.turns_df(Session.from_events(header, events)).row(0, named=True)
    assert row["input_tokens"] is None and row["cache_read_tokens"] is None


# --- tokens --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "estimate"])
def test_tokens_df_consistent_with_session_tokens(
    tokenizer: str, samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in _all(samples, fixtures):
        df = v.tokens_df(s, tokenizer)
        table = s.tokens(tokenizer)
        assert int(df["tokens"].sum()) == table.total, s.id
        messages = df.filter(pl.col("type") != "request/header")
        assert messages["seq"].to_list() == [r.seq for r in table.rows]
        assert messages["tokens"].to_list() == [r.tokens for r in table.rows]
        assert messages["role"].to_list() == [r.role for r in table.rows]
        assert messages["type"].to_list() == [r.type for r in table.rows]
        estimate = s.tokens("estimate")
        assert int(df["estimate"].sum()) == estimate.total
        by_role = v.tokens_by_role(s, tokenizer)
        expected = table.by_role()
        if table.system:  # a v0-v2 request's system prompt is the first tokens_df row
            expected["system"] = expected.get("system", 0) + table.system
        assert dict(zip(by_role["role"], by_role["tokens"], strict=True)) == expected
        assert by_role["share"].sum() == pytest.approx(1.0)
        assert by_role["tokens"].to_list() == sorted(by_role["tokens"].to_list(), reverse=True)


def test_v0_system_prompt_row(fixtures: dict[str, Session]) -> None:
    for s in fixtures.values():
        df = v.tokens_df(s)
        system = s.system_prompt
        assert system
        first = df.row(0, named=True)
        assert first["type"] == "request/header" and first["role"] == "system"
        assert first["seq"] == s.index.header_seqs[-1]
        assert first["tokens"] == get_tokenizer("cl100k_base").count(system)
        assert first["tokens"] == s.tokens().system


def test_tokens_by_tool_sums(samples: dict[str, Session]) -> None:
    s = samples["long-refactor"]
    df = v.tokens_df(s)
    by_tool = v.tokens_by_tool(s)
    with_tool = df.filter(pl.col("tool").is_not_null())
    assert int(by_tool["tokens"].sum()) == int(with_tool["tokens"].sum())
    assert int(by_tool["messages"].sum()) == with_tool.height
    results = by_tool.filter(pl.col("type") == "tool/result")
    tools = v.tools_df(s).filter("on_surface")
    assert set(results["tool"].to_list()) == set(tools["name"].to_list())
    for row in results.iter_rows(named=True):
        assert row["messages"] == tools.filter(pl.col("name") == row["tool"]).height


class _CountingTokenizer:
    """A real tokenizer that records how it is called."""

    def __init__(self) -> None:
        self.inner = get_tokenizer("cl100k_base")
        self.name = "cl100k_base"
        self.batches: list[int] = []
        self.singles = 0

    def count(self, text: str) -> int:
        self.singles += 1
        return self.inner.count(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        self.batches.append(len(texts))
        return self.inner.count_batch(texts)


def test_counting_is_one_batch_through_the_counter(
    samples: dict[str, Session], fixtures: dict[str, Session]
) -> None:
    for s in [samples["long-refactor"], *fixtures.values()]:
        tk = _CountingTokenizer()
        counter = TokenCounter(tk)
        first = v.tokens_df(s, counter)
        assert len(tk.batches) == 1 and tk.singles == 0
        assert counter.misses > 0
        # the same counter again: everything from the cache, no tokenizer call at all
        misses = counter.misses
        again = v.tokens_df(s, counter)
        assert len(tk.batches) == 1 and counter.misses == misses
        assert again.equals(first)
        assert first.equals(v.tokens_df(s, "cl100k_base"))
