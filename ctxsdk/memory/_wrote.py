"""What a session wrote into its key files: the lines its edits added, per path.

A file entity says how the session touched the file ("edited CONVENTIONS.md (9 changes;
last: …)"); a teammate asks what the file holds now ("which quote style do the conventions
ask for?", "what does /add/<a>/<b> return?"). The lines the session's edits and writes
added (an edit's new text less the lines of its old text, a written file's content) are
that answer in the file's own words, so ``_facts_in`` appends them to the entity of a key
file, newest edit first (the nearest to what the file holds now; a line a later edit
removed may still be listed), clipped.

Read from the calls' arguments through the kernel's readers (``written_paths``,
``written_text``, and ``heredoc_writes`` for what a shell command wrote from a
here-document).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from ..session import Session, redact
from ..session.kernel import call_command, heredoc_writes, message_of, written_paths, written_text

__all__ = ["file_lines", "wrote_lines"]

_WORD = re.compile(r"[^\W_]{3,}")  # a line with no word of three letters is punctuation


def _added(old: object, new: object) -> list[str]:
    """The lines of ``new`` that ``old`` did not hold, stripped, each once."""
    if not isinstance(new, str):
        return []
    before = {ln.strip() for ln in old.splitlines()} if isinstance(old, str) else set()
    out: list[str] = []
    for line in new.splitlines():
        s = line.strip()
        if s and s not in before and _WORD.search(s) and s not in out:
            out.append(s)
    return out


def wrote_lines(session: Session) -> dict[str, list[str]]:
    """Per path a call wrote (as the call named it), the lines it added, newest edit first;
    redacted."""
    per: dict[str, list[list[str]]] = {}
    for seq, ev in enumerate(session.raw_events):
        if ev.get("type") != "assistant/message" or message_of(ev) is None:
            continue
        for call in session.message_at(seq).tool_calls:
            try:
                args = json.loads(call.arguments)
            except (ValueError, RecursionError):
                continue
            if not isinstance(args, Mapping):
                continue
            command = call_command(args)
            if command:  # cat <<'EOF' > path: the body is what the file holds
                for path, body in heredoc_writes(command):
                    lines = [redact(ln).text for ln in _added(None, body)]
                    if lines:
                        per.setdefault(path, []).append(lines)
                continue
            paths = written_paths(call.name, args)
            if not paths:
                continue
            new, old = written_text(args)
            lines = [redact(ln).text for ln in _added(old, new)]
            if lines:
                for p in paths:
                    per.setdefault(p, []).append(lines)
    return {p: [ln for batch in reversed(batches) for ln in batch] for p, batches in per.items()}


def file_lines(name: str, wrote: Mapping[str, Sequence[str]]) -> list[str]:
    """The lines written to the file an entity is named by (its path as the kernel shows it:
    relative to the session's directory, or as written), from every path that is the same
    file (one ends with the other at a path boundary)."""
    out: list[str] = []
    for path, lines in wrote.items():
        a, b = sorted((path.replace("\\", "/"), name.replace("\\", "/")), key=len)
        if b == a or b.endswith("/" + a.lstrip("./")):
            out += [ln for ln in lines if ln not in out]
    return out
