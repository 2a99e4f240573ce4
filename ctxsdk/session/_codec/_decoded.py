"""What a read returns: ``DecodedLog`` (the header, the raw events, where they came from),
``Recovery`` (what a torn tail dropped and how to repair it) and the ``Compression`` names.

The plain data every reader and writer of log bytes shares, apart from how bytes are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ._framing import _frame_of_line

Compression = Literal["zstd", "none"]


@dataclass(frozen=True)
class Recovery:
    """What a reader dropped from a torn tail, as the harness does, and how to repair the file.

    ``truncate_at`` is the byte offset where the torn frame or line starts; a writer that
    appends first truncates there and re-appends ``kept_lines`` (the complete lines that were
    decoded from the torn frame) in its new batch.
    """

    kind: Literal["torn-line", "torn-frame", "torn-tail"]
    truncate_at: int
    dropped_bytes: int
    kept_lines: tuple[bytes, ...] = ()
    torn_bytes: bytes = field(default=b"", repr=False)  # the original tail, to undo a repair
    reason: str = ""  # for a torn tail: the first damaged row, which no turn/end follows

    def __str__(self) -> str:
        what = {
            "torn-line": "a torn last line",
            "torn-frame": "a torn last zstd frame",
            "torn-tail": "a torn tail",
        }[self.kind]
        kept = f", kept {len(self.kept_lines)} complete line(s) from it" if self.kept_lines else ""
        why = f" ({self.reason}; no turn/end follows it)" if self.reason else ""
        return (
            f"recovered {what}: dropped {self.dropped_bytes} byte(s) from offset "
            f"{self.truncate_at}{kept}{why}"
        )


@dataclass
class DecodedLog:
    """A decoded log: header, raw events (``seq`` filled in), and where they came from."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    version: int
    compression: Compression
    data: bytes = field(repr=False)
    recovery: Recovery | None = None
    # 1-based text line of each event (v0/v1 packed rows make this differ from seq + 2).
    event_lines: list[int] | None = None
    # Read as a stripped log (no seq/time: the harness's snapshot fixtures); seqs and times
    # were rebuilt, so the events are not the file's and nothing may be appended to it.
    normalized: bool = False
    path: Path | None = None  # the file it was read from (None for bytes decoded in memory)

    @property
    def size(self) -> int:
        return len(self.data)

    def line_of(self, seq: int) -> int | None:
        if not 0 <= seq < len(self.events):
            return None
        return self.event_lines[seq] if self.event_lines is not None else seq + 2

    def frame_of_line(self, line: int) -> int | None:
        """1-based zstd frame holding a 1-based text line (None for plain JSONL)."""
        return _frame_of_line(self.data, line) if self.compression == "zstd" else None
