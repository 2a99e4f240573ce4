"""The fact kernel: what a log says worth remembering, read once for every engine.

Fold's state reducer, Memory's ingest and Merge's claims all read these facts; no engine
keeps a sentence splitter or cue table of its own. Deterministic, English and Chinese.
The names below are the kernel's whole surface (re-exported by ``ctxsdk.session``): the
facts and their reader, the one sentence splitter, the user's own words inside a harness
template, and what a tool call runs and how it went.
"""

from __future__ import annotations

from ._commands import CommandPart, covers, is_scratch, parts
from ._harness import run_value
from ._model import FACT_KINDS, RUN_SCOPE, Fact, FactKind, Facts, FactSource
from ._outcomes import RunOutcome, harness_note, outcome, pass_line
from ._read import FactReader, read_facts
from ._sentences import sentences
from ._templates import is_template, user_text
from ._text import instruction_kind, is_filler
from ._tools import call_command, call_target, edit_texts, written_paths

__all__ = [
    "FACT_KINDS",
    "RUN_SCOPE",
    "CommandPart",
    "Fact",
    "FactKind",
    "FactReader",
    "FactSource",
    "Facts",
    "RunOutcome",
    "call_command",
    "call_target",
    "covers",
    "edit_texts",
    "harness_note",
    "instruction_kind",
    "is_filler",
    "is_scratch",
    "is_template",
    "outcome",
    "parts",
    "pass_line",
    "read_facts",
    "run_value",
    "sentences",
    "user_text",
    "written_paths",
]
