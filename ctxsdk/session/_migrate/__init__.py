"""Upgrading a DSH log v0 → v1 → v2 → v3, one released edge at a time (spec §16).

Each edge does what the harness's ``session-format-vN-to-vN+1`` package does to the logical
log, on raw event dicts in the exact DSH JSON shape (the header is a dict too):

- **v0 → v1** is an identity layout plus the bounded legacy normalizations (``steering/message``,
  ``compact/*``, ``turn/start.trigger``, retired ``turn/end`` reasons, ``messagePrefix``, legacy
  message wrappers and ids, retry and compaction ids); retired ``request/header-delta``,
  ``mode/set`` and the ``fallback`` header reason are refused.
- **v1 → v2** removes top-level ``assistant/chunk`` events, embeds each attempt's chunks as the
  compact ``stream`` of its ``assistant/message`` (an unclaimed attempt becomes an
  ``assistant/attempt`` at its last chunk), closes the legacy restart pattern as an interrupted
  turn, renumbers densely and remaps every declared reference; ``seedLength`` becomes
  ``isSeeded`` and the fork cut gets a ``session/end-seed {inherited: true}`` marker.
- **v2 → v3** promotes the system prompt to a protected ``system/message`` head (node 0), drops
  ``request/header.header.system``, renames replace keys to ``startSeq/endSeq`` and the code-mode
  vocabulary to PTC.

Nothing is ever downgraded (the harness has no downgrade) and the inputs are never modified.

The parts: ``_upgrade`` chains the edges, ``v0_to_v1``, ``v1_to_v2`` and ``v2_to_v3`` are
the edges, ``_stream`` packs and expands embedded assistant streams, ``_renumber`` gives
events dense seqs and remaps their references, ``_common`` holds the event checks they share.
"""

from __future__ import annotations

from ._stream import expand_stream, pack_stream
from ._upgrade import LATEST_VERSION, migrate, upgrade_to_latest
from ._v2_to_v3 import system_message_id

__all__ = [
    "LATEST_VERSION",
    "expand_stream",
    "migrate",
    "pack_stream",
    "system_message_id",
    "upgrade_to_latest",
]
