"""The widgets' built front end: one ES module and one stylesheet per widget.

The sources are ES modules and CSS in ``widgets/`` at the repository root. esbuild bundles
each widget at BUILD time (``scripts/build_widgets.mjs``, run by ``make widgets`` and by the
hatch build hook in ``hatch_build.py`` for wheel and editable installs) into
``ctxsdk/widgets/_static/NAME.js`` and ``NAME.css``, which ship in the wheel. This module only
reads those files; nothing is assembled at import time.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataMissing

__all__ = ["bundle", "bundle_css", "static_dir", "static_files"]

_HOW = (
    "build them with `make widgets` in a source checkout (needs node >= 18 and npm: it runs "
    "`npm ci` and `node scripts/build_widgets.mjs`), or reinstall ctxsdk"
)


def static_dir(package: Path | None = None) -> Path:
    """The directory of the built widgets, ``ctxsdk/widgets/_static``. ``package`` is the
    ``ctxsdk`` directory to look in (default: this one). Raises ``DataMissing`` when the
    widgets were never built."""
    here = (package or Path(__file__).resolve().parent.parent).resolve()
    out = here / "widgets" / "_static"
    if not out.is_dir():
        raise DataMissing(f"the widgets' front end is not built: {out} is missing; {_HOW}")
    return out


def _read(name: str) -> str:
    path = static_dir() / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataMissing(
            f"the widgets' front end is not built: {path} is missing; {_HOW}"
        ) from None


def bundle(entry: str) -> str:
    """The built ES module of widget ``entry`` (``"context_tree.js"``): anywidget's ``_esm``."""
    return _read(entry)


def bundle_css(entry: str) -> str:
    """The built stylesheet of widget ``entry`` (``"context_tree.css"``: the shared theme and
    panel styles, then the widget's own): anywidget's ``_css``."""
    return _read(entry)


def static_files(name: str) -> list[Path]:
    """The built files widget ``name`` is shown from (for tests and docs): ``name.js`` and
    ``name.css``."""
    root = static_dir()
    return [root / f"{name}.js", root / f"{name}.css"]
