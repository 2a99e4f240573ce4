"""Progress reporting for long work: a ``progress(done, total, what)`` callback.

Functions that take a while accept ``progress=``; ``None`` means a tqdm bar when stderr is a
terminal or a notebook, and silence otherwise (CI logs stay readable).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "resolve_progress"]

Progress = Callable[[int, int, str], None]


def _silent(done: int, total: int, what: str) -> None:
    return None


class _TqdmProgress:
    def __init__(self) -> None:
        self._bars: dict[str, Any] = {}

    def __call__(self, done: int, total: int, what: str) -> None:
        from tqdm.auto import tqdm

        bar = self._bars.get(what)
        if bar is None:
            bar = self._bars[what] = tqdm(total=total, desc=what, leave=False, file=sys.stderr)
        bar.n = min(done, total)
        bar.refresh()
        if done >= total:
            bar.close()


def _in_notebook() -> bool:
    """A Jupyter kernel is running us (not merely importable, as under nbval's pytest)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ip = get() if callable(get) else None
    return type(ip).__name__ == "ZMQInteractiveShell"


def resolve_progress(progress: Progress | bool | None) -> Progress:
    """The callback to use: the given one, a tqdm bar (``None`` on a terminal), or silence."""
    if callable(progress):
        return progress
    if progress is False:
        return _silent
    interactive = progress is True or sys.stderr.isatty() or _in_notebook()
    return _TqdmProgress() if interactive else _silent
