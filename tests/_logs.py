"""Small hand-written DSH logs for tests (raw events exactly as the harness writes them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "data" / "dsh-fixtures"
MODEL = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}
SYSTEM_SOURCE = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}


def header(version: int = 3, **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "version": version, "id": "s-test", "createdAt": 1}
    if version >= 2:
        h["isSeeded"] = False
    h["delegationDepth"] = 0
    h.update(extra)
    return h


class V3:
    """Appends v3 events with contiguous seqs."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, data: Any, **extra: Any) -> int:
        seq = len(self.events)
        ev: dict[str, Any] = {"type": type_, "seq": seq, "time": 1000 + seq, "data": data}
        ev.update(extra)
        self.events.append(ev)
        return seq

    def user(self, text: str, mid: str) -> int:
        msg = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
        return self.add("user/message", {**msg, "role": "user", "id": mid}, surfaceOp="append")

    def system(self, turn: int, step: int, text: str, mid: str = "sys-1") -> int:
        msg = {"id": mid, "role": "system", "content": [{"type": "text", "text": text}]}
        data = {"turn": turn, "step": step, "message": {**msg, "source": dict(SYSTEM_SOURCE)}}
        return self.add("system/message", data, surfaceOp="append")

    def assistant(
        self, turn: int, step: int, mid: str, text: str = "", calls: tuple[str, ...] = ()
    ) -> int:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        for cid in calls:
            content.append({"type": "tool-call", "id": cid, "name": "bash", "arguments": "{}"})
        msg = {"role": "assistant", "content": content, "source": dict(MODEL), "id": mid}
        data = {"turn": turn, "step": step, "message": msg, "stream": []}
        return self.add("assistant/message", data, surfaceOp="append")

    def tool(self, turn: int, step: int, cid: str, output: str, started: bool = True) -> int:
        call_seq = None
        if started:
            call_data = {
                "turn": turn,
                "step": step,
                "callId": cid,
                "name": "bash",
                "arguments": "{}",
            }
            call_seq = self.add("tool/call", call_data)
        block = {
            "type": "tool-result",
            "toolCallId": cid,
            "content": [{"type": "text", "text": output}],
            "isError": False,
        }
        msg = {
            "source": {"kind": "tool", "callId": cid},
            "content": [block],
            "role": "user",
            "id": f"r-{cid}",
        }
        extra: dict[str, Any] = {"surfaceOp": "append"}
        if call_seq is not None:
            extra = {"sourceEventSeqs": [call_seq], "surfaceOp": "append"}
        return self.add("tool/result", {"turn": turn, "step": step, "message": msg}, **extra)


def small_v3(closed: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Turn 1: system, prompt, a bash call and its result, then the answer."""
    b = V3()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.system(1, 1, "You are a careful agent.")
    b.user("List the files, please.", "u-1")
    b.add(
        "session/title",
        {"title": "List the files", "messageSeqs": [3], "source": {"kind": "fallback"}},
    )
    b.add(
        "request/header",
        {
            "header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}},
            "reason": "initial",
        },
    )
    b.add(
        "request/context",
        {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 128000},
    )
    b.assistant(1, 1, "a-1", "Listing.", ("call_1",))
    b.tool(1, 1, "call_1", "README.md\nsrc\n")
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("step/start", {"turn": 1, "step": 2})
    b.assistant(1, 2, "a-2", "There are two entries: README.md and src.")
    if closed:
        b.add("step/end", {"turn": 1, "step": 2})
        b.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return header(3), b.events
