"""Redaction: credentials withheld from text before anything reads, prompts or stores it.

Merge and Memory call :func:`redact` (or :func:`redact_message`) on every text, reasoning,
tool-call argument and tool-result block *before* any extraction, any model prompt and any
storage, so a key pasted into a session never becomes a claim value, a prompt or a row.
The rules are the BeliefMerge seed's (``redact.js``, added in 0.2.0 after a live API key
surfaced as a claim value).

What it catches, each replaced by ``[REDACTED:<kind>]``:

================  ================================================================
kind              shape (anchored: no letter, digit, ``_`` or ``-`` just before)
================  ================================================================
private-key       a PEM ``-----BEGIN … PRIVATE KEY-----`` … ``-----END …`` block
anthropic         ``sk-ant-`` then ≥20 of ``[A-Za-z0-9_-]`` (wins over openai)
openai            ``sk-`` (or ``sk-proj-``) then ≥20 of ``[A-Za-z0-9_-]``
google            ``AIza`` then ≥30 of ``[0-9A-Za-z_-]``
github            ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_`` then ≥30 letters or digits
github-pat        ``github_pat_`` then ≥30 of ``[A-Za-z0-9_]``
huggingface       ``hf_`` then ≥30 letters or digits
aws-access-key    ``AKIA`` then exactly 16 of ``[0-9A-Z]``
slack             ``xoxb-`` ``xoxa-`` ``xoxp-`` ``xoxr-`` ``xoxs-`` then ≥10 of ``[A-Za-z0-9-]``
stripe            ``sk_`` or ``pk_``, then ``live_`` or ``test_``, then ≥20 letters or digits
npm               ``npm_`` then ≥30 letters or digits
jwt               three base64url parts, the first two starting ``eyJ`` (≥10 chars each)
dotted-key        32 lowercase hex, ``.``, 16 letters or digits (seen live; no prefix)
labelled          the VALUE after a label (below); the label itself is kept
================  ================================================================

The labelled family: a label, case-insensitive — ``api key`` / ``api_key`` / ``api-key`` /
``apikey`` / ``api密钥``, ``access token``, ``auth token``, ``secret key``, ``client secret``
(each with ``_``, space, ``-`` or nothing between the words), ``password``, ``passwd``,
``bearer``, ``密钥``, ``密码`` — then an optional quote, ``:`` ``=`` ``＝`` or ``：`` (spaces
around it allowed), an optional quote, and a value of at least 16 characters of
``[A-Za-z0-9_-./+]``. ``OPENAI_API_KEY=…``, ``"api_key": "…"`` and ``API密钥：…`` are all
caught. A value that looks like a placeholder is left alone: one starting with ``<``, ``{``
or ``$`` (these never match), ``...``, ``xxx``, ``aaa``, ``placeholder``, ``redacted`` or
``your``.

What it deliberately does not catch: there is no generic "long random string" rule — it
would mangle commit hashes, arXiv ids, UUIDs, paths and identifiers such as
``EPERM_ACCESS_DENIED_2026``; a bare 32-hex digest is not a dotted key; words such as "the
token budget" or "a secret management service" carry no value. A secret of an unknown shape
with no label therefore passes; redaction lowers the risk, it is not a guarantee.

Every pattern is linear: quantifiers are possessive, each match starts where the
character before cannot continue it, and the PEM blocks are found by a forward scan that
stops at the first ``BEGIN`` without an ``END``. The result is deterministic and
idempotent (redacting a redacted text changes nothing and counts nothing), and any ``str``
is accepted, lone surrogates included.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import InvalidArgument

__all__ = ["REDACTION_KINDS", "Redaction", "redact", "redact_message", "withheld_notice"]

REDACTION_KINDS: tuple[str, ...] = (
    "private-key",
    "anthropic",
    "openai",
    "google",
    "github",
    "github-pat",
    "huggingface",
    "aws-access-key",
    "slack",
    "stripe",
    "npm",
    "jwt",
    "dotted-key",
    "labelled",
)

# No letter, digit, "_" or "-" just before a token, so a token never starts inside a run.
_START = r"(?<![A-Za-z0-9_-])"
# After a letters-and-digits body: no letter or digit follows (the body took them all).
_END = r"(?![A-Za-z0-9])"

_PROVIDERS: tuple[tuple[str, str], ...] = (
    # Order matters where two shapes start at one place: anthropic before openai.
    ("anthropic", r"sk-ant-[A-Za-z0-9_-]{20,}+"),
    ("openai", r"sk-(?:proj-)?[A-Za-z0-9_-]{20,}+"),
    ("google", r"AIza[0-9A-Za-z_-]{30,}+"),
    ("github_pat", r"github_pat_[A-Za-z0-9_]{30,}+"),
    ("github", r"gh[pousr]_[A-Za-z0-9]{30,}+" + _END),
    ("huggingface", r"hf_[A-Za-z0-9]{30,}+" + _END),
    ("aws_access_key", r"AKIA[0-9A-Z]{16}" + _END),
    ("slack", r"xox[baprs]-[A-Za-z0-9-]{10,}+"),
    ("stripe", r"(?:sk|pk)_(?:live|test)_[A-Za-z0-9]{20,}+" + _END),
    ("npm", r"npm_[A-Za-z0-9]{30,}+" + _END),
    ("jwt", r"eyJ[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,}+"),
    ("dotted_key", r"[0-9a-f]{32}\.[A-Za-z0-9]{16}" + _END),
)
_PROVIDER_RE = re.compile(
    _START + "(?:" + "|".join(f"(?P<{name}>{shape})" for name, shape in _PROVIDERS) + ")"
)

_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----")

_SEP = r"[_ \-]?"
_LABEL = (
    r"(?:(?<![A-Za-z0-9])(?:"
    rf"api{_SEP}key|api密钥|access{_SEP}token|auth{_SEP}token|secret{_SEP}key"
    rf"|client{_SEP}secret|password|passwd|bearer"
    r")|密钥|密码)"
)
_QUOTE = r"(?:\\?[\"'])?"
_ASSIGN = r"[ \t]*+[:=＝：][ \t]*+"
_LABELLED_RE = re.compile(
    rf"(?P<label>{_LABEL}{_QUOTE}{_ASSIGN}{_QUOTE})(?P<value>[A-Za-z0-9_\-./+]{{16,}}+)",
    re.IGNORECASE,
)
_PLACEHOLDER_STARTS = ("...", "xxx", "aaa", "placeholder", "redacted", "your")


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


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


def _redact_pem(text: str, counts: Counter[str]) -> str:
    if "PRIVATE KEY" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            break
        end = _PEM_END.search(text, begin.end())
        if end is None:
            break  # no later BEGIN can have an END either
        parts.append(text[pos : begin.start()])
        parts.append(_marker("private-key"))
        counts["private-key"] += 1
        pos = end.end()
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def _redact_providers(text: str, counts: Counter[str]) -> str:
    def sub(match: re.Match[str]) -> str:
        kind = (match.lastgroup or "").replace("_", "-")
        counts[kind] += 1
        return _marker(kind)

    return _PROVIDER_RE.sub(sub, text)


def _redact_labelled(text: str, counts: Counter[str]) -> str:
    def sub(match: re.Match[str]) -> str:
        value = match.group("value")
        if value.lower().startswith(_PLACEHOLDER_STARTS):
            return match.group(0)
        counts["labelled"] += 1
        return match.group("label") + _marker("labelled")

    return _LABELLED_RE.sub(sub, text)


def _redact_counting(text: str, counts: Counter[str]) -> str:
    text = _redact_pem(text, counts)
    text = _redact_providers(text, counts)
    return _redact_labelled(text, counts)


def _ordered(counts: Counter[str]) -> Mapping[str, int]:
    return MappingProxyType({k: counts[k] for k in REDACTION_KINDS if counts[k] > 0})


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]`` (see the module docs).

    Deterministic, linear in ``len(text)`` and idempotent; never raises on a ``str``.
    """
    if not isinstance(text, str):
        raise InvalidArgument(
            f"redact() takes a str, not {type(text).__name__}; "
            "for a message dict use redact_message()"
        )
    counts: Counter[str] = Counter()
    out = _redact_counting(text, counts)
    return Redaction(out, _ordered(counts))


def _redact_value(value: Any, counts: Counter[str]) -> Any:
    """A copy of a JSON-like value with every string in it redacted."""
    if isinstance(value, str):
        return _redact_counting(value, counts)
    if isinstance(value, Mapping):
        return {k: _redact_value(v, counts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(v, counts) for v in value]
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
    return out, Counter({k: counts[k] for k in REDACTION_KINDS if counts[k] > 0})
