"""Messages and the todo list: the reducer's layer for user, system and assistant messages
(the objective, the requests, an action told in text) and ``todo/write`` snapshots.

- objective: the first non-blank user prompt (a ``user/message`` whose ``source.kind`` is
  ``user``, or that has no source), whitespace folded and cut to ``limits.text``; it fills
  the slot once (a declared objective replaces it). ``current_request``: the latest user
  prompt. A prompt whose whole text is one ``<tag>…</tag>`` element is injected output (a
  command's stdout that an importer carried in as a user message), not a request; of a
  harness template only the user's own words count (the kernel's ``user_text``: the task
  inside a wrapper, nothing of a slash-command record or an injected context block).
  ``requests``: every user prompt in order, as a compaction summary lists all the user's
  messages (a short ask such as "make the paddles bigger" holds no rule the kernel reads,
  yet the work turns on it); an acknowledgement ("go ahead", "thanks") is none; the same
  words again refresh the earlier one; over ``limits.requests`` the oldest after the first
  goes (counted in ``dropped``). The objective and the current request show once.
- an action the assistant told in its text (SWE-agent's last fenced block) whose output the
  harness relays next (a ``user/message`` whose source has ``form: relay``) is read as the
  call it stands for (``_told``): ``create``/``edit`` write the open file, else a shell.
- ``todo/write`` (``data.todos: [{content, status}]``) is a snapshot of the agent's list:
  pending/in_progress items are open obligations ``todo:<content>``; a todo obligation that
  the latest snapshot does not hold open (completed, cancelled or gone) is retired.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...session import redact
from ...session.kernel import is_filler, message_of, message_text, user_text
from .._key_names import call_words
from ._anchors import Anchor, _cut, _fold, _merge_sources, _norm
from ._calls import _arguments
from ._tool_results import _ToolResults

_INJECTED = re.compile(r"<([\w-]+)[^>]*>.*</\1>", re.S)  # one element: injected output


class _Messages(_ToolResults):
    """The reducer's layer for message events and the agent's todo list."""

    def user_message(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
            return
        source = msg.get("source")
        if source is not None and not (isinstance(source, dict) and source.get("kind") == "user"):
            if isinstance(source, dict) and source.get("form") == "relay":
                self._relayed(message_text(msg), seq)
            return  # plugin-injected context is not the user's voice
        text = message_text(msg).strip()
        inner = user_text(text) if text and not _INJECTED.fullmatch(text) else None
        if inner and inner != text and inner in text:  # a template around the user's words
            self.key_names.harness(text.replace(inner, " "))
        if not inner:
            return  # injected output or a harness template: not a request
        self.key_names.said(seq, redact(inner).text, user=True)
        # An ask is the work of its request: the user's next request takes its place (what is
        # left open of it, the assistant's open work and the todo list say).
        # (Not counted as retired: nothing declared them done; the request moved on.)
        for aid in sorted(self.asks):
            self._remove(aid)
        self.asks.clear()
        slot = _cut(_fold(inner), self.limits.text)
        if not self.objective_set:
            self.objective_set = True
            self.objective = Anchor(
                id="objective", kind="objective", value=slot, authority="normative", sources=(seq,)
            )
        self.request = Anchor(
            id="request", kind="objective", value=slot, authority="normative", sources=(seq,)
        )
        if not is_filler(inner):  # "go ahead", "thanks": no request to keep
            self._request(replace(self.request, id=f"request:{seq}"))

    def _relayed(self, text: str, seq: int) -> None:
        """A harness relayed the output of an action the assistant told in its text: the
        result of the call that action stands for."""
        call = self.told.relayed()
        if call is not None:
            cid = f"told-{seq}"
            self.calls[cid] = (call[0], dict(call[1]))
            self._result(cid, text, False, seq)

    def _request(self, a: Anchor) -> None:
        """Keep every request the user made, as a compaction summary lists all user messages:
        a short ask ("make it slower", "reply in Russian") is often the one the work turns
        on, and the kernel reads no rule in it. The same words again refresh the earlier
        one; over the cap the oldest after the first goes."""
        same = next((i for i, r in enumerate(self.requests) if r.value == a.value), None)
        if same is not None:
            old = self.requests.pop(same)
            a = replace(a, sources=_merge_sources(old.sources, a.sources, self.limits.sources))
        self.requests.append(a)
        if len(self.requests) > self.limits.requests:
            del self.requests[1]
            self._drop("requests")

    def system_message(self, ev: Mapping[str, Any], seq: int) -> None:
        # The system prompt is the surface's head, which no fold ever covers: the model keeps
        # reading it verbatim, so copying its sentences into every checkpoint is only noise
        # (a tool description's "must appear exactly once" is not the user's constraint). It
        # still grounds declared anchors that cite it (the authority gate).
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
        else:
            self.key_names.harness(message_text(msg))  # its names are the harness's

    def assistant_message(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
            return
        content = msg.get("content")
        called = False
        code: list[str] = []
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool-call":
                called = True
                cid, name = block.get("id"), block.get("name")
                if isinstance(cid, str) and isinstance(name, str):
                    self.calls.setdefault(cid, (name, _arguments(block.get("arguments"))))
                    self.outlines.said(json.dumps(block.get("arguments"), default=str))
                code += call_words(_arguments(block.get("arguments")))
        text = redact(message_text(msg)).text
        self.told.told("" if called else text)
        self.outlines.said(text)
        self.key_names.said(seq, text, code=[redact(c).text for c in code])
        self._statements(text, seq)

    def todo_write(self, ev: Mapping[str, Any], seq: int) -> None:
        data = ev.get("data")
        todos = data.get("todos") if isinstance(data, Mapping) else None
        if not isinstance(todos, list):
            self.skipped += 1
            return
        open_ids: list[str] = []
        for item in todos:
            if not isinstance(item, dict) or not isinstance(item.get("content"), str):
                continue
            text = _fold(item["content"])
            if not text:
                continue
            if item.get("status") in ("pending", "in_progress"):
                aid = f"todo:{_cut(_norm(text), 80)}"
                open_ids.append(aid)
                anchor = Anchor(
                    id=aid,
                    kind="obligation",
                    value=_cut(text, self.limits.text),
                    authority="procedural",
                    sources=(seq,),
                )
                self.declare(anchor, auto=True, move=False)
        for aid in [i for i in self.active if i.startswith("todo:") and i not in open_ids]:
            self.verify(aid)  # completed, cancelled or gone from the list: retired
