"""Explicit anchors: the log-only event that carries one anchor operation (``anchor_event``)
and how the reducer applies it, the seed StateReducer's rules.

Explicit anchors (``ANCHOR_EVENT`` = ``"ctxsdk/fold-anchor"``, log-only, ``ignorable``; data
``{op: declare|transition|retire, anchor?, anchorId?, failureState?, evidenceRefs?}``, the
seed's ``ef/anchor``; build one with ``anchor_event``), the seed StateReducer rules:

1. declare (``anchor {id, kind, stateKey?, value, authority, sourceRefs, failureState?}``)
   passes the authority gate first: every source ref must be an earlier event of this log
   that is a valid root (an append-origin ``user/message``, ``system/message``,
   ``tool/result`` or ``assistant/message``; never an anchor event, a summary or a
   replacement: no derived-from-derived laundering), and at least one of them must grant the
   authority: user → normative, decision; system → normative; tool result → empirical,
   procedural; assistant → hypothesis, decision. ``narrative`` is never grounded.
2. kind ``objective`` ⇒ the single objective slot. With a ``stateKey`` ⇒ the head for that
   key; a different previous head is removed from every face, kept in ``superseded`` (bounded)
   with ``superseded_by``, and ``retired_count += 1`` (so SSR = 0 by construction). Faces:
   constraint → constraints, failure → open_failures, obligation → open_obligations,
   decision → decisions, evidence → evidence; value and artifact live only in ``heads`` and
   therefore need a stateKey (rejected without one). Re-declaring an id replaces it.
3. transition of an active failure: to ``verified`` only with ≥ 1 evidence ref, each an
   append-origin ``tool/result`` (empirical/procedural: the seed's ``canVerify``) ⇒ it leaves
   hot state, ``retired_count += 1``; ``open``/``investigating``/``resolved`` update in place
   (so an assistant saying "fixed" can at most make a failure resolved, never verified).
   Verifying a failure that a later successful run already verified is a no-op.
4. retire removes an anchor everywhere, ``retired_count += 1``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...errors import InvalidArgument
from ._anchors import (
    ANCHOR_EVENT,
    ANCHOR_KINDS,
    ANCHOR_OPS,
    AUTHORITIES,
    FAILURE_STATES,
    Anchor,
    JsonDict,
    _merge_sources,
)
from ._reducer_base import _ReducerBase
from ._roots import _grants


def anchor_event(
    op: str,
    *,
    anchor: Anchor | Mapping[str, Any] | None = None,
    anchor_id: str | None = None,
    failure_state: str | None = None,
    evidence: Iterable[int] = (),
) -> JsonDict:
    """The log-only event of one anchor operation, ready for ``Session.append`` (which fills
    ``seq`` and ``time``): ``{"type": ANCHOR_EVENT, "data": {...}, "ignorable": True}``.

    ``declare`` needs ``anchor`` (an ``Anchor``, whose ``sources`` become ``sourceRefs``, or the
    wire mapping ``{id, kind, stateKey?, value, authority, sourceRefs}``); ``transition`` needs
    ``anchor_id`` and ``failure_state`` (``evidence``: the seqs that justify it); ``retire``
    needs ``anchor_id``. Whether the operation is grounded is the reducer's decision."""
    refs = [int(s) for s in evidence]
    data: JsonDict = {"op": op}
    if op == "declare":
        if anchor is None:
            raise InvalidArgument("anchor_event('declare') needs anchor=")
        if isinstance(anchor, Anchor):
            wire: JsonDict = {"id": anchor.id, "kind": anchor.kind}
            if anchor.state_key is not None:
                wire["stateKey"] = anchor.state_key
            wire["value"] = anchor.value
            wire["authority"] = anchor.authority
            if anchor.failure_state is not None:
                wire["failureState"] = anchor.failure_state
            wire["sourceRefs"] = list(anchor.sources)
        else:
            wire = json.loads(json.dumps(dict(anchor)))  # a deep, JSON-only copy
        data["anchor"] = wire
    elif op == "transition":
        if not anchor_id or failure_state not in FAILURE_STATES:
            raise InvalidArgument(
                "anchor_event('transition') needs anchor_id= and failure_state= one of "
                f"{', '.join(FAILURE_STATES)}"
            )
        data["anchorId"] = anchor_id
        data["failureState"] = failure_state
        data["evidenceRefs"] = refs
    elif op == "retire":
        if not anchor_id:
            raise InvalidArgument("anchor_event('retire') needs anchor_id=")
        data["anchorId"] = anchor_id
    else:
        raise InvalidArgument(f"anchor op is one of {', '.join(ANCHOR_OPS)}, not {op!r}")
    return {"type": ANCHOR_EVENT, "data": data, "ignorable": True}


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, list):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


class _ExplicitAnchors(_ReducerBase):
    """The reducer's layer that applies explicit anchor operations."""

    def _ungrounded(self, authority: str, refs: Sequence[int], seq: int) -> str | None:
        """Why ``refs`` do not ground ``authority`` (None when they do)."""
        if not refs:
            return "no sourceRefs: an anchor must cite the raw events it comes from"
        if authority == "narrative":
            return "narrative authority is never grounded"
        granted: set[str] = set()
        for ref in refs:
            ev = self.seen.get(ref)
            if ev is None or ref >= seq:
                return f"source seq {ref} is not an earlier event of this log"
            grants = _grants(ev)
            if grants is None:
                return f"source seq {ref} ({ev.get('type')}) is not a valid root"
            granted |= grants
        if authority not in granted:
            return f"{authority} authority is not grounded by seqs {list(refs)}"
        return None

    def anchor_op(self, ev: Mapping[str, Any], seq: int) -> None:
        data = ev.get("data")
        if not isinstance(data, Mapping) or data.get("op") not in ANCHOR_OPS:
            self.reject(f"seq {seq}", "an anchor event needs data.op declare|transition|retire")
            return
        op = data["op"]
        if op == "declare":
            self._declare_op(data.get("anchor"), seq)
            return
        anchor_id = data.get("anchorId")
        if not isinstance(anchor_id, str) or not anchor_id:
            self.reject(f"seq {seq}", f"{op} needs anchorId")
            return
        if op == "retire":
            if self.objective is not None and self.objective.id == anchor_id:
                self.objective = None
                self.retired += 1
            elif self._remove(anchor_id) is not None:
                self.retired += 1
            else:
                self.reject(anchor_id, f"retire at seq {seq}: no active anchor with this id")
            return
        self._transition_op(anchor_id, data, seq)

    def _declare_op(self, raw: Any, seq: int) -> None:
        if not isinstance(raw, Mapping):
            self.reject(f"seq {seq}", "declare needs an anchor object")
            return
        aid = raw.get("id")
        if not isinstance(aid, str) or not aid:
            self.reject(f"seq {seq}", "the declared anchor has no id")
            return
        kind, authority, value = raw.get("kind"), raw.get("authority"), raw.get("value")
        key, refs = raw.get("stateKey"), _int_list(raw.get("sourceRefs"))
        fstate = raw.get("failureState")
        problem = None
        if kind not in ANCHOR_KINDS:
            problem = f"kind {kind!r} is not one of {', '.join(ANCHOR_KINDS)}"
        elif authority not in AUTHORITIES:
            problem = f"authority {authority!r} is not one of {', '.join(AUTHORITIES)}"
        elif not isinstance(value, str | int | float):
            problem = "value must be a string, number or boolean"
        elif key is not None and (not isinstance(key, str) or not key):
            problem = "stateKey must be a non-empty string"
        elif raw.get("lifecycle", "active") != "active":
            problem = "only active anchors are declared"
        elif kind in ("value", "artifact") and key is None:
            problem = f"a {kind} anchor lives only in heads, so it needs a stateKey"
        elif fstate is not None and (kind != "failure" or fstate not in FAILURE_STATES):
            problem = "failureState is for failures: open|investigating|resolved|verified"
        elif refs is None:
            problem = "sourceRefs must be a list of seqs"
        if problem is None:
            assert isinstance(authority, str) and refs is not None
            problem = self._ungrounded(authority, refs, seq)
        if problem is not None:
            self.reject(aid, problem)
            return
        assert isinstance(kind, str) and isinstance(authority, str) and refs is not None
        assert isinstance(value, str | int | float)
        if kind == "failure" and fstate == "verified":
            self.reject(aid, "a failure is verified by a transition with evidence, not declared")
            return
        self.declare(
            Anchor(
                id=aid,
                kind=kind,
                state_key=key if isinstance(key, str) else None,
                value=value,
                authority=authority,
                failure_state=(fstate or "open") if kind == "failure" else None,
                sources=tuple(sorted(set(refs))),
            )
        )

    def _transition_op(self, anchor_id: str, data: Mapping[str, Any], seq: int) -> None:
        a = self.active.get(anchor_id)
        state = data.get("failureState")
        refs = _int_list(data.get("evidenceRefs", [])) if "evidenceRefs" in data else []
        if a is None and state == "verified" and anchor_id in self.verified:
            return  # already verified by a later successful run: nothing left to do
        if a is None or a.kind != "failure":
            self.reject(anchor_id, f"transition at seq {seq}: no active failure with this id")
            return
        if state not in FAILURE_STATES:
            self.reject(anchor_id, f"failureState {state!r} is not one of {FAILURE_STATES}")
            return
        if refs is None:
            self.reject(anchor_id, "evidenceRefs must be a list of seqs")
            return
        for ref in refs:
            ev = self.seen.get(ref)
            if ev is None or ref >= seq or _grants(ev) is None:
                self.reject(anchor_id, f"evidence seq {ref} is not an earlier root event")
                return
        if state == "verified":
            if not refs:
                self.reject(anchor_id, "verified needs at least one evidence ref")
                return
            weak = [r for r in refs if self.seen[r].get("type") != "tool/result"]
            if weak:  # canVerify: only empirical/procedural evidence (a tool result)
                self.reject(anchor_id, f"evidence seqs {weak} are not tool results")
                return
            self.verify(anchor_id)
            return
        sources = _merge_sources(a.sources, refs, self.limits.sources)
        self.active[anchor_id] = replace(a, failure_state=state, sources=sources)
