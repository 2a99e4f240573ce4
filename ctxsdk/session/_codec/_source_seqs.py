"""``sourceEventSeqs`` as the log stores them: runs of 3+ consecutive seqs written as
``[start,end]`` pairs, and expanded and checked (earlier events only, no duplicates) on read.
"""

from __future__ import annotations

import itertools
from typing import Any

from ...errors import SessionFormatError


def decode_source_seqs(value: Any, seq: int) -> list[int]:
    """Expand ``[start,end]`` range pairs and check: unique, all < seq, increasing if ranged."""
    if not isinstance(value, list):
        raise SessionFormatError("sourceEventSeqs must be an array", seq=seq)
    out: list[int] = []
    ranged = False
    for item in value:
        if type(item) is int:
            out.append(item)
        elif (
            isinstance(item, list)
            and len(item) == 2
            and type(item[0]) is int
            and type(item[1]) is int
            and item[0] <= item[1]
        ):
            if item[0] < 0 or item[1] >= seq:  # before expanding: a range may be huge
                raise SessionFormatError("sourceEventSeqs must cite earlier events only", seq=seq)
            ranged = True
            out.extend(range(item[0], item[1] + 1))
        else:
            raise SessionFormatError(
                f"sourceEventSeqs member {item!r} is not a seq or range", seq=seq
            )
    if out:
        if min(out) < 0 or max(out) >= seq:
            raise SessionFormatError("sourceEventSeqs must cite earlier events only", seq=seq)
        if ranged:
            if any(b <= a for a, b in itertools.pairwise(out)):
                raise SessionFormatError("ranged sourceEventSeqs must increase strictly", seq=seq)
        elif len(set(out)) != len(out):
            raise SessionFormatError("sourceEventSeqs has duplicates", seq=seq)
    return out


def encode_source_seqs(seqs: list[int]) -> list[int | list[int]]:
    """Runs of 3+ consecutive seqs become ``[start,end]`` pairs (increasing lists only)."""
    if any(b <= a for a, b in itertools.pairwise(seqs)):
        return list(seqs)
    out: list[int | list[int]] = []
    i, n = 0, len(seqs)
    while i < n:
        j = i
        while j + 1 < n and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i >= 2:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i : j + 1])
        i = j + 1
    return out
