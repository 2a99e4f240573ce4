"""``ctxsdk cache``: where the embedding cache is, how much it holds and its bound; ``--clear``
empties it."""

from __future__ import annotations

import argparse
import json

__all__ = ["cmd_cache"]

_MIB = 1 << 20


def cmd_cache(args: argparse.Namespace) -> int:
    from ..session.kernel import default_cache

    cache = default_cache()
    if cache is None:
        print("embedding cache: off (CTXSDK_EMBEDDING_CACHE=0, or no cache directory)")
        return 0
    cleared = cache.clear() if args.clear else None
    vectors, used = len(cache), cache.bytes_used()
    if args.json:
        out = {
            "path": str(cache.path),
            "vectors": vectors,
            "bytes_used": used,
            "max_bytes": cache.max_bytes,
        }
        if cleared is not None:
            out["cleared"] = cleared
        print(json.dumps(out))
        return 0
    bound = "no bound" if cache.max_bytes is None else f"bound {cache.max_bytes / _MIB:,.0f} MiB"
    if cleared is not None:
        print(f"cleared {cleared:,} vector(s)")
    print(f"embedding cache: {cache.path}")
    print(f"  {vectors:,} vector(s), {used / _MIB:,.1f} MiB used ({bound})")
    return 0
