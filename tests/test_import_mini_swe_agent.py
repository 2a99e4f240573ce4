"""mini-SWE-agent trajectories: every real run imports, with its prompt, thoughts, bash calls
and their results in order, source ids, provenance and a title that names the task."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import ImportFormatError
from ctxsdk.session import Session
from ctxsdk.session._foreign._emit import IMPORT_EVENT
from ctxsdk.session._models import ReasoningBlock
from ctxsdk.session.importers import from_mini_swe_agent, import_provenance

from .conftest import SHARED

MINI_DIR = SHARED / "data" / "agent-sessions" / "mini-swe-agent"
MINI_FILES = sorted(p.name for p in MINI_DIR.glob("*.traj.json")) if MINI_DIR.is_dir() else []
SAMPLE = "django__django-16255.traj.json"
FORMAT_ERRORS = "matplotlib__matplotlib-21568.traj.json"  # messages[44] has three bash blocks


def _need(name: str) -> Path:
    path = MINI_DIR / name
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _doc(name: str) -> dict[str, Any]:
    return json.loads(_need(name).read_text())  # type: ignore[no-any-return]


def _write(tmp_path: Path, doc: Any, name: str = "broken.traj.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.skipif(not MINI_FILES, reason="../shared/data is not available")
@pytest.mark.parametrize("name", MINI_FILES)
def test_every_real_run_imports_in_order(name: str, tmp_path: Path) -> None:
    doc = _doc(name)
    source = doc["messages"]
    s = from_mini_swe_agent(MINI_DIR / name)
    instance = doc["instance_id"]
    assert s.id == f"mini:{instance}"
    assert [t.reason for t in s.turns()] == ["completed"]
    msgs = s.messages()
    assert [m.id for m in msgs] == [f"mini:{instance}:{i}" for i in range(len(source))]
    prov = import_provenance(s)
    by_record = {p["record"]: p for p in prov.values()}
    for i, (m, raw) in enumerate(zip(msgs, source, strict=True)):
        assert by_record[i]["format"] == "mini-swe-agent" and by_record[i]["source"] == name
        if m.role == "assistant":
            assert m.text == raw["content"]  # the text as the model wrote it
            blocks = re.findall(r"```bash\s*\n(.*?)\n```", raw["content"], re.DOTALL)
            if len(blocks) == 1:
                (call,) = m.tool_calls
                assert call.id == f"{m.id}:bash" and call.name == "bash"
                assert json.loads(call.arguments) == {"command": blocks[0].strip()}
                result = msgs[i + 1]
                assert result.source.kind == "tool" and result.source.call_id == call.id
            else:
                assert not m.tool_calls
                assert msgs[i + 1].source.kind == "plugin"  # the format error, as a notice
        elif raw["role"] == "user" and i > 1:
            data = s.raw_events[prov_seq(prov, i)]["data"]
            outer = data.get("message", data)["content"]
            inner = outer[0]["content"] if outer[0]["type"] == "tool-result" else outer
            assert "".join(b["text"] for b in inner) == raw["content"]
    assert msgs[1].source.kind == "user" and msgs[1].text == source[1]["content"]
    assert s.title is not None and s.title.startswith(instance.split("__")[-1] + ": ")
    info = next(
        e["data"]
        for e in s.raw_events
        if e["type"] == IMPORT_EVENT and e["data"]["record"] == "info"
    )
    assert info["info"]["exit_status"] == doc["info"]["exit_status"]
    assert info["info"]["submission"] == doc["info"]["submission"]
    assert "config" not in info["info"]
    back = Session.open(s.save(tmp_path / "imported.v3.jsonl"))
    assert list(back.raw_events) == list(s.raw_events)
    assert back.messages() == s.messages()
    assert len(s.wire()) == len(source)


def prov_seq(prov: dict[int, Any], record: int) -> int:
    return next(seq for seq, p in prov.items() if p["record"] == record)


def test_sample_run_maps_reasoning_usage_errors_and_times() -> None:
    path = _need(SAMPLE)
    doc = _doc(SAMPLE)
    s = from_mini_swe_agent(path)
    assert s.title == "django-16255: Sitemaps without items raise ValueError on callable lastmod."
    msgs = s.messages()
    first = msgs[2]
    assert first.role == "assistant" and first.source.model == "google/gemini-3-pro-preview"
    reasoning = first.content[0]
    assert isinstance(reasoning, ReasoningBlock)
    assert reasoning.text.startswith("**Diagnosing the Sitemap Issue**")
    assert json.loads(first.tool_calls[0].arguments) == {"command": "ls -R django/contrib/sitemaps"}
    response = doc["messages"][2]["extra"]["response"]
    prov = import_provenance(s)
    assert prov[prov_seq(prov, 2)]["responseId"] == response["id"]
    event = s.raw_events[prov_seq(prov, 2)]
    assert event["time"] == response["created"] * 1000
    assert event["data"]["usage"]["outputTokens"] == response["usage"]["completion_tokens"]
    times = [e["time"] for e in s.raw_events if "time" in e]
    assert times == sorted(times)
    # A failing command is an error result; a zero return code is not.
    results = [
        e["data"]["message"]["content"][0] for e in s.raw_events if e["type"] == "tool/result"
    ]
    for block in results:
        text = block["content"][0]["text"] if block["content"] else ""
        code = re.match(r"<returncode>(-?\d+)</returncode>", text)
        assert block["isError"] == (code is not None and code.group(1) != "0")
    assert msgs[-1].role == "user" and msgs[-1].source.kind == "tool"  # the submitted diff
    assert (
        "diff --git"
        in s.raw_events[prov_seq(prov, len(msgs) - 1)]["data"]["message"]["content"][0]["content"][
            0
        ]["text"]
    )
    assert from_mini_swe_agent(path).raw_events == s.raw_events  # deterministic
    assert from_mini_swe_agent(path, session_id="x").id == "x"


def test_rejected_action_is_a_notice_in_the_same_turn() -> None:
    s = from_mini_swe_agent(_need(FORMAT_ERRORS))
    msgs = s.messages()
    assert not msgs[44].tool_calls
    notice = msgs[45]
    assert notice.source.kind == "plugin" and notice.source.plugin == "mini-swe-agent"
    assert notice.text.startswith("Please always provide EXACTLY ONE action")
    assert len(s.turns()) == 1


def _tiny() -> dict[str, Any]:
    return {
        "instance_id": "acme__widget-7",
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": [
            {"role": "system", "content": "You are a shell agent."},
            {
                "role": "user",
                "content": "<pr_description>\nConsider the following PR "
                "description:\nWidgets break on tabs\n</pr_description>",
            },
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
            {"role": "user", "content": "<returncode>2</returncode>\n<output>\nno\n</output>"},
            {"role": "assistant", "content": "THOUGHT: run it\n\n```bash\nmake\n```"},
        ],
        "trajectory_format": "mini-swe-agent-1",
    }


def test_hand_written_run_without_times_and_a_call_left_open(tmp_path: Path) -> None:
    s = from_mini_swe_agent(_write(tmp_path, _tiny(), "tiny.traj.json"))
    assert s.title == "widget-7: Widgets break on tabs"
    msgs = s.messages()
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user", "assistant"]
    err = next(e for e in s.raw_events if e["type"] == "tool/result")
    assert err["data"]["message"]["content"][0]["isError"] is True
    # The last call has no result: it stays open, and crash repair answers it.
    assert s.raw_events[-1]["type"] == IMPORT_EVENT
    repaired = s.repaired()
    assert repaired.turns()[-1].reason == "interrupted"


def test_truncated_file_names_the_file_and_where(tmp_path: Path) -> None:
    text = json.dumps(_tiny())
    path = tmp_path / "cut.traj.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(
        ImportFormatError, match=r"cut\.traj\.json, line 1 column \d+: not valid JSON"
    ):
        from_mini_swe_agent(path)


def test_bad_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.traj.json"
    path.write_text('{\n"messages": [\n{"role": "user", content: 1}\n]}')
    with pytest.raises(ImportFormatError, match=r"bad\.traj\.json, line 3 column \d+: not valid"):
        from_mini_swe_agent(path)


@pytest.mark.parametrize(
    ("doc", "pattern"),
    [
        ([1, 2], r"wrong\.traj\.json: a trajectory file holds one JSON object"),
        ({"history": []}, r"wrong\.traj\.json: 'messages' must be a list"),
        ({"messages": [1]}, r"wrong\.traj\.json, messages\[0\]: a message must be an object"),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            r"wrong\.traj\.json, messages\[0\]: unknown role 'tool'",
        ),
        (
            {"messages": [{"role": "user", "content": 42}]},
            r"wrong\.traj\.json, messages\[0\]: content must be a string",
        ),
        (
            {"messages": [{"role": "assistant", "content": "x", "extra": []}]},
            r"wrong\.traj\.json, messages\[0\], extra: extra must be an object",
        ),
        ({"messages": [], "info": 3}, r"wrong\.traj\.json, info: info must be an object"),
    ],
)
def test_wrong_format_names_the_file_and_record(tmp_path: Path, doc: Any, pattern: str) -> None:
    with pytest.raises(ImportFormatError, match=pattern):
        from_mini_swe_agent(_write(tmp_path, doc, "wrong.traj.json"))


def test_two_calls_in_a_row_are_refused_naming_the_message(tmp_path: Path) -> None:
    doc = _tiny()
    doc["messages"][3:4] = []  # the first call loses its result
    with pytest.raises(ImportFormatError, match=r"tiny\.traj\.json, messages\[2\]: tool call"):
        from_mini_swe_agent(_write(tmp_path, doc, "tiny.traj.json"))
