"""The display protocol: text and HTML from one object, in the manner of rich."""

from __future__ import annotations

from typing import Any

from ._html import wrap

__all__ = ["Rendered"]


class Rendered:
    """Mixin for results: define ``_text_`` (multi-line, stable: no addresses, no times) and
    ``_html_`` (a fragment; it is wrapped in the themed root here).

    ``repr()`` stays the class's own one-liner (for lists and debuggers); ``str()`` and a
    notebook's ``text/plain`` are the full text form.
    """

    __slots__ = ()

    def _text_(self) -> str:
        return repr(self)

    def _html_(self) -> str:
        from ._html import esc

        return f"<pre class='cx-pre'>{esc(self._text_())}</pre>"

    def __str__(self) -> str:
        return self._text_()

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **_: Any
    ) -> dict[str, str]:
        return {"text/plain": self._text_(), "text/html": wrap(self._html_())}

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's terminal shell
        p.text(repr(self) if cycle else self._text_())
