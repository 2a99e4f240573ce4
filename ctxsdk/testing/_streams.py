"""The timed stream of one model reply, as a provider streams it: a few words or JSON tokens
per delta, seeded gaps between them.

v2+ logs embed the stream in ``assistant/message`` as runs (``text-chunks``,
``tool-call-chunks``, ...); v0/v1 logs write one top-level ``assistant/chunk`` event per
chunk, which ``stream_records(expand=True)`` gives record by record.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from ctxsdk.session.kernel import copy_json

from ._clock import Clock

__all__ = ["clone", "stream_records"]

JsonDict = dict[str, Any]

_TEXT_PIECE = re.compile(r"\s*\S{1,6}|\s+$")
_ARGS_PIECE = re.compile(r'\s*(?:[{}\[\]:,"]|[^{}\[\]:,"\s]{1,8})|\s+$')
_MAX_DELTAS = 48


def clone(obj: Any) -> Any:
    """A deep copy of JSON data (an orjson round trip keeps key order; lone surrogates too)."""
    return copy_json(obj)


def _split(text: str, pattern: re.Pattern[str], rng: random.Random) -> list[str]:
    """Deltas as a provider streams them: a few words or JSON tokens at a time."""
    pieces = pattern.findall(text)
    if "".join(pieces) != text:  # the patterns cover every character; keep it honest
        pieces = [text]
    groups: list[str] = []
    per = max(1, math.ceil(len(pieces) / _MAX_DELTAS))
    i = 0
    while i < len(pieces):
        n = per * rng.choice((1, 1, 2, 2, 3))
        groups.append("".join(pieces[i : i + n]))
        i += n
    return groups or [""]


def _dts(n: int, rng: random.Random) -> list[int]:
    return [rng.choice((0, 0, 1, 1, 1, 2, 14, 27, 29, 33, 41)) for _ in range(n)]


def stream_records(
    blocks: list[tuple[str, JsonDict]],
    usage: JsonDict,
    finish: JsonDict,
    *,
    rng: random.Random,
    clock: Clock,
    expand: bool,
) -> tuple[list[JsonDict], int]:
    """The timed stream records of a reply made of ``blocks`` (``(kind, block)`` pairs) and
    the time it ended; the clock is moved to that time. ``expand`` gives one chunk record per
    delta (the v0/v1 shape) instead of runs (v2+)."""
    t = clock.tick(600, 2400)  # time to first token
    records: list[JsonDict] = []

    def chunk(c: JsonDict) -> None:
        nonlocal t
        records.append({"type": "chunk", "time": t, "chunk": c})
        t += rng.choice((0, 0, 1, 2))

    for index, (kind, block) in enumerate(blocks):
        chunk({"type": "block-start", "index": index, "blockType": kind})
        if kind == "tool-call":
            deltas = ["", *_split(block["arguments"], _ARGS_PIECE, rng)]
        else:
            deltas = _split(block["text"], _TEXT_PIECE, rng)
        dts = _dts(len(deltas) - 1, rng)
        if expand:
            for k, piece in enumerate(deltas):
                if k:
                    t += dts[k - 1]
                if kind == "tool-call":
                    c: JsonDict = {
                        "type": "tool-call-delta",
                        "index": index,
                        "id": block["id"],
                        "name": block["name"],
                        "argumentsDelta": piece,
                    }
                else:
                    c = {"type": f"{kind}-delta", "index": index, "text": piece}
                records.append({"type": "chunk", "time": t, "chunk": c})
        else:
            run: JsonDict = {"type": f"{kind}-chunks", "time0": t, "index": index, "dt": dts}
            if kind == "tool-call":
                run.update(id=block["id"], name=block["name"], args=deltas)
            else:
                run["texts"] = deltas
            records.append(run)
            t += sum(dts)
        t += rng.randint(1, 30)
    for index, (_, block) in enumerate(blocks):
        chunk({"type": "block-end", "index": index, "block": clone(block)})
    chunk({"type": "usage", "usage": dict(usage)})
    chunk({"type": "finish", "reason": finish})
    t_end = t + rng.randint(1, 4)
    clock.advance_to(t_end)
    return records, t_end
