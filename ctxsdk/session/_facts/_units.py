"""Quantities in settings: a number (digits or a small English number word) and its unit,
normalized to one name per unit ("60s", "60 sec", "60 seconds", "60秒" are all 60 seconds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["UNITS", "quantity"]


def _table() -> Mapping[str, str]:
    groups = {
        "milliseconds": "ms msec msecs millisecond milliseconds 毫秒",
        "seconds": "s sec secs second seconds 秒 秒钟",
        "minutes": "m min mins minute minutes 分钟",
        "hours": "h hr hrs hour hours 小时 个小时",
        "days": "d day days 天 日",
        "weeks": "wk wks week weeks 周 星期",
        "bytes": "b byte bytes 字节",
        "KB": "kb kib kilobyte kilobytes k",
        "MB": "mb mib megabyte megabytes",
        "GB": "gb gib gigabyte gigabytes g",
        "TB": "tb tib terabyte terabytes",
        "%": "% percent pct 百分之",
        "px": "px pixel pixels 像素",
        "tokens": "token tokens tok",
        "characters": "char chars character characters 字符 个字符",
        "lines": "line lines 行",
        "words": "word words",
        "spaces": "space spaces 个空格 空格",
        "connections": "connection connections conns 个连接",
        "workers": "worker workers",
        "threads": "thread threads 个线程 线程",
        "processes": "process processes 个进程 进程",
        "retries": "retry retries 次重试",
        "attempts": "attempt attempts",
        "times": "time times 次",
        "requests": "request requests req reqs",
        "items": "item items 个条目 条",
        "rows": "row rows",
        "files": "file files 个文件",
        "replicas": "replica replicas",
        "cores": "core cores 核",
        "steps": "step steps 步",
        "epochs": "epoch epochs",
        "columns": "col cols column columns 列",
    }
    return MappingProxyType({u: name for name, us in groups.items() for u in us.split()})


UNITS: Mapping[str, str] = _table()
# "m", "k", "g" and "b" are words of their own too: only attached to a number ("5m" is five
# minutes, "512k" 512 KB) do they count as units.
_ATTACHED_ONLY = frozenset({"m", "k", "g", "b"})

_NUMBER_WORDS: Mapping[str, int] = MappingProxyType(
    {
        w: i
        for i, w in enumerate(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
        )
    }
    | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100}
    | {"three_hundred": 300, "thousand": 1000}
)

_QTY = re.compile(
    r"^(?P<num>[-+]?\d{1,15}(?:[.,]\d{1,15})?|[-+]?\.\d{1,15})(?P<sp>\s*)(?P<unit>%|[^\W\d_]{1,12}"
    r"(?:\s[^\W\d_]{1,12})?)?$"
)


def quantity(text: str) -> tuple[str, str | None] | None:
    """``(number, unit or None)`` when ``text`` is a number with an optional known unit
    ("60s" -> ("60", "seconds"), "512 MB" -> ("512", "MB"), "sixty" -> ("sixty", None)),
    else None. Number words are kept as written (MergeBench says "sixty seconds")."""
    t = text.strip()
    low = t.lower()
    words = low.split()
    if words and words[0] in _NUMBER_WORDS:
        if len(words) == 1:
            return t, None
        unit = UNITS.get(" ".join(words[1:]))
        if unit is not None and " ".join(words[1:]) not in _ATTACHED_ONLY:
            return t.split()[0], unit
        return None
    m = _QTY.match(t)
    if m is None:
        return None
    num = m.group("num")
    raw_unit = m.group("unit")
    if raw_unit is None:
        return num, None
    key = raw_unit.lower()
    unit = UNITS.get(key)
    if unit is None:
        return None
    if key in _ATTACHED_ONLY and m.group("sp"):
        return None
    return num, unit
