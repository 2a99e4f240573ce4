"""Agent tools: JSON-Schema definitions (OpenAI function-calling shape) and a dispatcher.

A ``ToolRegistry`` holds tools; ``ToolRegistry.dispatch`` validates a call's
arguments, runs the tool and returns a JSON object, or a structured error
``{"error": {"code", "message"}}``; it never raises for a bad call:

    reg = default_registry()               # a fresh registry with ctxsdk's own tools
    reg.definitions()                      # -> the "tools" list of a chat request
    reg.dispatch("context_search", '{"query": "flaky"}', session)

    @reg.tool()
    def shout(args: ShoutArgs, ctx: ToolContext) -> dict[str, str]:
        '''Upper-case a text.'''
        return {"text": args.text.upper()}

Error codes: ``unknown_tool``, ``bad_json``, ``invalid_arguments``, ``no_session``,
``tool_failed`` (the tool raised, or its schema cannot be applied: a ``$ref`` that does not
resolve), ``bad_result`` (not JSON-serialisable).

A tool registered with a raw JSON Schema has the schema checked against its draft's
metaschema when it is registered (Draft 2020-12 unless ``$schema`` names another) and each
call's arguments validated against it (jsonschema); ``$ref`` resolves inside the schema only,
never over the network.

There is no module-level registry to mutate: ``default_registry`` builds a new one each
call. Engines add their tools to ``_BUILTIN`` in ``_builtin.py`` (``context_assembler``,
``context_recall``, ``merge_sessions``, ``ctx_remember`` / ``ctx_link`` / ``ctx_find`` /
``ctx_read`` / ``ctx_edit`` / ``ctx_delete``) as they arrive, imported inside their
registration function so that importing ``ctxsdk.tools`` loads no engine.

The modules: ``_registry`` (Tool, ToolContext, ToolRegistry, is_error), ``_schema`` (JSON
Schema checks of raw-schema tools), ``_builtin`` (the built-in tools, ``default_registry``,
``dispatch``).
"""

from __future__ import annotations

from ._builtin import ContextMessagesArgs, ContextSearchArgs, default_registry, dispatch
from ._registry import Tool, ToolContext, ToolFn, ToolRegistry, is_error

__all__ = [
    "ContextMessagesArgs",
    "ContextSearchArgs",
    "Tool",
    "ToolContext",
    "ToolFn",
    "ToolRegistry",
    "default_registry",
    "dispatch",
    "is_error",
]
