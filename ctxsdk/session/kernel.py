"""The base's kernel: the helpers the engines and the layers above share.

``ctxsdk.session`` is what a user needs to read, inspect and write sessions. This namespace
is its second face, for the engines (``assemble``, ``fold``, ``merge``, ``memory``), the
tools, widgets, benchmarks and CLI, and for anyone writing an engine of their own: the fact
kernel (statements, instruction files, tool calls and the files they write), message text,
replacement markers, surface primitives, redaction internals, token estimates, the event
writer. Names here are documented and snapshot-tested like the user face, but they follow
the engines' needs and may change between minor releases.
"""

from __future__ import annotations

from .._public import publish
from ._codec import (
    MAX_DECODED_BYTES,
    MAX_JSON_DEPTH,
    Compression,
    canonical_file_name,
    copy_json,
    dumps_line,
    frame_spans,
    validate_header,
    zstd_frame,
)
from ._composition import COMPOSITION_PARTS, turn_tokens
from ._embedders import LocalEmbedder, MiniLM
from ._embedding_cache import EmbeddingCache, cached_embed, clear_default_cache, default_cache
from ._event_writer import EventWriter, now_ms
from ._facts import (
    PATH_KEYS,
    READ_PROGRAMS,
    READ_TOOLS,
    RUN_SCOPE,
    CommandPart,
    FactReader,
    call_command,
    call_target,
    edit_texts,
    harness_note,
    heredoc_writes,
    instruction_kind,
    is_filler,
    pass_line,
    rule_file,
    run_value,
    sentences,
    user_text,
    written_paths,
    written_text,
)
from ._facts import covers as command_covers
from ._facts import outcome as run_outcome
from ._facts import parts as command_parts
from ._facts._anchors import names_in, path_name
from ._facts._findings import Statement, select_statements, statements
from ._file_writer import is_shipped_sample, refuse_shipped_sample, write_new
from ._files import check_byte_limit, open_regular_file, read_regular_file
from ._fork_paths import fork_points
from ._harness import (
    CHECKPOINT_PREAMBLE,
    PRUNE_MARKER,
    SYSTEM_PROMPT_PLUGIN,
    checkpoint_content,
    fallback_title,
    system_prompt_message,
)
from ._layout import (
    dsh_home,
    encode_segment,
    project_key,
    session_dir,
    sessions_root,
)
from ._markers import assembly_header, assembly_source, fold_line, fold_source, read_marker
from ._model_text import (
    CONTROL_CHARS,
    TRUNCATION_MARKER,
    clean_text,
    extract_json,
    model_safe,
    neutralize,
    truncate_keep_tail,
)
from ._nodes import node_tokens, tool_groups
from ._redact import MARKER as REDACTION_MARKER
from ._redact import (
    REDACTION_KINDS,
    REDACTION_RULES_VERSION,
    redact_json,
    redact_message,
    redaction_memo,
    withheld_notice,
)
from ._replay import LogIndex, replay_log
from ._retrieval import Doc, answer_kind, answer_kinds
from ._text import (
    digest_text,
    display_text,
    first_line,
    gist,
    match_spans,
    message_of,
    message_text,
    one_line,
    query_terms_in,
    query_window,
    search_text,
    short_id,
)
from ._tokens import (
    count_message,
    estimate_block,
    estimate_message,
    estimate_system,
    estimate_text,
    estimate_tools,
    message_text_for_count,
)
from ._widget_link import widget
from ._wire import to_wire
from ._workspace import CACHE_RELPATH, SESSION_COLUMNS

__all__ = [
    "CACHE_RELPATH",
    "CHECKPOINT_PREAMBLE",
    "COMPOSITION_PARTS",
    "CONTROL_CHARS",
    "MAX_DECODED_BYTES",
    "MAX_JSON_DEPTH",
    "PATH_KEYS",
    "PRUNE_MARKER",
    "READ_PROGRAMS",
    "READ_TOOLS",
    "REDACTION_KINDS",
    "REDACTION_MARKER",
    "REDACTION_RULES_VERSION",
    "RUN_SCOPE",
    "SESSION_COLUMNS",
    "SYSTEM_PROMPT_PLUGIN",
    "TRUNCATION_MARKER",
    "CommandPart",
    "Compression",
    "Doc",
    "EmbeddingCache",
    "EventWriter",
    "FactReader",
    "LocalEmbedder",
    "LogIndex",
    "MiniLM",
    "Statement",
    "answer_kind",
    "answer_kinds",
    "assembly_header",
    "assembly_source",
    "cached_embed",
    "call_command",
    "call_target",
    "canonical_file_name",
    "check_byte_limit",
    "checkpoint_content",
    "clean_text",
    "clear_default_cache",
    "command_covers",
    "command_parts",
    "copy_json",
    "count_message",
    "default_cache",
    "digest_text",
    "display_text",
    "dsh_home",
    "dumps_line",
    "edit_texts",
    "encode_segment",
    "estimate_block",
    "estimate_message",
    "estimate_system",
    "estimate_text",
    "estimate_tools",
    "extract_json",
    "fallback_title",
    "first_line",
    "fold_line",
    "fold_source",
    "fork_points",
    "frame_spans",
    "gist",
    "harness_note",
    "heredoc_writes",
    "instruction_kind",
    "is_filler",
    "is_shipped_sample",
    "match_spans",
    "message_of",
    "message_text",
    "message_text_for_count",
    "model_safe",
    "names_in",
    "neutralize",
    "node_tokens",
    "now_ms",
    "one_line",
    "open_regular_file",
    "pass_line",
    "path_name",
    "project_key",
    "query_terms_in",
    "query_window",
    "read_marker",
    "read_regular_file",
    "redact_json",
    "redact_message",
    "redaction_memo",
    "refuse_shipped_sample",
    "replay_log",
    "rule_file",
    "run_outcome",
    "run_value",
    "search_text",
    "select_statements",
    "sentences",
    "session_dir",
    "sessions_root",
    "short_id",
    "statements",
    "system_prompt_message",
    "to_wire",
    "tool_groups",
    "truncate_keep_tail",
    "turn_tokens",
    "user_text",
    "validate_header",
    "widget",
    "withheld_notice",
    "write_new",
    "written_paths",
    "written_text",
    "zstd_frame",
]

publish(__name__, globals(), __all__)
