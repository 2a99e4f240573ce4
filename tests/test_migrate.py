"""Migration v0 → v1 → v2 → v3 (spec §16): real fixtures, a seeded synthetic fork, refusals."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import SessionFormatError, UnsupportedVersion
from ctxsdk.session._codec import (
    DecodedLog,
    decode_bytes,
    decode_source_seqs,
    dumps_line,
    read_log,
    validate_header,
)
from ctxsdk.session._migrate import (
    expand_stream,
    migrate,
    pack_stream,
    system_message_id,
    upgrade_to_latest,
)
from ctxsdk.session._replay import replay_log

from ._fixtures import filled

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "data" / "dsh-fixtures"
FIXTURE_FILES = sorted(FIXTURES.glob("v0-*.session.jsonl")) if FIXTURES.is_dir() else []
needs_fixtures = pytest.mark.skipif(not FIXTURE_FILES, reason="../shared/data is not available")

V23_HEADER_KEYS = {
    "type",
    "version",
    "id",
    "createdAt",
    "isSeeded",
    "delegationDepth",
    "cwd",
    "parentSession",
    "origin",
    "agentPreset",
}
MODEL = {"kind": "model", "provider": "p", "model": "m"}


# --- helpers ---------------------------------------------------------------------------------


def _read_fixture(path: Path) -> DecodedLog:
    """A shared fixture with its {{cwd}} / {{tools}} placeholders filled in: the harness's
    migration chain refuses a relative cwd and tools that are not an array."""
    text = filled(path.read_text()).encode()
    return decode_bytes(text, compression="none", path=path, normalized=True)


def surface_messages(events: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """For each surface node: user/message → data, every other type → data['message']."""
    index = replay_log(events, version)
    return [
        events[s]["data"] if events[s]["type"] == "user/message" else events[s]["data"]["message"]
        for s in index.surface.nodes()
    ]


def log(*rows: tuple[Any, ...], t0: int = 1000) -> list[dict[str, Any]]:
    """Events from (type, data[, extra envelope keys]) rows; seq = position, time = t0 + seq."""
    out = []
    for i, row in enumerate(rows):
        ev: dict[str, Any] = {"type": row[0], "seq": i, "time": t0 + i, "data": row[1]}
        if len(row) > 2:
            ev.update(row[2])
        out.append(ev)
    return out


def user(mid: str, text: str) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
        "role": "user",
        "id": mid,
    }


def assistant(turn: int, step: int, mid: str, text: str) -> dict[str, Any]:
    msg = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": MODEL,
        "id": mid,
    }
    return {"turn": turn, "step": step, "message": msg}


def chunk(turn: int, step: int, c: dict[str, Any]) -> dict[str, Any]:
    return {"turn": turn, "step": step, "chunk": c}


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return {"type": "text-delta", "index": index, "text": text}


APPEND = {"surfaceOp": "append"}
STOP = {"type": "finish", "reason": {"kind": "stop"}}
CONFIG = {"provider": "p", "model": "m"}


# --- the real v0 fixtures --------------------------------------------------------------------


@needs_fixtures
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("version", [1, 2, 3])
def test_fixture_migrates_and_folds(path: Path, version: int) -> None:
    src = _read_fixture(path)
    before = copy.deepcopy((src.header, src.events))
    header, events = migrate(src.header, src.events, version)
    assert (src.header, src.events) == before  # inputs untouched
    assert validate_header(header) == version
    replay_log(events, version)
    if version >= 2:
        assert set(header) <= V23_HEADER_KEYS
        assert header["isSeeded"] is False and "seedLength" not in header
        assert not any(e["type"] == "assistant/chunk" for e in events)
        assert all("sourceEventSeqs" not in e for e in events if e["type"] == "assistant/message")


@needs_fixtures
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_surface_messages_survive(path: Path) -> None:
    src = _read_fixture(path)
    original = surface_messages(src.events, 0)
    for version in (1, 2):
        _, events = migrate(src.header, src.events, version)
        assert surface_messages(events, version) == original
    _, v3 = migrate(src.header, src.events, 3)
    head, *rest = surface_messages(v3, 3)
    assert rest == original
    systems = [e["data"]["header"]["system"] for e in src.events if e["type"] == "request/header"]
    assert head["role"] == "system"
    assert head["content"] == [{"type": "text", "text": systems[-1]}]
    assert head["source"] == {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}
    assert all("system" not in e["data"]["header"] for e in v3 if e["type"] == "request/header")


@needs_fixtures
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_streams_are_lossless(path: Path) -> None:
    src = _read_fixture(path)
    by_seq = {e["seq"]: e for e in src.events}

    def timed(seqs: list[int]) -> list[tuple[int, dict[str, Any]]]:
        return [(by_seq[s]["time"], by_seq[s]["data"]["chunk"]) for s in seqs]

    v0_messages = {
        e["data"]["message"]["id"]: decode_source_seqs(e["sourceEventSeqs"], e["seq"])
        for e in src.events
        if e["type"] == "assistant/message"
    }
    claimed = {s for seqs in v0_messages.values() for s in seqs}
    for version in (2, 3):
        _, events = migrate(src.header, src.events, version)
        for e in events:
            if e["type"] != "assistant/message":
                continue
            seqs = v0_messages[e["data"]["message"]["id"]]
            stream = e["data"]["stream"]
            assert expand_stream(stream) == timed(seqs)
            texts = [c["text"] for _, c in timed(seqs) if c["type"] == "text-delta"]
            streamed = [t for r in stream if r["type"] == "text-chunks" for t in r["texts"]]
            assert "".join(streamed) == "".join(texts)
        # Unclaimed chunks (failed attempts) survive as assistant/attempt streams.
        unclaimed = sorted(
            e["seq"]
            for e in src.events
            if e["type"] == "assistant/chunk" and e["seq"] not in claimed
        )
        attempts = [e for e in events if e["type"] == "assistant/attempt"]
        assert [c for a in attempts for c in expand_stream(a["data"]["stream"])] == timed(unclaimed)


@needs_fixtures
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_v3_bytes_decode_as_v3(path: Path) -> None:
    src = _read_fixture(path)
    header, events = upgrade_to_latest(src.header, src.events)
    data = b"".join(dumps_line(x) for x in [header, *events])
    back = decode_bytes(data, compression="none", expected_version=3)
    assert (back.header, back.events) == (header, events)
    replay_log(back.events, 3)


@needs_fixtures
def test_fixture_packed_rows_become_one_run_each() -> None:
    src = _read_fixture(FIXTURES / "v0-tool-call-turn.session.jsonl")
    _, events = migrate(src.header, src.events, 2)
    first = next(e for e in events if e["type"] == "assistant/message")
    kinds = [r["type"] for r in first["data"]["stream"]]
    assert kinds == ["chunk", "reasoning-chunks", "chunk", "tool-call-chunks"] + ["chunk"] * 4
    tool = first["data"]["stream"][3]
    assert tool["id"] == "call_00_Rn2Mz1y8uZN62ukEXiNO2077" and tool["name"] == "bash"
    assert len(tool["args"]) == len(tool["dt"]) + 1 == 31
    assert "".join(tool["args"]) == first["data"]["message"]["content"][1]["arguments"]


@needs_fixtures
def test_fixture_compaction_references_remapped() -> None:
    src = _read_fixture(FIXTURES / "v0-compaction-recovery.session.jsonl")
    v0_summary = next(e for e in src.events if e["type"] == "compaction/summary")
    assert v0_summary["data"]["shadowedSeqs"] == [4]
    for version in (2, 3):
        _, events = migrate(src.header, src.events, version)
        summary = next(e for e in events if e["type"] == "compaction/summary")
        start = next(e for e in events if e["type"] == "compaction/start")
        (prompt,) = summary["data"]["shadowedSeqs"]
        assert events[prompt]["data"] == src.events[4]["data"]  # the same shadowed prompt
        checkpoint = events[summary["seq"] + 1]
        assert checkpoint["sourceEventSeqs"] == [start["seq"], summary["seq"], prompt]
        keys = ("start", "end") if version == 2 else ("startSeq", "endSeq")
        assert checkpoint["surfaceOp"] == {"op": "replace", keys[0]: prompt, keys[1]: prompt}
        assert summary["data"]["shadowedRange"] == {"start": prompt, "end": prompt}
        title = next(e for e in events if e["type"] == "session/title")
        assert title["data"]["messageSeqs"] == [prompt]


# --- a seeded synthetic fork with a compaction -------------------------------------------------


def seeded_v0(*, with_end_seed: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header = {
        "type": "session",
        "version": 0,
        "id": "s-child",
        "createdAt": 999,
        "cwd": "/w",
        "parentSession": "s-parent",
        "seedLength": 13,
        "delegationDepth": 0,
    }
    rows: list[tuple[Any, ...]] = [
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("user/message", user("u1", "hi"), APPEND),
        ("session/title", {"title": "hi", "messageSeqs": [2], "source": {"kind": "fallback"}}),
        (
            "request/header",
            {"header": {"config": CONFIG, "system": "SYS-A", "tools": []}, "reason": "initial"},
        ),
        ("assistant/chunk", chunk(1, 1, {"type": "block-start", "index": 0, "blockType": "text"})),
        ("assistant/chunk", chunk(1, 1, text_delta("Hel"))),
        ("assistant/chunk", chunk(1, 1, text_delta("lo"))),
        (
            "assistant/chunk",
            chunk(
                1, 1, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello"}}
            ),
        ),
        ("assistant/chunk", chunk(1, 1, STOP)),
        (
            "assistant/message",
            assistant(1, 1, "a1", "Hello"),
            {"sourceEventSeqs": [[5, 9]], "surfaceOp": "append"},
        ),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
        ("session/end-seed", {}),
        ("turn/start", {"turn": 2}),
        ("step/start", {"turn": 2, "step": 1}),
        ("user/message", user("u2", "go on"), APPEND),
        (
            "request/header",
            {
                "header": {"config": CONFIG, "system": "SYS-B", "tools": [], "adapterDefaults": {}},
                "reason": "change",
            },
        ),
        (
            "assistant/chunk",
            chunk(
                2,
                1,
                {
                    "type": "finish",
                    "reason": {
                        "kind": "error",
                        "failure": {"message": "too long", "code": "CONTEXT_WINDOW_EXCEEDED"},
                    },
                },
            ),
        ),
        ("compaction/start", {"compactionId": "c1", "turn": 2}),
        (
            "compaction/summary",
            {
                "compactionId": "c1",
                "summary": [{"type": "text", "text": "S"}],
                "shadowedRange": {"start": 2, "end": 10},
                "shadowedSeqs": [2, 10],
                "shadowedTokenCount": 9,
            },
        ),
        (
            "user/message",
            {
                **user("k1", "checkpoint"),
                "source": {"kind": "plugin", "plugin": "compact", "compactionId": "c1"},
            },
            {
                "sourceEventSeqs": [19, 20, 2, 10],
                "surfaceOp": {"op": "replace", "start": 2, "end": 10},
            },
        ),
        ("compaction/end", {"compactionId": "c1", "turn": 2}),
        ("assistant/chunk", chunk(2, 1, text_delta("ok"))),
        ("assistant/chunk", chunk(2, 1, STOP)),
        (
            "assistant/message",
            assistant(2, 1, "a2", "ok"),
            {"sourceEventSeqs": [23, 24], "surfaceOp": "append"},
        ),
        ("step/end", {"turn": 2, "step": 1}),
        ("command/done", {"name": "compact", "sourceEventSeq": 21}),
        ("turn/end", {"turn": 2, "reason": {"kind": "completed"}}),
    ]
    if not with_end_seed:
        rows[13] = ("permission/preset", {"preset": "ask"})  # the cut lands on a plain event
    return header, log(*rows)


def test_seeded_fork_v2_references_and_cut() -> None:
    header, events = seeded_v0()
    replay_log(events, 0)
    before = copy.deepcopy((header, events))
    h2, v2 = migrate(header, events, 2)
    assert (header, events) == before
    assert list(h2) == [
        "type",
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "isSeeded",
        "delegationDepth",
    ]
    assert h2["isSeeded"] is True and h2["version"] == 2
    assert [e["seq"] for e in v2] == list(range(22))
    assert v2[3]["data"]["messageSeqs"] == [2]
    assert v2[5]["type"] == "assistant/message" and "sourceEventSeqs" not in v2[5]
    assert v2[5]["data"]["stream"] == [
        {
            "type": "chunk",
            "time": 1005,
            "chunk": {"type": "block-start", "index": 0, "blockType": "text"},
        },
        {"type": "text-chunks", "time0": 1006, "index": 0, "dt": [1], "texts": ["Hel", "lo"]},
        {
            "type": "chunk",
            "time": 1008,
            "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "Hello"}},
        },
        {"type": "chunk", "time": 1009, "chunk": STOP},
    ]
    assert v2[8] == {
        "type": "session/end-seed",
        "seq": 8,
        "time": 1013,
        "data": {"inherited": True},
    }
    assert v2[13]["type"] == "assistant/attempt" and v2[13]["time"] == 1018
    assert v2[13]["data"]["turn"] == 2 and v2[13]["data"]["step"] == 1
    assert [r["chunk"]["type"] for r in v2[13]["data"]["stream"]] == ["finish"]
    assert v2[15]["data"]["shadowedRange"] == {"start": 2, "end": 5}
    assert v2[15]["data"]["shadowedSeqs"] == [2, 5]
    assert v2[16]["sourceEventSeqs"] == [14, 15, 2, 5]
    assert v2[16]["surfaceOp"] == {"op": "replace", "start": 2, "end": 5}
    assert v2[18]["data"]["stream"] == [
        {"type": "text-chunks", "time0": 1023, "index": 0, "dt": [], "texts": ["ok"]},
        {"type": "chunk", "time": 1024, "chunk": STOP},
    ]
    assert v2[20]["data"]["sourceEventSeq"] == 16
    index = replay_log(v2, 2)
    assert index.surface.nodes() == [16, 11, 18]
    assert index.end_seed_seqs == [8]


def test_seeded_fork_v3_system_head_and_references() -> None:
    header, events = seeded_v0()
    h3, v3 = migrate(header, events, 3)
    assert h3["version"] == 3 and h3["isSeeded"] is True and "seedLength" not in h3
    assert len(v3) == 25
    head, rep_a, rep_b = v3[2], v3[5], v3[14]
    assert head["type"] == rep_a["type"] == rep_b["type"] == "system/message"
    assert head["surfaceOp"] == "append" and "sourceEventSeqs" not in head
    assert head["data"]["message"]["content"] == []
    assert head["data"]["message"]["id"] == system_message_id("s-child", 1, "step/start")
    assert (head["time"], head["data"]["turn"], head["data"]["step"]) == (1001, 1, 1)
    assert rep_a["surfaceOp"] == {"op": "replace", "startSeq": 2, "endSeq": 2}
    assert rep_a["sourceEventSeqs"] == [2]
    assert rep_a["data"]["message"]["content"] == [{"type": "text", "text": "SYS-A"}]
    assert rep_a["data"]["message"]["id"] == system_message_id("s-child", 4, "request/header")
    assert rep_a["time"] == 1004
    assert rep_b["surfaceOp"] == {"op": "replace", "startSeq": 5, "endSeq": 5}
    assert rep_b["sourceEventSeqs"] == [5]
    assert rep_b["data"]["message"]["content"] == [{"type": "text", "text": "SYS-B"}]
    assert rep_b["data"]["message"]["id"] == system_message_id("s-child", 12, "request/header")
    assert (rep_b["time"], rep_b["data"]["turn"], rep_b["data"]["step"]) == (1017, 2, 1)
    assert v3[6]["type"] == v3[15]["type"] == "request/header"
    assert v3[6]["data"]["header"] == {"config": CONFIG}  # system and tools:[] gone
    assert v3[15]["data"]["header"] == {"config": CONFIG}  # and adapterDefaults:{}
    assert v3[4]["data"]["messageSeqs"] == [3]
    assert v3[10]["data"] == {"inherited": True}
    assert v3[18]["data"]["shadowedRange"] == {"start": 3, "end": 7}
    assert v3[18]["data"]["shadowedSeqs"] == [3, 7]
    assert v3[19]["sourceEventSeqs"] == [17, 18, 3, 7]
    assert v3[19]["surfaceOp"] == {"op": "replace", "startSeq": 3, "endSeq": 7}
    assert v3[23]["data"]["sourceEventSeq"] == 19
    index = replay_log(v3, 3)
    assert index.surface.nodes() == [14, 19, 13, 21]
    head_msg, *rest = surface_messages(v3, 3)
    assert rest == surface_messages(events, 0)
    assert head_msg["content"] == [{"type": "text", "text": "SYS-B"}]
    assert upgrade_to_latest(header, events) == (h3, v3)


def test_synthetic_id_formula() -> None:
    identity = json.dumps(
        ["session-format-v2-to-v3", "s-\u00e9", 7, "step/start"],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert identity == '["session-format-v2-to-v3","s-\u00e9",7,"step/start"]'
    want = "v2-to-v3-system-" + hashlib.sha256(identity.encode()).hexdigest()
    assert system_message_id("s-\u00e9", 7, "step/start") == want


def test_seed_cut_without_marker_gets_one() -> None:
    header, events = seeded_v0(with_end_seed=False)
    replay_log(events, 0)
    _, v2 = migrate(header, events, 2)
    assert v2[8] == {
        "type": "session/end-seed",
        "seq": 8,
        "time": 1013,
        "data": {"inherited": True},
    }
    assert v2[9]["type"] == "permission/preset" and len(v2) == 23
    assert v2[17]["sourceEventSeqs"] == [15, 16, 2, 5]  # refs after the cut shift by one
    replay_log(v2, 2)
    replay_log(migrate(header, events, 3)[1], 3)


def test_seed_cut_at_the_end_appends_the_marker() -> None:
    header, events = seeded_v0()
    events = events[:13]
    header = {**header, "seedLength": 13}
    _, v2 = migrate(header, events, 2)
    assert v2[-1] == {
        "type": "session/end-seed",
        "seq": 8,
        "time": 1012,
        "data": {"inherited": True},
    }


def test_seed_cut_splitting_an_attempt_is_refused() -> None:
    header, events = seeded_v0()
    with pytest.raises(SessionFormatError, match="splits one assistant attempt") as exc:
        migrate({**header, "seedLength": 7}, events, 2)
    assert exc.value.seq == 7


# --- versions and copying --------------------------------------------------------------------


def test_downgrade_is_refused() -> None:
    header, events = seeded_v0()
    h3, v3 = migrate(header, events, 3)
    for lower in (0, 1, 2):
        with pytest.raises(SessionFormatError, match="the harness has no downgrade"):
            migrate(h3, v3, lower)


def test_unknown_target_version_is_refused() -> None:
    header, events = seeded_v0()
    with pytest.raises(UnsupportedVersion):
        migrate(header, events, 4)


def test_same_version_is_a_copy() -> None:
    header, events = seeded_v0()
    h, ev = migrate(header, events, 0)
    assert (h, ev) == (header, events)
    assert h is not header and ev is not events and ev[0] is not events[0]


def test_seq_gap_is_refused() -> None:
    header, events = seeded_v0()
    del events[3]
    with pytest.raises(SessionFormatError, match="dense seqs") as exc:
        migrate(header, events, 1)
    assert exc.value.seq == 3


# --- v0 → v1 legacy normalizations -----------------------------------------------------------


def legacy_v0() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header = {"type": "session", "version": 0, "id": "old", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1, "trigger": {"kind": "user"}}),
        ("step/start", {"turn": 1, "step": 1}),
        (
            "steering/message",
            {"turn": 1, "content": [{"type": "text", "text": "steer"}], "source": {"kind": "user"}},
            APPEND,
        ),
        (
            "request/header",
            {"header": {"config": CONFIG, "system": "S", "messagePrefix": []}, "reason": "initial"},
        ),
        ("compact/start", {"turn": 1}),
        ("compact/end", {"turn": 1}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "disposed"}}),
    )
    return header, events


def test_v0_to_v1_legacy_normalizations() -> None:
    header, events = legacy_v0()
    h1, v1 = migrate(header, events, 1)
    assert h1 == {**header, "version": 1}
    assert v1[0]["data"] == {"turn": 1}
    assert v1[2]["type"] == "user/message"
    assert v1[2]["data"] == {
        "content": [{"type": "text", "text": "steer"}],
        "source": {"kind": "user"},
        "id": "legacy-message:old:2",
        "role": "user",
    }
    assert v1[3]["data"]["header"] == {"config": CONFIG, "system": "S"}
    assert [e["type"] for e in v1[4:6]] == ["compaction/start", "compaction/end"]
    assert (
        v1[4]["data"]["compactionId"] == v1[5]["data"]["compactionId"] == "legacy-compaction:old:4"
    )
    assert v1[7]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "disposed"}}
    replay_log(v1, 1)
    replay_log(migrate(header, events, 3)[1], 3)


@pytest.mark.parametrize(
    ("row", "match"),
    [
        (("request/header-delta", {"delta": {}}), "request/header-delta"),
        (("mode/set", {"mode": "plan"}), "mode/set"),
        (("request/header", {"header": {"config": CONFIG}, "reason": "fallback"}), "fallback"),
    ],
)
def test_v0_retired_events_are_refused_naming_the_seq(row: tuple[Any, ...], match: str) -> None:
    header, events = legacy_v0()
    events = log(*[(e["type"], e["data"]) for e in events[:3]], row)
    with pytest.raises(SessionFormatError, match=match) as exc:
        migrate(header, events, 1)
    assert exc.value.seq == 3
    assert "seq 3" in str(exc.value)


# --- v1 → v2 turns and chunks ----------------------------------------------------------------


def test_legacy_restart_closes_the_prior_turn_as_interrupted() -> None:
    header = {"type": "session", "version": 0, "id": "r", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("user/message", user("u1", "one"), APPEND),
        ("step/end", {"turn": 1, "step": 1}),
        (
            "agent/inbox/spliced",
            {"target": "next-turn", "start": 0, "inserted": [user("u2", "two")]},
        ),
        ("turn/start", {"turn": 2}),
        ("step/start", {"turn": 2, "step": 1}),
        ("user/message", user("u2", "two"), APPEND),
        ("step/end", {"turn": 2, "step": 1}),
        ("turn/end", {"turn": 2, "reason": {"kind": "completed"}}),
    )
    _, v2 = migrate(header, events, 2)
    assert v2[5] == {
        "type": "turn/end",
        "seq": 5,
        "time": 1005,
        "data": {"turn": 1, "reason": {"kind": "interrupted"}},
    }
    assert v2[6]["type"] == "turn/start" and len(v2) == len(events) + 1
    replay_log(v2, 2)


def test_unterminated_last_turn_is_left_open() -> None:
    # §16 closes only the legacy restart pattern; an open last turn is crash repair's job (§9).
    header = {"type": "session", "version": 0, "id": "o", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("user/message", user("u1", "one"), APPEND),
        ("assistant/chunk", chunk(1, 1, text_delta("par"))),
    )
    _, v2 = migrate(header, events, 2)
    assert [e["type"] for e in v2] == [
        "turn/start",
        "step/start",
        "user/message",
        "assistant/attempt",
    ]
    index = replay_log(v2, 2)
    assert index.open_turn == 1 and index.open_step == 1


def test_turn_start_inside_an_open_turn_is_refused() -> None:
    header = {"type": "session", "version": 0, "id": "o", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/start", {"turn": 2}),
    )
    with pytest.raises(SessionFormatError, match="never ended") as exc:
        migrate(header, events, 2)
    assert exc.value.seq == 3


def test_reference_to_a_consumed_chunk_is_refused() -> None:
    header = {"type": "session", "version": 0, "id": "c", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("assistant/chunk", chunk(1, 1, STOP)),
        ("session/title", {"title": "x", "messageSeqs": [2], "source": {"kind": "fallback"}}),
    )
    with pytest.raises(SessionFormatError, match="consumed") as exc:
        migrate(header, events, 2)
    assert exc.value.seq == 3


def test_message_citing_a_partial_attempt_is_refused() -> None:
    header = {"type": "session", "version": 0, "id": "c", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("assistant/chunk", chunk(1, 1, text_delta("a"))),
        ("assistant/chunk", chunk(1, 1, STOP)),
        ("assistant/message", assistant(1, 1, "a", "a"), {"sourceEventSeqs": [3], **APPEND}),
    )
    with pytest.raises(SessionFormatError, match="complete ordered chunk attempt") as exc:
        migrate(header, events, 2)
    assert exc.value.seq == 4


def test_pack_stream_rules() -> None:
    tool = {
        "type": "tool-call-delta",
        "index": 1,
        "id": "c1",
        "name": "bash",
        "argumentsDelta": "{",
    }
    chunks = [
        (10, text_delta("a")),
        (12, text_delta("b")),
        (11, text_delta("c", index=2)),  # another index starts another run (time may go back)
        (13, {"type": "reasoning-delta", "index": 2, "text": "r"}),
        (14, tool),
        (15, {**tool, "argumentsDelta": "}"}),
        (16, {k: v for k, v in tool.items() if k != "name"}),  # name presence differs
        (17, {**tool, "id": ""}),  # an empty id stays a raw chunk
        (18, {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}}),
    ]
    stream = pack_stream(chunks)
    assert stream == [
        {"type": "text-chunks", "time0": 10, "index": 0, "dt": [2], "texts": ["a", "b"]},
        {"type": "text-chunks", "time0": 11, "index": 2, "dt": [], "texts": ["c"]},
        {"type": "reasoning-chunks", "time0": 13, "index": 2, "dt": [], "texts": ["r"]},
        {
            "type": "tool-call-chunks",
            "time0": 14,
            "index": 1,
            "dt": [1],
            "id": "c1",
            "name": "bash",
            "args": ["{", "}"],
        },
        {"type": "tool-call-chunks", "time0": 16, "index": 1, "dt": [], "id": "c1", "args": ["{"]},
        {"type": "chunk", "time": 17, "chunk": {**tool, "id": ""}},
        {"type": "chunk", "time": 18, "chunk": chunks[-1][1]},
    ]
    assert expand_stream(stream) == chunks


# --- v2 → v3 vocabulary and refusals ---------------------------------------------------------


def v2_header(**extra: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 2,
        "id": "v2",
        "createdAt": 5,
        "isSeeded": False,
        "delegationDepth": 0,
        **extra,
    }


def test_v2_to_v3_ptc_renames_and_empty_header_fields() -> None:
    header = v2_header(agentPreset="code")
    plugin_msg = {**user("u1", "x"), "source": {"kind": "plugin", "plugin": "tools-code-mode"}}
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("agent-preset/selected", {"agentPreset": "code"}),
        ("user/message", plugin_msg, APPEND),
        (
            "request/header",
            {
                "header": {"config": CONFIG, "tools": [], "adapterDefaults": {}, "stop": []},
                "reason": "initial",
            },
        ),
        ("tool/code-dispatch-start", {"callId": "c"}),
        ("tool/code-dispatch", {"callId": "c"}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    )
    h3, v3 = migrate(header, events, 3)
    assert h3["agentPreset"] == "ptc" and header["agentPreset"] == "code"
    assert [e["type"] for e in v3] == [
        "turn/start",
        "step/start",
        "system/message",
        "agent-preset/selected",
        "user/message",
        "request/header",
        "tool/ptc-dispatch-start",
        "tool/ptc-dispatch",
        "step/end",
        "turn/end",
    ]
    assert v3[2]["data"]["message"]["content"] == []  # no system prompt: an empty head, no replace
    assert v3[3]["data"] == {"agentPreset": "ptc"}
    assert v3[4]["data"]["source"] == {"kind": "plugin", "plugin": "tools-ptc"}
    assert v3[5]["data"]["header"] == {"config": CONFIG, "stop": []}
    assert surface_messages(v3, 3)[1:] == [v3[4]["data"]]


def test_v2_tool_result_error_without_is_error_is_refused() -> None:
    call = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}
    msg = {"role": "assistant", "content": [call], "source": MODEL, "id": "a1"}
    result = {
        "role": "user",
        "id": "r1",
        "source": {"kind": "tool", "callId": "c1"},
        "content": [{"type": "tool-result", "toolCallId": "c1", "content": [], "isError": False}],
    }
    events = log(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("assistant/message", {"turn": 1, "step": 1, "message": msg, "stream": []}, APPEND),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}),
        (
            "tool/result",
            {"turn": 1, "step": 1, "message": result, "error": {"name": "E", "code": "E"}},
            {"sourceEventSeqs": [3], **APPEND},
        ),
    )
    with pytest.raises(SessionFormatError, match="isError") as exc:
        migrate(v2_header(), events, 3)
    assert exc.value.seq == 5  # the target seq, after the inserted system head


def test_v2_surface_before_the_first_step_is_refused() -> None:
    events = log(
        ("turn/start", {"turn": 1}),
        ("user/message", user("u1", "x"), APPEND),
        ("step/start", {"turn": 1, "step": 1}),
    )
    with pytest.raises(SessionFormatError, match="before the first step/start") as exc:
        migrate(v2_header(), events, 3)
    assert exc.value.seq == 1


def test_v2_seeded_log_needs_its_tagged_marker() -> None:
    events = log(
        ("turn/start", {"turn": 1}), ("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    )
    with pytest.raises(SessionFormatError, match="no session/end-seed"):
        migrate(v2_header(isSeeded=True), events, 3)


# --- what the harness's chain refuses in its input ---------------------------------------------


@needs_fixtures
def test_fixture_placeholders_are_refused_as_the_harness_does() -> None:
    src = read_log(FIXTURES / "v0-text-turn.session.jsonl", normalized=True)
    with pytest.raises(SessionFormatError, match="format v0 header cwd must be absolute"):
        migrate(src.header, src.events, 1)
    header = {**src.header, "cwd": "/w"}
    with pytest.raises(
        SessionFormatError, match=r"request/header \d+ header tools must be an array"
    ):
        migrate(header, src.events, 3)


def test_relative_cwd_and_non_array_tools_are_refused() -> None:
    header = {"type": "session", "version": 0, "id": "r", "createdAt": 1, "delegationDepth": 0}
    events = log(
        ("turn/start", {"turn": 1}),
        (
            "request/header",
            {"header": {"config": CONFIG, "tools": {"bash": {}}}, "reason": "initial"},
        ),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    )
    with pytest.raises(SessionFormatError, match="header cwd must be absolute") as exc:
        migrate({**header, "cwd": "rel/dir"}, events, 1)
    assert "rel/dir" in str(exc.value)
    with pytest.raises(
        SessionFormatError, match="request/header 1 header tools must be an array"
    ) as exc:
        migrate({**header, "cwd": "/abs"}, events, 2)
    assert exc.value.seq == 1
    ok = log(
        ("turn/start", {"turn": 1}), ("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    )
    assert len(migrate(header, ok, 1)[1]) == 2  # no cwd at all is fine
