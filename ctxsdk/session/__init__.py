"""The event log: typed models, codec, surface fold, writer, crash repair, wire formats."""

from __future__ import annotations

from .codec import Recovery
from .models import Event, Message, SessionHeader, TokenUsage
from .session import Session, Step, Surface, SurfaceNode, Turn

__all__ = [
    "Event",
    "Message",
    "Recovery",
    "Session",
    "SessionHeader",
    "Step",
    "Surface",
    "SurfaceNode",
    "TokenUsage",
    "Turn",
]
