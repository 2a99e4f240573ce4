"""The fact kernel: what a log says worth remembering, read once for every engine.

Fold's state reducer, Memory's ingest and Merge's claims all read these facts; no engine
keeps a sentence splitter or cue table of its own. Deterministic, English and Chinese.
"""

from __future__ import annotations

from ._model import FACT_KINDS, Fact, FactKind, Facts, FactSource
from ._read import FactReader, read_facts
from ._sentences import sentences

__all__ = [
    "FACT_KINDS",
    "Fact",
    "FactKind",
    "FactReader",
    "FactSource",
    "Facts",
    "read_facts",
    "sentences",
]
