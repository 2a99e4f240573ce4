"""Pausing the cyclic garbage collector around bulk allocation.

Decoding a log allocates millions of small dicts and lists that form no cycles; each
allocation burst would otherwise trigger full collections that rescan all of them, which
costs several times the parse itself. The previous GC state is always restored.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
