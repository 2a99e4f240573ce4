"""Deterministic ids for logs written in code: the same session id always gives the same ids.

Message and child-session ids are ``uuid5`` under one namespace; tool-call ids take
DeepSeek's shape, ``call_<index in message>_<24 base62 chars>``, from a hash.
"""

from __future__ import annotations

import hashlib
import string
import uuid

__all__ = ["Ids", "session_id_for"]

# Ids are uuid5 under this namespace, so two builders with the same session id agree.
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://ctxsdk.dev/session-builder")
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def session_id_for(created_at: int, cwd: str | None, parent: str | None) -> str:
    """The id of a session that was not given one."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"session/{created_at}/{cwd}/{parent}"))


class Ids:
    """The ids one session mints, each kind counted on its own."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._messages = 0
        self._calls = 0
        self._children = 0

    def new(self) -> str:
        """The next message (or compaction) id."""
        self._messages += 1
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.session_id}/{self._messages}"))

    def call(self, index: int) -> str:
        """The next tool-call id, for the call at ``index`` in its message."""
        self._calls += 1
        digest = int.from_bytes(
            hashlib.sha256(f"{self.session_id}/call/{self._calls}".encode()).digest(), "big"
        )
        token = ""
        for _ in range(24):
            digest, r = divmod(digest, 62)
            token += _BASE62[r]
        return f"call_{index:02d}_{token}"

    def child(self, kind: str) -> str:
        """The next child session's id (``kind`` is ``fork`` or ``subagent``)."""
        self._children += 1
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.session_id}/{kind}/{self._children}"))
