"""Session logs written in code, for tests, samples, docs and benchmarks.

``LogBuilder`` is a small fluent DSL on top of the one event writer
(``ctxsdk.session.kernel.EventWriter``): it writes valid DeepSeek Harness logs of any format version
(0-3) with deterministic ids, times, model streams and usage, so the same calls always give
the same bytes::

    from ctxsdk.testing import LogBuilder, ToolOutput

    b = LogBuilder(session_id="s-1", cwd="/home/dev/app")
    b.turn("Run the tests").assistant(tool_calls=[("bash", {"command": "pytest"})])
    b.tool_results(["3 passed in 0.12s"]).next_step().assistant(text="All green.").end_turn()
    path = b.write(b.canonical_path(root))

The modules: ``_builder`` (LogBuilder, ToolOutput), ``_clock`` (the seeded Clock), ``_ids``
(deterministic message, call and session ids), ``_streams`` (the timed stream of a reply),
``_defaults`` (the default route, system prompt, tools and runtime context). The harness's own
texts (``CHECKPOINT_PREAMBLE``, ``PRUNE_MARKER``, ``fallback_title``, ...) live in
``ctxsdk.session``; the two a test compares against are re-exported here.
"""

from __future__ import annotations

from ctxsdk.session.kernel import CHECKPOINT_PREAMBLE, PRUNE_MARKER

from .._public import publish
from ._builder import LogBuilder, ToolOutput
from ._clock import Clock
from ._defaults import DEFAULT_RUNTIME_SECTIONS, DEFAULT_SYSTEM_PROMPT, DEFAULT_TOOLS
from ._postgres import LocalPostgres, local_postgres, postgres_unavailable

__all__ = [
    "CHECKPOINT_PREAMBLE",
    "DEFAULT_RUNTIME_SECTIONS",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TOOLS",
    "PRUNE_MARKER",
    "Clock",
    "LocalPostgres",
    "LogBuilder",
    "ToolOutput",
    "local_postgres",
    "postgres_unavailable",
]

publish(__name__, globals(), ["Clock", "LocalPostgres", "LogBuilder", "ToolOutput"])
