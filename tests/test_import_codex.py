"""Codex CLI rollouts: the real 0.77 (``codex exec``) and 0.125 (``codex-tui``) files import
with every record accounted for; small hand-written rollouts pin the mapping and the errors.

Real files come from ``../shared/data`` (skipped when it is absent)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import ImportFormatError
from ctxsdk.session import Session
from ctxsdk.session._foreign._emit import IMPORT_EVENT
from ctxsdk.session.importers import from_codex, import_provenance

from .conftest import SHARED

CODEX = SHARED / "data" / "agent-sessions" / "codex"
EXEC = "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
TUI = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"

Raw = dict[str, Any]


def _need(name: str) -> Path:
    path = CODEX / name
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _records(path: Path) -> list[Raw]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _appended(s: Session) -> list[Raw]:
    return [e for e in s.raw_events if e.get("surfaceOp") == "append"]


def _message(ev: Raw) -> Raw:
    return ev["data"] if ev["type"] == "user/message" else ev["data"]["message"]  # type: ignore[no-any-return]


def _texts(blocks: list[Raw]) -> str:
    return "".join(b["text"] for b in blocks if b.get("type") == "text")


# --- the real rollouts ----------------------------------------------------------------------


@pytest.mark.parametrize("name", [EXEC, TUI])
def test_every_real_rollout_imports_with_every_record_accounted_for(
    name: str, tmp_path: Path
) -> None:
    path = _need(name)
    records = _records(path)
    s = from_codex(path)
    assert s.id == records[0]["payload"]["id"]
    assert s.header.cwd == records[0]["payload"]["cwd"]
    logged = {e["data"]["line"] for e in s.raw_events if e["type"] == IMPORT_EVENT}
    assert logged == set(range(1, len(records) + 1))
    s.wire("openai")  # crash repair answers a call the file stopped after
    back = Session.open(s.save(tmp_path / "codex.v3.jsonl"))
    assert back.messages() == s.messages()
    assert import_provenance(back) == import_provenance(s)


@pytest.mark.parametrize("name", [EXEC, TUI])
def test_prompts_text_calls_and_results_are_in_order(name: str) -> None:
    path = _need(name)
    records = _records(path)
    s = from_codex(path)
    items = [r["payload"] for r in records if r["type"] == "response_item"]
    typed = {r["payload"]["message"] for r in records if r["payload"].get("type") == "user_message"}
    # What the source said, in order: user text, assistant text, call ids, output ids.
    expected: list[tuple[str, str]] = []
    for p in items:
        if p["type"] == "message" and p["role"] in ("user", "assistant"):
            expected += [(p["role"], c["text"]) for c in p["content"] if c["text"]]
        elif p["type"] in ("function_call", "custom_tool_call"):
            expected.append(("call", p["call_id"]))
        elif p["type"] in ("function_call_output", "custom_tool_call_output"):
            expected.append(("result", p["call_id"]))
    got: list[tuple[str, str]] = []
    for m in s.messages():
        for b in m.content:
            d = b.to_json_dict()
            if d["type"] == "text" and m.role in ("user", "assistant"):
                got.append((m.role, d["text"]))
            elif d["type"] == "tool-call":
                got.append(("call", d["id"]))
            elif d["type"] == "tool-result":
                got.append(("result", d["toolCallId"]))
    assert got == expected
    prompts = [m for m in s.messages() if m.role == "user" and m.source.kind == "user"]
    assert [_texts([b.to_json_dict() for b in m.content]) for m in prompts] == [
        p for role, p in expected if role == "user" and p in typed
    ]
    # Injected context (AGENTS.md, environment) is not a prompt.
    injected = [m for m in s.messages() if m.role == "user" and m.source.kind == "plugin"]
    assert injected and all(m.source.plugin == "codex" for m in injected)


def test_real_rollout_counts_ids_times_and_provenance() -> None:
    path = _need(TUI)
    records = _records(path)
    s = from_codex(path)
    msgs = s.messages()
    calls = [c for m in msgs for c in m.tool_calls]
    assert len(calls) == 102  # 99 exec_command / write_stdin / update_plan + 3 apply_patch
    assert sum(c.name == "apply_patch" for c in calls) == 3
    patch = next(c for c in calls if c.name == "apply_patch")
    assert patch.arguments.startswith("*** Begin Patch")  # freeform input kept as written
    assert [t.reason for t in s.turns()] == ["completed", "completed"]
    assert s.title == "let's update the defailt context compart to 90 in env var"
    assert (
        msgs[0].role == "system"
        and _texts([b.to_json_dict() for b in msgs[0].content])
        == (records[0]["payload"]["base_instructions"]["text"])
    )
    web = [
        b for e in _appended(s) for b in _message(e)["content"] if b["type"] == "codex-web-search"
    ]
    assert len(web) == 3 and web[0]["action"]["type"] == "search"
    prov = import_provenance(s)
    for seq, p in prov.items():
        ev = s.raw_events[seq]
        rec = records[p["line"] - 1]
        assert p["format"] == "codex" and p["source"] == TUI
        msg = _message(ev)
        if p["line"] > 1:  # the system head (session_meta) takes the first message's time
            assert ev["time"] == round(datetime.fromisoformat(rec["timestamp"]).timestamp() * 1000)
        assert msg["id"] in (f"codex:{s.id}:{p['line']}", f"codex:{s.id}:system")
        if ev["type"] == "tool/result":
            assert msg["content"][0]["toolCallId"] == rec["payload"]["call_id"] == p["callId"]
    # Parallel calls of one response are one assistant message, answered in the next step.
    assert any(len(m.tool_calls) == 3 for m in msgs)
    # Every response has the usage of the token_count record that followed it.
    usage = [e["data"].get("usage") for e in _appended(s) if e["type"] == "assistant/message"]
    assert all(u is not None for u in usage)


def test_exec_rollout_stops_after_a_call_and_titles_the_task() -> None:
    path = _need(EXEC)
    s = from_codex(path)
    assert s.title == "what is current repository about? summarize purpuse and explain goals"
    assert [t.reason for t in s.turns()] == [None] and s.is_interrupted
    calls = [c for m in s.messages() for c in m.tool_calls]
    assert [c.name for c in calls] == ["shell"] * 3
    reasoning = [
        b for m in s.messages() for b in m.content if b.to_json_dict()["type"] == "reasoning"
    ]
    assert len(reasoning) == 1  # the one readable summary; encrypted reasoning is not imported
    assert reasoning[0].to_json_dict()["text"].startswith("**Clarifying documentation")


# --- hand-written rollouts ------------------------------------------------------------------

SID = "019b0000-0000-7000-8000-000000000001"


def _rec(kind: str, payload: Raw, second: int = 0) -> Raw:
    return {"timestamp": f"2026-01-02T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _meta() -> Raw:
    return _rec(
        "session_meta",
        {
            "id": SID,
            "timestamp": "2026-01-02T10:00:00.000Z",
            "cwd": "/w",
            "cli_version": "0.125.0",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex."},
        },
    )


def _msg(role: str, text: str, second: int) -> Raw:
    part = "output_text" if role == "assistant" else "input_text"
    content = [{"type": part, "text": text}]
    return _rec("response_item", {"type": "message", "role": role, "content": content}, second)


def _typed(text: str, second: int) -> Raw:
    return _rec("event_msg", {"type": "user_message", "message": text}, second)


def _call(call_id: str, cmd: str, second: int) -> Raw:
    args = json.dumps({"cmd": cmd})
    payload = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": args,
        "call_id": call_id,
    }
    return _rec("response_item", payload, second)


def _out(call_id: str, output: str, second: int) -> Raw:
    payload = {"type": "function_call_output", "call_id": call_id, "output": output}
    return _rec("response_item", payload, second)


def _rollout() -> list[Raw]:
    return [
        _meta(),
        _rec("turn_context", {"cwd": "/w", "model": "gpt-5.5"}, 1),
        _msg("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>", 1),
        _msg("user", "Fix the failing parser test please", 2),
        _typed("Fix the failing parser test please", 2),
        _rec("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}, 3),
        _msg("assistant", "Running the tests.", 3),
        _call("c1", "pytest", 4),
        _call("c2", "git status", 4),
        _rec(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 100,
                        "cached_input_tokens": 40,
                        "output_tokens": 7,
                    }
                },
            },
            4,
        ),
        _out("c1", "Chunk ID: a\nProcess exited with code 1\nOutput:\nFAILED test_parse\n", 5),
        _out("c2", '{"output":"","metadata":{"exit_code":0}}', 5),
        _rec(
            "response_item",
            {
                "type": "custom_tool_call",
                "call_id": "p1",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** End Patch",
            },
            6,
        ),
        _rec(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": "p1", "output": "Success."},
            7,
        ),
        _msg("assistant", "Fixed.", 8),
        _rec("event_msg", {"type": "task_complete"}, 8),
    ]


def _write(tmp_path: Path, records: list[Raw], name: str = "rollout-test.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_hand_written_rollout_maps_every_kind(tmp_path: Path) -> None:
    s = from_codex(_write(tmp_path, _rollout()))
    assert s.id == SID and s.title == "Fix the failing parser test please"
    assert [t.reason for t in s.turns()] == ["completed"]
    roles = [(m.role, m.source.kind) for m in s.messages()]
    assert roles == [
        ("system", "plugin"),
        ("user", "plugin"),
        ("user", "user"),
        ("assistant", "model"),
        ("user", "tool"),
        ("user", "tool"),
        ("assistant", "model"),
        ("user", "tool"),
        ("assistant", "model"),
    ]
    first = s.messages()[3]
    assert [c.id for c in first.tool_calls] == ["c1", "c2"]
    results = [b.to_json_dict() for m in s.messages() for b in m.content if m.source.kind == "tool"]
    assert [(r["toolCallId"], r["isError"]) for r in results] == [
        ("c1", True),  # exit code 1 in the PTY header
        ("c2", False),
        ("p1", False),
    ]
    answer = next(e for e in _appended(s) if e["type"] == "assistant/message")
    assert answer["data"]["usage"] == {"inputTokens": 60, "outputTokens": 7, "cacheReadTokens": 40}
    assert answer["data"]["message"]["id"] == f"codex:{SID}:6"  # its first record: the reasoning
    prov = import_provenance(s)
    assert prov[answer["seq"]]["records"] == [6, 7, 8, 9]
    assert [m.source.model for m in s.messages() if m.role == "assistant"] == ["gpt-5.5"] * 3


def test_a_call_left_at_the_end_stays_open_and_one_in_the_middle_is_refused(
    tmp_path: Path,
) -> None:
    records = _rollout()
    s = from_codex(_write(tmp_path, records[:9]))
    assert s.is_interrupted and [t.reason for t in s.turns()] == [None]
    dangling = [*records[:11], *records[12:]]  # c2 never answered, then the patch call
    with pytest.raises(
        ImportFormatError,
        match=r"rollout-test.jsonl, line 6: tool call 'c2' .*no tool result before .*line 12",
    ):
        from_codex(_write(tmp_path, dangling))
    orphan = [*records[:4], _out("nope", "x", 2), *records[4:]]
    with pytest.raises(ImportFormatError, match=r"line 5.*tool result for call 'nope'"):
        from_codex(_write(tmp_path, orphan))


def test_a_compacted_record_is_a_compaction(tmp_path: Path) -> None:
    records = [
        *_rollout(),
        _rec("compacted", {"message": "Parser fixed; tests pass."}, 9),
        _msg("user", "Now add a changelog entry", 10),
        _typed("Now add a changelog entry", 10),
        _msg("assistant", "Added.", 11),
    ]
    s = from_codex(_write(tmp_path, records))
    assert any(e["type"] == "compaction/summary" for e in s.raw_events)
    assert "Parser fixed" in _texts([b.to_json_dict() for b in s.messages()[1].content])
    assert [t.reason for t in s.turns()][-1] == "completed"


def test_turn_aborted_at_the_end_closes_the_turn_aborted(tmp_path: Path) -> None:
    records = [*_rollout()[:7], _rec("event_msg", {"type": "turn_aborted", "reason": "x"}, 9)]
    s = from_codex(_write(tmp_path, records))
    assert s.turns()[-1].reason == "aborted"


def test_a_truncated_rollout_names_the_file_and_line(tmp_path: Path) -> None:
    text = "".join(json.dumps(r) + "\n" for r in _rollout())
    path = tmp_path / "rollout-torn.jsonl"
    path.write_text(text[: text.rindex('"Fixed.') + 3])
    with pytest.raises(ImportFormatError, match=r"rollout-torn.jsonl, line 15: not valid JSON"):
        from_codex(path)


def test_bad_json_in_the_middle_names_the_line(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _rollout()]
    lines[3] = lines[3][:-1] + ",}"
    path = tmp_path / "rollout-bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFormatError, match=r"rollout-bad.jsonl, line 4: not valid JSON"):
        from_codex(path)


def test_a_wrong_format_file_is_refused_naming_file_and_record(tmp_path: Path) -> None:
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"type": "user", "uuid": "u1", "message": {}}) + "\n")
    with pytest.raises(ImportFormatError, match=r"claude.jsonl, line 1: a rollout record needs"):
        from_codex(claude)
    no_meta = _write(tmp_path, _rollout()[1:], "rollout-nometa.jsonl")
    with pytest.raises(ImportFormatError, match=r"rollout-nometa.jsonl, line 1: .*session_meta"):
        from_codex(no_meta)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ImportFormatError, match=r"empty.jsonl, line 1: .*session_meta"):
        from_codex(tmp_path / "empty.jsonl")
    array = tmp_path / "chat.json"
    array.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(ImportFormatError, match=r"chat.json, line 1: a rollout record must be"):
        from_codex(array)


def test_malformed_records_name_the_line(tmp_path: Path) -> None:
    records = _rollout()
    records[7]["payload"].pop("call_id")
    with pytest.raises(ImportFormatError, match=r"line 8: function_call without a call_id"):
        from_codex(_write(tmp_path, records))
    records = _rollout()
    records[6]["payload"]["role"] = "robot"
    with pytest.raises(ImportFormatError, match=r"line 7: unknown message role 'robot'"):
        from_codex(_write(tmp_path, records))
    records = _rollout()
    records[3]["timestamp"] = "yesterday"
    with pytest.raises(ImportFormatError, match=r"line 4: timestamp 'yesterday' is not ISO"):
        from_codex(_write(tmp_path, records))


def test_the_same_file_gives_the_same_session(tmp_path: Path) -> None:
    path = _write(tmp_path, _rollout())
    assert list(from_codex(path).raw_events) == list(from_codex(path).raw_events)
    assert from_codex(path, session_id="mine").id == "mine"
