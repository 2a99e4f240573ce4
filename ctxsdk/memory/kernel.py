"""Memory's kernel: the model tools' schemas and staleness checks the layers above build on.

``ctxsdk.memory`` is what a user needs; this second face holds the memory tools
(``ctx_find``, ``ctx_read``, ``ctx_remember`` and their argument models), the default
embedder, the staleness tests the CLI and widgets read, and ``open_store`` (a file, a
``postgresql://`` URL and namespace, or a store: opened as ``Memory`` opens it).
"""

from __future__ import annotations

from .._public import publish
from ._find import is_stale
from ._index_doc import index_doc
from ._memory import default_embedder
from ._open import open_store
from ._scrub import stale
from ._tools import (
    DELETE_DESCRIPTION,
    EDIT_DESCRIPTION,
    FIND_DESCRIPTION,
    LINK_DESCRIPTION,
    READ_DESCRIPTION,
    REMEMBER_DESCRIPTION,
    DeleteArgs,
    EditArgs,
    FindArgs,
    LinkArgs,
    ReadArgs,
    RememberArgs,
    ctx_delete,
    ctx_edit,
    ctx_find,
    ctx_link,
    ctx_read,
    ctx_remember,
)

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
    "default_embedder",
    "index_doc",
    "is_stale",
    "open_store",
    "stale",
]

publish(__name__, globals(), __all__)
