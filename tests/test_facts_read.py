"""The fact reader's walk: the whole log, redacted before any rule reads it."""

from __future__ import annotations

import json

import ctxsdk as cx
from ctxsdk.session import read_facts

SECRET = "ghp_" + "Zq8" * 12  # a GitHub token shape


def _session() -> cx.Session:
    return cx.Session.from_messages(
        [
            {"role": "user", "content": f"Always use the token {SECRET} for the API."},
            {"role": "user", "content": f"Set the API token to {SECRET}."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": json.dumps({"command": f"GH_TOKEN={SECRET} pytest -q"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f"token {SECRET}\n3 passed"},
            {"role": "assistant", "content": "All 3 tests pass."},
        ]
    )


def test_no_fact_holds_a_credential_said_anywhere_in_the_log() -> None:
    s = _session()
    facts = read_facts(s.raw_events, session=s.id)
    assert facts.of("outcome")  # the rest of the log is still read
    dumped = json.dumps([f.row() for f in facts], ensure_ascii=False)
    assert SECRET not in dumped
    # a sentence that held the credential gives no fact at all (it would point at nothing)
    assert not [f for f in facts if f.source.role == "user"]


def test_session_facts_is_read_facts_over_the_raw_events() -> None:
    s = _session()
    assert s.facts() == read_facts(s.raw_events, session=s.id)
