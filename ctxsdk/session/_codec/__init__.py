"""Physical DSH log format: JSONL lines, chains of zstd frames, the header line, packed rows.

Reading turns bytes into a header dict and a list of raw event dicts with ``seq`` in place;
logical validation (surface replay, provenance, enclosure) lives in ``._replay``.

Where each part lives:

- ``_decoded``: ``DecodedLog``, ``Recovery``, ``Compression``; ``_read``: ``read_log`` and
  ``resolve_log_path``; ``_decode``: ``decode_bytes``;
- ``_framing``: zstd frames and their spans; ``_decompress``: their text, torn frames and
  damage; ``_byte_cap``: ``MAX_DECODED_BYTES``, the most one read decodes;
- ``_header``: the header line and ``KNOWN_VERSIONS``; ``_rows``: event rows, packed v0/v1
  rows, stripped fixtures, a plain log's torn tail; ``_source_seqs``: ``sourceEventSeqs``
  ranges;
- ``_depth``: ``MAX_JSON_DEPTH`` and the nesting checks; ``_numbers``: integral floats read
  as JavaScript reads them; ``_js_json``: JSON text with lone UTF-16 surrogates.
"""

from __future__ import annotations

from ._byte_cap import MAX_DECODED_BYTES, check_max_bytes
from ._decode import decode_bytes
from ._decoded import Compression, DecodedLog, Recovery
from ._depth import MAX_JSON_DEPTH, deep_path, depth_reason, json_path_text, refuse_deep_events
from ._file_names import canonical_file_name, is_session_file_name, version_from_filename
from ._framing import frame_spans, zstd_frame
from ._header import KNOWN_VERSIONS, validate_header
from ._js_json import copy_json, dumps_json, dumps_line, loads_line
from ._numbers import js_numbers
from ._read import read_log, resolve_log_path
from ._rows import STRIPPED_SEQ_HINT
from ._source_seqs import decode_source_seqs, encode_source_seqs

__all__ = [
    "KNOWN_VERSIONS",
    "MAX_DECODED_BYTES",
    "MAX_JSON_DEPTH",
    "STRIPPED_SEQ_HINT",
    "Compression",
    "DecodedLog",
    "Recovery",
    "canonical_file_name",
    "check_max_bytes",
    "copy_json",
    "decode_bytes",
    "decode_source_seqs",
    "deep_path",
    "depth_reason",
    "dumps_json",
    "dumps_line",
    "encode_source_seqs",
    "frame_spans",
    "is_session_file_name",
    "js_numbers",
    "json_path_text",
    "loads_line",
    "read_log",
    "refuse_deep_events",
    "resolve_log_path",
    "validate_header",
    "version_from_filename",
    "zstd_frame",
]
