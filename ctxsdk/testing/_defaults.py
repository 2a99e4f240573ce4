"""What a log written in code says when not told otherwise: route, system prompt, tools,
runtime context and the seeded latencies of tools."""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_CREATED_AT",
    "DEFAULT_RUNTIME_SECTIONS",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TOOLS",
    "MODEL",
    "PROVIDER",
    "RUNTIME_CONTEXT_HEAD",
    "SUMMARY_MAX_TOKENS",
    "TOOL_MS",
]

JsonDict = dict[str, Any]

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
DEFAULT_CREATED_AT = 1_790_000_000_000  # 2026-09-21T14:13:20Z
DEFAULT_CONTEXT_WINDOW = 1_000_000  # deepseek-official default for deepseek-v4-flash (§14)
SUMMARY_MAX_TOKENS = 8192  # compaction-basic default (§10)

DEFAULT_SYSTEM_PROMPT = (
    "You are an AI agent powered by DeepSeek Harness.\n\n"
    "You are dsh, a coding assistant powered by the deepseek-v4-flash model.\n\n"
    "Verify your work by running the code or tests. Keep answers brief and factual.\n\n"
    "Use the read tool — not shell commands like cat — to inspect text files. Results include "
    "line numbers. Use offset and limit to continue reading large files.\n\n"
    "Use the write tool to create files or completely replace file contents. Read an existing "
    "file first and prefer edit for targeted changes.\n\n"
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal "
    "old_string with new_string; by default old_string must appear exactly once.\n\n"
    "Use the grep tool to search file contents with a regular expression."
)


def _tool(name: str, description: str, properties: JsonDict, required: list[str]) -> JsonDict:
    """A tool definition in the harness's shape (a JSON-schema object of ``properties``)."""
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


DEFAULT_TOOLS: list[JsonDict] = [
    _tool(
        "bash",
        "Run a shell command in the workspace and return its combined output.",
        {
            "command": {"type": "string", "description": "The command to run."},
            "description": {"type": "string", "description": "Five words on what it does."},
            "timeout_ms": {"type": "integer", "minimum": 1000, "maximum": 600000},
        },
        ["command"],
    ),
    _tool(
        "read",
        "Read a UTF-8 text file; lines are numbered. Use offset/limit to page.",
        {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1},
        },
        ["path"],
    ),
    _tool(
        "write",
        "Create a file or replace its whole content.",
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _tool(
        "edit",
        "Replace old_string with new_string in a file (exactly once by default).",
        {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        ["path", "old_string", "new_string"],
    ),
    _tool(
        "grep",
        "Search file contents with a regular expression; prints path:line:text.",
        {"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}},
        ["pattern"],
    ),
]
"""The harness's five built-in tools, as the request header lists them."""

RUNTIME_CONTEXT_HEAD = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
)
DEFAULT_RUNTIME_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "sandbox:policy",
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict "
        "file modifications by available operations.",
    ),
    (
        "approval:policy",
        "Approval prompts are disabled in this session: actions that require approval are "
        "rejected automatically — do not request sandbox escalation (do not set "
        "`sandbox_permissions`).",
    ),
)

# Seeded tool latency in ms, (low, high) per tool; other tools take 200-2000 ms.
TOOL_MS: dict[str, tuple[int, int]] = {
    "bash": (350, 4200),
    "read": (8, 90),
    "grep": (20, 160),
    "edit": (6, 40),
    "write": (6, 40),
}
