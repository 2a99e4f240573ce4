"""mkdocs hook: the API reference, one section per public namespace (``ctxsdk._public``).

The sections are generated from the namespaces' ``__all__``, never from module paths, so a
name is documented where users import it from (``ctxsdk.session.Session``).
"""

from __future__ import annotations

import importlib
from typing import Any

_PLACEHOLDER = "<!-- api-reference -->"
_KERNELS = "<!-- kernel-reference -->"
_OPTIONS = (
    "    options:\n"
    "      show_root_heading: false\n"
    "      show_root_toc_entry: false\n"
    "      show_if_no_docstring: true\n"
    '      filters: ["!^_"]\n'
)


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


def _top_level() -> str:
    public = importlib.import_module("ctxsdk._public")
    rows = ["| name | documented in |", "|---|---|"]
    own = []
    for name, namespace in sorted(public.TOP_LEVEL.items()):
        if namespace == "ctxsdk":  # defined for the top level itself (the agent loop)
            own.append(name)
            rows.append(f"| `ctxsdk.{name}` | [below](#ctxsdk.{name}) |")
        else:
            rows.append(f"| `ctxsdk.{name}` | [`{namespace}`](#{namespace}.{name}) |")
    table = "\n".join(rows) + "\n"
    return table + "".join(f"\n::: ctxsdk.{name}\n" for name in own)


def _kernels() -> str:
    public = importlib.import_module("ctxsdk._public")
    parts = []
    for namespace in public.KERNELS:
        module = importlib.import_module(namespace)
        parts.append(f"## `{namespace}`\n\n{_first_line(module.__doc__)}\n")
        parts.append(f"::: {namespace}\n{_OPTIONS}")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if _KERNELS in markdown:
        return markdown.replace(_KERNELS, _kernels())
    if _PLACEHOLDER not in markdown:
        return markdown
    public = importlib.import_module("ctxsdk._public")
    parts = []
    for namespace in public.NAMESPACES:
        module = importlib.import_module(namespace)
        parts.append(f"## `{namespace}`\n\n{_first_line(module.__doc__)}\n")
        if namespace == "ctxsdk":
            parts.append("The top level re-exports these names from their namespaces:\n")
            parts.append(_top_level() + "\n")
        elif namespace == "ctxsdk.errors":
            parts.append("The error tree is drawn and documented on the [Errors](errors.md) page.")
        else:
            parts.append(f"::: {namespace}\n{_OPTIONS}")
    return markdown.replace(_PLACEHOLDER, "\n".join(parts))
