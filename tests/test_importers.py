"""Importers: foreign agent logs become valid v3 DSH sessions that keep every source record.

Real files come from ``../shared/data`` (tests that need them skip when it is absent); the
chat formats are tested on conversations written here. LoCoMo is read in place, never copied.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest

from ctxsdk.errors import ImportFormatError
from ctxsdk.session import Session
from ctxsdk.session._foreign._emit import IMPORT_EVENT
from ctxsdk.session._harness import CHECKPOINT_PREAMBLE
from ctxsdk.session._models import ReasoningBlock
from ctxsdk.session.importers import (
    FORMATS,
    from_claude_code,
    from_locomo,
    from_messages,
    from_swe_agent,
    import_file,
    import_provenance,
)

from ._mutations import DELETE, field_paths, mutated

SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA = SHARED / "data"
CC_DIR = DATA / "claude-code-transcript"
CC_MAIN = CC_DIR / "sample_main_transcript.jsonl"
CC_SIDE = CC_DIR / "sample_agent_sidechain.jsonl"
SWE_DIR = DATA / "swe-agent-trajectories"
SWE_FILES = [
    "gpt4__pydicom__pydicom-1458.traj",
    "fc_replay__marshmallow-code__marshmallow-1867.traj",
    "ctf_web__i_got_id_demo.traj",
    "ctf_crypto__katy.traj",
]
SWE_FC = SWE_DIR / SWE_FILES[1]
LOCOMO = DATA / "locomo" / "locomo10.json"

Raw = dict[str, Any]


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _appended(s: Session, etype: str | None = None) -> list[Raw]:
    """Append-origin surface events (what the source showed, before any replacement)."""
    return [
        e
        for e in s.raw_events
        if e.get("surfaceOp") == "append" and (etype is None or e["type"] == etype)
    ]


def _message(ev: Raw) -> Raw:
    return ev["data"] if ev["type"] == "user/message" else ev["data"]["message"]  # type: ignore[no-any-return]


def _by_id(s: Session) -> dict[str, Raw]:
    """Message id -> the event that first appended it."""
    out: dict[str, Raw] = {}
    for ev in _appended(s):
        out.setdefault(_message(ev)["id"], ev)
    return out


def _texts(msg: Raw) -> str:
    return "".join(b["text"] for b in msg["content"] if b.get("type") == "text")


def _round_trip(s: Session, tmp_path: Path) -> Session:
    path = s.save(tmp_path / "imported.v3.jsonl")
    back = Session.open(path)
    assert list(back.raw_events) == list(s.raw_events)
    assert back.messages() == s.messages()
    assert import_provenance(back) == import_provenance(s)
    return back


def _ms(stamp: str) -> int:
    return round(datetime.fromisoformat(stamp).timestamp() * 1000)


# --- chat formats (no shared data needed) ------------------------------------------------------

OPENAI_CHAT: list[Raw] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is in the repo?"},
    {
        "role": "assistant",
        "reasoning_content": "List it, and the cwd.",
        "content": "Listing.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command":"ls"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command":"pwd"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "README.md\nsrc/"},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "/w"}]},
    {"role": "assistant", "content": "A README and src/, in /w."},
    {"role": "user", "content": [{"type": "text", "text": "Thanks."}]},
    {"role": "assistant", "content": "You're welcome."},
]

ANTHROPIC_CHAT: list[Raw] = [
    {"role": "user", "content": "What is in the repo?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "List it, and the cwd.", "signature": "sig"},
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "c2", "name": "bash", "input": {"command": "pwd"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "README.md\nsrc/"},
            {
                "type": "tool_result",
                "tool_use_id": "c2",
                "content": [{"type": "text", "text": "/w"}],
            },
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "A README and src/, in /w."}]},
    {"role": "user", "content": "Thanks."},
    {"role": "assistant", "content": "You're welcome."},
]


def _shape(s: Session) -> list[tuple[str, list[Raw]]]:
    return [(m.role, [b.to_json_dict() for b in m.content]) for m in s.messages()]


def test_openai_and_anthropic_give_the_same_messages() -> None:
    oa = from_messages(OPENAI_CHAT, "openai")
    an = from_messages(ANTHROPIC_CHAT, "anthropic", system="You are terse.")
    assert _shape(oa) == _shape(an)
    assert [m.id for m in oa.messages()][1:] == [
        "openai:1",
        "openai:2",
        "openai:3",
        "openai:4",
        "openai:5",
        "openai:6",
        "openai:7",
    ]
    assert oa.messages()[2].source.provider == "openai"
    assert an.messages()[2].source.provider == "anthropic"
    assert oa.wire() == an.wire()
    assert oa.system_prompt == an.system_prompt == "You are terse."


def test_chat_turns_and_steps() -> None:
    s = from_messages(OPENAI_CHAT)
    turns = s.turns()
    assert [(t.turn, len(t.steps), t.reason) for t in turns] == [
        (1, 2, "completed"),
        (2, 1, "completed"),
    ]
    assert turns[0].prompt == "What is in the repo?"
    assert not s.is_interrupted
    reasoning = s.messages()[2].content[0]
    assert isinstance(reasoning, ReasoningBlock) and reasoning.text == "List it, and the cwd."
    results = [m for m in s.messages() if m.tool_results]
    assert [r.tool_results[0].tool_call_id for r in results] == ["c1", "c2"]
    assert [r.tool_results[0].text for r in results] == ["README.md\nsrc/", "/w"]
    # The harness's own pairing: each result cites its tool/call event, in the call's step.
    for ev in _appended(s, "tool/result"):
        call = s.raw_events[ev["sourceEventSeqs"][0]]
        assert call["type"] == "tool/call"
        assert call["data"]["callId"] == ev["data"]["message"]["source"]["callId"]
        assert (call["data"]["turn"], call["data"]["step"]) == (
            ev["data"]["turn"],
            ev["data"]["step"],
        )


def test_chat_provenance_and_round_trip(tmp_path: Path) -> None:
    s = from_messages(ANTHROPIC_CHAT, "anthropic", source="chat.json")
    prov = import_provenance(s)
    seqs = s.message_seqs()
    assert s.surface()[0].seq not in prov  # the empty system head was not in the input
    for seq in seqs:
        p = prov[seq]
        assert p["format"] == "anthropic" and p["source"] == "chat.json"
        msg = _message(s.raw_events[seq])
        assert msg["id"].split(":")[1].split("#")[0] == str(p["record"])
    # Both tool results come from message 2.
    assert [prov[q]["record"] for q in seqs if _message(s.raw_events[q])["role"] == "user"] == [
        0,
        2,
        2,
        4,
    ]
    for ev in s.raw_events:
        if ev["type"] == IMPORT_EVENT:
            assert ev["ignorable"] is True
    _round_trip(s, tmp_path)


def test_error_result_and_text_sent_with_results_stay_in_the_turn() -> None:
    msgs = copy.deepcopy(ANTHROPIC_CHAT)
    msgs[2]["content"][0]["is_error"] = True
    msgs[2]["content"].append({"type": "text", "text": "Also check docs/."})
    s = from_messages(msgs, "anthropic")
    assert len(s.turns()) == 2
    first = s.messages()[2]
    assert first.tool_results[0].is_error is True
    extra = s.messages()[4]
    assert (extra.id, extra.text, extra.source.kind) == (
        "anthropic:2#2",
        "Also check docs/.",
        "user",
    )


def test_dangling_call_in_the_middle_is_refused() -> None:
    msgs = [m for m in OPENAI_CHAT if m.get("tool_call_id") != "c2"]
    with pytest.raises(
        ImportFormatError,
        match=r"message 2: tool call 'c2' \(bash\) has no tool result before messages, message 4",
    ):
        from_messages(msgs)


def test_dangling_call_at_the_end_is_left_to_crash_repair() -> None:
    s = from_messages(OPENAI_CHAT[:4])  # c2 never answered, nothing after it
    assert s.is_interrupted
    assert s.turns()[-1].reason is None
    repaired = s.repaired()
    last = repaired.messages()[-1]
    assert last.tool_results[0].tool_call_id == "c2" and last.tool_results[0].is_error
    # the harness's closers, then its resume marker
    assert repaired.raw_events[-1]["type"] == "session/end-seed"
    assert repaired.raw_events[-2]["data"]["reason"] == {"kind": "interrupted"}
    assert repaired.raw_events[-4]["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert s.wire()[-1]["tool_call_id"] == "c2"  # wire() repairs first


def test_unanswered_prompt_at_the_end_leaves_the_turn_open() -> None:
    s = from_messages([*OPENAI_CHAT, {"role": "user", "content": "One more thing."}])
    assert s.is_interrupted and len(s.turns()) == 3
    assert s.repaired().turns()[-1].reason == "interrupted"


def test_chat_tools_system_and_later_system_messages() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "bash", "description": "Run.", "parameters": {"type": "object"}},
        }
    ]
    msgs = [
        *OPENAI_CHAT[:2],
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hi."},
    ]
    s = from_messages(msgs, tools=tools, model="gpt-x", session_id="chat-1")
    assert s.id == "chat-1"
    assert s.tools == [{"name": "bash", "description": "Run.", "parameters": {"type": "object"}}]
    assert s.route == ("openai", "gpt-x")
    assert [m.role for m in s.messages()] == ["system", "user", "system", "assistant"]
    assert s.system_prompt == "You are terse."


def test_chat_ids_are_deterministic() -> None:
    assert from_messages(OPENAI_CHAT).id == from_messages(copy.deepcopy(OPENAI_CHAT)).id
    assert from_messages(OPENAI_CHAT).raw_events == from_messages(OPENAI_CHAT).raw_events
    assert from_messages(OPENAI_CHAT).id != from_messages(OPENAI_CHAT[:-1]).id


@pytest.mark.parametrize(
    ("fmt", "index", "change", "pattern"),
    [
        ("openai", 1, {"role": "robot"}, r"message 1: unknown role 'robot'"),
        ("openai", 2, {"tool_calls": "ls"}, r"message 2: 'tool_calls' must be a list"),
        ("openai", 3, {"tool_call_id": None}, r"message 3: 'tool_call_id' must be a string"),
        ("openai", 3, {"tool_call_id": "zz"}, r"message 3: tool result for call 'zz'"),
        (
            "openai",
            1,
            {"content": [{"text": "no type"}]},
            r"message 1, content\[0\]: a content block must be an object with a string type",
        ),
        ("openai", 5, {"function_call": {"name": "f"}}, r"message 5: legacy function_call"),
        (
            "anthropic",
            1,
            {"content": [{"type": "tool_use", "name": "bash", "input": {}}]},
            r"message 1, content\[0\]: 'id' must be a string",
        ),
        (
            "anthropic",
            2,
            {"content": [{"type": "tool_result", "content": "x"}]},
            r"message 2, content\[0\]: 'tool_use_id' must be a string",
        ),
        (
            "anthropic",
            3,
            {"content": 7},
            r"message 3: content must be a string or a list of blocks",
        ),
    ],
)
def test_malformed_chat_messages_name_the_message(
    fmt: str, index: int, change: Raw, pattern: str
) -> None:
    msgs = copy.deepcopy(OPENAI_CHAT if fmt == "openai" else ANTHROPIC_CHAT)
    msgs[index].update(change)
    with pytest.raises(ImportFormatError, match=pattern):
        from_messages(msgs, fmt)  # type: ignore[arg-type]
    with pytest.raises(ImportFormatError, match="message 0: a message must be an object"):
        from_messages(["hi"], fmt)  # type: ignore[arg-type]


_BAD = [DELETE, None, 3, "x", [], {}, [{"type": 1}]]


def _only_import_errors(run: Callable[[], Any]) -> None:
    """The call succeeds or raises ImportFormatError; never KeyError, TypeError and friends."""
    with contextlib.suppress(ImportFormatError):
        run()


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_hand_broken_chats_raise_only_import_errors(fmt: Literal["openai", "anthropic"]) -> None:
    chat = OPENAI_CHAT if fmt == "openai" else ANTHROPIC_CHAT
    for path in field_paths(chat, per_list=3):
        for bad in _BAD:
            broken = mutated(chat, path, bad)
            _only_import_errors(lambda b=broken: from_messages(b, fmt).wire())  # type: ignore[misc]


def test_import_file_for_chat_files(tmp_path: Path) -> None:
    (tmp_path / "oa.json").write_text(json.dumps(OPENAI_CHAT))
    (tmp_path / "an.json").write_text(
        json.dumps({"system": "You are terse.", "messages": ANTHROPIC_CHAT})
    )
    (tmp_path / "oa.jsonl").write_text("".join(json.dumps(m) + "\n" for m in OPENAI_CHAT))
    oa = import_file("openai", tmp_path / "oa.json")
    an = import_file("anthropic", tmp_path / "an.json")
    assert _shape(oa) == _shape(an) == _shape(import_file("openai", tmp_path / "oa.jsonl"))
    assert import_provenance(oa)[oa.message_seqs()[1]]["source"] == "oa.json"
    (tmp_path / "bad.json").write_text('[{"role": "user", "content": "hi"},\n {"role": ')
    with pytest.raises(ImportFormatError, match=r"bad.json, line 2 column \d+: not valid JSON"):
        import_file("openai", tmp_path / "bad.json")
    (tmp_path / "bad.jsonl").write_text('{"role": "user", "content": "hi"}\n{oops\n')
    with pytest.raises(ImportFormatError, match=r"bad.jsonl, line 2: not valid JSON"):
        import_file("openai", tmp_path / "bad.jsonl")
    with pytest.raises(ImportFormatError, match="unknown format 'cursor'"):
        import_file("cursor", tmp_path / "oa.json")
    with pytest.raises(ImportFormatError, match="oa.json, line 1: a rollout record"):
        import_file("codex", tmp_path / "oa.json")  # a chat file is no Codex rollout
    with pytest.raises(ImportFormatError, match="locomo only"):
        import_file("openai", tmp_path / "oa.json", conversation=1)
    assert set(FORMATS) == {
        "openai", "anthropic", "claude-code", "codex", "gemini-cli", "openhands", "aider",
        "swe-agent", "mini-swe-agent", "locomo",
    }  # fmt: skip


# --- Claude Code ----------------------------------------------------------------------------------


def _cc_records(path: Path = CC_MAIN) -> list[Raw]:
    return [json.loads(line) for line in _need(path).read_text().splitlines() if line.strip()]


def _write_records(path: Path, records: list[Raw]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_claude_code_imports_the_main_thread() -> None:
    s = from_claude_code(_need(CC_MAIN))
    records = _cc_records()
    assert s.id == "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    assert s.header.cwd == "/workspace"
    assert s.header.created_at == _ms(records[1]["timestamp"])
    assert [t.reason for t in s.turns()] == ["completed"] * 5 + [None]
    assert s.is_interrupted  # the file ends with /compact's local-command echo, no reply yet
    # One assistant message per message.id: Claude Code's one-block-per-record split is merged.
    msg_ids = list(dict.fromkeys(r["message"]["id"] for r in records if r["type"] == "assistant"))
    assistants = _appended(s, "assistant/message")
    assert len(assistants) == len(msg_ids) == 12
    prov = import_provenance(s)
    for ev, mid in zip(assistants, msg_ids, strict=True):
        uuids = [
            r["uuid"] for r in records if r["type"] == "assistant" and r["message"]["id"] == mid
        ]
        assert prov[ev["seq"]]["records"] == uuids
        assert ev["data"]["message"]["id"] == uuids[0]
        blocks = [
            b
            for r in records
            if r.get("message", {}).get("id") == mid
            for b in r["message"]["content"]
        ]
        kinds = {"thinking": "reasoning", "text": "text", "tool_use": "tool-call"}
        assert [b["type"] for b in ev["data"]["message"]["content"]] == [
            kinds[b["type"]] for b in blocks
        ]


def test_claude_code_tool_calls_stay_paired() -> None:
    s = from_claude_code(_need(CC_MAIN))
    records = _cc_records()
    source_calls = [
        b
        for r in records
        if r["type"] == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    ]
    source_results = {
        b["tool_use_id"]: b
        for r in records
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    }
    calls = [
        b
        for ev in _appended(s, "assistant/message")
        for b in ev["data"]["message"]["content"]
        if b["type"] == "tool-call"
    ]
    assert [c["id"] for c in calls] == [b["id"] for b in source_calls]
    assert [json.loads(c["arguments"]) for c in calls] == [b["input"] for b in source_calls]
    results = _appended(s, "tool/result")
    assert len(results) == len(source_results) == 10
    for ev in results:
        block = ev["data"]["message"]["content"][0]
        src = source_results[block["toolCallId"]]
        assert block["content"] == [{"type": "text", "text": src["content"]}]  # verbatim
        assert block["isError"] is bool(src.get("is_error"))
    # The parallel Read + Bash + Bash call: one message, three results right after, same step.
    parallel = next(
        ev
        for ev in _appended(s, "assistant/message")
        if sum(b["type"] == "tool-call" for b in ev["data"]["message"]["content"]) == 3
    )
    ids = [b["id"] for b in parallel["data"]["message"]["content"] if b["type"] == "tool-call"]
    after = [ev for ev in results if ev["seq"] > parallel["seq"]][:3]
    assert [ev["data"]["message"]["source"]["callId"] for ev in after] == ids
    assert {(ev["data"]["turn"], ev["data"]["step"]) for ev in after} == {
        (parallel["data"]["turn"], parallel["data"]["step"])
    }
    assert [ev["data"]["message"]["content"][0]["isError"] for ev in after] == [False, True, False]


CC_CORPUS = DATA / "agent-sessions" / "claude-code"
REAL_CC = sorted(CC_CORPUS.rglob("*.jsonl"))  # sub-agent transcripts (subagents/) included
CC_SPOTTER = CC_CORPUS / "spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
CC_SUBAGENTS = CC_CORPUS / "spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20" / "subagents"


def _real_cc_check(s: Session, tools: bool = True) -> None:
    """User prompts, assistant text and every tool call paired with its result."""
    assert any(ev["data"]["content"] for ev in _appended(s, "user/message"))
    assistants = _appended(s, "assistant/message")
    assert any(b["type"] == "text" for ev in assistants for b in ev["data"]["message"]["content"])
    calls = [
        b["id"]
        for ev in assistants
        for b in ev["data"]["message"]["content"]
        if b["type"] == "tool-call"
    ]
    results = [
        ev["data"]["message"]["content"][0]["toolCallId"] for ev in _appended(s, "tool/result")
    ]
    assert (bool(calls) == tools) and sorted(results) == sorted(calls)
    assert len(set(calls)) == len(calls)


@pytest.mark.parametrize(
    "path", REAL_CC, ids=[p.relative_to(CC_CORPUS).as_posix() for p in REAL_CC]
)
def test_real_claude_code_transcripts_import(path: Path) -> None:
    s = from_claude_code(path)
    s.wire()
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # A sub-agent file is all sidechain records; a main transcript's sidechains are not its own.
    side = all(r.get("isSidechain") for r in records if r.get("type") in ("user", "assistant"))
    assert (s.origin == "subagent") == side
    calls = {
        b["id"]
        for r in records
        if r.get("type") == "assistant" and bool(r.get("isSidechain")) == side
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    }
    _real_cc_check(s, tools=bool(calls))
    thread = {
        b["id"]
        for ev in _appended(s, "assistant/message")
        for b in ev["data"]["message"]["content"]
        if b["type"] == "tool-call"
    }
    compacted = any(r.get("subtype") == "compact_boundary" for r in records)
    assert thread <= calls and (compacted or thread == calls)


def test_real_claude_code_transcripts_are_there() -> None:
    if not REAL_CC:
        pytest.skip("../shared/data/agent-sessions/claude-code is not available")
    assert len(REAL_CC) >= 8 and any(p.parent.name == "subagents" for p in REAL_CC)


def test_claude_code_progress_and_parallel_tool_use_records(tmp_path: Path) -> None:
    base = {"isSidechain": False, "sessionId": "s-1", "cwd": "/w", "version": "2.1.38"}
    n = iter(range(10, 60))

    def rec(uid: str, parent: str | None, kind: str, **extra: Any) -> Raw:
        t = f"2026-02-10T21:11:{next(n)}.000Z"
        return {**base, "uuid": uid, "parentUuid": parent, "type": kind, "timestamp": t, **extra}

    def asst(uid: str, parent: str, mid: str, block: Raw) -> Raw:
        message = {"id": mid, "role": "assistant", "model": "claude-opus-4-6", "content": [block]}
        return rec(uid, parent, "assistant", message=message)

    def result(uid: str, parent: str, call: str, text: str) -> Raw:
        block = {"type": "tool_result", "tool_use_id": call, "content": text}
        return rec(uid, parent, "user", message={"role": "user", "content": [block]})

    def use(call: str) -> Raw:
        return {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": call}}

    hook = {"type": "hook_progress", "hookEvent": "SessionStart"}
    records = [
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        rec("p0", None, "progress", data=hook),
        rec("u1", "p0", "user", message={"role": "user", "content": "list and count"}),
        asst("a1", "u1", "msg_1", {"type": "text", "text": "Running both."}),
        asst("a2", "a1", "msg_1", use("toolu_ls")),
        rec("p1", "a2", "progress", data={"type": "hook_progress", "hookEvent": "PreToolUse"}),
        asst("a3", "p1", "msg_1", use("toolu_wc")),
        result("r1", "a2", "toolu_ls", "a b"),  # hangs off its own call's record
        result("r2", "a3", "toolu_wc", "2"),
        asst("a4", "r2", "msg_2", {"type": "text", "text": "Two files."}),
    ]
    s = from_claude_code(_write_records(tmp_path / "parallel.jsonl", records))
    _real_cc_check(s)
    [first, last] = _appended(s, "assistant/message")
    assert [b["type"] for b in first["data"]["message"]["content"]] == ["text"] + ["tool-call"] * 2
    results = _appended(s, "tool/result")
    assert [ev["data"]["message"]["source"]["callId"] for ev in results] == [
        "toolu_ls",
        "toolu_wc",
    ]
    assert first["seq"] < results[0]["seq"] < results[1]["seq"] < last["seq"]
    assert import_provenance(s)[first["seq"]]["records"] == ["a1", "a2", "a3"]
    skipped = [ev["data"].get("skipped") for ev in s.raw_events if ev["type"] == IMPORT_EVENT]
    assert "off-thread" not in skipped and skipped.count("progress") == 2


def _cc_thread(side: bool) -> Callable[..., Raw]:
    """A maker of Claude Code records (``kind`` ``user``/``assistant``/``progress``)."""
    base: Raw = {"isSidechain": side, "sessionId": "s-main", "cwd": "/w", "version": "2.1.39"}
    if side:
        base["agentId"] = "a1b2c3d"
    n = iter(range(10, 60))

    def rec(uid: str, parent: str | None, kind: str, content: Any = None, **extra: Any) -> Raw:
        r: Raw = {**base, "uuid": uid, "parentUuid": parent, "type": kind, **extra}
        r["timestamp"] = f"2026-02-11T22:38:{next(n)}.000Z"
        if kind == "user":
            r["message"] = {"role": "user", "content": content}
        elif kind == "assistant":
            mid, blocks = content
            r["message"] = {
                "id": mid,
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": blocks,
            }
        return r

    return rec


def _use(call: str, name: str = "Read") -> Raw:
    return {"type": "tool_use", "id": call, "name": name, "input": {"file_path": call}}


def _res(call: str, content: Any = "ok") -> list[Raw]:
    return [{"type": "tool_result", "tool_use_id": call, "content": content}]


def _subagent_records(first_parent: str | None, side: bool = True) -> list[Raw]:
    """A sub-agent's parallel calls as Claude Code 2.1.x writes them: the first call runs and
    its result is written before the message's next ``tool_use`` record, which hangs off that
    result; the second call's result is a side branch (agent-a7be2f0.jsonl, lines 2-15)."""
    rec = _cc_thread(side)
    text = {"type": "text", "text": "Reading three files."}
    return [
        rec("u1", first_parent, "user", "Explain the registry."),
        rec("a1", "u1", "assistant", ("msg_1", [text])),
        rec("a2", "a1", "assistant", ("msg_1", [_use("c1")])),
        rec("p1", "a2", "progress", data={"type": "hook_progress"}),
        rec("r1", "a2", "user", _res("c1", "one")),
        rec("a3", "r1", "assistant", ("msg_1", [_use("c2")])),
        rec("a4", "a3", "assistant", ("msg_1", [_use("c3", "Glob")])),
        rec("r2", "a3", "user", _res("c2", "two")),  # off the thread: a sibling's result
        rec("r3", "a4", "user", _res("c3", "three")),
        rec("a5", "r3", "assistant", ("msg_2", [{"type": "text", "text": "Done."}])),
    ]


def test_claude_code_subagent_parallel_calls_and_a_parent_in_the_main_transcript(
    tmp_path: Path,
) -> None:
    s = from_claude_code(_write_records(tmp_path / "agent-a1b2c3d.jsonl", _subagent_records(None)))
    assert s.origin == "subagent" and s.parent_id == "s-main"
    _real_cc_check(s)
    [first, last] = _appended(s, "assistant/message")
    assert [b.get("id") for b in first["data"]["message"]["content"]] == [None, "c1", "c2", "c3"]
    results = _appended(s, "tool/result")
    assert [ev["data"]["message"]["source"]["callId"] for ev in results] == ["c1", "c2", "c3"]
    assert first["seq"] < results[0]["seq"] and results[-1]["seq"] < last["seq"]
    assert s.turns()[0].reason == "completed"
    # The thread starts where the file does, even when its first parent is a main-thread record.
    outside = "baf018bd-4787-46a4-9bd2-4e3fb5024f70"
    path = _write_records(tmp_path / "agent-acompact-1.jsonl", _subagent_records(outside))
    forked = from_claude_code(path)
    assert [m.id for m in forked.messages()] == [m.id for m in s.messages()]
    prov = import_provenance(forked)
    [root] = [p for p in prov.values() if p.get("outsideParentUuid")]
    assert root["record"] == "u1" and root["outsideParentUuid"] == outside and root["line"] == 1
    # A main transcript with a missing parent is incomplete: refused, with path and line.
    main = _write_records(tmp_path / "main.jsonl", _subagent_records(outside, side=False))
    with pytest.raises(ImportFormatError) as caught:
        from_claude_code(main)
    assert f"{main}, line 1 (uuid u1): parentUuid '{outside}' is not a record" in str(caught.value)


def test_claude_code_a_call_without_result_is_answered_as_crash_repair_does(
    tmp_path: Path,
) -> None:
    from ctxsdk.session._repair import OUTCOME_UNKNOWN_TEXT

    rec = _cc_thread(False)
    records = [
        rec("u1", None, "user", "Read both."),
        rec("a1", "u1", "assistant", ("msg_1", [_use("c1")])),
        rec("a2", "a1", "assistant", ("msg_1", [_use("c2")])),
        rec("r1", "a2", "user", _res("c1")),  # c2 never got a result
        rec("a3", "r1", "assistant", ("msg_2", [{"type": "text", "text": "Only one."}])),
        rec("u2", "a3", "user", "Thanks."),
        rec("a4", "u2", "assistant", ("msg_3", [_use("c3")])),  # the end: left open
    ]
    s = from_claude_code(_write_records(tmp_path / "cut.jsonl", records))
    results = _appended(s, "tool/result")
    assert [ev["data"]["message"]["source"]["callId"] for ev in results] == ["c1", "c2"]
    synthetic = results[1]["data"]["message"]
    assert synthetic["id"] == "interrupted-tool-result-c2"
    [block] = synthetic["content"]
    assert block["isError"] is True
    assert block["content"] == [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT}]
    assert results[1]["time"] == _ms(records[4]["timestamp"])  # the next message's time
    prov = import_provenance(s)[results[1]["seq"]]
    assert prov["record"] is None and prov["synthetic"] and prov["callId"] == "c2"
    assert [t.reason for t in s.turns()] == ["completed", None]
    assert s.is_interrupted  # the last call is left to crash repair, as before
    s.repaired().wire()


def test_claude_code_images_are_image_blocks(tmp_path: Path) -> None:
    rec = _cc_thread(False)
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    shot = {"type": "image", "source": png}
    records = [
        rec("u1", None, "user", [{"type": "text", "text": "What is wrong here?"}, shot]),
        rec("a1", "u1", "assistant", ("msg_1", [_use("c1", "Screenshot")])),
        rec("r1", "a1", "user", _res("c1", [shot])),
        rec("a2", "r1", "assistant", ("msg_2", [{"type": "text", "text": "A red banner."}])),
    ]
    s = from_claude_code(_write_records(tmp_path / "images.jsonl", records))
    [prompt] = _appended(s, "user/message")
    text, image = prompt["data"]["content"]
    assert text == {"type": "text", "text": "What is wrong here?"}
    assert image["type"] == "image" and image["attachment"]["mediaType"] == "image/png"
    assert image["attachment"]["attachmentId"].startswith("import-sha256-")
    assert "iVBORw0KGgo=" not in json.dumps(s.raw_events)  # the bytes are not copied
    [result] = _appended(s, "tool/result")
    assert [b["type"] for b in result["data"]["message"]["content"][0]["content"]] == ["image"]
    s.wire()


def test_real_claude_code_subagents_and_compaction() -> None:
    """The corpus's sub-agent files: parallel calls spliced, and the compaction agent whose
    thread starts at the main transcript's last record before its compact_boundary."""
    main = from_claude_code(_need(CC_SPOTTER))
    records = [json.loads(line) for line in CC_SPOTTER.read_text().splitlines()]
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    summary = next(r for r in records if r.get("isCompactSummary"))
    kinds = [ev["type"] for ev in main.raw_events if ev["type"].startswith("compaction/")]
    assert kinds == ["compaction/start", "compaction/summary", "compaction/end"]
    start = next(ev for ev in main.raw_events if ev["type"] == "compaction/start")
    assert start["data"]["compactionId"] == boundary["uuid"]
    checkpoint = next(n for n in main.surface() if n.message.id == summary["uuid"])
    assert checkpoint.op == "replace"

    agent = from_claude_code(_need(CC_SUBAGENTS / "agent-a7be2f0.jsonl"))
    assert agent.origin == "subagent" and agent.parent_id == main.id
    first = _appended(agent, "assistant/message")[0]["data"]["message"]["content"]
    assert [b["type"] for b in first] == ["text"] + ["tool-call"] * 3

    compact = from_claude_code(_need(CC_SUBAGENTS / "agent-acompact-f46190.jsonl"))
    assert compact.parent_id == main.id
    assert compact.descriptor is not None
    assert compact.descriptor.label == "Claude Code compaction agent acompact-f46190"
    [root] = [p for p in import_provenance(compact).values() if p.get("outsideParentUuid")]
    assert root["outsideParentUuid"] == boundary["logicalParentUuid"]
    assert [m.role for m in compact.messages() if m.role != "system"] == ["user", "assistant"]
    assert compact.turns()[0].reason == "completed"


def test_claude_code_compaction_is_a_surface_replace() -> None:
    s = from_claude_code(_need(CC_MAIN))
    records = _cc_records()
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    summary = next(r for r in records if r.get("isCompactSummary"))
    nodes = s.surface()
    assert [n.type for n in nodes] == ["system/message"] + ["user/message"] * 4
    checkpoint = nodes[1]
    assert checkpoint.op == "replace"
    assert checkpoint.message.id == summary["uuid"]
    assert (
        checkpoint.message.source.kind == "plugin" and checkpoint.message.source.plugin == "compact"
    )
    texts = [b.text for b in checkpoint.message.content]  # type: ignore[union-attr]
    assert texts == [
        f"{CHECKPOINT_PREAMBLE}\n\n<compacted-summary>",
        summary["message"]["content"],
        "</compacted-summary>",
    ]
    # Everything the model saw before the boundary is shadowed, and cited.
    before = [
        ev["seq"]
        for ev in _appended(s)
        if ev["seq"] < checkpoint.seq and ev["type"] != "system/message"
    ]
    assert list(checkpoint.shadowed) == before
    kinds = [ev["type"] for ev in s.raw_events if ev["type"].startswith("compaction/")]
    assert kinds == ["compaction/start", "compaction/summary", "compaction/end"]
    start = next(ev for ev in s.raw_events if ev["type"] == "compaction/start")
    summ = next(ev for ev in s.raw_events if ev["type"] == "compaction/summary")
    assert start["data"] == {
        "compactionId": boundary["uuid"],
        "turn": None,
    }  # a manual /compact between turns
    assert summ["data"]["summary"] == [{"type": "text", "text": summary["message"]["content"]}]
    assert summ["data"]["shadowedSeqs"] == before
    repl = s.raw_events[checkpoint.seq]
    assert repl["sourceEventSeqs"][:2] == [start["seq"], summ["seq"]]
    assert repl["surfaceOp"] == {"op": "replace", "startSeq": before[0], "endSeq": before[-1]}
    # What the model receives next: the checkpoint and the /compact echo.
    wire = s.wire()
    assert [w["role"] for w in wire] == ["user"] * 4
    assert summary["message"]["content"] in wire[0]["content"]


def test_claude_code_verbatim_times_and_provenance() -> None:
    s = from_claude_code(_need(CC_MAIN))
    lines = _need(CC_MAIN).read_text().splitlines()
    by_id = _by_id(s)
    for line in lines:
        rec = json.loads(line)
        content = rec.get("message", {}).get("content")
        if rec["type"] == "user" and isinstance(content, str) and not rec.get("isCompactSummary"):
            ev = by_id[rec["uuid"]]
            assert _texts(ev["data"]) == content
            assert ev["time"] == _ms(rec["timestamp"])
    prov = import_provenance(s)
    for seq, p in prov.items():
        rec = json.loads(lines[p["line"] - 1])
        assert rec["uuid"] == p["record"] and p["source"] == CC_MAIN.name
        assert s.raw_events[seq]["type"] in ("user/message", "assistant/message", "tool/result")
    # Every line of the file is accounted for: imported or logged as skipped, with its reason.
    logged = {ev["data"]["line"]: ev["data"] for ev in s.raw_events if ev["type"] == IMPORT_EVENT}
    assert set(logged) == set(range(1, len(lines) + 1))
    skipped = {d.get("skipped") for d in logged.values()} - {None}
    assert skipped == {"file-history-snapshot", "system/stop_hook_summary"}
    assert logged[59]["eventSeq"] == next(
        ev["seq"] for ev in s.raw_events if ev["type"] == "compaction/start"
    )
    assert logged[59]["compactMetadata"] == {"trigger": "manual", "preTokens": 21558}


def test_claude_code_sidechain_is_a_subagent_session(tmp_path: Path) -> None:
    s = from_claude_code(_need(CC_SIDE))
    assert s.origin == "subagent" and s.delegation_depth == 1
    assert s.parent_id == "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    # Its own id shares no prefix with the parent's, so a short prefix opens the parent.
    assert s.id == "0fbcef46-6b36-594e-973d-1c2845776f77" == from_claude_code(CC_SIDE).id
    assert s.id[:8] != s.parent_id[:8]
    assert s.descriptor is not None and s.descriptor.label == "Claude Code agent af1ff21"
    assert [m.role for m in s.messages() if m.role != "system"] == ["user", "assistant"]
    assert s.turns()[0].reason == "completed"
    _round_trip(s, tmp_path)


def test_claude_code_sidechain_and_parent_open_by_short_prefix(tmp_path: Path) -> None:
    from ctxsdk.session import Workspace
    from ctxsdk.session._codec import canonical_file_name
    from ctxsdk.session._layout import session_dir, sessions_root

    main, side = from_claude_code(_need(CC_MAIN)), from_claude_code(_need(CC_SIDE))
    root = sessions_root(tmp_path)
    for s in (main, side):
        s.save(session_dir(root, s.header.cwd, s.id) / canonical_file_name(3))
    ws = Workspace(tmp_path, cache=False)
    assert ws.open(main.id[:8]).id == main.id
    assert ws.open(side.id[:8]).id == side.id and side.parent_id == main.id


def test_claude_code_follows_parent_links_not_file_order(tmp_path: Path) -> None:
    records = _cc_records()
    base = from_claude_code(CC_MAIN)
    # Shuffle every record but the last (the leaf): the thread is rebuilt by parentUuid.
    head = records[:-1]
    random.Random(7).shuffle(head)
    shuffled = from_claude_code(_write_records(tmp_path / "shuffled.jsonl", [*head, records[-1]]))
    assert [m.id for m in shuffled.messages()] == [m.id for m in base.messages()]
    assert _shape(shuffled) == _shape(base)
    # A branch (an earlier attempt the user rewound) is not part of the thread.
    branch = copy.deepcopy(records[6])  # an assistant text record
    branch.update(uuid="ffffffff-0000-4000-8000-000000000000", parentUuid=records[5]["uuid"])
    branch["message"]["id"] = "msg_branch"
    branch["message"]["content"] = [{"type": "text", "text": "an abandoned answer"}]
    branched = from_claude_code(
        _write_records(tmp_path / "branched.jsonl", [*records[:10], branch, *records[10:]])
    )
    assert _shape(branched) == _shape(base)
    skips = [
        ev["data"]
        for ev in branched.raw_events
        if ev["type"] == IMPORT_EVENT and ev["data"].get("skipped") == "off-thread"
    ]
    assert [d["record"] for d in skips] == [branch["uuid"]]


def test_claude_code_round_trip(tmp_path: Path) -> None:
    back = _round_trip(from_claude_code(_need(CC_MAIN)), tmp_path)
    assert back.surface()[1].op == "replace"


def _broken_cc(tmp_path: Path, index: int, change: Callable[[Raw], None]) -> Path:
    records = _cc_records()
    change(records[index])
    return _write_records(tmp_path / "broken.jsonl", records)


def test_malformed_claude_code_names_the_line(tmp_path: Path) -> None:
    records = _cc_records()
    lines = [json.dumps(r) for r in records]
    (tmp_path / "torn.jsonl").write_text("\n".join(lines[:20]) + '\n{"type": "user", "mess')
    with pytest.raises(ImportFormatError, match=r"torn.jsonl, line 21: not valid JSON"):
        from_claude_code(tmp_path / "torn.jsonl")
    missing = _broken_cc(
        tmp_path, 9, lambda r: r.update(parentUuid="00000000-dead-4000-8000-000000000000")
    )
    with pytest.raises(
        ImportFormatError,
        match=r"broken.jsonl, line 10 \(uuid e8404307-.*\): parentUuid '00000000-dead-.*' is not a record of this file",
    ):
        from_claude_code(missing)
    no_message = _broken_cc(tmp_path, 3, lambda r: r.pop("message"))
    with pytest.raises(
        ImportFormatError, match=r"line 4 \(uuid 671cb728-.*\): 'message' must be an object"
    ):
        from_claude_code(no_message)
    wrong_result = _broken_cc(
        tmp_path, 4, lambda r: r["message"]["content"][0].update(tool_use_id="toolu_nope")
    )
    with pytest.raises(
        ImportFormatError, match=r"line 5 \(uuid 855f7359-.*\): tool result for call 'toolu_nope'"
    ):
        from_claude_code(wrong_result)
    no_summary = _broken_cc(
        tmp_path, 59, lambda r: r.pop("isCompactSummary") and r["message"].update(content="hello")
    )
    with pytest.raises(
        ImportFormatError,
        match=r"line 59 \(uuid 2b772f69-.*\): compact_boundary is not followed by its summary",
    ):
        from_claude_code(no_summary)
    bad_time = _broken_cc(tmp_path, 1, lambda r: r.update(timestamp="yesterday"))
    with pytest.raises(
        ImportFormatError,
        match=r"line 2 \(uuid 0bdd2740-.*\): timestamp 'yesterday' is not ISO-8601",
    ):
        from_claude_code(bad_time)
    cycle = _broken_cc(tmp_path, 1, lambda r: r.update(parentUuid=records[-1]["uuid"]))
    with pytest.raises(ImportFormatError, match="form a cycle"):
        from_claude_code(cycle)


def test_hand_broken_claude_code_records_raise_only_import_errors(tmp_path: Path) -> None:
    records = _cc_records()
    rnd = random.Random(3)
    path = tmp_path / "fuzz.jsonl"
    for index in (1, 2, 3, 4, 36, 37, 46, 47, 58, 59):
        for field in field_paths(records[index], per_list=3):
            if rnd.random() < 0.5:
                continue
            broken = [
                *records[:index],
                mutated(records[index], field, rnd.choice(_BAD)),
                *records[index + 1 :],
            ]
            _write_records(path, broken)
            _only_import_errors(lambda: from_claude_code(path).wire())


# --- SWE-agent ------------------------------------------------------------------------------------


def test_swe_agent_titles_name_the_task() -> None:
    titles = {name: from_swe_agent(_need(SWE_DIR / name)).title for name in SWE_FILES}
    assert titles == {
        "gpt4__pydicom__pydicom-1458.traj": (
            "pydicom-1458: Pixel Representation attribute should be optional for pixel dat…"
        ),
        "fc_replay__marshmallow-code__marshmallow-1867.traj": (
            "marshmallow-1867: TimeDelta serialization precision"
        ),
        "ctf_web__i_got_id_demo.traj": "CTF I Got Id (web security)",
        "ctf_crypto__katy.traj": "CTF Katy (cryptography)",
    }
    for title in titles.values():
        assert title is not None and len(title.encode()) <= 80
        assert "currently solving" not in title


def test_swe_agent_title_without_an_issue_marker(tmp_path: Path) -> None:
    doc = {
        "history": [
            {"role": "system", "content": "SETTING: you are an agent"},
            {"role": "user", "content": "\n## Make the parser accept tabs\n\nDetails follow."},
            {"role": "assistant", "content": "ok"},
        ]
    }
    path = tmp_path / "run__acme__parser-7.traj"
    path.write_text(json.dumps(doc))
    assert from_swe_agent(path).title == "parser-7: Make the parser accept tabs"
    (tmp_path / "plain.traj").write_text(json.dumps({"history": doc["history"][:1]}))
    assert from_swe_agent(tmp_path / "plain.traj").title is None  # no prompt: no title event


@pytest.mark.parametrize("name", SWE_FILES)
def test_swe_agent_files_import_verbatim(name: str, tmp_path: Path) -> None:
    path = _need(SWE_DIR / name)
    doc = json.loads(path.read_text())
    history = doc["history"]
    s = from_swe_agent(path, context_edits=False)
    stem = path.stem
    assert s.id == f"swe:{stem}"
    assert [t.reason for t in s.turns()] == ["completed"]
    assert len(s.turns()[0].steps) == sum(m["role"] == "assistant" for m in history)
    by_id = _by_id(s)
    prov = import_provenance(s)
    for i, m in enumerate(history):
        ev = by_id[f"swe:{stem}:{i}"]
        msg = _message(ev)
        inner = msg["content"][0]["content"] if ev["type"] == "tool/result" else msg["content"]
        assert "".join(b["text"] for b in inner if b["type"] == "text") == m["content"]
        assert prov[ev["seq"]]["record"] == i
        assert msg["role"] == ("user" if m["role"] == "tool" else m["role"])
    # Without context edits the model view is the history itself.
    assert [w["content"] for w in s.wire()] == [m["content"] or "(no output)" for m in history]
    _round_trip(from_swe_agent(path), tmp_path)


def test_swe_agent_text_actions_are_observations_in_one_turn() -> None:
    path = _need(SWE_DIR / SWE_FILES[0])
    s = from_swe_agent(path)
    msgs = s.messages()
    assert [m.source.kind for m in msgs[:3]] == ["plugin", "plugin", "user"]  # system, demo, issue
    assert msgs[1].source.form == "instructions"
    observations = [m for m in msgs[4:] if m.role == "user"]
    assert observations and all(
        m.source.plugin == "swe-agent" and m.source.form == "relay" for m in observations
    )
    assert not any(m.tool_calls for m in msgs)  # text actions stay text, as the model wrote them
    assert "submit" in msgs[-1].text
    info = next(
        ev["data"]
        for ev in s.raw_events
        if ev["type"] == IMPORT_EVENT and ev["data"]["record"] == "info"
    )
    assert info["info"]["exit_status"] == "submitted"


def test_swe_agent_function_calling_keeps_call_ids_and_context_edits() -> None:
    path = _need(SWE_FC)
    doc = json.loads(path.read_text())
    history = doc["history"]
    s = from_swe_agent(path)
    source_ids = [c["id"] for m in history if m["role"] == "assistant" for c in m["tool_calls"]]
    calls = [
        b
        for ev in _appended(s, "assistant/message")
        for b in ev["data"]["message"]["content"]
        if b["type"] == "tool-call"
    ]
    assert [c["id"] for c in calls] == source_ids and len(calls) == 13
    assert [c["arguments"] for c in calls] == [
        c["function"]["arguments"]
        for m in history
        if m["role"] == "assistant"
        for c in m["tool_calls"]
    ]
    results = _appended(s, "tool/result")
    assert [ev["data"]["message"]["source"]["callId"] for ev in results] == [
        m["tool_call_ids"][0] for m in history if m["role"] == "tool"
    ]
    # The surface is the context SWE-agent last sent: old outputs elided, ids and order kept.
    last = doc["trajectory"][-1]["messages"]
    wire = s.wire()
    assert [(w["role"], w["content"]) for w in wire] == [(m["role"], m["content"]) for m in last]
    assert [w.get("tool_call_id") for w in wire] == [
        (m.get("tool_call_ids") or [None])[0] for m in last
    ]
    rewrites = [n for n in s.surface() if n.op == "replace"]
    assert len(rewrites) == 8
    assert all(
        n.type == "tool/result"
        and n.message.tool_results[0].text.startswith("Old environment output")
        for n in rewrites
    )
    prov = import_provenance(s)
    assert prov[rewrites[0].seq]["record"] == "trajectory[5].messages[3]"
    # The full output is still in the log, shadowed.
    assert (
        _by_id(s)[f"swe:{path.stem}:3"]["data"]["message"]["content"][0]["content"][0]["text"]
        == history[3]["content"]
    )


@pytest.mark.parametrize(
    ("index", "change", "pattern"),
    [
        (
            3,
            {"tool_call_ids": ["a", "b"]},
            r"history\[3\]: a tool message needs tool_call_ids with exactly one call id",
        ),
        (3, {"tool_call_ids": ["call_nope"]}, r"history\[3\]: tool result for call 'call_nope'"),
        (4, {"role": "observer"}, r"history\[4\]: unknown role 'observer'"),
        (
            2,
            {"tool_calls": [{"id": "x"}]},
            r"history\[2\], tool_calls\[0\]: a tool call needs a function object",
        ),
        (5, {"content": 42}, r"history\[5\]: content must be a string or a list of text parts"),
    ],
)
def test_malformed_swe_agent_names_the_message(
    tmp_path: Path, index: int, change: Raw, pattern: str
) -> None:
    doc = json.loads(_need(SWE_FC).read_text())
    doc["history"][index].update(change)
    (tmp_path / "broken.traj").write_text(json.dumps(doc))
    with pytest.raises(ImportFormatError, match="broken.traj, " + pattern):
        from_swe_agent(tmp_path / "broken.traj")


def test_hand_broken_swe_agent_raises_only_import_errors(tmp_path: Path) -> None:
    doc = json.loads(_need(SWE_FC).read_text())
    path = tmp_path / "fuzz.traj"
    rnd = random.Random(5)
    paths = [("history", i, k) for i, m in enumerate(doc["history"]) for k in m]
    paths += [
        p
        for p in field_paths(doc, per_list=3)
        if p[0] == "history" or (p[0] == "trajectory" and len(p) <= 5)
    ]
    for field in rnd.sample(paths, min(len(paths), 120)):
        path.write_text(json.dumps(mutated(doc, field, rnd.choice(_BAD))))
        _only_import_errors(lambda: from_swe_agent(path).wire())
    path.write_text("[1, 2]")
    with pytest.raises(
        ImportFormatError, match="fuzz.traj: a trajectory file holds one JSON object"
    ):
        from_swe_agent(path)


# --- LoCoMo ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def locomo() -> list[Raw]:
    return json.loads(_need(LOCOMO).read_text())  # type: ignore[no-any-return]


def _sessions(conv: Raw) -> list[tuple[int, list[Raw]]]:
    keys = [k for k, v in conv.items() if k.startswith("session_") and isinstance(v, list) and v]
    return sorted((int(k.split("_")[1]), conv[k]) for k in keys)


def test_locomo_keeps_every_utterance_verbatim(locomo: list[Raw]) -> None:
    total = 0
    for index, sample in enumerate(locomo):
        s = from_locomo(locomo, index)
        sid = sample["sample_id"]
        conv = sample["conversation"]
        sessions = _sessions(conv)
        assert s.id == f"locomo:{sid}"
        assert [t.reason for t in s.turns()] == ["completed"] * len(sessions)
        by_id = _by_id(s)
        prov = import_provenance(s)
        for number, turns in sessions:
            note = by_id[f"locomo:{sid}:session_{number}"]
            date = conv[f"session_{number}_date_time"]
            assert date in _texts(note["data"])
            assert note["time"] == round(
                datetime.strptime(date, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).timestamp()
                * 1000
            )
            for turn in turns:
                ev = by_id[f"locomo:{sid}:{turn['dia_id']}"]
                msg = ev["data"]
                assert msg["content"][1] == {"type": "text", "text": turn["text"]}
                assert msg["content"][0]["text"] == f"{turn['speaker']}: "
                assert msg["source"] == {
                    "kind": "user",
                    "speaker": turn["speaker"],
                    "diaId": turn["dia_id"],
                }
                assert prov[ev["seq"]]["record"] == turn["dia_id"]
                total += 1
    assert total == 5882


def test_locomo_images_acks_and_selection(locomo: list[Raw], tmp_path: Path) -> None:
    s = from_locomo(_need(LOCOMO), "conv-26")
    assert s.id == "locomo:conv-26" and s.title == "LoCoMo conv-26: Caroline and Melanie"
    turn = next(t for t in locomo[0]["conversation"]["session_4"] if "img_url" in t)
    ev = _by_id(s)[f"locomo:conv-26:{turn['dia_id']}"]
    assert ev["data"]["content"][2]["text"] == f" [shared an image: {turn['blip_caption']}]"
    prov = import_provenance(s)[ev["seq"]]
    assert prov["img_url"] == turn["img_url"] and prov["source"] == "locomo10.json"
    acks = [m for m in s.messages() if m.role == "assistant"]
    assert len(acks) == len(s.turns())
    ack_prov = import_provenance(s)[s.message_seqs()[s.messages().index(acks[0])]]
    assert ack_prov["synthetic"] is True and ack_prov["record"] == "session_1"
    assert (
        s.wire()[1]["content"] == f"Caroline: {locomo[0]['conversation']['session_1'][0]['text']}"
    )
    assert import_file("locomo", LOCOMO, conversation=3).id == f"locomo:{locomo[3]['sample_id']}"
    _round_trip(s, tmp_path)


def test_malformed_locomo_names_the_turn(locomo: list[Raw]) -> None:
    broken = copy.deepcopy(locomo[:1])
    del broken[0]["conversation"]["session_2"][3]["dia_id"]
    with pytest.raises(
        ImportFormatError,
        match=r"conversation 0, session_2\[3\]: a turn needs string speaker, dia_id and text",
    ):
        from_locomo(broken, 0)
    with pytest.raises(ImportFormatError, match=r"conversation 10 is out of range \(0..9\)"):
        from_locomo(locomo, 10)
    with pytest.raises(ImportFormatError, match="no conversation with sample_id 'conv-1'"):
        from_locomo(locomo, "conv-1")
    for field in list(field_paths(locomo[0]["conversation"], per_list=3))[:100]:
        for bad in (DELETE, None, 7):
            sample = mutated(locomo[0], ("conversation", *field), bad)
            _only_import_errors(lambda s=sample: from_locomo([s], 0).messages())  # type: ignore[misc]


def test_locomo_data_is_not_copied_into_the_package() -> None:
    package = Path(__file__).resolve().parents[1] / "ctxsdk"
    marker = "I went to a LGBTQ support group yesterday"
    for path in package.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".json", ".jsonl", ".txt", ".md"):
            assert marker not in path.read_text(errors="ignore"), path


# --- every real file, through the dispatcher --------------------------------------------------------


def test_import_file_dispatches_every_real_file(tmp_path: Path) -> None:
    cases = [("claude-code", CC_MAIN), ("claude-code", CC_SIDE), ("locomo", LOCOMO)]
    cases += [("swe-agent", SWE_DIR / name) for name in SWE_FILES]
    for fmt, path in cases:
        s = import_file(fmt, _need(path))
        assert s.messages() and s.tokens("estimate").total > 0
        out = s.save(tmp_path / f"{path.stem}.v3.jsonl.zstd")
        assert Session.open(out).messages() == s.messages()


def test_missing_input_is_not_found_and_home_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxsdk.errors import NotFound
    from ctxsdk.session.importers import import_file

    with pytest.raises(NotFound, match="no such file to import"):
        import_file("swe-agent", tmp_path / "absent.traj")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "chat.json").write_text(
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]'
    )
    s = import_file("openai", "~/chat.json")
    assert [m.text for m in s.messages()] == ["hi", "hello"]


# --- nesting depth (MAX_JSON_DEPTH) --------------------------------------------------------


def _nest_text(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.mark.parametrize("levels", [600, 5000])  # 5000: deeper than Python's json can recurse
def test_a_deeply_nested_import_file_is_refused_naming_file_and_record(
    tmp_path: Path, levels: int
) -> None:
    msgs = '[{"role": "user", "content": "hi"}, {"role": "user", "content": "x", "meta": %s}]'
    p = tmp_path / "deep.json"
    p.write_text(msgs % _nest_text(levels))
    with pytest.raises(ImportFormatError, match="MAX_JSON_DEPTH = 128") as err:
        import_file("openai", p)
    assert str(err.value).startswith("deep.json")
    if levels == 600:
        assert "at [1].meta[0]" in str(err.value)  # the record (message 1) and where in it
    jl = tmp_path / "deep.jsonl"
    jl.write_text(
        '{"role": "user", "content": "hi"}\n{"role": "user", "meta": ' + _nest_text(levels) + "}\n"
    )
    with pytest.raises(ImportFormatError, match="deep.jsonl, line 2: nested more than 128"):
        import_file("openai", jl)


def test_a_deep_claude_code_line_and_deep_messages_in_memory_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "cc.jsonl"
    p.write_text('{"type": "user", "uuid": "u1", "message": {"x": ' + _nest_text(300) + "}}\n")
    with pytest.raises(ImportFormatError, match="cc.jsonl, line 1: nested more than 128"):
        import_file("claude-code", p)
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    msgs = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "x", "v": deep}]}]
    with pytest.raises(ImportFormatError, match="MAX_JSON_DEPTH"):
        from_messages(msgs, "openai")
    # 100 levels is far above any real transcript and still imports.
    ok = tmp_path / "ok.json"
    ok.write_text('[{"role": "user", "content": "hi", "meta": ' + _nest_text(100) + "}]")
    assert len(import_file("openai", ok).messages()) == 1


# --- what an importer is handed: only a regular file, and at most max_bytes of it -----------
#
# A FIFO would block a plain open() for ever and /dev/zero never ends, so these run in a child
# process with a timeout (and an address-space limit): a regression fails instead of hanging.

_TIMEOUT = 60.0

_IMPORT_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import ctxsdk as cx
from ctxsdk.session.importers import import_file
out = []
for fmt in ("openai", "anthropic", "claude-code", "swe-agent", "locomo"):
    try:
        import_file(fmt, sys.argv[1])
    except Exception as exc:
        out.append([fmt, type(exc).__name__, str(exc), isinstance(exc, cx.errors.CtxError)])
    else:
        out.append([fmt, None, "imported", False])
print(json.dumps(out))
"""


def _run_child(*argv: str) -> Any:
    import os
    import subprocess
    import sys

    try:
        proc = subprocess.run(
            [sys.executable, *argv],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=_TIMEOUT,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv[-1]}: no answer within {_TIMEOUT:.0f} s (hung)")
    return proc


def _not_regular(tmp_path: Path) -> dict[Path, str]:
    """Path -> what its error must call it, for what this platform has."""
    import os

    out: dict[Path, str] = {}
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.jsonl")
        out[tmp_path / "fifo.jsonl"] = "a FIFO (named pipe)"
        os.symlink(tmp_path / "fifo.jsonl", tmp_path / "to-fifo.json")
        out[tmp_path / "to-fifo.json"] = "a FIFO (named pipe)"
    (tmp_path / "dir.traj").mkdir()
    out[tmp_path / "dir.traj"] = "a directory"
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "zero.json")
        out[tmp_path / "zero.json"] = "a character device"
    return out


def test_every_importer_refuses_a_path_that_is_not_a_regular_file(tmp_path: Path) -> None:
    for path, kind in _not_regular(tmp_path).items():
        proc = _run_child("-c", _IMPORT_CHILD, str(path))
        assert proc.returncode == 0, (path, proc.stderr[-2000:])
        for fmt, name, message, is_ctx in json.loads(proc.stdout.strip().splitlines()[-1]):
            assert is_ctx and name == "ImportFormatError", (fmt, path, name, message)
            assert message.startswith(f"{path}: is {kind}, not a regular file"), (fmt, message)


def test_every_importer_reads_at_most_max_bytes(tmp_path: Path) -> None:
    from ctxsdk.errors import InvalidArgument
    from ctxsdk.session._foreign._common import MAX_IMPORT_BYTES

    assert MAX_IMPORT_BYTES == 256 << 20
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(OPENAI_CHAT))
    size = chat.stat().st_size
    for fmt in FORMATS:
        with pytest.raises(ImportFormatError) as err:
            import_file(fmt, chat, max_bytes=size - 1)
        msg = str(err.value)
        assert msg.startswith(f"{chat}: is {size:,} bytes, more than {size - 1} bytes"), msg
        assert f"max_bytes={size - 1}" in msg and "pass a larger max_bytes=" in msg
    assert len(import_file("openai", chat, max_bytes=size).messages()) == 8  # and the head
    with pytest.raises(ImportFormatError, match="more than 10 bytes"):
        from_swe_agent(chat, max_bytes=10)
    with pytest.raises(ImportFormatError, match="more than 10 bytes"):
        from_claude_code(chat, max_bytes=10)
    with pytest.raises(ImportFormatError, match="more than 10 bytes"):
        from_locomo(chat, max_bytes=10)
    for bad in (0, -1, 1.5, "1", True):
        with pytest.raises(InvalidArgument, match="max_bytes must be a positive number"):
            import_file("openai", chat, max_bytes=bad)


def test_an_unreadable_import_is_unreadable_naming_it(tmp_path: Path) -> None:
    import os

    from ctxsdk.errors import Unreadable

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(OPENAI_CHAT))
    chat.chmod(0)
    try:
        if os.access(chat, os.R_OK):
            pytest.skip("this process reads any file (root)")
        with pytest.raises(Unreadable, match=f"{chat}: permission denied"):
            import_file("openai", chat)
    finally:
        chat.chmod(0o600)


def test_cli_import_of_a_fifo_or_a_large_file_is_one_line(tmp_path: Path) -> None:
    import os

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(OPENAI_CHAT))
    out = tmp_path / "out"
    cases: list[tuple[list[str], str]] = [
        (["openai", str(chat), "-o", str(out), "--max-bytes", "100"], "pass a larger --max-bytes"),
        (["openai", str(chat), "-o", str(out), "--max-bytes", "0"], "--max-bytes must be"),
    ]
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.json")
        cases.append((["claude-code", str(tmp_path / "fifo.json"), "-o", str(out)], "FIFO"))
    for argv, words in cases:
        proc = _run_child("-m", "ctxsdk", "import", *argv)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), (argv, proc.stderr)
        assert words in lines[0], (argv, lines[0])
        assert "max_bytes" not in lines[0], lines[0]  # the command line's terms
    assert not out.exists()
    proc = _run_child("-m", "ctxsdk", "import", "openai", str(chat), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    proc = _run_child(
        "-m", "ctxsdk", "import", "openai", str(chat), "-o", str(out), "--force",
        "--max-bytes", str(chat.stat().st_size),
    )  # fmt: skip
    assert proc.returncode == 0 and "imported 8 messages" in proc.stdout, proc.stderr


_ONE_REAL_FILE = {
    "codex": "codex/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    "gemini-cli": "gemini-cli",
    "openhands": "openhands/basic.json",
    "aider": "aider/aider-website__hello.md",
    "mini-swe-agent": "mini-swe-agent",
}


@pytest.mark.parametrize("fmt", sorted(_ONE_REAL_FILE))
def test_import_file_reads_every_agents_format_by_name(fmt: str) -> None:
    root = DATA / "agent-sessions"
    if not root.exists():
        pytest.skip("the shared agent-sessions corpus is absent")
    path = root / _ONE_REAL_FILE[fmt]
    if path.is_dir():  # the first data file of the folder
        path = next(
            p for p in sorted(path.iterdir()) if p.suffix == ".json" and "summary" not in p.name
        )
    s = import_file(fmt, path)
    assert s.messages() and import_provenance(s)
