"""SWE-agent trajectories (``.traj``): ``history`` is the chat the model had, in either format.

- text actions (thought + a fenced command in the model output, the observation as the next
  user message): each assistant message is kept as written, each observation is a user
  message (source ``{kind: plugin, plugin: swe-agent, form: relay}``) in the next step;
- function calling: assistant ``tool_calls`` keep their ids, ``role: tool`` messages are the
  tool results of the ids in ``tool_call_ids``.

The whole run is one turn (one task, many steps), closed ``completed`` when ``info`` has an
exit status. When the trajectory records the per-step model context (``trajectory[k]
.messages``), SWE-agent's own context edits (old observations elided as ``Old environment
output: (N lines omitted)``) are replayed as content-only ``tool/result`` rewrites (or 1:1
``user/message`` replacements) just before the model call that first saw them, so the surface
is what the model last received and the full outputs stay in the log.

The title names the task, not SWE-agent's prompt template ("We're currently solving the
following issue ..."): the instance (``marshmallow-1867``) and the issue's first line, or the
CTF challenge's name and category, else the file stem.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ._common import (
    MAX_IMPORT_BYTES,
    TITLE_BYTES,
    JsonDict,
    content_text,
    cut_title,
    fail,
    get_list,
    parse_json,
    read_source,
    text_blocks,
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    EditItem,
    Item,
    Origin,
    ResultItem,
    SkipItem,
    SystemItem,
    UserItem,
    run_end,
)

__all__ = ["read_swe_agent"]

PROVIDER = "swe-agent"  # the trajectories do not name the provider
_OBSERVATION = {"kind": "plugin", "plugin": "swe-agent", "form": "relay"}
_DEMO = {"kind": "plugin", "plugin": "swe-agent", "form": "instructions"}
_INFO_KEYS = ("exit_status", "submission", "model_stats")
_CTF = re.compile(r'is an? (?P<category>[\w ]+?) problem named "(?P<name>[^"\n]+)"')
_TEMPLATE = ("We're currently solving the following", "ISSUE:", "INSTRUCTIONS:")


def read_swe_agent(
    path: str | Path,
    *,
    session_id: str | None = None,
    model: str | None = None,
    context_edits: bool = True,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_swe_agent`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    doc = parse_json(data, name)
    if not isinstance(doc, dict):
        fail(name, "a trajectory file holds one JSON object")
    history = get_list(doc, "history", name)
    prefix = f"swe:{p.stem}"
    edits = _edits(doc, history, prefix, name) if context_edits else {}
    model = model or _model_name(doc) or "unknown"
    items: list[Item] = []
    seen_assistant = False
    for i, raw in enumerate(history):
        items += edits.pop(i, [])
        where = f"{name}, history[{i}]"
        if not isinstance(raw, dict):
            fail(where, "a history message must be an object")
        origin = Origin(i, where, _meta(raw))
        mid = f"{prefix}:{i}"
        role = raw.get("role")
        blocks = text_blocks(content_text(raw.get("content"), where))
        if role == "system":
            items.append(SystemItem(mid, blocks, origin))
        elif role == "user":
            if raw.get("is_demo"):
                source, prompt = _DEMO, not seen_assistant
            elif not seen_assistant:
                source, prompt = {"kind": "user"}, True
            else:
                source, prompt = _OBSERVATION, False
            items.append(UserItem(mid, blocks, dict(source), origin, prompt=prompt))
        elif role == "assistant":
            blocks += _calls(raw.get("tool_calls"), where)
            items.append(AssistantItem(mid, blocks, [origin], PROVIDER, model))
            seen_assistant = True
        elif role == "tool":
            ids = raw.get("tool_call_ids")
            if not isinstance(ids, list) or len(ids) != 1 or not isinstance(ids[0], str):
                fail(where, "a tool message needs tool_call_ids with exactly one call id")
            items.append(ResultItem(mid, ids[0], blocks, origin))
        else:
            fail(where, f"unknown role {role!r}", "history roles are system, user, assistant, tool")
    for rest in edits.values():
        items += rest  # the context after the last step: what the next call would have seen
    trailing, final = run_end(doc.get("info"), _INFO_KEYS, name)
    return build_log(
        items,
        fmt="swe-agent",
        source=name,
        session_id=session_id or prefix,
        created_at=DEFAULT_CREATED_AT,
        final_reason=final,
        trailing=trailing,
        title=(_title(doc, history, p.stem), {"kind": "fallback"}),
    )


def _title(doc: JsonDict, history: list[Any], stem: str) -> str:
    """A title a person can tell apart from other runs (see the module docstring)."""
    task = next(
        (
            content_text(m.get("content"), "task")
            for m in history
            if isinstance(m, dict) and m.get("role") == "user" and not m.get("is_demo")
        ),
        "",
    )
    instance = _instance(doc, stem)
    ctf = _CTF.search(task)
    line = f"CTF {ctf['name'].strip()} ({ctf['category'].strip()})" if ctf else _issue_line(task)
    title = f"{instance}: {line}" if instance and line else line or instance or stem
    return cut_title(title, TITLE_BYTES)


def _instance(doc: JsonDict, stem: str) -> str | None:
    """The task instance, short: ``marshmallow-1867`` for ``marshmallow-code__marshmallow-1867``
    (the replay config's problem id, else a SWE-bench id in the file stem)."""
    config = doc.get("replay_config")
    problem = config.get("problem_statement") if isinstance(config, dict) else None
    pid = problem.get("id") if isinstance(problem, dict) else None
    if not isinstance(pid, str) or not pid.strip():
        parts = stem.split("__")  # <run>__<owner>__<repo>-<n> (SWE-bench ids are owner__repo-n)
        pid = parts[-1] if len(parts) >= 3 else None
    if pid is None:
        return None
    return pid.strip().split("__")[-1]


def _issue_line(task: str) -> str:
    """The issue's first real line: after ``ISSUE:`` when the template has it, skipping the
    template's own sentences, blank lines and markdown decoration."""
    lines = task.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == "ISSUE:"]
    for line in lines[marks[0] + 1 :] if marks else lines:
        text = line.strip().lstrip("#").strip().strip("*_`").strip()
        if text and not text.startswith(_TEMPLATE):
            return " ".join(text.split())
    return ""


def _meta(raw: JsonDict) -> JsonDict:
    return {k: raw[k] for k in ("agent", "message_type") if isinstance(raw.get(k), str)}


def _calls(calls: Any, where: str) -> list[JsonDict]:
    if calls is None:
        return []
    if not isinstance(calls, list):
        fail(where, "tool_calls must be a list")
    out: list[JsonDict] = []
    for k, call in enumerate(calls):
        at = f"{where}, tool_calls[{k}]"
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            fail(at, "a tool call needs a function object")
        cid, fname, args = call.get("id"), fn.get("name"), fn.get("arguments")
        if not isinstance(cid, str) or not isinstance(fname, str) or not isinstance(args, str):
            fail(at, "a tool call needs a string id, function.name and function.arguments")
        out.append({"type": "tool-call", "id": cid, "name": fname, "arguments": args})
    return out


def _model_name(doc: JsonDict) -> str | None:
    config = doc.get("replay_config")
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


def _edits(doc: JsonDict, history: list[Any], prefix: str, name: str) -> dict[int, list[Item]]:
    """Context edits from the per-step contexts, keyed by the history index of the model call
    they precede (``len(history)``: after the last message)."""
    steps = doc.get("trajectory")
    out: dict[int, list[Item]] = {}
    if not isinstance(steps, list):
        return out
    shown = {
        j: content_text(m.get("content"), f"{name}, history[{j}]")
        for j, m in enumerate(history)
        if isinstance(m, dict)
    }
    for k, step in enumerate(steps):
        context = step.get("messages") if isinstance(step, dict) else None
        if not isinstance(context, list):
            continue
        where = f"{name}, trajectory[{k}].messages"
        if len(context) > len(history) or any(
            not isinstance(m, dict)
            or not isinstance(history[j], dict)
            or m.get("role") != history[j].get("role")
            for j, m in enumerate(context)
        ):
            note = SkipItem(Origin(f"trajectory[{k}].messages", where), "context not aligned")
            out.setdefault(len(history), []).append(note)
            continue
        for j, m in enumerate(context):
            text = content_text(m.get("content"), f"{where}[{j}]")
            if text == shown.get(j) or m.get("role") not in ("tool", "user"):
                continue
            shown[j] = text
            origin = Origin(f"trajectory[{k}].messages[{j}]", f"{where}[{j}]")
            edit = EditItem(f"{prefix}:{j}", text_blocks(text), origin, f"{prefix}:{j}@{k}")
            out.setdefault(len(context), []).append(edit)
    return out
