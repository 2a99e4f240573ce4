"""What the harness says, read apart from the user's words: the run's settings (model,
Aider's banner, Codex's environment context), the rules of a task template, and the errors
it relayed, each with the harness's origin (role ``tool``/``system``) and the run's scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.session import Facts, read_facts
from ctxsdk.session._facts._model import RUN_SCOPE
from ctxsdk.session._facts._relayed import error_line
from ctxsdk.session._facts._rules import template_rules
from ctxsdk.session.importers import from_aider
from ctxsdk.session.kernel import run_value

from .conftest import SHARED

CORPUS = SHARED / "data" / "agent-sessions"


def _user(seq: int, text: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    msg = {"role": "user", "content": [{"type": "text", "text": text}]}
    msg["source"] = source or {"kind": "user"}
    return {"type": "user/message", "seq": seq, "data": msg}


def _reply(seq: int, text: str = "Done.") -> dict[str, Any]:
    msg = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"type": "assistant/message", "seq": seq, "data": {"message": msg}}


def _header(seq: int, model: str, reason: str = "initial") -> dict[str, Any]:
    cfg = {"provider": "p", "model": model}
    return {
        "type": "request/header",
        "seq": seq,
        "data": {"header": {"config": cfg}, "reason": reason},
    }


def _harness_facts(s: cx.Session) -> Facts:
    return read_facts(s.raw_events, session=s.id, harness=True)


RELAY_ERROR = {"kind": "plugin", "plugin": "aider", "form": "relay", "error": True}


# ------------------------------------------------------------------ the run's settings


def test_each_model_change_is_a_setting_with_the_harness_origin() -> None:
    events = [
        _user(1, "hi"),
        _header(2, "gpt-4o"),
        _reply(3),
        _header(4, "gpt-4o", "resume"),  # unchanged: nothing new
        _reply(5),
        _header(6, "gpt-4.1", "change"),
        _reply(7),
    ]
    facts = read_facts(events, session="s", harness=True)
    models = [f for f in facts if f.key == "model"]
    assert [(f.value, f.source.seq) for f in models] == [("gpt-4o", 2), ("gpt-4.1", 6)]
    assert all(f.kind == "setting" and f.source.role == "tool" for f in models)
    assert all(f.scope == RUN_SCOPE for f in models)
    current = [f for f in facts.current() if f.key == "model"]
    assert [f.value for f in current] == ["gpt-4.1"]  # the change supersedes


def test_the_run_is_read_only_when_asked() -> None:
    events = [_header(1, "gpt-4o"), _user(2, SWE_TEMPLATE), _reply(3)]
    assert not [f for f in read_facts(events, session="s") if f.scope == RUN_SCOPE]
    assert [f for f in read_facts(events, session="s", harness=True) if f.scope == RUN_SCOPE]


def test_an_unknown_model_says_nothing() -> None:
    facts = read_facts([_header(1, "unknown"), _reply(2)], session="s", harness=True)
    assert not [f for f in facts if f.key == "model"]


def test_codex_environment_context_gives_the_run_settings_but_not_cwd() -> None:
    env = (
        "<environment_context>\n  <cwd>/repo</cwd>\n  <approval_policy>never</approval_policy>\n"
        "  <sandbox_mode>workspace-write</sandbox_mode>\n"
        "  <network_access>restricted</network_access>\n  <shell>zsh</shell>\n"
        "</environment_context>"
    )
    source = {"kind": "plugin", "plugin": "codex", "form": "instructions"}
    facts = read_facts([_user(1, env, source)], session="s", harness=True)
    got = {f.key: f.value for f in facts if f.kind == "setting"}
    assert got == {
        "approval policy": "never",
        "sandbox mode": "workspace-write",
        "network access": "restricted",
        "shell": "zsh",
    }
    assert all(f.source.role == "tool" for f in facts)
    assert "<sandbox_mode>workspace-write</sandbox_mode>" in [f.source.quote for f in facts]


AIDER_LOG = """
# aider chat started at 2025-06-02 12:00:00

> Aider v0.84.0
> Main model: gemini/gemini-2.5-pro with diff-fenced edit format
> Weak model: gemini/gemini-2.5-flash
> Git repo: .git with 10 files

#### what does this repo do?

It is a small library.
"""


def test_aider_banner_kept_as_provenance_gives_the_models(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(AIDER_LOG, encoding="utf-8")
    s = from_aider(path)
    kept = [ev["data"] for ev in s.raw_events if ev["type"] == "ctxsdk/import"]
    assert any(d.get("banner") for d in kept)  # the banner's model lines stay readable
    got = {f.key: f for f in _harness_facts(s) if f.kind == "setting"}
    assert got["model"].value == "gemini/gemini-2.5-pro"
    assert "diff-fenced edit format" in got["model"].text
    assert run_value(got["model"]) == "gemini/gemini-2.5-pro (diff-fenced edit format)"
    assert run_value(got["weak model"]) == "gemini/gemini-2.5-flash"  # no format of its own
    assert got["weak model"].value == "gemini/gemini-2.5-flash"
    assert got["weak model"].source.quote == "Weak model: gemini/gemini-2.5-flash"
    assert got["weak model"].source.role == "tool"
    assert "git repo" not in got


def test_a_command_output_naming_a_model_is_no_banner() -> None:
    relay = {"kind": "plugin", "plugin": "aider", "form": "relay"}
    facts = read_facts([_user(1, "Model: resnet50\nloaded", relay)], session="s", harness=True)
    assert not [f for f in facts if f.kind == "setting"]


# ------------------------------------------------------------------ template rules

SWE_TEMPLATE = """We're currently solving the following issue within our repository. Here's the issue text:
ISSUE:
Parsing a date with a timezone drops the offset.

INSTRUCTIONS:
Now, you're going to solve this issue on your own.

IMPORTANT TIPS:
1. When you edit an existing file, try to minimize the changes you make to the file.

2. Please make sure that for any blocking command like netcat (nc), you limit its run time, for example `nc -w5 127.0.0.1 80`.

3. Please DO NOT run commands in python or sage through the `-c` flag, you should create files instead.

4. Please remember that the container is exposed to the internet.

Format your responses like this:
<format_example>
THOUGHT: I must look at the code first.

```bash
ls -la
```
</format_example>

- Your response MUST include EXACTLY ONE bash code block
- Your response SHOULD include a THOUGHT section explaining your reasoning
"""


def test_template_rules_are_run_scoped_instructions_of_the_harness() -> None:
    rules = template_rules(SWE_TEMPLATE, seq=4, session="s")
    texts = [f.text for f in rules]
    assert any("`-c` flag" in t for t in texts)
    assert any("nc -w5" in t for t in texts)
    assert any("EXACTLY ONE bash code block" in t for t in texts)
    assert all(f.kind == "instruction" and f.scope == RUN_SCOPE for f in rules)
    assert all(f.source.role == "system" for f in rules)  # the harness's, not the user's


def test_template_boilerplate_and_the_task_are_no_rules() -> None:
    texts = [f.text for f in template_rules(SWE_TEMPLATE, seq=4, session="s")]
    assert not [t for t in texts if "THOUGHT" in t or "look at the code" in t]
    assert not [t for t in texts if "exposed to the internet" in t]  # a note, not a rule
    assert not [t for t in texts if "timezone" in t]  # the user's task is read elsewhere


def test_a_users_own_list_is_no_template() -> None:
    text = "Please fix these:\n1. DO NOT change the API.\n2. You must keep the tests."
    assert template_rules(text, seq=1, session="s") == []
    facts = read_facts([_user(1, text)], session="s", harness=True)
    assert not [f for f in facts if f.scope == RUN_SCOPE]
    assert [f for f in facts if f.kind == "instruction" and f.source.role == "user"]


def test_the_reader_gives_a_templates_rules_once() -> None:
    facts = read_facts([_user(1, SWE_TEMPLATE), _user(5, SWE_TEMPLATE)], session="s", harness=True)
    rules = [f for f in facts if f.scope == RUN_SCOPE]
    assert rules and len({f.text for f in rules}) == len(rules)
    assert {f.source.seq for f in rules} == {1}


# ------------------------------------------------------------------ relayed errors


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            'litellm.BadRequestError: OpenrouterException - {"error":{"message":"qwen3 is not'
            ' a valid model ID","code":400}}\n^C again to exit',
            "litellm.BadRequestError: OpenrouterException - 400: qwen3 is not a valid model ID",
        ),
        (
            "Initial repo scan can be slow.\nlitellm.AuthenticationError: Incorrect API key"
            " provided: fake-api-key.\nCheck your API key.",
            "litellm.AuthenticationError: Incorrect API key provided: fake-api-key.",
        ),
        (
            'Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
            "TypeError: can't multiply sequence by non-int of type 'float'",
            "TypeError: can't multiply sequence by non-int of type 'float'",
        ),
        ("Copied code context to clipboard.\n^C KeyboardInterrupt", None),
    ],
)
def test_the_first_meaningful_error_line(text: str, line: str | None) -> None:
    assert error_line(text) == line


def test_a_relayed_error_is_fixed_by_the_model_switch_before_the_next_call() -> None:
    err = (
        'litellm.BadRequestError: X - {"error":{"message":"m1 is not a valid model ID","code":400}}'
    )
    events = [
        _header(1, "m1"),
        _user(2, "hi"),
        _user(3, err, RELAY_ERROR),
        _header(4, "provider/m1", "change"),
        _reply(5),
    ]
    errors = read_facts(events, session="s", harness=True).of("error")
    assert read_facts(events, session="s").of("error") == errors  # errors are always read
    assert len(errors) == 1
    e = errors[0]
    assert "400: m1 is not a valid model ID" in e.text
    assert e.fix == "switched the model to provider/m1"
    assert e.source.seq == 3 and e.source.role == "tool"
    assert 5 in e.evidence


def test_a_relayed_error_with_no_change_before_the_next_call_has_no_fix() -> None:
    err = "litellm.RateLimitError: 429 Quota exceeded"
    events = [_header(1, "m1"), _user(2, err, RELAY_ERROR), _reply(3)]
    (e,) = read_facts(events, session="s", harness=True).of("error")
    assert e.fix is None and "no change" in e.text


def test_a_relayed_error_never_followed_by_a_call_is_still_failing() -> None:
    err = "litellm.AuthenticationError: Incorrect API key provided"
    (e,) = read_facts([_user(1, "hi"), _user(2, err, RELAY_ERROR)], session="s").of("error")
    assert e.fix is None and "still failing" in e.text


def test_a_relayed_error_is_redacted() -> None:
    secret = "sk-" + "A1b2C3d4" * 6
    err = f"litellm.AuthenticationError: Incorrect API key provided: {secret}"
    (e,) = read_facts([_user(1, err, RELAY_ERROR)], session="s").of("error")
    assert secret not in e.text and secret not in e.source.quote


def test_an_error_said_by_the_user_or_relayed_as_output_is_no_relayed_error() -> None:
    relay = {"kind": "plugin", "plugin": "aider", "form": "relay"}
    events = [_user(1, "TypeError: x is None"), _user(2, "ValueError: bad", relay), _reply(3)]
    assert not read_facts(events, session="s", harness=True).of("error")


# ------------------------------------------------------------------ the real corpus

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="agent-sessions corpus absent")


@needs_corpus
def test_real_aider_history_gives_its_models_and_relayed_errors() -> None:
    s = from_aider(CORPUS / "aider" / "Monochromatic__.aider.chat.history.md")
    facts = _harness_facts(s)
    keys = {f.key: f.value for f in facts.current() if f.kind == "setting"}
    assert keys["model"] == "gemini/gemini-2.5-pro-preview-05-06"
    assert keys["weak model"] == "gemini/gemini-2.5-flash-preview-04-17"
    errors = " | ".join(f.text for f in facts.of("error"))
    assert "qwen3-235b-a22b is not a valid model ID" in errors
    assert "default credentials were not found" in errors
    assert "429: Quota exceeded" in errors
    first = next(f for f in facts.of("error") if "not a valid model ID" in f.text)
    assert first.fix == "switched the model to openrouter/qwen/qwen3-235b-a22b"


@needs_corpus
def test_real_swe_agent_template_gives_its_rules() -> None:
    from ctxsdk.bench._realworld import load_session

    s = load_session(CORPUS, "swe-agent/ctf_crypto__katy.traj")
    rules = [f.text for f in _harness_facts(s) if f.scope == RUN_SCOPE and f.kind == "instruction"]
    assert any("`-c` flag" in t for t in rules)
    assert any("-w5" in t for t in rules)
    assert not [t for t in rules if "THOUGHT" in t]
