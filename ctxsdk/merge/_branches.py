"""Sources become branches: each source session's current surface, redacted, in model order,
and the facts the base's kernel reads from its whole log (``Session.facts()``).

A source is a ``Session``, a path to a log, or (with a ``Workspace``) a session id or unique
id prefix. Redaction happens here, once, before any extraction, prompt or storage, so no
later stage ever sees a credential; each branch counts what it withheld. Not only the
messages: the session's id (every claim's source, the block's provenance), its title and
its path are redacted too, and so are the labels and reasons of the sources left out.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import CtxError, InvalidArgument, NotFound
from ..session import Session, redact
from ..session.kernel import redact_message, user_text
from ._beliefs import Branch, BranchMessage, Trust
from ._tainted import tainted_texts

if TYPE_CHECKING:
    from ..session import Workspace

__all__ = [
    "SourceLike",
    "TrustLike",
    "read_branch",
    "read_branches",
    "tainted_texts",
    "trust_level",
]

SourceLike: TypeAlias = "Session | str | os.PathLike[str]"
TrustLike: TypeAlias = "Trust | int | str"


def trust_level(value: TrustLike, where: str = "trust") -> Trust:
    """A ``Trust`` from a level or its name (``"external"``); anything else is refused."""
    if isinstance(value, Trust):
        return value
    if isinstance(value, str):
        try:
            return Trust[value.strip().upper()]
        except KeyError:
            names = ", ".join(t.name.lower() for t in Trust)
            raise InvalidArgument(
                f"{where}: no trust level {value!r}; use one of {names}"
            ) from None
    if isinstance(value, int) and not isinstance(value, bool) and value in tuple(Trust):
        return Trust(value)
    raise InvalidArgument(
        f"{where}: a trust level is untrusted, external or trusted, not {value!r}"
    )


def _open(source: SourceLike, workspace: Workspace | None) -> Session:
    if isinstance(source, Session):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.exists():
            return Session.open(path)
        if workspace is not None and isinstance(source, str):
            return workspace.open(source)
        where = " (and no workspace= to look an id up in)" if workspace is None else ""
        raise NotFound(f"merge source {str(source)!r}: no such log file{where}")
    raise InvalidArgument(
        f"a merge source is a Session, a log path or a session id, not {type(source).__name__}"
    )


def read_branch(session: Session, trust: Trust = Trust.EXTERNAL) -> Branch:
    """``session``'s current surface as a redacted ``Branch`` (its id, title and path
    redacted too: they come from the log) with its kernel facts (their strings are redacted
    when they become claims)."""
    messages: list[BranchMessage] = []
    withheld = 0
    for node in session.surface():
        raw: Mapping[str, Any] = node.message.to_json_dict()
        src = raw.get("source")
        injected = isinstance(src, Mapping) and src.get("kind") == "plugin"
        clean, redactions = redact_message(raw)
        withheld += len(redactions)
        messages.append(BranchMessage(node.seq, clean, injected))
    facts = session.facts()  # the whole log, through the base's fact kernel
    tainted = tainted_texts(session, {f.source.seq for f in facts})
    sid, title = redact(str(session.id)), redact(session.title or "")
    path = redact(str(session.path)) if session.path is not None else None
    return Branch(
        id=sid.text,
        messages=tuple(messages),
        trust=trust,
        title=title.text,
        path=path.text if path is not None else None,
        redactions=withheld + sid.withheld + title.withheld + (path.withheld if path else 0),
        facts=tuple(facts),
        current=facts.current(),
        tainted=tainted,
        opening=opening_request(session),
        span=time_span(session),
        cwd=session.working_dir,
    )


def opening_request(session: Session) -> int | None:
    """The seq of the session's first message in the user's own words (a harness's wrapper
    unwrapped, a command echo or injected context skipped): the task it was started with."""
    for ev in session.raw_events:
        if ev.get("type") != "user/message":
            continue
        data = ev.get("data")
        src = data.get("source") if isinstance(data, Mapping) else None
        if not isinstance(src, Mapping) or src.get("kind") != "user":
            continue
        content = data.get("content") if isinstance(data, Mapping) else None
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [
            b.get("text") for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
        ]
        text = "\n".join(t for t in texts if isinstance(t, str))
        if user_text(text) is not None:
            seq = ev.get("seq")
            return seq if isinstance(seq, int) else None
    return None


def time_span(session: Session) -> tuple[int, int] | None:
    """The first and last event times of the log (epoch ms), None when it has none."""
    times = [t for ev in session.raw_events if isinstance(t := ev.get("time"), int)]
    return (min(times), max(times)) if times else None


def read_branches(
    sources: Sequence[SourceLike],
    *,
    trust: TrustLike | Mapping[str, TrustLike] = Trust.EXTERNAL,
    workspace: Workspace | None = None,
    exclude: str | None = None,
) -> tuple[list[Branch], list[tuple[str, str]]]:
    """The branches of ``sources`` in the given order, and ``(source, why)`` for each one
    left out: a source that cannot be read is dropped, not fatal (as the seed does), a
    repeated session is read once, and ``exclude`` (the session merged into) never merges
    itself. ``trust`` is one level for all, or a mapping of session id to level (others
    external)."""
    branches: list[Branch] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for source in sources:
        label = redact(str(source.id) if isinstance(source, Session) else str(source)).text
        try:
            session = _open(source, workspace)
        except InvalidArgument:
            raise  # not a source at all: the caller's mistake, not a missing session
        except (CtxError, OSError) as exc:  # missing or damaged: the error names why
            skipped.append((label, redact(str(exc)).text))
            continue
        sid = str(session.id)
        if sid == exclude:
            skipped.append((label, "a session does not merge itself"))
            continue
        if sid in seen:
            skipped.append((label, "already a source"))
            continue
        seen.add(sid)
        if isinstance(trust, Mapping):
            level = trust_level(trust.get(sid, Trust.EXTERNAL), f"trust of {sid}")
        else:
            level = trust_level(trust)
        branch = read_branch(session, level)
        if any(b.id == branch.id for b in branches):
            # two ids that redact alike (both credentials): told apart, as a branch id must be
            branch = replace(branch, id=f"{branch.id}~{len(branches) + 1}")
        branches.append(branch)
    return branches, skipped
