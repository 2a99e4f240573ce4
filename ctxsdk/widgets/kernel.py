"""The widgets' kernel: where the built front end lives, for the benchmarks' browser pages.

``ctxsdk.widgets`` is what a user needs (the four widgets); this second face holds what a
page that renders a widget outside Jupyter reads.
"""

from __future__ import annotations

from ._bundle import static_dir

__all__ = ["static_dir"]
