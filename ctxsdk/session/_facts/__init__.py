"""The fact kernel: what a log says worth remembering, read once for every engine.

Fold's state reducer, Memory's ingest and Merge's claims all read these facts; no engine
keeps a sentence splitter or cue table of its own. Deterministic, English and Chinese.
The names below are the kernel's whole surface (re-exported by ``ctxsdk.session``): the
facts and their reader, the one sentence splitter, the user's own words inside a harness
template, what a tool call runs and how it went, and the project's rules read from its
instruction files (AGENTS.md, CLAUDE.md, CONVENTIONS.md …: ``rule_file``).
"""

from __future__ import annotations

from ._commands import CommandPart, covers, heredoc_writes, is_scratch, parts
from ._harness import run_value
from ._instruction_files import PROJECT_SCOPE, file_rules, is_instruction_file, rule_file
from ._model import FACT_KINDS, RUN_SCOPE, Fact, FactKind, Facts, FactSource
from ._outcomes import RunOutcome, harness_note, outcome, pass_line
from ._read import FactReader, read_facts
from ._sentences import sentences
from ._templates import is_template, user_text
from ._text import instruction_kind, is_filler
from ._tools import (
    PATH_KEYS,
    READ_PROGRAMS,
    READ_TOOLS,
    call_command,
    call_target,
    edit_texts,
    written_paths,
    written_text,
)

__all__ = [
    "FACT_KINDS",
    "PATH_KEYS",
    "PROJECT_SCOPE",
    "READ_PROGRAMS",
    "READ_TOOLS",
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
    "file_rules",
    "harness_note",
    "heredoc_writes",
    "instruction_kind",
    "is_filler",
    "is_instruction_file",
    "is_scratch",
    "is_template",
    "outcome",
    "parts",
    "pass_line",
    "read_facts",
    "rule_file",
    "run_value",
    "sentences",
    "user_text",
    "written_paths",
    "written_text",
]
