"""Redaction: credentials withheld from text before anything reads, prompts or stores it.

Merge and Memory call :func:`redact` (or :func:`redact_message`) on every text, reasoning,
tool-call argument and tool-result block *before* any extraction, any model prompt and any
storage, so a key pasted into a session never becomes a claim value, a prompt or a row.

Five finders run over the text and their spans are merged (an overlap takes the most
specific kind); each span is replaced by ``[REDACTED:<kind>]``:

* **private keys** (``_secret_shapes.find_pem``): PEM, OpenSSH and PGP private key blocks,
  also JSON-escaped (a service account file) and cut off before their END line;
* **provider shapes** (``find_providers``): the key formats the public secret scanners
  document — AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI, Anthropic, Hugging Face,
  npm, PyPI, SendGrid, Twilio, … (``REDACTION_KINDS`` lists them) — and JWTs; a short prefix
  that could begin an identifier (``hf_``, ``sk-``) also needs a random-looking body;
* **connection strings** (``find_connection_strings``): the password in
  ``scheme://user:password@host`` and in ``Password=…;`` / ``AccountKey=…`` strings;
* **labelled values** (``_secret_labels.find_labelled``): the value assigned to a key that
  names a credential, in code, config, shell, JSON, YAML, HTTP headers, XML, ``.netrc``,
  English and Chinese (``password = "hunter2 with spaces!"``, ``db_token: ab$c…``,
  ``数据库密码：…``); the key is kept;
* **credentials known by where they sit** (``_secret_contexts.find_in_context``): bearer and
  basic auth headers, session cookies, passwords on command lines (``curl -u``, ``sshpass``,
  ``mysql -p``, ``docker login -p``, ``redis-cli -a``, ``openssl pass:``), ``.netrc`` and
  ``.pgpass`` lines, XML settings, a credential's name and value passed to a call, and prose
  (``the password for the office is …``).

Placeholders are left (``<your-key>``, ``${TOKEN}``, ``xxxx``, ``AKIA…EXAMPLE``), and so are
hashes, UUIDs, ordinary words about tokens and passwords, and code that names a credential
without holding one (``max_tokens = 4096``, ``password = getpass()``) or obtains one when it
runs (``TOKEN=$(gh auth token)``, ``$pw = Read-Host -AsSecureString``, ``$env:X``). ``ctxsdk bench
redact`` measures all of it on a corpus built from the scanners' documented formats. A
secret of an unknown shape with no label still passes: redaction lowers the risk, it is
not a guarantee.

Every pattern is linear (possessive, bounded quantifiers; anchored starts; one END search
per END). A replacement can open a boundary for a token next to it, so passes repeat until
one finds nothing: the result is deterministic and idempotent (redacting a redacted text
changes nothing and counts nothing), and any ``str`` is accepted, lone surrogates included.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from ..errors import InvalidArgument
from ._secret_contexts import find_in_context, may_place
from ._secret_labels import find_labelled, may_label
from ._secret_shapes import (
    PROVIDER_KINDS,
    Span,
    find_connection_strings,
    find_pem,
    find_providers,
    folded,
    may_shape,
)

__all__ = [
    "FAMILIES",
    "MARKER",
    "REDACTION_KINDS",
    "REDACTION_RULES_VERSION",
    "Redaction",
    "redact",
    "redact_json",
    "redact_message",
    "redaction_memo",
    "withheld",
    "withheld_notice",
]

REDACTION_KINDS: tuple[str, ...] = (
    "private-key",
    *PROVIDER_KINDS,
    "connection-string",
    "labelled",
)
REDACTION_RULES_VERSION = 5  # raised when the rules withhold more: stored text may predate them

# Which family each kind belongs to, for reports (``bench redact``) and refusals.
FAMILIES: Mapping[str, str] = MappingProxyType(
    {
        "private-key": "private-key",
        "jwt": "jwt",
        "connection-string": "connection-string",
        "labelled": "labelled",
        **{k: "provider" for k in PROVIDER_KINDS if k != "jwt"},
    }
)

# When two findings overlap, the more specific kind names the merged span.
_RANK = {"private-key": 0, "labelled": 3, "connection-string": 2}


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
"""What ``_marker`` writes in place of a secret; group 1 is the kind."""


def withheld_notice(count: int) -> str:
    """The line a rendered block ends with: ``"1 credential withheld"``, ``"3 credentials
    withheld"``; empty for 0."""
    if count <= 0:
        return ""
    return f"{count} credential{'' if count == 1 else 's'} withheld"


@dataclass(frozen=True)
class Redaction:
    """A redacted text and how many secrets of each kind were withheld from it.

    ``counts`` holds only the kinds found, in ``REDACTION_KINDS`` order. A ``Redaction`` is
    true when something was withheld; ``str()`` gives the redacted text.
    """

    text: str
    counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def withheld(self) -> int:
        """How many secrets were replaced, of every kind."""
        return sum(self.counts.values())

    @property
    def notice(self) -> str:
        """``"N credential(s) withheld"`` (pluralised), or ``""`` when nothing was."""
        return withheld_notice(self.withheld)

    def __bool__(self) -> bool:
        return self.withheld > 0

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Redaction):
            return NotImplemented
        return self.text == other.text and dict(self.counts) == dict(other.counts)

    def __hash__(self) -> int:
        return hash((self.text, tuple(self.counts.items())))

    def __repr__(self) -> str:
        kinds = ", ".join(f"{k}={n}" for k, n in self.counts.items())
        return f"Redaction(withheld={self.withheld}{', ' + kinds if kinds else ''})"


def _spans(text: str) -> list[Span]:
    """Every finding, overlaps merged: a merged span takes the most specific kind."""
    lower = text.lower()  # lowered once for every finder's word checks
    low = folded(text, lower)
    if low is not None and not (
        may_shape(text, low) or may_label(text, lower) or may_place(text, low)
    ):
        return []  # no finder's word, sign or run is in the text: most short texts
    found = [*find_pem(text), *find_providers(text)]
    found.extend(find_connection_strings(text, low))
    found.extend(find_labelled(text, lower))
    found.extend(find_in_context(text, lower))
    if not found:
        return []
    found.sort(key=lambda s: (s[0], -s[1]))
    merged: list[Span] = []
    for start, end, kind in found:
        if text.startswith("[REDACTED:", start):
            continue  # a marker is never redacted again
        if merged and start < merged[-1][1]:
            m_start, m_end, m_kind = merged[-1]
            better = _RANK.get(kind, 1) < _RANK.get(m_kind, 1)
            merged[-1] = (m_start, max(m_end, end), kind if better else m_kind)
        else:
            merged.append((start, end, kind))
    return merged


# Within ``redaction_memo()``, each distinct text is redacted once: an ingest reads one
# message's text at several doors (the facts, the findings, the user's words, the
# observation), and a candidate's text and quote are often the same string. Other pure
# readings of a text (the fact kernel's sentences) keep theirs beside it (``memo_of``).
_MEMO: ContextVar[dict[str, tuple[str, tuple[tuple[str, int], ...]]] | None] = ContextVar(
    "ctxsdk_redaction_memo", default=None
)
_MEMOS: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("ctxsdk_text_memos", default=None)


def memo_of(name: str) -> dict[str, Any] | None:
    """The memo named ``name`` of the ``redaction_memo()`` block in force (text -> what a
    pure function of that text gave), None outside one."""
    memos = _MEMOS.get()
    if memos is None:
        return None
    memo = memos.get(name)
    if memo is None:  # (not setdefault: it would build a dict on every call)
        memo = memos[name] = {}
    return memo


_T = TypeVar("_T")
_UNREAD = object()  # a memo's miss (None is a reading)


def memo_read(name: str, text: str, read: Callable[[str], _T]) -> _T:
    """``read(text)``; within ``redaction_memo()``, a text read before under ``name`` is
    answered from its first reading (``read`` must be a pure function of the text)."""
    memo = memo_of(name)
    if memo is None:
        return read(text)
    got = memo.get(text, _UNREAD)
    if got is _UNREAD:
        got = memo[text] = read(text)
    return got  # type: ignore[no-any-return]


@contextmanager
def redaction_memo() -> Iterator[None]:
    """A block within which a text redacted again is answered from its first redaction:
    the same text and the same counts (``redact`` is deterministic, so nothing read inside
    differs from a redaction made afresh; ``memo_of`` keeps other readings of a text the
    same way). Nested blocks share the outermost one's memo,
    which ends with it; each thread and task has its own."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    others = _MEMOS.set({})
    try:
        yield
    finally:
        _MEMOS.reset(others)
        _MEMO.reset(token)


def _redact_counting(text: str, counts: Counter[str]) -> str:
    memo = _MEMO.get()
    if memo is None:
        return _redact_passes(text, counts)
    hit = memo.get(text)
    if hit is None:
        found: Counter[str] = Counter()
        hit = memo[text] = (_redact_passes(text, found), tuple(found.items()))
    for kind, n in hit[1]:
        counts[kind] += n
    return hit[0]


def _redact_passes(text: str, counts: Counter[str]) -> str:
    # A replacement can open a boundary a token needed ("-----END …-----sk-…" becomes
    # "[REDACTED:private-key]sk-…"), so passes repeat until one finds nothing (idempotence).
    for _ in range(4):
        out = _redact_once(text, counts)
        if out is text:
            return text
        text = out
    return text


def _redact_once(text: str, counts: Counter[str]) -> str:
    spans = _spans(text)
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for start, end, kind in spans:
        parts.append(text[pos:start])
        parts.append(_marker(kind))
        counts[kind] += 1
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


_KIND_ORDER = {k: i for i, k in enumerate(REDACTION_KINDS)}
_NONE: Mapping[str, int] = MappingProxyType({})


def _ordered(counts: Counter[str]) -> Mapping[str, int]:
    # The kinds found, in REDACTION_KINDS order (a kind outside it is never counted); most
    # texts hold none, and then nothing is built.
    if not counts:
        return _NONE
    kinds = sorted(
        (k for k, n in counts.items() if n > 0 and k in _KIND_ORDER), key=_KIND_ORDER.__getitem__
    )
    return MappingProxyType({k: counts[k] for k in kinds})


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]`` (see the module docs).

    Deterministic, linear in ``len(text)`` and idempotent; never raises on a ``str``.
    """
    if not isinstance(text, str):
        raise InvalidArgument(
            f"redact() takes a str, not {type(text).__name__}; "
            "for a message dict use redact_message()"
        )
    memos = _MEMOS.get()
    if memos is None:
        counts: Counter[str] = Counter()
        out = _redact_counting(text, counts)
        return Redaction(out, _ordered(counts))
    # within ``redaction_memo()`` a text redacted before is answered with its first
    # (immutable) ``Redaction``: a door passes most texts several times
    done: dict[str, Redaction] | None = memos.get(_REDACTIONS)
    if done is None:
        done = memos[_REDACTIONS] = {}
    got = done.get(text)
    if got is None:
        found: Counter[str] = Counter()
        got = done[text] = Redaction(_redact_counting(text, found), _ordered(found))
    return got


_REDACTIONS = "\x00redaction"  # the memo of ``redact``'s answers (no reader's name)


def _redact_value(value: Any, counts: Counter[str]) -> Any:
    """A copy of a JSON-like value with every string in it redacted."""
    if isinstance(value, str):
        return _redact_counting(value, counts)
    if isinstance(value, Mapping):
        return {k: _redact_value(v, counts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(v, counts) for v in value]
    return value


def redact_json(value: Any) -> Any:
    """A copy of decoded JSON with every string in it, keys too, redacted. Parsed first,
    then each string: redacting the JSON text itself could eat its quotes, and a secret
    written with JSON escapes is redacted as it was said."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, Mapping):
        return {redact(str(k)).text: redact_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_json(v) for v in value]
    return value


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def _redact_block(block: Any, counts: Counter[str]) -> Any:
    if not isinstance(block, Mapping):
        return _redact_value(block, counts) if isinstance(block, str) else _copy(block)
    out: dict[str, Any] = {k: _copy(v) for k, v in block.items()}
    kind = block.get("type")
    if kind in ("text", "reasoning") and isinstance(block.get("text"), str):
        out["text"] = _redact_counting(block["text"], counts)
    elif kind == "tool-call" and "arguments" in block:
        out["arguments"] = _redact_value(block["arguments"], counts)
    elif kind == "tool-result" and "content" in block:
        out["content"] = _redact_content(block["content"], counts)
    return out


def _redact_content(content: Any, counts: Counter[str]) -> Any:
    if isinstance(content, str):
        return _redact_counting(content, counts)
    if isinstance(content, list | tuple):
        return [_redact_block(b, counts) for b in content]
    return _copy(content)


def redact_message(message: Mapping[str, Any]) -> tuple[dict[str, Any], Counter[str]]:
    """A redacted copy of a raw DSH message dict and the count of each kind withheld.

    Every ``text`` and ``reasoning`` block, every ``tool-call``'s ``arguments`` (the JSON
    string, or each string inside if they are already parsed) and the blocks inside every
    ``tool-result`` are redacted; a string ``content`` is redacted whole. Everything else
    (ids, source, images) is copied as it is. The input is never modified.
    """
    if not isinstance(message, Mapping):
        raise InvalidArgument(
            f"redact_message() takes a message mapping, not {type(message).__name__}; "
            "for a typed Message pass message.to_json_dict()"
        )
    counts: Counter[str] = Counter()
    out: dict[str, Any] = {k: _copy(v) for k, v in message.items()}
    if "content" in message:
        out["content"] = _redact_content(message["content"], counts)
    return out, Counter(_ordered(counts))


def withheld(text: str) -> list[str]:
    """The values ``redact`` withholds in ``text`` (what stood where its markers are), read
    back by aligning the redacted text with the original; the whole text when the two do
    not align (or it is too long to align), none when nothing is withheld."""
    red = redact(text).text
    if red == text or len(text) > 200_000:
        return [] if red == text else [text]
    parts = MARKER.sub("\x00", red).split("\x00")
    pattern = "(.+?)".join(re.escape(p) for p in parts)
    m = re.fullmatch(pattern, text, re.DOTALL)
    if m is None:
        return [text]  # could not align: the whole text counts as secret
    return [v for v in m.groups() if v.strip()]
