"""Reading one tool call: its arguments, the key it is named by, whether it only reads,
whether a later call re-ran it, the line a written file shows, and a sub-agent's report
without its harness's additions.

Pure helpers of the tool-result rules (``_tool_results``), apart so those rules read as rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...session.kernel import CommandPart, call_target, command_covers, command_parts, edit_texts
from ._anchors import JsonDict, _cut, _fold

_RUNNING = re.compile(r"Process running with session ID (\d+)")  # Codex: polled later
# Tools that hand work to a sub-agent: their result is that agent's report, in its words.
_DELEGATES = frozenset({"task", "agent", "delegate_to_agent", "spawn_agent", "dispatch_agent"})
# What the harness adds to a sub-agent's report: its id, usage, how it ended.
_REPORT_NOISE = re.compile(
    r"<usage>.*?</usage>|^(?:agentId|Termination Reason):[^\n]*$|^Subagent '[^'\n]*' finished\.$",
    re.S | re.M,
)
# Programs whose command line holds a file's new contents, not the change made to it.
_CONTENT_WRITERS = frozenset({"cat", "echo", "printf", "tee", "touch", "dd", "head", "tail"})
# How much of the command that changed a file its line shows: enough to say the change
# (``sed -i '171s…``), not a long script repeated for every file it touched.
_COMMAND_SHOWN = 60


def _arguments(raw: Any) -> JsonDict:
    """Tool-call arguments as a dict (a JSON string parsed; anything else kept as ``_raw``)."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return dict(parsed) if isinstance(parsed, dict) else {"_raw": raw}
    return {}


def _call_key(name: str, args: Mapping[str, Any]) -> str:
    """A call's name in ids: the tool and its command (or path), whitespace folded."""
    command = call_target(args)
    if command is not None:
        return _cut(f"{name}:{_fold(command)}", 160)
    if not args:
        return name
    rest = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return _cut(f"{name}:{_fold(rest)}", 160)


def _unlaunched(command: str) -> list[CommandPart]:
    """The kernel's parts of a command line, launchers left out: ``python -m pytest x`` and
    ``uv run pytest x`` run the same tests as ``pytest x``."""
    return [replace(p, launcher=()) for p in command_parts(command)]


def _reruns(done: tuple[str, str | None], failed: tuple[str, str | None]) -> bool:
    """Whether a successful call re-ran what a failed one ran, or more: the same tool and a
    command line that covers the failed one (the kernel's ``covers``: a narrower run never
    covers a broader failure; options ignored)."""
    (tool, command), (ftool, fcommand) = done, failed
    if tool != ftool or command is None or fcommand is None:
        return False
    return command_covers(_unlaunched(command), _unlaunched(fcommand))


_ADDED_SHOWN = 80  # characters of the added line an artifact shows
# A line that says nothing of the change: a comment, a shebang, an import or include.
_PREAMBLE = re.compile(
    r"(?:#|//|/\*|\*|<!--|--|;|export \* |(?:import|from|require|use|using|include|package)\b)"
)


def _added(args: Mapping[str, Any]) -> str | None:
    """The first line an edit call added: the first line of its new text that its old text
    lacks, passing over blank lines, comments and imports (``@app.route("/add/<int:a>")``,
    ``MAX_ITEMS = 50``); None when the edit only removed or moved lines."""
    old, new = edit_texts(args)  # the base's one reader of an edit call's arguments
    if not (isinstance(old, str) and isinstance(new, str)):
        return None
    had = {line.strip() for line in old.splitlines()}
    for line in new.splitlines():
        got = line.strip()
        if got in had or sum(ch.isalnum() for ch in got) < 3 or _PREAMBLE.match(got):
            continue
        return _cut(got, _ADDED_SHOWN)
    return None


def _written(path: str, command: str | None, args: Mapping[str, Any]) -> str:
    """A written file's line: the path, and the command that changed it when the command
    says the change (``sed -i 's/a/b/' x.py``, ``mv a.py b.py``); a redirect, ``tee`` or
    ``echo`` carries only contents. An editor tool's call shows the first line it added
    (``app.py (added `def add(a, b):`)``), not its whole text."""
    if command is None:
        added = _added(args)
        return f"{path} (added `{added}`)" if added else path
    for p in command_parts(command):
        if path in p.writes and p.program not in _CONTENT_WRITERS and "\n" not in p.text:
            return f"{path} (by {_cut(_fold(p.text), _COMMAND_SHOWN)})"
    return path


def _report(text: str) -> str:
    """A sub-agent's report without what its harness added (its id, token usage, how it
    ended): only the agent's own words are findings. A report written as JSON (Gemini CLI's
    investigator) is read as its text: each string, and each list of names after its key."""
    text = _REPORT_NOISE.sub("", text)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return text
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return text
    lines: list[str] = []
    _json_text(data, "", lines)
    return text[:start] + "\n".join(lines) + text[end + 1 :]


def _json_text(value: Any, key: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _json_text(v, str(k), out)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) and len(v) <= 80 for v in value):
            out.append(f"{key}: {', '.join(value)}.")
        else:
            for v in value:
                _json_text(v, key, out)


# a network client: what it fetches is no file of the project, and in web work the request
# (its form fields, its query) is the action itself
_NETWORK = frozenset({"curl", "wget", "http", "https", "nc", "ncat", "netcat", "telnet"})


_ACTING = frozenset({"test", "build", "run", "install", "lint", "write"})
# moving files about: the Files group says what the work made
_HOUSEKEEPING = frozenset({"rm", "rmdir", "mkdir", "touch", "cd", "cp", "mv", "ln"})


def _acts(command: str) -> bool:
    """A command line that acts: one of its commands runs, tests, builds, installs, changes a
    file in place (``sed -i``, ``chmod``) or talks to a server (``curl -F …``), or it is one
    tool run on operands (``decompile release``); not one that only reads the project (ls,
    grep, cat …), moves files about, or writes a file from a here-document or a patch (the
    Files group shows what it wrote)."""
    if "<<" in command or "*** Begin Patch" in command:
        return False
    ps = command_parts(command)
    if not ps:
        return False
    if any(p.program in _NETWORK for p in ps):
        return True
    if any(p.purpose in _ACTING and p.program not in _HOUSEKEEPING for p in ps):
        return True
    return len(ps) == 1 and ps[0].purpose == "other" and bool(ps[0].operands)


def _explores(command: str) -> bool:
    """A command line that only reads (ls, grep, cat, echo …): what it prints is content,
    and its exit code is no verdict on the work."""
    ps = command_parts(command)
    return bool(ps) and all(p.purpose == "read" for p in ps)
