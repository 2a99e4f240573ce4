"""LogBuilder and the shipped samples: every log folds as the harness would (spec §3-§12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import zstandard

from ctxsdk.errors import InvalidArgument, NotFound, SurfaceError
from ctxsdk.samples import SAMPLES_HOME, sample, sample_paths
from ctxsdk.session._codec import decode_source_seqs, frame_spans, read_log
from ctxsdk.session._layout import encode_segment, project_key
from ctxsdk.session._replay import replay_log
from ctxsdk.testing import (
    CHECKPOINT_PREAMBLE,
    PRUNE_MARKER,
    LogBuilder,
    ToolOutput,
)

from .conftest import load_script

_make_samples = load_script("make_samples")
build_samples, write_samples = _make_samples.build_samples, _make_samples.write_samples

Event = dict[str, Any]
SAMPLE_NAMES = [
    "fix-flaky-test",
    "long-refactor",
    "fix-flaky-test-fork",
    "long-refactor-docs-audit",
]


def _sources(ev: Event) -> list[int]:
    return decode_source_seqs(ev["sourceEventSeqs"], ev["seq"])


def _of_type(events: list[Event], etype: str) -> list[Event]:
    return [e for e in events if e["type"] == etype]


def _tool_log(version: int = 3, **kw: Any) -> LogBuilder:
    """A small log with every builder feature: tools, an error, a prune, a compaction."""
    b = LogBuilder(version, session_id=f"t-v{version}", cwd="/home/dev/app", **kw)
    b.turn("Run the tests and fix what fails").assistant(
        reasoning="Run pytest first.",
        tool_calls=[("bash", {"command": "pytest -q"}), ("read", {"path": "app.py"})],
    )
    b.tool_results(
        [
            ToolOutput.failed("F.\n1 failed, 1 passed in 0.10s", "ShellExitError", "NON_ZERO_EXIT"),
            "\n".join(f"{i:>6}\tline {i} of app.py" for i in range(1, 700)),
        ]
    )
    big = b.result_seq(b.last_call_ids[1])
    b.next_step().assistant(text="The failure is in app.py line 12; fixing it.").end_turn()
    b.turn("Thanks, go on").prune_tool_result(big, head_chars=400, tail_chars=100)
    b.assistant(tool_calls=[("edit", {"path": "app.py", "old_string": "a", "new_string": "b"})])
    b.tool_results(["Edited app.py: replaced 1 occurrence."]).next_step()
    b.assistant(text="Fixed.").end_turn()
    b.compact(keep_last=2, summary_text="## Primary Request and Intent\n- fix the failing test")
    b.turn("Anything else?").assistant(text="No, all tests pass.").end_turn()
    return b


# --- the samples ---------------------------------------------------------------------------


def test_sample_paths_are_canonical_and_exist() -> None:
    paths = sample_paths()
    assert list(paths) == SAMPLE_NAMES
    for name, path in paths.items():
        assert path == sample(name)
        assert path.is_file(), f"{path} is missing: run python scripts/make_samples.py"
        rel = path.relative_to(SAMPLES_HOME).parts
        assert rel[0] == "sessions" and rel[-1] == "session.v3.jsonl.zstd"
        assert rel[1] == project_key(read_log(path).header["cwd"])
        assert rel[2] == encode_segment(read_log(path).header["id"])


def test_unknown_sample_is_not_found() -> None:
    with pytest.raises(NotFound, match="fix-flaky-test"):
        sample("no-such-sample")
    with pytest.raises(KeyError):
        sample("no-such-sample")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_folds(name: str) -> None:
    log = read_log(sample(name))
    assert log.version == 3 and log.compression == "zstd" and log.recovery is None
    index = replay_log(log.events, log.version)
    assert index.open_turn is None and not index.pending
    assert log.events[index.surface.first() or 0]["type"] == "system/message"
    # Every model reply carries usage, and every stream ends with usage and finish.
    for ev in _of_type(log.events, "assistant/message"):
        assert {"inputTokens", "outputTokens"} <= set(ev["data"]["usage"])
        assert [r["chunk"]["type"] for r in ev["data"]["stream"][-2:]] == ["usage", "finish"]
    # The header is alone in zstd frame 1 and the events span several frames.
    spans, torn = frame_spans(log.data)
    assert torn is None and len(spans) >= 2
    first = zstandard.ZstdDecompressor().decompressobj().decompress(log.data[: spans[0][1]])
    assert first.count(b"\n") == 1 and b'"type":"session"' in first


def test_regenerating_samples_is_byte_identical(tmp_path: Path) -> None:
    written = write_samples(tmp_path)
    assert list(written) == SAMPLE_NAMES
    for name, path in written.items():
        assert path.relative_to(tmp_path) == sample(name).relative_to(SAMPLES_HOME)
        assert path.read_bytes() == sample(name).read_bytes(), (
            f"{name} differs from the shipped file"
        )


def test_fix_flaky_test_reads_like_real_work() -> None:
    events = read_log(sample("fix-flaky-test")).events
    assert len(_of_type(events, "turn/start")) == 3
    calls = {e["data"]["name"] for e in _of_type(events, "tool/call")}
    assert {"bash", "read", "edit"} <= calls
    failed = [e for e in _of_type(events, "tool/result") if "error" in e["data"]]
    assert failed, "the failing pytest run must be an error result"
    block = failed[0]["data"]["message"]["content"][0]
    assert block["isError"] is True and "2 failed, 88 passed" in block["content"][0]["text"]
    assert set(failed[0]["data"]["error"]) == {"name", "code"}
    assert any(
        b["type"] == "reasoning"
        for e in _of_type(events, "assistant/message")
        for b in e["data"]["message"]["content"]
    )
    texts = [e["data"]["content"][0]["text"] for e in _of_type(events, "user/message")]
    assert any("中文" in t for t in texts)


def test_long_refactor_has_prune_and_compaction_in_the_middle() -> None:
    events = read_log(sample("long-refactor")).events
    turns = _of_type(events, "turn/start")
    assert len(turns) >= 8
    assert len(_of_type(events, "tool/call")) >= 60
    prune = _of_type(events, "compaction/prune")
    start = _of_type(events, "compaction/start")
    assert len(prune) == 1 and len(start) == 1
    # Both happen mid-session with turns after them.
    assert turns[2]["seq"] < prune[0]["seq"] < start[0]["seq"] < turns[-2]["seq"]


# --- compaction and pruning per §10 / §11 -------------------------------------------------


def _check_compaction(events: list[Event], version: int) -> None:
    for start in _of_type(events, "compaction/start"):
        s = start["seq"]
        summary, repl, end = events[s + 1], events[s + 2], events[s + 3]
        assert [summary["type"], repl["type"], end["type"]] == [
            "compaction/summary",
            "user/message",
            "compaction/end",
        ]
        cid = start["data"]["compactionId"]
        assert summary["data"]["compactionId"] == end["data"]["compactionId"] == cid
        assert end["data"]["turn"] == start["data"]["turn"]
        shadowed = summary["data"]["shadowedSeqs"]
        assert summary["data"]["shadowedRange"] == {"start": shadowed[0], "end": shadowed[-1]}
        assert _sources(repl) == [s, s + 1, *shadowed]
        keys = ("startSeq", "endSeq") if version >= 3 else ("start", "end")
        assert repl["surfaceOp"] == {"op": "replace", keys[0]: shadowed[0], keys[1]: shadowed[-1]}
        data = repl["data"]
        assert list(data) == ["content", "source", "role", "id"]
        assert data["source"] == {"kind": "plugin", "plugin": "compact", "compactionId": cid}
        assert data["content"] == [
            {"type": "text", "text": f"{CHECKPOINT_PREAMBLE}\n\n<compacted-summary>"},
            summary["data"]["summary"][0],
            {"type": "text", "text": "</compacted-summary>"},
        ]
        # The fold before the bracket: the range never covers the v3 system head and is
        # tool-balanced (every call in it is answered in it).
        before = replay_log(events[:s], version).surface.nodes()
        assert shadowed == before[before.index(shadowed[0]) : before.index(shadowed[-1]) + 1]
        assert events[shadowed[0]]["type"] != "system/message"
        if version >= 3:
            assert events[before[0]]["type"] == "system/message" and before[0] not in shadowed
        calls = sum(
            1
            for n in shadowed
            if events[n]["type"] == "assistant/message"
            for b in events[n]["data"]["message"]["content"]
            if b["type"] == "tool-call"
        )
        assert calls == sum(1 for n in shadowed if events[n]["type"] == "tool/result")


def _check_prune(events: list[Event], version: int) -> None:
    for prune in _of_type(events, "compaction/prune"):
        target = prune["data"]["shadowedSeqs"][0]
        assert prune["data"]["shadowedRange"] == {"start": target, "end": target}
        repl = events[prune["seq"] + 1]
        keys = ("startSeq", "endSeq") if version >= 3 else ("start", "end")
        assert repl["type"] == "tool/result" and _sources(repl) == [target]
        assert repl["surfaceOp"] == {"op": "replace", keys[0]: target, keys[1]: target}
        old, new = events[target]["data"], repl["data"]
        text = new["message"]["content"][0]["content"][0]["text"]
        assert PRUNE_MARKER in text
        assert new["message"]["id"] == old["message"]["id"]
        assert {**new, "message": None} == {**old, "message": None}


def test_sample_compaction_and_prune_follow_the_spec() -> None:
    events = read_log(sample("long-refactor")).events
    _check_compaction(events, 3)
    _check_prune(events, 3)
    prune = _of_type(events, "compaction/prune")[0]
    text = events[prune["seq"] + 1]["data"]["message"]["content"][0]["content"][0]["text"]
    original = events[prune["data"]["shadowedSeqs"][0]]["data"]["message"]["content"][0]
    full = original["content"][0]["text"]
    assert len(full) > 8192  # over the pruner's default threshold
    assert text == full[:4096] + PRUNE_MARKER + full[-1024:]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_builder_compaction_and_prune_fold(version: int) -> None:
    b = _tool_log(version)
    index = b.validate()
    assert index.surface.nodes() == b.surface
    _check_compaction(b.events, version)
    _check_prune(b.events, version)


def test_compaction_refuses_an_unbalanced_or_empty_range() -> None:
    b = LogBuilder(session_id="c", cwd="/w")
    b.turn("hi")
    with pytest.raises(ValueError, match="no tool-balanced range"):
        b.compact(keep_last=5, summary_text="x")
    b.assistant(tool_calls=[("bash", {"command": "ls"})])
    with pytest.raises(ValueError, match="pending"):
        b.compact(keep_last=0, summary_text="x")


# --- fork and subagent per §12 -------------------------------------------------------------


def test_sample_fork_inherits_the_parent_prefix() -> None:
    parent = read_log(sample("fix-flaky-test"))
    child = read_log(sample("fix-flaky-test-fork"))
    cut = _of_type(parent.events, "turn/end")[1]["seq"]  # after turn 2
    k = cut + 1
    assert child.header == {
        "type": "session",
        "version": 3,
        "id": child.header["id"],
        "createdAt": child.header["createdAt"],
        "cwd": parent.header["cwd"],
        "parentSession": parent.header["id"],
        "isSeeded": True,
        "delegationDepth": 0,
    }
    assert list(child.header) == list(
        [
            "type",
            "version",
            "id",
            "createdAt",
            "cwd",
            "parentSession",
            "isSeeded",
            "delegationDepth",
        ]
    )
    assert child.events[:k] == parent.events[:k]
    assert child.events[k] == {
        "type": "session/end-seed",
        "seq": k,
        "time": child.header["createdAt"],
        "data": {"inherited": True},
    }
    assert [e["seq"] for e in _of_type(child.events, "session/end-seed")] == [k]
    # The child continues with its own turn 3.
    assert child.events[k + 1] == {**child.events[k + 1], "type": "turn/start", "data": {"turn": 3}}
    assert replay_log(child.events, 3).last_turn == 3


def test_sample_subagent_descriptor_placement() -> None:
    parent = read_log(sample("long-refactor"))
    child = read_log(sample("long-refactor-docs-audit"))
    h = child.header
    assert h["parentSession"] == parent.header["id"] and h["origin"] == "subagent"
    assert h["delegationDepth"] == parent.header["delegationDepth"] + 1 and h["isSeeded"] is False
    descriptors = _of_type(child.events, "subagent/descriptor")
    assert len(descriptors) == 1
    d = descriptors[0]
    label = next(
        b["arguments"]
        for e in _of_type(parent.events, "assistant/message")
        for b in e["data"]["message"]["content"]
        if b["type"] == "tool-call" and b["name"] == "subagent"
    )
    assert d["data"] == {
        "version": 2,
        "mode": "one-shot",
        "provider": "fork",
        "label": d["data"]["label"],
    }
    assert d["data"]["label"] in label
    first_turn = _of_type(child.events, "turn/start")[0]["seq"]
    first_end = _of_type(child.events, "turn/end")[0]["seq"]
    first_request = _of_type(child.events, "request/header")[0]["seq"]
    assert first_turn < d["seq"] < first_request < first_end
    assert child.events[0]["data"] == {"mode": "danger-full-access", "source": "delegation"}
    assert not _of_type(child.events, "session/end-seed")


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_builder_fork_and_subagent(version: int) -> None:
    parent = _tool_log(version)
    cut = parent.turn_end_seq(1)
    child = parent.fork(at_seq=cut, child_id="child")
    child.turn("Try another approach").assistant(text="Sure.").end_turn()
    child.validate()
    k = cut + 1
    assert child.events[:k] == parent.events[:k]
    if version >= 2:
        assert child.header["isSeeded"] is True and "seedLength" not in child.header
        assert child.events[k]["data"] == {"inherited": True}
    else:
        assert child.header["seedLength"] == k and "isSeeded" not in child.header
        assert child.events[k]["data"] == {}
    assert child.header["parentSession"] == parent.session_id
    sub = parent.subagent("Look around", "sub")
    sub.turn("Look around the repo").assistant(text="Done.").end_turn()
    sub.validate()
    assert sub.header["origin"] == "subagent" and sub.header["delegationDepth"] == 1
    assert "seedLength" not in sub.header and sub.header.get("isSeeded", False) is False


def test_fork_refuses_a_boundary_inside_a_turn() -> None:
    b = LogBuilder(session_id="f", cwd="/w").turn("hi")
    with pytest.raises(ValueError, match="inside open turn 1"):
        b.fork()


# --- v0 ------------------------------------------------------------------------------------


def test_v0_output_folds_and_reads_back(tmp_path: Path) -> None:
    b = _tool_log(0)
    events = b.events
    assert not _of_type(events, "system/message")
    assert all("system" in e["data"]["header"] for e in _of_type(events, "request/header"))
    for msg in _of_type(events, "assistant/message"):
        cited = _sources(msg)
        assert cited and all(events[s]["type"] == "assistant/chunk" for s in cited)
        assert cited == list(range(cited[0], msg["seq"]))  # the attempt's chunks, just before it
        assert "stream" not in msg["data"]
    fork = b.fork(at_seq=b.turn_end_seq(2), child_id="v0-child")
    fork.turn("again").assistant(text="ok").end_turn()
    for builder in (b, fork):
        path = builder.write(builder.canonical_path(tmp_path))
        assert path.name == "session.jsonl.zstd"
        log = read_log(path)
        assert log.version == 0 and log.header == builder.header
        assert log.events == builder.events
        replay_log(log.events, 0)


# --- builder basics ------------------------------------------------------------------------


def test_events_have_the_harness_key_order() -> None:
    order = ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    for ev in _tool_log(3).events:
        keys = list(ev)
        assert keys == [k for k in order if k in ev]


def test_builds_are_deterministic() -> None:
    assert _tool_log(3).events == _tool_log(3).events
    a, b = build_samples(), build_samples()
    assert {n: x.events for n, x in a.items()} == {n: x.events for n, x in b.items()}


def test_system_prompt_change_replaces_node_zero() -> None:
    b = LogBuilder(session_id="s", cwd="/w")
    b.turn("one").assistant(text="1").end_turn()
    head = b.surface[0]
    b.turn("two", system="You are terse.").assistant(text="2").end_turn()
    b.validate()
    repl = b.events[b.surface[0]]
    assert repl["type"] == "system/message" and _sources(repl) == [head]
    assert repl["surfaceOp"] == {"op": "replace", "startSeq": head, "endSeq": head}
    assert repl["data"]["message"]["content"] == [{"type": "text", "text": "You are terse."}]


def test_misuse_is_refused() -> None:
    b = LogBuilder(session_id="m", cwd="/w")
    with pytest.raises(ValueError, match="open step"):
        b.assistant(text="hi")
    b.turn("hi").assistant(tool_calls=[("bash", {"command": "ls"})])
    with pytest.raises(ValueError, match="1 tool call"):
        b.tool_results([])
    with pytest.raises(ValueError, match="unanswered"):
        b.end_turn()
    with pytest.raises(ValueError, match="already has"):
        b.assistant(text="again")
    with pytest.raises(ValueError, match="versions 0-3"):
        LogBuilder(4)
    with pytest.raises(ValueError, match="80 UTF-8 bytes"):
        b.title("x" * 81)


def test_misuse_raises_the_project_errors() -> None:
    # Every refusal is a CtxError: InvalidArgument for a call out of order or a value the
    # format cannot hold, SurfaceError for a surface edit the harness would refuse.
    b = LogBuilder(session_id="e", cwd="/w")
    with pytest.raises(InvalidArgument, match="needs an open turn"):
        b.end_turn()
    b.turn("hi").assistant(tool_calls=[("bash", {"command": "ls"})])
    with pytest.raises(InvalidArgument, match="pending"):
        b.compact(keep_last=0, summary_text="s")
    with pytest.raises(InvalidArgument, match="not closed"):
        b.turn_end_seq(1)
    with pytest.raises(NotFound, match="no result"):
        b.result_seq(b.last_call_ids[0])
    b.tool_results(["a.py"]).next_step()
    with pytest.raises(InvalidArgument, match="pair"):
        b.assistant(tool_calls=[("bash",)])  # type: ignore[list-item]
    b.assistant(text="done").end_turn()
    with pytest.raises(SurfaceError, match="not a tool/result"):
        b.prune_tool_result(b.prompt_seq or 0)
    with pytest.raises(SurfaceError, match="no tool-balanced range"):
        b.compact(keep_last=100, summary_text="s")
    with pytest.raises(SurfaceError, match="outside this log"):
        b.fork(at_seq=b.last_seq + 1)
    with pytest.raises(InvalidArgument, match="compression"):
        b.canonical_path("/tmp", compression="gzip")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="empty project path"):
        LogBuilder(session_id="e", cwd="").canonical_path("/tmp")


def test_fallback_title_and_user_rename() -> None:
    b = LogBuilder(session_id="t", cwd="/w")
    b.turn("Reply with exactly the word: PONG. Do not use any tools.").assistant(text="PONG")
    b.end_turn().title("Ping test")
    titles = _of_type(b.events, "session/title")
    assert titles[0]["data"] == {
        "title": "Reply with exactly the word:",  # the harness fixture's fallback title
        "messageSeqs": [b.prompt_seq],
        "source": {"kind": "fallback"},
    }
    assert titles[1]["data"] == {
        "title": "Ping test",
        "messageSeqs": [],
        "source": {"kind": "user"},
    }
    cjk = LogBuilder(session_id="c", cwd="/w").turn(
        "把测试数据库改成每个测试独立的临时文件，然后重新运行全部测试"
    )
    title = _of_type(cjk.events, "session/title")[0]["data"]["title"]
    assert 0 < len(title.encode()) <= 40 and "把测试数据库".startswith(title[:6])


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        ("/home/u/proj", "--home-u-proj--"),
        ("C:\\Users\\me\\src", "--C-Users-me-src--"),
        ("/srv//a::b", "--srv-a-b--"),
        ("~/my proj", "--~007E-my~0020proj--"),
        ("/", "--root--"),
        ("/home/u/项目", "--home-u-~9879~76EE--"),
        (None, "_no-cwd"),
    ],
)
def test_project_key(cwd: str | None, key: str) -> None:
    assert project_key(cwd) == key


def test_project_key_truncates_the_slug() -> None:
    assert project_key("/" + "a" * 300) == "--" + "a" * 251 + "--"


@pytest.mark.parametrize(
    ("segment", "encoded"),
    [
        ("5f0c9a7e-2d41", "5f0c9a7e-2d41"),
        (".", "~002E"),
        ("..", "~002E~002E"),
        ("...", "..."),
        ("a/b:c", "a~002Fb~003Ac"),
        ("x😀", "x~D83D~DE00"),
    ],
)
def testencode_segment(segment: str, encoded: str) -> None:
    assert encode_segment(segment) == encoded


def test_encode_segment_refuses_empty() -> None:
    with pytest.raises(ValueError):
        encode_segment("")
