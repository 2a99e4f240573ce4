"""The display protocol: text and HTML from one object, in the manner of rich."""

from __future__ import annotations

from typing import Any

from ._html import wrap

__all__ = ["Rendered", "shown_text"]


def shown_text(text: str) -> str:
    """``text`` fit to print, or to hand to code that needs valid Unicode (polars, a
    tokenizer in Rust): each lone UTF-16 surrogate (a harness log can hold one, see
    ``ctxsdk.session._codec.loads_line``) becomes U+FFFD, as a browser shows it. The
    session's own text keeps it; ``save`` writes it back as its ``\\udXXX`` escape."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


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
        return shown_text(self._text_())

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **_: Any
    ) -> dict[str, str]:
        return {
            "text/plain": shown_text(self._text_()),
            "text/html": shown_text(wrap(self._html_())),
        }

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's terminal shell
        p.text(repr(self) if cycle else shown_text(self._text_()))
