"""The Gemini CLI importer: the real chat files of ``../shared/data`` (skipped when absent)
and small chats written here for what the corpus does not show (cancelled calls, notices,
a chat that stops mid-call)."""

from __future__ import annotations

import contextlib
import json
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import ImportFormatError
from ctxsdk.session import Session
from ctxsdk.session._models import ReasoningBlock
from ctxsdk.session.importers import from_gemini_cli, import_provenance

from ._mutations import DELETE, field_paths, mutated

SHARED = Path(__file__).resolve().parents[2] / "shared"
GEMINI_DIR = SHARED / "data" / "agent-sessions" / "gemini-cli"
REAL = GEMINI_DIR / "session-2026-01-16T11-01-file-ops-37b7abef.json"
GEMINI_FILES: list[Any] = sorted(GEMINI_DIR.glob("*.json")) or [
    pytest.param(None, marks=pytest.mark.skip(reason=f"{GEMINI_DIR} is not available"))
]

Raw = dict[str, Any]


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _expected(doc: Raw) -> list[tuple[str, str]]:
    """(role, id) of every model-visible message, in the order the model saw them."""
    out: list[tuple[str, str]] = []
    for m in doc["messages"]:
        if m["type"] == "user":
            out.append(("user", m["id"]))
        elif m["type"] == "gemini":
            out.append(("assistant", m["id"]))
            out += [("user", f"{c['id']}#result") for c in m.get("toolCalls") or []]
    return out


@pytest.mark.parametrize("path", GEMINI_FILES)
def test_every_real_file_imports_in_order(path: Path, tmp_path: Path) -> None:
    doc = json.loads(path.read_text())
    s = from_gemini_cli(path)
    assert s.id == doc["sessionId"]
    msgs = s.messages()
    assert [(m.role, m.id) for m in msgs] == _expected(doc)
    calls = [c for m in doc["messages"] for c in m.get("toolCalls") or []]
    assert [c.id for m in msgs for c in m.tool_calls] == [c["id"] for c in calls]
    assert [r.tool_call_id for m in msgs for r in m.tool_results] == [c["id"] for c in calls]
    assert len(s.wire()) == len(msgs)
    back = Session.open(s.save(tmp_path / "imported.v3.jsonl"))
    assert list(back.raw_events) == list(s.raw_events)
    assert back.messages() == msgs
    assert import_provenance(back) == import_provenance(s)


def test_real_file_keeps_prompts_text_reasoning_calls_and_results() -> None:
    path = _need(REAL)
    doc = json.loads(path.read_text())
    s = from_gemini_cli(path)
    assert s.header.created_at == 1768561282281  # startTime 2026-01-16T11:01:22.281Z
    assert [t.reason for t in s.turns()] == ["completed"] * 5  # five prompts, each answered
    msgs = {m.id: m for m in s.messages()}
    source = {m["id"]: m for m in doc["messages"]}
    for mid, m in source.items():
        if m["type"] == "user":
            assert msgs[mid].text == m["content"]
            assert msgs[mid].source.kind == "user"
            continue
        got = msgs[mid]
        assert got.text == m["content"]
        reasoning = [b.text for b in got.content if isinstance(b, ReasoningBlock)]
        assert reasoning == [f"**{t['subject']}**\n\n{t['description']}" for t in m["thoughts"]]
        assert got.source.model == "gemini-3-pro"
        for call, block in zip(m.get("toolCalls") or [], got.tool_calls, strict=True):
            assert (block.name, json.loads(block.arguments)) == (call["name"], call["args"])
            result = msgs[f"{call['id']}#result"].tool_results[0]
            output = call["result"][0]["functionResponse"]["response"]["output"]
            assert "".join(b.text for b in result.content) == output  # type: ignore[union-attr]
            assert result.is_error is False
    # The sub-agent's delegation is a tool call whose result is the sub-agent's report.
    delegate = msgs["delegate_to_agent-1768561360282-f3e15e35f2c3d#result"].tool_results[0]
    assert "Subagent 'codebase_investigator' finished." in delegate.content[0].text  # type: ignore[union-attr]
    first = next(e for e in s.raw_events if e["type"] == "assistant/message")
    tokens = doc["messages"][1]["tokens"]
    assert first["data"]["usage"]["inputTokens"] == tokens["input"] - tokens["cached"]


def test_real_file_ids_times_and_provenance() -> None:
    path = _need(REAL)
    doc = json.loads(path.read_text())
    s = from_gemini_cli(path)
    prov = import_provenance(s)
    seqs = s.message_seqs()
    by_seq = dict(zip(seqs, s.messages(), strict=True))
    index = {m["id"]: (i, m) for i, m in enumerate(doc["messages"])}
    for seq, msg in by_seq.items():
        p = prov[seq]
        assert p["format"] == "gemini-cli"
        assert p["source"] == REAL.name
        if msg.id.endswith("#result"):
            call_id = msg.id.removesuffix("#result")
            assert p["record"] == call_id
            assert p["status"] == "success"
        else:
            i, m = index[msg.id]
            assert p["record"] == m["id"]
            assert p["index"] == i
            ev = next(e for e in s.raw_events if e.get("seq") == seq)
            assert ev["time"] == round(datetime.fromisoformat(m["timestamp"]).timestamp() * 1000)
    # The same file, the same log.
    assert list(from_gemini_cli(path).raw_events) == list(s.raw_events)
    # The chat's metadata is kept as provenance.
    meta = [e["data"] for e in s.raw_events if e["data"].get("record") == "session"]
    assert meta[0]["projectHash"] == doc["projectHash"]


def test_real_file_title_names_the_task() -> None:
    s = from_gemini_cli(_need(REAL))
    # "show tools" is a command; the task is the next prompt.
    assert s.title == "expore repository and figure out issues. focus on adaptability and security"


# --- small chats written here -----------------------------------------------------------------


def _chat(*messages: Raw, **extra: Any) -> Raw:
    return {
        "sessionId": "gem-test",
        "projectHash": "abc",
        "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:01:00.000Z",
        "messages": list(messages),
        **extra,
    }


def _user(mid: str, text: str, t: int) -> Raw:
    return {
        "id": mid,
        "timestamp": f"2026-01-01T00:00:{t:02d}.000Z",
        "type": "user",
        "content": text,
    }


def _gemini(mid: str, text: str, t: int, calls: list[Raw] | None = None) -> Raw:
    m: Raw = {
        "id": mid,
        "timestamp": f"2026-01-01T00:00:{t:02d}.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": [],
        "model": "gemini-2.5-pro",
        "tokens": {
            "input": 100,
            "output": 10,
            "cached": 40,
            "thoughts": 5,
            "tool": 0,
            "total": 115,
        },
    }
    if calls is not None:
        m["toolCalls"] = calls
    return m


def _call(cid: str, status: str = "success", output: str | None = "ok", **extra: Any) -> Raw:
    call: Raw = {
        "id": cid,
        "name": "run_shell_command",
        "args": {"command": "ls"},
        "status": status,
    }
    if output is not None:
        call["result"] = [
            {
                "functionResponse": {
                    "id": cid,
                    "name": "run_shell_command",
                    "response": {"output": output},
                }
            }
        ]
    return {**call, **extra}


def test_usage_summary_title_and_a_failed_call(tmp_path: Path) -> None:
    doc = _chat(
        _user("u1", "fix the build", 1),
        _gemini("g1", "", 2, [_call("c1", status="error", output=None, resultDisplay="boom")]),
        _gemini("g2", "", 3, [_call("c2", status="cancelled", output=None)]),
        _gemini(
            "g3",
            "",
            4,
            [
                {
                    **_call("c3", output=None),
                    "result": [
                        {
                            "functionResponse": {
                                "id": "c3",
                                "name": "x",
                                "response": {"error": "denied"},
                            }
                        }
                    ],
                }
            ],
        ),
        _gemini("g4", "done", 5),
        summary="Fix the failing build",
    )
    s = from_gemini_cli(_write(tmp_path / "chat.json", doc))
    assert s.title == "Fix the failing build"
    results = {m.id: m.tool_results[0] for m in s.messages() if m.tool_results}
    assert results["c1#result"].is_error and results["c1#result"].content[0].text == "boom"  # type: ignore[union-attr]
    assert results["c2#result"].is_error and "cancelled" in results["c2#result"].content[0].text  # type: ignore[union-attr]
    assert results["c3#result"].is_error and results["c3#result"].content[0].text == "denied"  # type: ignore[union-attr]
    first = next(e for e in s.raw_events if e["type"] == "assistant/message")
    assert first["data"]["usage"] == {
        "inputTokens": 60,
        "outputTokens": 15,
        "cacheReadTokens": 40,
        "reasoningTokens": 5,
    }
    assert [t.reason for t in s.turns()] == ["completed"]


def test_notices_are_provenance_and_an_error_ends_the_turn(tmp_path: Path) -> None:
    info = {"id": "i1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "info", "content": "hi"}
    err = {
        "id": "e1",
        "timestamp": "2026-01-01T00:00:04.000Z",
        "type": "error",
        "content": "[API Error: quota exceeded]",
    }
    doc = _chat(
        _user("u1", "hello there", 1), info, _gemini("g1", "hi", 3), _user("u2", "and now?", 4), err
    )
    s = from_gemini_cli(_write(tmp_path / "chat.json", doc))
    assert [m.id for m in s.messages()] == ["u1", "g1", "u2"]
    turns = s.turns()
    assert [t.reason for t in turns] == ["completed", "error"]
    skipped = [e["data"] for e in s.raw_events if e["data"].get("skipped")]
    assert [(d["record"], d.get("content")) for d in skipped[:2]] == [
        ("i1", "hi"),
        ("e1", "[API Error: quota exceeded]"),
    ]


def test_a_call_without_a_result(tmp_path: Path) -> None:
    # At the very end: the turn stays open and crash repair answers it.
    doc = _chat(
        _user("u1", "list files please", 1), _gemini("g1", "", 2, [_call("c1", output=None)])
    )
    s = from_gemini_cli(_write(tmp_path / "end.json", doc))
    assert s.is_interrupted
    assert s.repaired().messages()[-1].tool_results[0].tool_call_id == "c1"
    # In the middle: refused, naming the call.
    doc["messages"] += [_gemini("g2", "done", 3)]
    with pytest.raises(
        ImportFormatError, match=r"mid.json, messages\[1\] \(id g1\): tool call 'c1'"
    ):
        from_gemini_cli(_write(tmp_path / "mid.json", doc))


def test_a_result_without_its_call_is_refused(tmp_path: Path) -> None:
    call = _call("c1")
    call["result"][0]["functionResponse"]["id"] = "c9"
    doc = _chat(_user("u1", "list files please", 1), _gemini("g1", "", 2, [call]))
    with pytest.raises(
        ImportFormatError,
        match=r"chat.json, messages\[1\] \(id g1\), toolCalls\[0\] \(id c1\), result\[0\]: "
        r"functionResponse answers call 'c9'",
    ):
        from_gemini_cli(_write(tmp_path / "chat.json", doc))


def test_truncated_wrong_format_and_bad_json_are_located(tmp_path: Path) -> None:
    text = json.dumps(_chat(_user("u1", "hello there", 1), _gemini("g1", "hi", 2)), indent=1)
    (tmp_path / "torn.json").write_text(text[: len(text) // 2])
    with pytest.raises(ImportFormatError, match=r"torn.json, line \d+ column \d+: not valid JSON"):
        from_gemini_cli(tmp_path / "torn.json")
    (tmp_path / "bad.json").write_text('{"sessionId": "x", "messages": [}')
    with pytest.raises(ImportFormatError, match=r"bad.json, line 1 column 33: not valid JSON"):
        from_gemini_cli(tmp_path / "bad.json")
    (tmp_path / "claude.jsonl").write_text('{"type": "user", "uuid": "a"}\n{"type": "user"}\n')
    with pytest.raises(ImportFormatError, match=r"claude.jsonl, line 2 column 1: not valid JSON"):
        from_gemini_cli(tmp_path / "claude.jsonl")
    _write(tmp_path / "list.json", [{"role": "user", "content": "hi"}])
    with pytest.raises(ImportFormatError, match=r"list.json: not a Gemini CLI chat file"):
        from_gemini_cli(tmp_path / "list.json")
    _write(tmp_path / "role.json", _chat({"id": "m0", "type": "assistant", "content": "hi"}))
    with pytest.raises(
        ImportFormatError,
        match=r"role.json, messages\[0\] \(id m0\): unknown message type 'assistant'",
    ):
        from_gemini_cli(tmp_path / "role.json")
    broken = _chat(_user("u1", "hello there", 1), _gemini("g1", "", 2, [_call("c1")]))
    broken["messages"][1]["toolCalls"][0]["args"] = 3
    _write(tmp_path / "args.json", broken)
    with pytest.raises(
        ImportFormatError,
        match=r"args.json, messages\[1\] \(id g1\), toolCalls\[0\] \(id c1\): 'args'",
    ):
        from_gemini_cli(tmp_path / "args.json")
    broken["messages"][0]["timestamp"] = "yesterday"
    _write(tmp_path / "time.json", broken)
    with pytest.raises(ImportFormatError, match=r"time.json, messages\[0\] \(id u1\): timestamp"):
        from_gemini_cli(tmp_path / "time.json")


_BAD: list[Any] = [DELETE, None, 3, "x", [], {}, [{"type": 1}], [{"text": 1}]]


def test_hand_broken_chats_raise_only_import_errors(tmp_path: Path) -> None:
    """Every field of a small chat, broken every way: a result or an ImportFormatError,
    never a KeyError or TypeError."""
    doc = _chat(
        _user("u1", "hello there", 1),
        _gemini(
            "g1",
            "",
            2,
            [
                _call("c1"),
                {**_call("c2"), "name": "delegate_to_agent", "args": {"agent_name": "a"}},
            ],
        ),
        _gemini("g2", "hi", 3),
    )
    doc["messages"][1]["thoughts"] = [{"subject": "S", "description": "D", "timestamp": "x"}]
    rnd = random.Random(5)
    path = tmp_path / "fuzz.json"
    for where in field_paths(doc, per_list=2):
        _write(path, mutated(doc, where, rnd.choice(_BAD)))
        with contextlib.suppress(ImportFormatError):
            from_gemini_cli(path).wire()
