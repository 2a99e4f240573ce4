"""mini-SWE-agent trajectories (``.traj.json``, ``trajectory_format: mini-swe-agent-1``).

The file is one object: ``instance_id``, ``info`` (``exit_status``, ``submission``,
``model_stats``, ``config``) and ``messages``, the chat the model had. The agent has one tool:
each assistant message is ``THOUGHT: ...`` plus exactly one fenced ```` ```bash ```` block,
and the next user message is what running it gave (``<returncode>N</returncode><output>``, a
timeout notice, or the submitted diff). So:

- the system message is the system head, the first user message the prompt (one turn for the
  whole run, as SWE-agent's);
- an assistant message keeps its text as written, the provider's reasoning summary
  (``extra.response.choices[0].message.reasoning``) as a reasoning block, and, when it holds
  exactly one bash block, a ``bash`` tool call ``{"command": ...}`` with call id
  ``<message id>:bash``; its usage and time come from ``extra.response``;
- the user message after such a call is its tool result (text as written), an error when the
  return code is not 0 or the command timed out;
- a user message after an assistant message with no action or several (mini-swe-agent
  rejects it with a format error) is an observation (source ``{kind: plugin, plugin:
  mini-swe-agent, form: relay}``), and so is any further user message in a step.

The turn closes ``completed`` when ``info`` has an exit status (the run ended itself); a call
left without a result at the end of the file stays open for crash repair. ``info`` (without the
prompt templates of ``config``) is logged as provenance after the end. The title names the
task: the short instance id and the issue's first line, not the prompt template.
"""

from __future__ import annotations

import json
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
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    Item,
    Origin,
    ResultItem,
    SystemItem,
    UserItem,
    run_end,
)

__all__ = ["read_mini_swe_agent"]

PROVIDER = "mini-swe-agent"  # the provider the run routed through is not a DSH provider id
_OBSERVATION = {"kind": "plugin", "plugin": "mini-swe-agent", "form": "relay"}
_INFO_KEYS = ("exit_status", "submission", "model_stats", "mini_version")
# mini-swe-agent's own action pattern (``action_regex``): a fenced bash block.
_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"\A\s*<returncode>(-?\d+)</returncode>")
_TIMEOUT = "The last command <command>"
_TASK_MARK = "Consider the following PR description:"
_STEP_MS = 1000


def read_mini_swe_agent(
    path: str | Path,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_mini_swe_agent`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    doc = parse_json(data, name)
    if not isinstance(doc, dict):
        fail(name, "a trajectory file holds one JSON object")
    messages = get_list(doc, "messages", name)
    stem = name.removesuffix(".json").removesuffix(".traj")
    instance = doc.get("instance_id")
    if instance is not None and (not isinstance(instance, str) or not instance.strip()):
        fail(f"{name}, instance_id", "instance_id must be a non-empty string when present")
    prefix = f"mini:{instance or stem}"
    info = doc.get("info")
    if info is not None and not isinstance(info, dict):
        fail(f"{name}, info", "info must be an object when present")
    default_model = _config_model(info) or "unknown"
    created_at = _created_at(messages)
    now = created_at
    items: list[Item] = []
    open_call: str | None = None  # the call the next user message answers
    seen_assistant = False
    for i, raw in enumerate(messages):
        where = f"{name}, messages[{i}]"
        if not isinstance(raw, dict):
            fail(where, "a message must be an object")
        mid = f"{prefix}:{i}"
        role = raw.get("role")
        text = content_text(raw.get("content"), where)
        blocks = [{"type": "text", "text": text}] if text else []
        response = _response(raw, where)
        stamp = _stamp(response)
        now = max(now + _STEP_MS, stamp) if stamp is not None else now + _STEP_MS
        extra: JsonDict = {}
        if response is not None and isinstance(response.get("id"), str):
            extra["responseId"] = response["id"]
        origin = Origin(i, where, extra)
        if role == "system":
            items.append(SystemItem(mid, blocks, origin, now))
        elif role == "user":
            if open_call is not None:
                items.append(ResultItem(mid, open_call, blocks, origin, now, _is_error(text)))
                open_call = None
            elif not seen_assistant:
                items.append(UserItem(mid, blocks, {"kind": "user"}, origin, now))
            else:
                items.append(UserItem(mid, blocks, dict(_OBSERVATION), origin, now, prompt=False))
        elif role == "assistant":
            reasoning = _reasoning(response)
            out = [{"type": "reasoning", "text": reasoning}] if reasoning else []
            out += blocks
            actions = _ACTION.findall(text)
            if len(actions) == 1:
                open_call = f"{mid}:bash"
                arguments = json.dumps({"command": actions[0].strip()}, ensure_ascii=False)
                out.append(
                    {"type": "tool-call", "id": open_call, "name": "bash", "arguments": arguments}
                )
            else:
                open_call = None  # rejected by the agent: the next user message says why
            model = _model(response) or default_model
            usage = _usage(response)
            items.append(AssistantItem(mid, out, [origin], PROVIDER, model, now, usage))
            seen_assistant = True
        else:
            fail(where, f"unknown role {role!r}", "message roles are system, user, assistant")
    task = {"instance_id": instance} if instance else {}  # kept with the run's metadata
    trailing, final = run_end(info, _INFO_KEYS, name, **task)
    return build_log(
        items,
        fmt="mini-swe-agent",
        source=name,
        session_id=session_id or prefix,
        created_at=created_at,
        final_reason=final,
        trailing=trailing,
        title=(_title(instance or stem, messages), {"kind": "fallback"}),
    )


def _response(raw: JsonDict, where: str) -> JsonDict | None:
    extra = raw.get("extra")
    if extra is None:
        return None
    if not isinstance(extra, dict):
        fail(f"{where}, extra", "extra must be an object when present")
    response = extra.get("response")
    if response is not None and not isinstance(response, dict):
        fail(f"{where}, extra.response", "the raw response must be an object when present")
    return response


def _stamp(response: JsonDict | None) -> int | None:
    """The response's ``created`` time (epoch seconds) in ms, when it is a sane number."""
    created = response.get("created") if response is not None else None
    if isinstance(created, int | float) and not isinstance(created, bool) and 0 < created < 1e11:
        return int(created * 1000)
    return None


def _created_at(messages: list[Any]) -> int:
    """The session's start: one second per message before the first timed response, so that
    the times stay in order; the fixed import clock when no response has a time."""
    for i, m in enumerate(messages):
        extra = m.get("extra") if isinstance(m, dict) else None
        response = extra.get("response") if isinstance(extra, dict) else None
        stamp = _stamp(response) if isinstance(response, dict) else None
        if stamp is not None:
            return stamp - (i + 1) * _STEP_MS
    return DEFAULT_CREATED_AT


def _choice_message(response: JsonDict | None) -> JsonDict | None:
    choices = response.get("choices") if response is not None else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else None


def _reasoning(response: JsonDict | None) -> str:
    message = _choice_message(response)
    reasoning = message.get("reasoning") if message is not None else None
    return reasoning if isinstance(reasoning, str) else ""


def _model(response: JsonDict | None) -> str | None:
    model = response.get("model") if response is not None else None
    return model if isinstance(model, str) and model else None


def _config_model(info: JsonDict | None) -> str | None:
    config = info.get("config") if info is not None else None
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


def _usage(response: JsonDict | None) -> JsonDict | None:
    """OpenAI-style usage as DSH ``TokenUsage`` (cached prompt tokens counted apart)."""
    usage = response.get("usage") if response is not None else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(prompt) is not int or type(completion) is not int:
        return None
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if type(cached) is int and 0 < cached <= prompt:
        return {
            "inputTokens": prompt - cached,
            "outputTokens": completion,
            "cacheReadTokens": cached,
        }
    return {"inputTokens": prompt, "outputTokens": completion}


def _is_error(text: str) -> bool:
    """A failed command: a non-zero return code, or the agent's timeout notice."""
    m = _RETURNCODE.match(text)
    if m is not None:
        return int(m.group(1)) != 0
    return text.startswith(_TIMEOUT)


def _title(instance: str, messages: list[Any]) -> str:
    task = next(
        (
            m["content"]
            for m in messages
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)
        ),
        "",
    )
    short = instance.split("__")[-1]  # django__django-16255 -> django-16255
    line = _issue_line(task)
    return cut_title(f"{short}: {line}" if line else short, TITLE_BYTES)


def _issue_line(task: str) -> str:
    """The issue's first real line, after mini-swe-agent's ``Consider the following PR
    description:`` when the template has it (else the first line that is not a tag)."""
    head, mark, rest = task.partition(_TASK_MARK)
    for line in (rest if mark else head).splitlines():
        text = line.strip().lstrip("#").strip().strip("*_`").strip()
        if text and not (text.startswith("<") and text.endswith(">")):
            return " ".join(text.split())
    return ""
