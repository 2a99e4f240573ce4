"""The most one read decodes (``MAX_DECODED_BYTES``), checked while the text streams, and
the error that names it: a zstd decompression bomb or a log too large is refused, never
read until memory runs out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import SessionFormatError
from .._files import check_byte_limit, size_text

MAX_DECODED_BYTES = 1 << 30
"""The most a read takes from one log by default (1 GiB of text): a file larger than this,
or zstd frames that decompress past it (a decompression bomb: 131 KB that inflate to 4 GiB),
raise ``SessionFormatError`` naming the path and the cap instead of reading until memory
runs out. The text is counted while it streams (1 MiB at a time), so a bomb is refused
once it passes the cap, and at once when its frames declare a larger content size.
``Session.open(path, max_bytes=...)``, ``read_log(path, max_bytes=...)`` and
``Workspace(home, max_bytes=...)`` (its listing and ``open``) set another cap. A real log
this large is rare: the harness's fixtures and long agent sessions are megabytes."""
_READ_CHUNK = 1 << 20  # decompressed bytes per read while counting against the cap


def _too_big(path: str | Path | None, max_bytes: int) -> SessionFormatError:
    return SessionFormatError(
        f"decodes to more than {size_text(max_bytes)} (max_bytes={max_bytes}), the most one read "
        "takes: a zstd decompression bomb, or a log too large to read at once; if it is a real "
        "log, pass a larger max_bytes= (Session.open(path, max_bytes=...), "
        "Workspace(home, max_bytes=...), ctxsdk.session.read_log)",
        path=path,
    )


def check_max_bytes(max_bytes: Any) -> int:
    """``max_bytes`` if it is a positive whole number of bytes, else ``InvalidArgument``."""
    return check_byte_limit(max_bytes, "MAX_DECODED_BYTES", MAX_DECODED_BYTES)
