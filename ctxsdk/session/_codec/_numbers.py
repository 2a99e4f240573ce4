"""JSON numbers as JavaScript reads them: an integral float (``1.0``) is the integer, as the
harness's ``JSON.parse`` leaves it, so the reader accepts it wherever an integer belongs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

# An integral JSON number written with a fraction (1.0, 30.00, as Python's json and orjson
# write floats), where it ends: JavaScript reads it as the integer, so the harness does.
# Spelled ``\.00*``, not ``\.0+``: the engine then scans for the two-byte prefix ``.0`` and
# tries a match only there, not at every ``.`` of the text (15% less for a whole log).
_INTEGRAL_FRACTION = re.compile(rb"\.00*[\s,}\]]")
_MAX_SAFE_INT = 2**53 - 1


def _js_number(value: float) -> int | float:
    """A float as JavaScript's ``JSON.parse`` leaves it: integral and within the safe range,
    an integer (``1.0`` is ``1``); otherwise unchanged (``-0.0`` too, which the harness
    refuses wherever it wants a count)."""
    if not value.is_integer() or not -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return value
    if value == 0 and math.copysign(1.0, value) < 0:
        return value
    return int(value)


def js_numbers(value: Any) -> Any:
    """``value`` with every integral float inside it an ``int`` (in place for containers).

    JSON has one number type: the harness (JavaScript) reads ``"turn": 1.0`` as the integer
    1 and accepts it wherever an integer belongs, so the reader does the same."""
    t = type(value)
    if t is float:
        return _js_number(value)
    if t is dict:
        for k, v in value.items():
            tv = type(v)
            if tv is float or tv is dict or tv is list:
                value[k] = js_numbers(v)
    elif t is list:
        for i, v in enumerate(value):
            tv = type(v)
            if tv is float or tv is dict or tv is list:
                value[i] = js_numbers(v)
    return value


def _js_rows(lines: Sequence[bytes | memoryview], rows: list[Any]) -> None:
    """Integral floats made integers in the rows whose line may hold one (a cheap byte test
    picks them; a match inside a string only costs a walk)."""
    find = _INTEGRAL_FRACTION.search
    for i, row in enumerate(rows):
        if find(lines[i]):
            rows[i] = js_numbers(row)
