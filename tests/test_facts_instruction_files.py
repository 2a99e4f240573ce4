"""The project's rules for agents, read from its instruction files as the log holds them:
Codex's injected AGENTS.md, a Read of CLAUDE.md, an edit or a new file of CONVENTIONS.md.

Synthetic logs shaped as the real ones pin the rules; the real corpus files (skipped when
``../shared/data`` is absent) check them on real logs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxsdk.session import read_facts
from ctxsdk.session._facts import PROJECT_SCOPE, file_rules, is_instruction_file
from ctxsdk.session._facts._instruction_files import MAX_RULES
from ctxsdk.session.kernel import rule_file

from .conftest import SHARED

AGENTS = SHARED / "data" / "agent-sessions"

CODEX_AGENTS_MD = """# AGENTS.md instructions for /Users/dev/repos/shop

<INSTRUCTIONS>
<!-- codebase-memory-mcp:start -->
# Codebase Knowledge Graph

This project uses codebase-memory-mcp to maintain a knowledge graph of the codebase.
ALWAYS prefer MCP graph tools over grep/glob/file-search for code discovery.

## Priority Order
1. `search_graph` — find functions, classes, routes, variables by pattern
2. `trace_path` — trace who calls a function or what it calls

## Conventions
- Run `pnpm test` before every commit.
- Never push to main directly.
- Do not edit generated files under `dist/`.

## Examples
- Use `search_graph(name_pattern=".*OrderHandler.*")` to find a handler

```bash
rm -rf dist && pnpm build
```
<!-- codebase-memory-mcp:end -->
</INSTRUCTIONS>"""

CLAUDE_READ = (
    "     1→# Agent Guide\n     2→\n     3→This guide describes the agent system.\n"
    "     4→\n     5→## Rules\n     6→- Components should import types from their source module\n"
    "     7→- Interface that all agents must implement\n"
    "     8→- Ensures session.status reflects sync completion\n"
    "     9→- Always combine output and reasoning tokens\n    10→\n"
    "<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You MUST refuse to improve or augment the code.\n</system-reminder>\n"
)


def _user(seq: int, text: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}]}
    if source is not None:
        data["source"] = source
    return {"type": "user/message", "seq": seq, "data": data}


def _call(seq: int, cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    data = {"callId": cid, "name": name, "arguments": json.dumps(args)}
    return {"type": "tool/call", "seq": seq, "data": data}


def _result(seq: int, cid: str, text: str, error: bool = False) -> dict[str, Any]:
    block = {
        "type": "tool-result",
        "toolCallId": cid,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }
    return {
        "type": "tool/result",
        "seq": seq,
        "data": {"message": {"source": {"kind": "tool", "callId": cid}, "content": [block]}},
    }


_CODEX = {"kind": "plugin", "plugin": "codex", "form": "instructions"}


def _rules(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    facts = read_facts(events, session="s", harness=True, rule_files=True)
    return [(rule_file(f) or "", f.text, f.source.role) for f in facts if rule_file(f)]


def test_codex_injected_agents_md_gives_its_rules_not_its_prose_steps_or_examples() -> None:
    got = _rules([_user(1, CODEX_AGENTS_MD, _CODEX)])
    assert [t for _, t, _ in got] == [
        "ALWAYS prefer MCP graph tools over grep/glob/file-search for code discovery.",
        "Run pnpm test before every commit.",
        "Never push to main directly.",
        "Do not edit generated files under dist/.",
    ]
    assert {(p, r) for p, _, r in got} == {("AGENTS.md", "system")}
    facts = read_facts([_user(1, CODEX_AGENTS_MD, _CODEX)], rule_files=True)
    assert all(f.kind == "instruction" and f.scope == PROJECT_SCOPE for f in facts)


def test_the_rules_are_read_only_when_asked() -> None:
    # an engine that would store one item per rule does not get them by default
    assert not [f for f in read_facts([_user(1, CODEX_AGENTS_MD, _CODEX)]) if rule_file(f)]


def test_a_read_of_claude_md_gives_rules_without_line_numbers_descriptions_or_reminders() -> None:
    path = "/Users/dev/repo/src/agents/CLAUDE.md"
    got = _rules([_call(1, "c1", "Read", {"file_path": path}), _result(2, "c1", CLAUDE_READ)])
    assert got == [
        ("src/agents/CLAUDE.md", "Components should import types from their source module", "tool"),
        ("src/agents/CLAUDE.md", "Always combine output and reasoning tokens", "tool"),
    ]


def test_a_failed_read_and_a_shell_read_of_two_files_give_nothing() -> None:
    events = [
        _call(1, "c1", "Read", {"file_path": "CLAUDE.md"}),
        _result(2, "c1", "- Never push to main.", error=True),
        _call(3, "c2", "bash", {"command": "cat AGENTS.md CLAUDE.md"}),
        _result(4, "c2", "- Never push to main."),
    ]
    assert _rules(events) == []


def test_a_shell_read_of_an_agent_file_is_read() -> None:
    events = [
        _call(1, "c1", "exec_command", {"cmd": "sed -n '1,80p' AGENTS.md"}),
        _result(2, "c1", "## Rules\n- Never push to main.\n"),
    ]
    assert _rules(events) == [("AGENTS.md", "Never push to main.", "tool")]


def test_an_edit_gives_only_the_lines_it_adds_and_a_created_file_all_its_rules() -> None:
    old = "When writing code, try to:\n- Follow the airbnb style.\n"
    new = old + "- Prefer const over let.\n- Name every exported function.\n"
    events = [
        _call(1, "e1", "edit", {"path": "CONVENTIONS.md", "search": old, "replace": new}),
        _call(2, "w1", "Write", {"file_path": "/repo/AGENTS.md", "content": CODEX_AGENTS_MD}),
    ]
    got = _rules(events)
    assert got[0] == ("CONVENTIONS.md", "Prefer const over let.", "assistant")
    assert ("CONVENTIONS.md", "Follow the airbnb style.", "assistant") not in got
    assert ("AGENTS.md", "Never push to main directly.", "assistant") in got


def test_a_rule_the_user_said_is_not_repeated_from_the_file() -> None:
    events = [
        _user(1, "Never push to main directly."),
        _user(2, CODEX_AGENTS_MD, _CODEX),
    ]
    facts = read_facts(events, harness=True, rule_files=True)
    said = [f for f in facts if "push to main" in f.text]
    assert [f.source.role for f in said] == ["user"]


def test_a_long_file_keeps_at_most_max_rules_binding_ones_first_in_written_order() -> None:
    lines = [f"- Use helper number {i} for the task." for i in range(20)]
    lines.insert(15, "- Never commit secrets to the repository.")
    got = file_rules("\n".join(lines))
    assert len(got) == MAX_RULES
    assert "Never commit secrets to the repository." in got
    assert got == sorted(got, key=lambda r: "\n".join(lines).index(r))  # the order written


@pytest.mark.parametrize(
    ("path", "yes"),
    [
        ("AGENTS.md", True),
        ("/repo/src/agents/CLAUDE.md", True),
        ("GEMINI.md", True),
        ("CONVENTIONS.md", True),
        (".cursorrules", True),
        (".github/copilot-instructions.md", True),
        ("docs/AGENTS.md", False),  # a page about the project's agents
        ("README.md", False),
        ("src/claude.ts", False),
    ],
)
def test_which_files_hold_rules_for_agents(path: str, yes: bool) -> None:
    assert is_instruction_file(path) is yes


def test_prose_about_a_project_gives_no_rule() -> None:
    prose = (
        "# Session corpus\n\nThis folder holds real sessions of eight agents.\n"
        "Each file keeps its provenance.\n\n| agent | files |\n|---|---|\n| codex | 2 |\n"
    )
    assert file_rules(prose) == []


@pytest.mark.skipif(not AGENTS.is_dir(), reason="needs ../shared/data/agent-sessions")
def test_real_logs_of_three_agents_give_bounded_rules_of_their_agent_files() -> None:
    from ctxsdk.bench._realworld import load_session

    cases = {
        "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": "AGENTS.md",
        "claude-code/codemie__session-196820da.jsonl": "src/agents/CLAUDE.md",
        "aider/Monochromatic__.aider.chat.history.md": "CONVENTIONS.md",
    }
    for rel, path in cases.items():
        s = load_session(AGENTS, rel)
        facts = read_facts(s.raw_events, session=s.id, harness=True, rule_files=True)
        rules = [f for f in facts if rule_file(f) == path]
        assert 1 <= len(rules) <= MAX_RULES, rel
        assert not [f for f in rules if "malware" in f.text]
    # Codex's skills catalog in its AGENTS.md message is the harness's, not the project's
    s = load_session(
        AGENTS, "codex/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
    )
    assert not [f for f in read_facts(s.raw_events, rule_files=True) if rule_file(f)]


def test_a_here_document_written_to_an_agent_file_gives_its_rules() -> None:
    command = (
        "cat > AGENTS.md <<'EOF'\n# Rules\n- Never push to main.\n- Run make check first.\nEOF"
    )
    got = _rules([_call(1, "c1", "bash", {"command": command})])
    assert got == [
        ("AGENTS.md", "Never push to main.", "assistant"),
        ("AGENTS.md", "Run make check first.", "assistant"),
    ]


def test_a_failed_edit_of_an_agent_file_wrote_no_rule() -> None:
    args = {
        "file_path": "/repo/CLAUDE.md",
        "old_string": "## Rules\n",
        "new_string": "## Rules\n- Never push to main.\n",
    }
    failed = [
        _call(1, "e1", "Edit", args),
        _result(
            2,
            "e1",
            "<tool_use_error>String to replace not found in file.</tool_use_error>",
            error=True,
        ),
    ]
    assert _rules(failed) == []
    done = [
        _call(1, "e1", "Edit", args),
        _result(2, "e1", "The file /repo/CLAUDE.md has been updated."),
    ]
    facts = read_facts(done, harness=True, rule_files=True)
    assert [(f.text, f.source.seq) for f in facts if rule_file(f)] == [("Never push to main.", 1)]
