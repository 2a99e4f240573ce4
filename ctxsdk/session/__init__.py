"""The base layer: the event log and everything the engines share.

Typed models, the codec, the validating replay and its read-only ``LogView``, the one event
writer, message text, replacement markers, surface primitives (tool-call groups, node
tokens), token counting, lexical retrieval, workspaces, importers, crash repair and wire
formats. Engines (``ctxsdk.assemble`` and the ones to come) import only the names here.
"""

from __future__ import annotations

from .._public import publish
from ._codec import MAX_JSON_DEPTH, Compression, DecodedLog, Recovery, read_log
from ._composition import (
    COMPACTION_RATIO,
    COMPOSITION_PARTS,
    Composition,
    TurnTokens,
    composition,
    node_parts,
    turn_tokens,
)
from ._embedders import EMBEDDERS, available_embedders, get_embedder
from ._event_writer import EventWriter, now_ms
from ._facts import (
    FACT_KINDS,
    RUN_SCOPE,
    CommandPart,
    Fact,
    FactKind,
    FactReader,
    Facts,
    FactSource,
    RunOutcome,
    call_command,
    call_target,
    edit_texts,
    harness_note,
    instruction_kind,
    is_filler,
    is_scratch,
    is_template,
    pass_line,
    read_facts,
    sentences,
    user_text,
    written_paths,
)
from ._facts import covers as command_covers
from ._facts import outcome as run_outcome
from ._facts import parts as command_parts
from ._facts._anchors import names_in, path_name
from ._facts._findings import Statement, select_statements, statements
from ._file_writer import is_shipped_sample, refuse_shipped_sample
from ._files import check_byte_limit, open_regular_file, read_regular_file
from ._fork import fork_log, fork_points
from ._harness import (
    CHECKPOINT_PREAMBLE,
    PRUNE_MARKER,
    SYSTEM_PROMPT_PLUGIN,
    checkpoint_content,
    fallback_title,
    system_prompt_message,
)
from ._layout import (
    canonical_file_name,
    decode_segment,
    dsh_home,
    encode_segment,
    project_key,
    session_dir,
    sessions_root,
)
from ._lexical import BM25
from ._log_view import LogView, PendingCallView, TurnRange
from ._markers import (
    ASSEMBLER_PLUGIN,
    FOLD_PLUGIN,
    MARKER_KINDS,
    Marker,
    assembly_header,
    assembly_source,
    fold_line,
    fold_source,
    read_marker,
)
from ._migrate import LATEST_VERSION, migrate, upgrade_to_latest
from ._model_text import (
    TRUNCATION_MARKER,
    clean_text,
    extract_json,
    model_safe,
    neutralize,
    truncate_keep_tail,
)
from ._models import Event, Message, SessionHeader, TokenUsage
from ._nodes import node_tokens, tool_groups
from ._redact import FAMILIES as REDACTION_FAMILIES
from ._redact import MARKER as REDACTION_MARKER
from ._redact import (
    REDACTION_KINDS,
    REDACTION_RULES_VERSION,
    Redaction,
    redact,
    redact_json,
    redact_message,
    withheld,
    withheld_notice,
)
from ._retrieval import Doc, Embedder, Fusion, Hit, Retriever
from ._session import (
    NodeTokens,
    Session,
    Step,
    Surface,
    SurfaceNode,
    TokenTable,
    Turn,
    Turns,
    message_of,
)
from ._text import (
    digest_text,
    display_text,
    first_line,
    gist,
    message_text,
    search_text,
    short_id,
)
from ._tokens import (
    TOKENIZER_NAMES,
    TokenCounter,
    Tokenizer,
    estimate_message,
    estimate_text,
    get_tokenizer,
)
from ._views import (
    events_df,
    messages_df,
    surface_df,
    tokens_by_role,
    tokens_by_tool,
    tokens_df,
    tools_df,
    turns_df,
)
from ._widget_link import widget
from ._wire import WireFormat, to_wire
from ._workspace import CACHE_RELPATH, SESSION_COLUMNS, LineageNode, SessionTree, Workspace

__all__ = [
    "ASSEMBLER_PLUGIN",
    "BM25",
    "CACHE_RELPATH",
    "CHECKPOINT_PREAMBLE",
    "COMPACTION_RATIO",
    "COMPOSITION_PARTS",
    "EMBEDDERS",
    "FACT_KINDS",
    "FOLD_PLUGIN",
    "LATEST_VERSION",
    "MARKER_KINDS",
    "MAX_JSON_DEPTH",
    "PRUNE_MARKER",
    "REDACTION_FAMILIES",
    "REDACTION_KINDS",
    "REDACTION_MARKER",
    "REDACTION_RULES_VERSION",
    "RUN_SCOPE",
    "SESSION_COLUMNS",
    "SYSTEM_PROMPT_PLUGIN",
    "TOKENIZER_NAMES",
    "TRUNCATION_MARKER",
    "CommandPart",
    "Composition",
    "Compression",
    "DecodedLog",
    "Doc",
    "Embedder",
    "Event",
    "EventWriter",
    "Fact",
    "FactKind",
    "FactReader",
    "FactSource",
    "Facts",
    "Fusion",
    "Hit",
    "LineageNode",
    "LogView",
    "Marker",
    "Message",
    "NodeTokens",
    "PendingCallView",
    "Recovery",
    "Redaction",
    "Retriever",
    "RunOutcome",
    "Session",
    "SessionHeader",
    "SessionTree",
    "Statement",
    "Step",
    "Surface",
    "SurfaceNode",
    "TokenCounter",
    "TokenTable",
    "TokenUsage",
    "Tokenizer",
    "Turn",
    "TurnRange",
    "TurnTokens",
    "Turns",
    "WireFormat",
    "Workspace",
    "assembly_header",
    "assembly_source",
    "available_embedders",
    "call_command",
    "call_target",
    "canonical_file_name",
    "check_byte_limit",
    "checkpoint_content",
    "clean_text",
    "command_covers",
    "command_parts",
    "composition",
    "decode_segment",
    "digest_text",
    "display_text",
    "dsh_home",
    "edit_texts",
    "encode_segment",
    "estimate_message",
    "estimate_text",
    "events_df",
    "extract_json",
    "fallback_title",
    "first_line",
    "fold_line",
    "fold_source",
    "fork_log",
    "fork_points",
    "get_embedder",
    "get_tokenizer",
    "gist",
    "harness_note",
    "instruction_kind",
    "is_filler",
    "is_scratch",
    "is_shipped_sample",
    "is_template",
    "message_of",
    "message_text",
    "messages_df",
    "migrate",
    "model_safe",
    "names_in",
    "neutralize",
    "node_parts",
    "node_tokens",
    "now_ms",
    "open_regular_file",
    "pass_line",
    "path_name",
    "project_key",
    "read_facts",
    "read_log",
    "read_marker",
    "read_regular_file",
    "redact",
    "redact_json",
    "redact_message",
    "refuse_shipped_sample",
    "run_outcome",
    "search_text",
    "select_statements",
    "sentences",
    "session_dir",
    "sessions_root",
    "short_id",
    "statements",
    "surface_df",
    "system_prompt_message",
    "to_wire",
    "tokens_by_role",
    "tokens_by_tool",
    "tokens_df",
    "tool_groups",
    "tools_df",
    "truncate_keep_tail",
    "turn_tokens",
    "turns_df",
    "upgrade_to_latest",
    "user_text",
    "widget",
    "withheld",
    "withheld_notice",
    "written_paths",
]

publish(__name__, globals(), __all__)
