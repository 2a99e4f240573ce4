"""Readers of foreign agent logs: each turns one format into a v3 DSH log (header, events,
and the index of the replay that checked them), with an ignorable ``ctxsdk/import`` event
per source record.

They sit below ``Session``, so ``Session.from_claude_code`` and its siblings can call them;
``ctxsdk.session.importers`` is their public face, which makes a ``Session`` of each log.
"""
