"""The redacted text of each event a fact was read from whose message held a credential.

In a module of its own: claim extraction (``_claims``) keeps a fact from such an event only
where its words survive redaction, and reading a source into a branch (``_branches``) does
the same for the branch's facts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..session import Session
from ..session.kernel import redact_message

__all__ = ["tainted_texts"]


def tainted_texts(session: Session, seqs: set[int]) -> tuple[tuple[int, str], ...]:
    """``(seq, redacted text)`` for each event a fact was read from whose message held a
    credential: the kernel reads the log as written (and strips markdown, which a
    credential's shape may depend on), so a fact from such an event is kept only where its
    words are still in the redacted message (``claims_of_facts``)."""
    out: list[tuple[int, str]] = []
    for ev in session.raw_events:
        seq = ev.get("seq")
        if seq not in seqs:
            continue
        data = ev.get("data")
        msg = data if ev.get("type") == "user/message" else (data or {}).get("message")
        if not isinstance(msg, Mapping):
            continue
        clean, redactions = redact_message(msg)
        if redactions:
            out.append((int(seq), json.dumps(clean, ensure_ascii=False).lower()))
    return tuple(out)
