"""The memory's agent tools: the dsh-trivium seed's four, ``ctx_remember``, ``ctx_link``,
``ctx_find`` and ``ctx_read``, and two that correct what is kept: ``ctx_edit`` (a memory's
text, name or deadline, in place: id, sources and links kept) and ``ctx_delete`` (a memory
and its links, for good: for what is wrong or should not be kept). Each answers JSON; a
refusal (a text that is nothing but credentials, an unknown id) is an ``error`` object the
model can read, never an exception.

What a tool writes goes through the memory's door (``remember``: credentials redacted, a text
that is only credentials refused), and what it answers goes through ``model_safe``: every
string redacted and neutralized (control, bidi and zero-width characters shown as escapes),
echoes of the model's own arguments (a query, an id in an error) included. The arguments
are redacted before they are used, too: an error quotes them with ``repr``, whose escapes
could hide a secret from the redaction after it (an id or a stored name holds no secret,
so a lookup is unchanged)."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, Field

from ..errors import InvalidArgument, MemoryRefused, NotFound
from ..session import Session, redact
from ..session.kernel import model_safe
from ._memory import Memory

__all__ = [
    "DELETE_DESCRIPTION",
    "EDIT_DESCRIPTION",
    "FIND_DESCRIPTION",
    "LINK_DESCRIPTION",
    "READ_DESCRIPTION",
    "REMEMBER_DESCRIPTION",
    "DeleteArgs",
    "EditArgs",
    "FindArgs",
    "LinkArgs",
    "ReadArgs",
    "RememberArgs",
    "ctx_delete",
    "ctx_edit",
    "ctx_find",
    "ctx_link",
    "ctx_read",
    "ctx_remember",
]

Label = Literal["about", "decided", "broke", "fixed", "same_as"]

REMEMBER_DESCRIPTION = (
    "Keep something for later sessions: a preference (how the user wants things done, the "
    "default), a decision (what was decided; put a deadline in the text, e.g. 'until Friday'), "
    "an entity (a named thing) or an experience (a failure and its fix). link_to names an "
    "entity (created if new) to link it to. Credentials in it are stored redacted; a text "
    "that is nothing but a credential is refused."
)
LINK_DESCRIPTION = (
    "Link two memories (ids from ctx_find, or entity names): label about (default), decided, "
    "broke, fixed or same_as."
)
FIND_DESCRIPTION = (
    "Search the memory of this workspace: name an entity or a topic. Hits come with a short "
    "text and their links (<-decided-n12(...) means n12 decided about this one); use ctx_read "
    "for a hit's full text."
)
READ_DESCRIPTION = "Read one memory in full by id: its text, sources and links in and out."
EDIT_DESCRIPTION = (
    "Correct a memory in place by id: a new text, name or deadline ('until Friday'; an empty "
    "until clears it). Its id, sources and links are kept. Credentials in it are stored "
    "redacted."
)
DELETE_DESCRIPTION = (
    "Delete a memory by id, with its links, for good: only for a memory that is wrong or that "
    "the user asked to forget."
)


class RememberArgs(BaseModel):
    text: str = Field(min_length=1, max_length=2000, description="What to remember.")
    type: Literal["preference", "decision", "entity", "experience"] = "preference"
    name: str | None = Field(None, max_length=120, description="A short name (entities).")
    link_to: str | None = Field(None, max_length=120, description="An entity name or an id.")
    link_label: Label = "about"


class LinkArgs(BaseModel):
    source: str = Field(min_length=1, description="The memory the link starts at.")
    target: str = Field(min_length=1, description="The memory it points to.")
    label: Label = "about"


class FindArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500)
    top_k: int | None = Field(None, ge=1, le=20)  # None: the memory's top_k setting


class ReadArgs(BaseModel):
    id: str = Field(min_length=1, description="A memory id from ctx_find.")


class EditArgs(BaseModel):
    id: str = Field(min_length=1, description="A memory id from ctx_find.")
    text: str | None = Field(None, min_length=1, max_length=2000, description="The new text.")
    name: str | None = Field(None, min_length=1, max_length=120, description="A new name.")
    until: str | None = Field(None, max_length=120, description="A new deadline; '' clears it.")


class DeleteArgs(BaseModel):
    id: str = Field(min_length=1, description="A memory id from ctx_find.")


def _safe(answer: dict[str, Any]) -> dict[str, Any]:
    return cast(dict[str, Any], model_safe(answer))


def _error(exc: Exception, code: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": getattr(exc, "reason", None) or str(exc)}}


def ctx_remember(session: Session | None, args: RememberArgs, memory: Memory) -> dict[str, Any]:
    return _safe(_remember(session, args, memory))


def _remember(session: Session | None, args: RememberArgs, memory: Memory) -> dict[str, Any]:
    from ._model import Source

    src = Source(
        session=str(session.id) if session is not None else None,
        seq=len(session) if session is not None else None,
        quote=args.text,
        via="tool",
    )
    try:
        node = memory.remember(
            args.text,
            type=args.type,
            name=args.name,
            link_to=args.link_to,
            label=args.link_label,
            source=src,
        )
    except MemoryRefused as exc:
        return _error(exc, "refused")
    except (InvalidArgument, NotFound) as exc:
        return _error(exc, "invalid_arguments")
    return {
        "id": node.id,
        "type": node.type,
        "name": node.name,
        "path": list(memory.edge_path(node.id)),
    }


def ctx_link(args: LinkArgs, memory: Memory) -> dict[str, Any]:
    return _safe(_link(args, memory))


def _link(args: LinkArgs, memory: Memory) -> dict[str, Any]:
    try:
        edge = memory.link(redact(args.source).text, redact(args.target).text, args.label)
    except NotFound as exc:
        return _error(exc, "not_found")
    except InvalidArgument as exc:
        return _error(exc, "invalid_arguments")
    return {"linked": edge.to_json()}


def ctx_find(args: FindArgs, memory: Memory) -> dict[str, Any]:
    result = memory.find(redact(args.query).text, top_k=args.top_k)
    groups: dict[str, list[dict[str, Any]]] = {}
    for h in result.hits:
        groups.setdefault(h.node.type, []).append(h.to_json())
    out = {"query": result.query, "hits": len(result.hits), "by_type": groups}
    return _safe(out)


def ctx_read(args: ReadArgs, memory: Memory) -> dict[str, Any]:
    try:
        out = memory.read(redact(args.id).text).to_json()
    except NotFound as exc:
        out = _error(exc, "not_found")
    except InvalidArgument as exc:
        out = _error(exc, "invalid_arguments")
    return _safe(out)


def ctx_edit(args: EditArgs, memory: Memory) -> dict[str, Any]:
    return _safe(_edit(args, memory))


def _edit(args: EditArgs, memory: Memory) -> dict[str, Any]:
    try:
        node = memory.edit(redact(args.id).text, args.text, name=args.name, until=args.until)
    except MemoryRefused as exc:
        return _error(exc, "refused")
    except NotFound as exc:
        return _error(exc, "not_found")
    except InvalidArgument as exc:
        return _error(exc, "invalid_arguments")
    return {
        "id": node.id,
        "type": node.type,
        "name": node.name,
        "text": node.text,
        "until": node.until,
        "edited": node.extra.get("edited"),
    }


def ctx_delete(args: DeleteArgs, memory: Memory) -> dict[str, Any]:
    try:
        node = memory.delete(redact(args.id).text)
    except NotFound as exc:
        out = _error(exc, "not_found")
    except InvalidArgument as exc:
        out = _error(exc, "invalid_arguments")
    else:
        out = {"deleted": node.id, "type": node.type, "name": node.name}
    return _safe(out)
