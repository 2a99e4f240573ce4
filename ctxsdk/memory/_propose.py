"""The optional model pass of ingestion: a model proposes memories, and only what passes the
rules' own filters is kept.

One call (the seed's: a transcript of the user's words and the tool results, at most 2,400
characters keeping the tail, and at most 400 output tokens; temperature 0, no reasoning),
answered as ``{"candidates": [{"type", "name", "text", "until"?, "about"?}]}``. Every
candidate is checked as a rule candidate would be: a known type (entity, preference,
decision, experience), a non-empty text that **occurs in what the user or a tool said**
(case and spacing aside: a model cannot invent a memory), not one that held a secret (the
redaction engine decides; every text the model gives is redacted before it is clipped, and
the memory's door checks what is written), a preference only when the base's fact kernel
reads an instruction or a preference in it; ``about`` names an entity the memory gets (one
the session's facts name, or a name the session said, which becomes an entity).
The kept ones join the rule candidates under the same caps and dedupe. Any failure (no model,
a failed call, an answer that is not the JSON asked for) leaves the rules' candidates alone
and says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..model import Answer, ModelProtocol, ask_json
from ..session import Session, redact
from ..session.kernel import truncate_keep_tail
from ._door import session_key
from ._facts_in import said_kinds
from ._ingest import (
    DEFAULT_CAPS,
    Caps,
    Extraction,
    _finish,
    _read,
    held_secret,
    parse_until,
)
from ._model import Candidate, Source, clip

__all__ = ["PROPOSE_INSTRUCTION", "Proposal", "propose"]

PROPOSE_INSTRUCTION = """\
From the conversation below, list the durable things worth remembering in later sessions:
entities (named things: services, libraries, files, people), preferences (how the user wants
work done), decisions (what was decided, and until when) and experiences (a failure and what
fixed it). Skip chit-chat, one-off requests and anything that looks like a credential.
Quote each text from the conversation word for word. Answer with JSON only:
{"candidates": [{"type": "preference", "name": "<short name>", "text": "<verbatim quote>",
"until": "<deadline words, optional>", "about": "<an entity name, optional>"}]}"""

_TYPES = ("entity", "preference", "decision", "experience")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Proposal:
    """What the model pass kept (``candidates``), what it refused and why (``dropped``), and
    why it was skipped or failed (``reason``, None when the call worked)."""

    candidates: tuple[Candidate, ...]
    dropped: tuple[tuple[str, str], ...]
    reason: str | None


_NO_CAPS = Caps(entity=10**9, preference=10**9, decision=10**9, experience=10**9)


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def _transcript(session: Session) -> tuple[str, list[tuple[int, str]]]:
    said, results = _read(session)
    lines: list[tuple[int, str]] = [(s.seq, f"[user] {s.text}") for s in said]
    lines += [(r.seq, f"[tool {r.tool}] {r.text}") for r in results if r.text]
    lines.sort()
    text = "\n".join(redact(t).text for _, t in lines)
    return truncate_keep_tail(text, 2400), lines


def propose(
    session: Session,
    llm: ModelProtocol | None,
    *,
    now: datetime,
    rules: Extraction,
    caps: Caps = DEFAULT_CAPS,
    max_tokens: int = 400,
) -> tuple[Extraction, Proposal]:
    """The rule candidates with the model's (validated) proposals merged in, and the report
    of the model pass (see the module docs)."""
    if llm is None:
        return rules, Proposal((), (), "no model given")
    transcript, lines = _transcript(session)
    if not lines:
        return rules, Proposal((), (), "nothing the user or a tool said")
    messages = [
        {"role": "system", "content": PROPOSE_INSTRUCTION},
        {"role": "user", "content": transcript},
    ]
    asked = ask_json(llm, messages, max_tokens=max_tokens)
    if asked.value is None:
        return rules, Proposal((), (), _failed(asked))
    raw = asked.value.get("candidates")
    if not isinstance(raw, list):
        return rules, Proposal((), (), "the answer has no 'candidates' list")
    said = [(seq, text) for seq, text in lines]
    names = {c.name.casefold() for c in rules.candidates if c.type == "entity"}
    kept: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    minted: list[Candidate] = []  # the entities the kept proposals are about
    for i, item in enumerate(raw):
        cand, why = _check(item, said, names, session, now)
        if cand is None:
            dropped.append((f"candidate #{i}", why))
            continue
        kept.append(cand)
        for _, name in cand.links:  # a name the session said becomes the entity it is about
            if name.casefold() not in names:
                names.add(name.casefold())
                minted.append(
                    replace(
                        cand,
                        type="entity",
                        name=name,
                        text=name,
                        links=(),
                        until=None,
                        until_at=None,
                        fail=None,
                        fix=None,
                    )
                )
    # the model's proposals are capped on their own (the rules' scale with the session) and
    # deduplicated against what the rules found
    ours = _finish([*rules.candidates, *minted, *kept], [], _NO_CAPS)
    theirs = [c for c in ours.candidates if c not in rules.candidates]
    capped = _finish(theirs, list(ours.dropped), caps)
    order = {"entity": 0, "preference": 1, "decision": 2, "experience": 3}
    both = sorted([*rules.candidates, *capped.candidates], key=lambda c: order.get(c.type, 4))
    merged = Extraction(tuple(both), (*rules.dropped, *capped.dropped))
    return merged, Proposal(tuple(kept), tuple(dropped), None)


def _failed(asked: Answer[Any]) -> str:
    # a reply this pass could not read has always been reported as a failed call, too
    reason = asked.degraded_reason or "unknown"
    return reason if asked.result is None else f"the model call failed: {reason}"


def _check(
    item: Any,
    said: Sequence[tuple[int, str]],
    entity_names: set[str],
    session: Session,
    now: datetime,
) -> tuple[Candidate | None, str]:
    if not isinstance(item, dict):
        return None, "not an object"
    kind = item.get("type")
    if kind not in _TYPES:
        return None, f"unknown type {kind!r}"
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        return None, "empty text"
    if held_secret(text):  # as given: joining its lines could hide a key block
        return None, "secret"
    text = " ".join(text.split())
    if kind == "preference" and not said_kinds(text) & {"instruction", "preference"}:
        return None, "a preference without a preference cue"
    want = _norm(text)
    seq = next((s for s, line in said if want in _norm(line)), None)
    if seq is None:
        return None, "not said in the session (invented)"
    name = item.get("name")
    # redacted before it is clipped below: a cut secret would no longer be recognised
    if isinstance(name, str) and name.strip():
        name = redact(" ".join(name.split())).text
    else:
        name = text[:60]
    until = until_at = None
    raw_until = item.get("until")
    if kind == "decision" and isinstance(raw_until, str) and raw_until.strip():
        parsed = parse_until(raw_until, now)
        if parsed is not None:
            until, until_at = parsed
    links: tuple[tuple[str, str], ...] = ()
    about = item.get("about")
    said_it = isinstance(about, str) and any(
        _norm(about) in _norm(line) for _, line in said if len(about.strip()) >= 2
    )
    if isinstance(about, str) and (about.strip().casefold() in entity_names or said_it):
        label = {"decision": "decided", "experience": "fixed"}.get(kind, "about")
        links = ((label, about.strip()),)
    source = Source(session_key(session), seq, clip(text), "model")
    return (
        Candidate(kind, clip(name, 60), clip(text), source, until, until_at, links=links),
        "",
    )
