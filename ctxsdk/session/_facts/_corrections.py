"""Corrections as polarity: "it's not X; it's Y" denies X and asserts Y of one key.

Shapes read (the user's words; English case-insensitive, Chinese):

==========================================  ===============================================
"it's not X, it's Y" / "it's not X; it's Y"  X denied, Y asserted (two sentences "it's not
"it's not X but Y" / "not X but Y"           X. it's Y." are joined by the text reader)
"it's Y, not X" / "it's Y (not X)"           "no," before any of them changes nothing
"S is not X but Y" / "S is Y, not X"
"不是X，是Y" / "不是X而是Y" / "是Y，不是X"   also with a subject: "S不是X，是Y"
==========================================  ===============================================

The key says whose value it is, read in this order: the values' own domain when both have
one ("it's not npm, it's pnpm": ``package manager``); for two data formats (``_formats``)
``<thing> format``, the thing being the sentence's subject or, for a pronoun, what the
agent's last turn said X of (``_topic``: "it's not jsonl file" after a turn that proposed
``~/.codemie/metrics/{sessionId}.jsonl`` is ``metric format``); otherwise the subject
itself when it names a setting ("the port is not 8080, it's 8000": ``port``). No key, no
fact: a correction whose subject is a pronoun and whose values name no format or domain
("it's not a bug, it's a feature") stays an instruction only.
"""

from __future__ import annotations

import re

from .._redact import memo_read
from ._formats import format_key, format_of
from ._keys import CJK, KeyPhrase, domain_of, is_setting_head, key_phrase
from ._prefilter import prefiltered
from ._settings import Setting
from ._topic import topic_of

__all__ = ["correction"]

_I = re.I
_PRONOUN = r"(?:it|i[a-z]|[a-z]t|this|that|they|these|those)"  # "ir's": a slip of "it's"
_BE = r"(?:'s|'re|\s+is|\s+are|\s+was|\s+were)"
_NOUNS = r"(?:the\s+|our\s+|this\s+|that\s+)?[a-z][\w.-]*(?:\s[a-z][\w.-]*){0,3}?"
_SUBJ = rf"(?P<subj>{_PRONOUN}|{_NOUNS})"
_NO = r"(?:(?:no|nope|actually|wrong)\s*[,.!:;]?\s+)?"
_AGAIN = rf"(?:(?:but\s+|rather\s+)?(?:(?:{_PRONOUN}){_BE}\s+|(?:is|are)\s+)?)"
_EN: tuple[re.Pattern[str], ...] = (
    # "it's not X, it's Y" / "S is not X but Y" / "it's not X; Y"
    re.compile(
        rf"^{_NO}{_SUBJ}{_BE}\s+not\s+(?P<x>[^,;()]+?)\s*(?:[,;]\s*|\s+but\s+|\s*[-–—]+\s*)"
        rf"{_AGAIN}(?P<y>[^;]+)$",
        _I,
    ),
    # "it's Y, not X" / "it's Y (not X)" / "S is Y rather than X"
    re.compile(
        rf"^{_NO}{_SUBJ}{_BE}\s+(?P<y>[^,;()]+?)\s*(?:,\s*(?:and\s+)?not|\(\s*not"
        r"|,?\s+rather than|,?\s+instead of)\s+(?P<x>[^,;()]+?)\)?$",
        _I,
    ),
    # "not X but Y"
    re.compile(r"^{_NO}not\s+(?P<x>[^,;]+?),?\s+but\s+(?P<y>.+)$".replace("{_NO}", _NO), _I),
)
_ZH = (
    re.compile(
        r"^(?P<subj>[^，,。；;]{0,12}?)(?:不是|并不是|并非)(?P<x>[^，,。；;]+?)[，,；;]?\s*(?:而)?是"
        r"(?P<y>[^，,。；;]+)"
    ),
    re.compile(
        r"^(?P<subj>[^，,。；;]{0,12}?)是(?P<y>[^，,。；;]+?)[，,；;]?\s*(?:而)?(?:不是|并不是|而非|并非)"
        r"(?P<x>[^，,。；;]+)"
    ),
)
_ZH_PRONOUN = re.compile(r"^(?:它|这|那|这个|那个|它们|这些|那些)?$")
_ZH_FILE = re.compile(r"(?:文件|格式)$")
_CUT = re.compile(
    r"\s+(?:with|and|which|that|because|since|so|where|there|for|in|on|at|as|to|from|like"
    r"|containing|holding)\b.*$|[.!)]+$",
    _I,
)
_DET = re.compile(r"^(?:an?|the|just|only|really|actually|simply|still)\s+", _I)
_MAX_WORDS = 4


def _value(raw: str) -> str | None:
    v = raw.strip().strip("`'\"")
    if CJK.search(v):
        v = v.strip("。！!. ")
        return v if 0 < len(v) <= 16 else None
    v = _CUT.sub("", v).strip()
    while _DET.match(v):
        v = _DET.sub("", v, count=1)
    v = v.strip("`'\" .")
    return v if v and len(v.split()) <= _MAX_WORDS and not re.search(r"[=(){}\[\]]", v) else None


def _bare(value: str) -> str:
    """The value without a trailing file word both sides share ("json file" -> "json")."""
    return _ZH_FILE.sub("", re.sub(r"\s+(?:files?|documents?|format)$", "", value, flags=_I))


def _is_pronoun(subj: str) -> bool:
    s = subj.strip().lower()
    return bool(re.fullmatch(_PRONOUN, s)) or bool(_ZH_PRONOUN.match(s))


def _key(subj: str, x: str, y: str, previous: str) -> KeyPhrase | str | None:
    dom = domain_of(_bare(x))
    if dom is not None and dom == domain_of(_bare(y)):
        return dom
    fx, fy = format_of(x) or format_of(_bare(x)), format_of(y) or format_of(_bare(y))
    pronoun = _is_pronoun(subj)
    if fx is not None and fy is not None and fx.lower() != fy.lower():
        thing = topic_of(previous, fx.lower()) if pronoun else subj
        return format_key(thing) if thing else None
    if pronoun:
        return None
    key = key_phrase(subj)
    return key if key is not None and is_setting_head(key) else None


def _match(s: str) -> re.Match[str] | None:
    for p in _ZH if CJK.search(s) else _EN:
        m = p.match(s)
        if m is not None:
            return m
    return None


def correction(sentence: str, *, previous: str = "") -> Setting | None:
    """The setting a user's correction states (Y asserted, X in ``rejected``), or None.
    ``previous`` is the agent's last turn, where a pronoun's topic is looked up."""
    s = " ".join(sentence.split()).replace("\u2019", "'").rstrip(" .!。！")
    if len(s) > 240 or "?" in s or "？" in s:
        return None
    m = memo_read("correction", s, _match)  # a sentence said again: matched once
    if m is None:
        return None
    x, y = _value(m["x"]), _value(m["y"])
    subj = (m.groupdict().get("subj") or "").strip()
    if x is None or y is None or x.casefold() == y.casefold():
        return None
    key = _key(subj, x, y, previous)
    if key is None:
        return None
    k, shown = (key.key, key.shown) if isinstance(key, KeyPhrase) else (key, key)
    same_kind = format_of(_bare(x)) is not None or domain_of(_bare(x)) is not None
    vx, vy = (_bare(x), _bare(y)) if same_kind else (x, y)
    return Setting(kind="setting", key=k, shown=shown, value=vy, rejected=(vx,))


# every English reading holds "not" (or "rather than" / "instead of"): most sentences hold
# none, and the literal test answers them at once (``_prefilter``: the same answers)
_EN = tuple(prefiltered(p) for p in _EN)
