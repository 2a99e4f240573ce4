"""OpenHands event-list trajectories become valid v3 DSH sessions that keep every event.

The real files are in ``../shared/data/agent-sessions/openhands`` (skipped when absent)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import ImportFormatError
from ctxsdk.session import Session
from ctxsdk.session._foreign._emit import IMPORT_EVENT
from ctxsdk.session.importers import from_openhands, import_provenance

from .conftest import SHARED

OH_DIR = SHARED / "data" / "agent-sessions" / "openhands"
OH_FILES = [
    "basic.json",
    "basic_gui_mode.json",
    "basic_interactions.json",
    "wrong_initial_state.json",
]

Raw = dict[str, Any]


def _need(name: str) -> Path:
    path = OH_DIR / name
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _events(name: str) -> list[Raw]:
    return json.loads(_need(name).read_text())  # type: ignore[no-any-return]


def _shape(s: Session) -> list[tuple[str, list[str]]]:
    return [(m.role, [b.to_json_dict()["type"] for b in m.content]) for m in s.messages()]


def _result_text(block: Raw) -> str:
    return "".join(b["text"] for b in block["content"] if b["type"] == "text")


@pytest.mark.parametrize("name", OH_FILES)
def test_every_real_file_imports_and_keeps_every_event(name: str, tmp_path: Path) -> None:
    events = _events(name)
    s = from_openhands(OH_DIR / name)
    assert s.id == f"oh:{Path(name).stem}"
    assert s.turns() and all(t.reason == "completed" for t in s.turns())
    # Every event is accounted for: one ctxsdk/import record each.
    records = [e["data"]["record"] for e in s.raw_events if e["type"] == IMPORT_EVENT]
    assert sorted(records) == sorted(e["id"] for e in events)
    # Message ids and provenance point back to the source event.
    prov = import_provenance(s)
    seqs = {e["seq"] for e in s.raw_events}
    for seq, entry in prov.items():
        assert entry["format"] == "openhands" and entry["source"] == name
        assert seq in seqs  # the message event exists
    ids = {
        (e["data"] if e["type"] == "user/message" else e["data"]["message"])["id"]
        for e in s.raw_events
        if e.get("surfaceOp") == "append" and e["type"] != "system/message"
    }
    assert ids <= {f"oh:{Path(name).stem}:{e['id']}" for e in events} | {
        f"oh:{Path(name).stem}:system"
    }
    # Calls and results pair up by the source's tool call ids.
    calls = [
        b["id"]
        for m in s.messages()
        for b in m.to_json_dict()["content"]
        if b["type"] == "tool-call"
    ]
    results = [
        b["toolCallId"]
        for m in s.messages()
        for b in m.to_json_dict()["content"]
        if b["type"] == "tool-result"
    ]
    assert calls == results
    assert s.wire()  # the provider view builds
    path = s.save(tmp_path / "imported.v3.jsonl")
    back = Session.open(path)
    assert back.messages() == s.messages()
    assert import_provenance(back) == prov


def test_surface_holds_prompts_text_calls_and_results_in_order() -> None:
    events = {e["id"]: e for e in _events("wrong_initial_state.json")}
    s = from_openhands(OH_DIR / "wrong_initial_state.json")
    assert _shape(s) == [
        ("user", ["text"]),
        ("assistant", ["text", "tool-call"]),
        ("user", ["tool-result"]),
        ("assistant", ["text", "tool-call"]),
        ("user", ["tool-result"]),
        ("assistant", ["text", "tool-call"]),
        ("user", ["tool-result"]),
        ("assistant", ["text"]),
    ]
    msgs = [m.to_json_dict() for m in s.messages()]
    assert msgs[0]["content"][0]["text"] == "Please rename game_2048.py to 2048.py"
    thought, call = msgs[3]["content"]
    assert thought["text"] == events[5]["args"]["thought"]
    assert call["id"] == "toolu_01PuY3mXrE6fm3j52GscR4rj"
    assert call["name"] == "execute_bash"
    written = events[5]["tool_call_metadata"]["model_response"]["choices"][0]["message"]
    assert call["arguments"] == written["tool_calls"][0]["function"]["arguments"]
    assert (
        json.loads(call["arguments"])["command"] == "mv /workspace/game_2048.py /workspace/2048.py"
    )
    result = msgs[4]["content"][0]
    assert result["toolCallId"] == call["id"] and result["isError"] is False
    assert _result_text(msgs[6]["content"][0]) == events[8]["content"]
    assert msgs[-1]["content"][0]["text"].startswith("The file has been successfully renamed")
    # Ids, times and provenance come from the source events.
    prov = import_provenance(s)
    by_record = {v["record"]: seq for seq, v in prov.items()}
    assert set(by_record) == {0, 3, 4, 5, 6, 7, 8, 9}
    assert prov[by_record[6]]["exitCode"] == 0 and prov[by_record[6]]["cause"] == 5
    assert prov[by_record[9]]["finishCall"] == "toolu_01G98EmHEC8HgktRjJBYXqEa"
    raw = {e["seq"]: e for e in s.raw_events}
    assert raw[by_record[5]]["data"]["message"]["id"] == "oh:wrong_initial_state:5"
    stamp = datetime.fromisoformat("2025-01-27T23:16:50.239610").replace(tzinfo=UTC)
    assert raw[by_record[0]]["time"] == round(stamp.timestamp() * 1000)
    assert raw[by_record[3]]["data"]["message"]["source"]["model"] == ("claude-3-5-sonnet-20241022")


def test_multi_turn_chat_keeps_the_correction_as_its_own_turn() -> None:
    s = from_openhands(_need("basic_interactions.json"))
    assert [t.reason for t in s.turns()] == ["completed"] * 3
    texts = [m.to_json_dict()["content"][0]["text"] for m in s.messages()]
    assert texts[0] == "what's 1+1?"
    assert texts[2] == "No, I mean by Goldbach's conjecture!"
    assert texts[-1] == "All done! What's next on the agenda?"
    assert s.title == "what's 1+1?"


def test_gui_session_skips_state_changes_and_names_the_task() -> None:
    s = from_openhands(_need("basic_gui_mode.json"))
    assert s.title == "I want to create a VueJS app that allows me to:"
    skipped = [
        e["data"]["record"]
        for e in s.raw_events
        if e["type"] == IMPORT_EVENT and e["data"].get("skipped")
    ]
    assert skipped == [0, 1, 2, 3, 5, 6, 16, 17]
    assert len([m for m in s.messages() if m.role == "assistant"]) == 5


def test_titles_name_the_task() -> None:
    titles = {name: from_openhands(_need(name)).title for name in OH_FILES}
    assert titles["basic.json"] is not None and titles["basic.json"].startswith(
        "Please create a simple 2048 game."
    )
    assert titles["wrong_initial_state.json"] == "Please rename game_2048.py to 2048.py"


# --- hand-written trajectories -------------------------------------------------------------------


def _write(tmp_path: Path, events: Any, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(events))
    return path


_PROMPT = {"id": 0, "source": "user", "action": "message", "args": {"content": "List it"}}


def _run(eid: int, call: str | None = "c1") -> Raw:
    ev: Raw = {
        "id": eid,
        "source": "agent",
        "action": "run",
        "args": {"command": "ls", "thought": "Look."},
    }
    if call is not None:
        ev["tool_call_metadata"] = {"function_name": "execute_bash", "tool_call_id": call}
    return ev


def test_error_observation_is_an_error_result_and_cause_pairs_without_metadata(
    tmp_path: Path,
) -> None:
    events = [
        _PROMPT,
        _run(1, call=None),
        {"id": 2, "source": "agent", "observation": "error", "cause": 1, "content": "boom"},
        {"id": 3, "source": "agent", "action": "message", "args": {"content": "It failed."}},
    ]
    s = from_openhands(_write(tmp_path, events))
    msgs = [m.to_json_dict() for m in s.messages()]
    call = msgs[1]["content"][1]
    assert call["id"] == "oh:t:1:call" and json.loads(call["arguments"]) == {"command": "ls"}
    result = msgs[2]["content"][0]
    assert result["toolCallId"] == call["id"] and result["isError"] is True
    assert _result_text(result) == "boom"
    assert s.turns()[-1].reason == "completed"


def test_error_without_a_call_is_a_notice(tmp_path: Path) -> None:
    events = [
        _PROMPT,
        {"id": 1, "source": "agent", "action": "message", "args": {"content": "Ok"}},
        {
            "id": 2,
            "source": "user",
            "observation": "error",
            "content": "AgentStuckInLoopError: Agent got stuck in a loop",
        },
    ]
    s = from_openhands(_write(tmp_path, events))
    last = s.messages()[-1].to_json_dict()
    assert last["role"] == "user" and last["source"]["plugin"] == "openhands"
    assert last["source"]["error"] is True  # a relayed error, as Aider's are
    assert len(s.turns()) == 1  # a notice never opens a turn
    # the fact kernel reads it as an error met, with the harness as its origin
    errors = [f for f in s.facts() if f.kind == "error"]
    assert [f.text for f in errors] and "stuck in a loop" in errors[0].text


def test_call_without_result_at_the_end_is_left_to_crash_repair(tmp_path: Path) -> None:
    s = from_openhands(_write(tmp_path, [_PROMPT, _run(1)]))
    repaired = s.repaired()
    assert repaired.turns()[-1].reason == "interrupted"


def test_call_without_result_in_the_middle_is_refused(tmp_path: Path) -> None:
    events = [_PROMPT, _run(1), {**_PROMPT, "id": 2}]
    with pytest.raises(ImportFormatError, match=r"t\.json, event 1 \(id 1\).*no tool result"):
        from_openhands(_write(tmp_path, events))


def test_result_without_its_call_is_refused(tmp_path: Path) -> None:
    events = [
        _PROMPT,
        {
            "id": 5,
            "source": "agent",
            "observation": "run",
            "content": "x",
            "tool_call_metadata": {"tool_call_id": "nope"},
        },
    ]
    with pytest.raises(ImportFormatError, match=r"t\.json, event 1 \(id 5\).*'nope'"):
        from_openhands(_write(tmp_path, events))


def test_truncated_file_names_the_file_and_position(tmp_path: Path) -> None:
    data = _need("wrong_initial_state.json").read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImportFormatError, match=r"cut\.json, line \d+ column \d+: not valid JSON"):
        from_openhands(path)


def test_bad_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[{"id": 0,, }]')
    with pytest.raises(ImportFormatError, match=r"bad\.json, line 1 column \d+: not valid JSON"):
        from_openhands(path)


def test_wrong_format_names_the_file_and_the_record(tmp_path: Path) -> None:
    with pytest.raises(
        ImportFormatError, match=r"obj\.json: an OpenHands trajectory is a JSON list"
    ):
        from_openhands(_write(tmp_path, {"history": []}, "obj.json"))
    # A SWE-agent-like chat list: the record is named.
    with pytest.raises(
        ImportFormatError, match=r"chat\.json, event 0: an event needs an integer id"
    ):
        from_openhands(_write(tmp_path, [{"role": "user", "content": "hi"}], "chat.json"))
    with pytest.raises(
        ImportFormatError, match=r"e\.json, event 1 \(id 7\): an event needs a string action"
    ):
        from_openhands(_write(tmp_path, [_PROMPT, {"id": 7, "source": "agent"}], "e.json"))
    with pytest.raises(ImportFormatError, match=r"n\.json, event 0: an event must be an object"):
        from_openhands(_write(tmp_path, [3], "n.json"))


def test_hand_broken_events_raise_only_import_errors(tmp_path: Path) -> None:
    events = _events("basic_gui_mode.json")
    bad_values: list[Any] = [None, 3, "x", [], {}, True]
    path = tmp_path / "fuzz.json"
    for i, ev in enumerate(events):
        for key in ev:
            for bad in bad_values:
                broken = json.loads(json.dumps(events))
                broken[i][key] = bad
                path.write_text(json.dumps(broken))
                try:
                    from_openhands(path).wire()
                except ImportFormatError as exc:
                    assert "fuzz.json" in str(exc)


def _response_run(eid: int, call: str, thought: str = "") -> Raw:
    ev = _run(eid, call)
    ev["args"]["thought"] = thought
    ev["tool_call_metadata"]["model_response"] = {
        "id": "r1",
        "model": "m1",
        "choices": [{"message": {"content": "Two.", "reasoning_content": "Think."}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
    }
    return ev


def test_calls_of_one_response_share_a_message_and_count_usage_once(tmp_path: Path) -> None:
    def obs(eid: int, cause: int) -> Raw:
        return {"id": eid, "source": "agent", "observation": "run", "cause": cause, "content": ""}

    adjacent = [_PROMPT, _response_run(1, "a", "Two."), _response_run(2, "b"), obs(3, 1), obs(4, 2)]
    s = from_openhands(_write(tmp_path, adjacent))
    assert _shape(s)[1] == ("assistant", ["reasoning", "text", "tool-call", "tool-call"])
    assert s.messages()[1].to_json_dict()["source"]["model"] == "m1"
    split = [_PROMPT, _response_run(1, "a", "Two."), obs(2, 1), _response_run(3, "b"), obs(4, 3)]
    s = from_openhands(_write(tmp_path, split))
    assert [k for _, k in _shape(s)][1:] == [
        ["reasoning", "text", "tool-call"],
        ["tool-result"],
        ["tool-call"],
        ["tool-result"],
    ]
    usages = [e["data"].get("usage") for e in s.raw_events if e["type"] == "assistant/message"]
    assert usages == [{"inputTokens": 10, "outputTokens": 3}, None]
