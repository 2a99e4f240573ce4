"""The base of every ctxsdk widget: strict constructors, a stable repr, a request channel.

Widgets view what an engine returns; this class holds none of that logic. It gives each
widget three things:

- **Strict keywords.** An unknown keyword argument raises ``TypeError`` naming the close
  matches and every keyword the widget accepts (a misspelt ``heigth=`` would otherwise be
  ignored by traitlets).
- **A deterministic ``__repr__``.** ``text/plain`` is what nbval compares, so it never holds a
  memory address; subclasses say what they show through ``_repr_fields``.
- **A static picture.** Beside the widget view, the output holds an HTML picture of what the
  widget shows (the viewed result's own HTML under a heading). A host that cannot draw the
  widget shows it: JupyterLab before a run (it does not trust the saved widget view, and the
  kernel that held the widget's state is gone), GitHub, a static export.
- **Requests from the front end.** ``{id, type, ...}`` arrives as a custom message; the
  method registered for ``type`` with ``@handler`` runs, and ``{id, ok: true, result}``
  goes back, or ``{id, ok: false, error: {type, message}}`` when it raised. A handler's
  error is the reply, never a traceback lost in the comm.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

import anywidget
import traitlets

from .._display import Rendered, esc, wrap
from ..session.kernel import neutralize

__all__ = ["MAX_TEXT", "BaseWidget", "handler", "panel_text"]

_F = TypeVar("_F", bound=Callable[..., Any])

MAX_TEXT = 200_000  # characters of one text a widget's panel receives


def panel_text(text: str, limit: int = MAX_TEXT) -> str:
    """A message's text as a panel shows it: its controls made visible (a terminal's ``\x1b``
    escape, a bidi override: never a box, never acting on the page), cut past ``limit``
    characters with a note of how many more."""
    text = neutralize(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def handler(name: str) -> Callable[[_F], _F]:
    """Register the decorated method as the handler of front-end requests of type ``name``.

    It is called with the request's other fields as keyword arguments and returns a JSON
    value (the reply's ``result``)."""

    def mark(fn: _F) -> _F:
        fn.__cx_handler__ = name  # type: ignore[attr-defined]
        return fn

    return mark


class BaseWidget(anywidget.AnyWidget):
    """An anywidget with strict keywords, a stable repr and request handlers."""

    _handlers: ClassVar[dict[str, str]] = {}

    revision = traitlets.Int(0).tag(sync=True)
    """Counts the changes of what the widget shows; a request made against one view (an
    apply after a preview) says which revision it saw."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                name = getattr(value, "__cx_handler__", None)
                if isinstance(name, str):
                    found[name] = attr
        cls._handlers = found

    def __init__(self, **kwargs: Any) -> None:
        self._check_keywords(kwargs)
        super().__init__(**kwargs)
        self.last_request: dict[str, Any] | None = None  # type, ok, seconds of the latest
        self.on_msg(self._on_custom_msg)

    @classmethod
    def _keywords(cls) -> list[str]:
        """The keywords the constructor accepts: its own, and the traits tagged ``option``."""
        import inspect

        own = [
            p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
        ]
        return sorted(set(own) | set(cls.class_traits(option=True)))

    @classmethod
    def _check_keywords(cls, kwargs: Mapping[str, Any]) -> None:
        accepted = cls._keywords()
        traits = set(cls.class_traits(sync=True))
        for key in kwargs:
            if key in accepted or (key in traits and key in _WIDGET_TRAITS):
                continue
            close = difflib.get_close_matches(key, accepted, n=3)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise TypeError(
                f"{cls.__name__}() got an unexpected keyword argument {key!r}{hint} "
                f"It accepts: {', '.join(accepted)}"
            )

    # --- repr --------------------------------------------------------------------------------

    def _repr_fields(self) -> list[str]:
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._repr_fields())})"

    # --- the static picture ------------------------------------------------------------------

    def _subject(self) -> Rendered | None:
        """The result the widget views, whose HTML is its picture: by default the first
        result the constructor stored (a fold, a workspace, a merge)."""
        for value in vars(self).values():
            if isinstance(value, Rendered):
                return value
        return None

    def _picture_html(self) -> str:
        """A static picture of the widget: its name and text form, then the viewed
        result's HTML (a fragment; ``_repr_mimebundle_`` wraps it)."""
        shown = ", ".join(self._repr_fields())
        head = (
            f"<div class='cx-title'>{esc(type(self).__name__)} "
            f"<span class='cx-muted'>{esc(shown)}</span></div>"
            "<div class='cx-muted'>A static picture: run the notebook to use the widget.</div>"
        )
        try:
            body = self._picture_body()
        except Exception as err:  # a picture never stops the widget from showing
            body = f"<div class='cx-muted'>no picture: {esc(type(err).__name__)}</div>"
        return head + (f"<div class='cx-section'>{body}</div>" if body else "")

    def _picture_body(self) -> str:
        """The picture under the heading: the viewed result's own HTML."""
        subject = self._subject()
        return subject._html_() if subject is not None else ""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, and its static picture as ``text/html`` for a host that cannot
        draw the view (a trusted, running notebook prefers the view)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, None)
        data = {**data, "text/html": wrap(self._picture_html())}
        return data if meta is None else (data, meta)

    # --- requests ----------------------------------------------------------------------------

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        reply = self.dispatch(content)
        if reply is not None:
            self.send(reply)

    def dispatch(self, content: Any) -> dict[str, Any] | None:
        """Run the handler a front-end request names and return the reply to send.

        ``content`` is ``{id, type, ...}``; a message without a string ``id`` is no request
        and gets no reply. The reply is ``{id, ok: true, result}`` or ``{id, ok: false,
        error: {type, message}}``."""
        if not isinstance(content, dict) or not isinstance(content.get("id"), str):
            return None
        rid = content["id"]
        kind = content.get("type")
        args = {k: v for k, v in content.items() if k not in ("id", "type")}
        t0 = time.perf_counter()
        try:
            attr = self._handlers.get(kind) if isinstance(kind, str) else None
            if attr is None:
                known = ", ".join(sorted(self._handlers))
                raise LookupError(f"{type(self).__name__} has no request {kind!r}; known: {known}")
            result = getattr(self, attr)(**args)
        except Exception as err:
            self.last_request = {"type": kind, "ok": False, "seconds": time.perf_counter() - t0}
            return {
                "id": rid,
                "ok": False,
                # an error may quote what was asked (a name, a query): shown, never acted on
                "error": {"type": type(err).__name__, "message": neutralize(str(err))},
            }
        self.last_request = {"type": kind, "ok": True, "seconds": time.perf_counter() - t0}
        return {"id": rid, "ok": True, "result": result}

    @handler("ping")
    def _ping(self) -> dict[str, Any]:
        """A no-op request: the channel's round trip without any work."""
        return {}


# Traits every ipywidget has (layout, tabbable, tooltip, ...): accepted, never listed.
_WIDGET_TRAITS = frozenset(anywidget.AnyWidget.class_traits(sync=True))
