"""The fold's agent tools: ``context_recall`` reads a checkpoint back, and ``context_search``
(the base tool over the live messages) also searches the folded history once a session has
folds. They answer with JSON an agent can act on; an unavailable bundle is a reason in the
answer, never a crash and never wrong bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import BundleError, InvalidArgument, NotFound
from ..session import Session
from ._bundles import FileBundleStore
from ._fold import Fold
from ._recall import MAX_PAGE
from ._transaction import read_records

__all__ = ["RECALL_DESCRIPTION", "RecallArgs", "context_recall", "folded_search"]

RECALL_DESCRIPTION = (
    "Read back part of this conversation that was folded out of your context. ref is a "
    'checkpoint reference like "cp:cp-1a2b…" (checkpoints and context_search hits name them) '
    'or an original seq number. depth="exact" returns the archived messages verbatim, '
    f"verified, a page at a time (offset, limit ≤ {MAX_PAGE}; nextOffset says where the next "
    'page starts); depth="summary" returns the checkpoint text.'
)


class RecallArgs(BaseModel):
    """Arguments of ``context_recall``."""

    ref: str = Field(min_length=1, description='"cp:<id>" or an archived seq number')
    depth: Literal["summary", "exact"] = Field("exact", description="summary or exact")
    offset: int = Field(0, ge=0, description="First archived message of the page.")
    limit: int = Field(10, ge=1, le=MAX_PAGE, description="Messages per page.")


def _fold(session: Session, store: str | Path | FileBundleStore | None) -> Fold | None:
    try:
        return Fold(session, store=store, write=False)
    except InvalidArgument:
        return None  # no store given and none by default (a session not read from a file)


def context_recall(
    session: Session, args: RecallArgs, *, store: str | Path | FileBundleStore | None = None
) -> dict[str, Any]:
    f = _fold(session, store)
    if f is None:
        return {"ref": args.ref, "unavailable": "no fold store is known for this session"}
    ref: str | int = int(args.ref) if args.ref.isdigit() else args.ref
    try:
        return f.recall(ref, args.depth, offset=args.offset, limit=args.limit).to_json()
    except (BundleError, NotFound) as exc:
        return {"ref": args.ref, "unavailable": getattr(exc, "reason", None) or str(exc)}


def folded_search(
    session: Session,
    query: str,
    limit: int,
    *,
    store: str | Path | FileBundleStore | None = None,
) -> dict[str, Any] | None:
    """The folded-history part of ``context_search``; None when nothing was folded."""
    if not read_records(session):
        return None
    f = _fold(session, store)
    if f is None:
        return {"unavailable": "no fold store is known for this session"}
    return f.search(query, limit=limit).to_json()
