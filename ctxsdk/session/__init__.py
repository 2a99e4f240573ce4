"""The event log: typed models, codec, surface replay, writer, crash repair, wire formats."""

from __future__ import annotations

from ._event_writer import EventWriter, now_ms
from ._text import digest_text, display_text, first_line, gist, message_text, search_text
from .codec import Recovery
from .models import Event, Message, SessionHeader, TokenUsage
from .session import Session, Step, Surface, SurfaceNode, Turn, message_of

__all__ = [
    "Event",
    "EventWriter",
    "Message",
    "Recovery",
    "Session",
    "SessionHeader",
    "Step",
    "Surface",
    "SurfaceNode",
    "TokenUsage",
    "Turn",
    "digest_text",
    "display_text",
    "first_line",
    "gist",
    "message_of",
    "message_text",
    "now_ms",
    "search_text",
]
