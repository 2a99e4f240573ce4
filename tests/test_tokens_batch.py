"""Batch counting (ctxsdk.session._tokens): exact, text for text, against the raw tokenizers.

tiktoken's encodings count through quicktok for texts inside ``_QUICK_RANGES`` and through
tiktoken itself for the rest; every count here is compared with tiktoken's own
``encode_ordinary`` (or the rust ``tokenizers`` for deepseek) on the same text.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from ctxsdk.bench import _tokens as bt
from ctxsdk.session import _tokens as tk

TIKTOKEN = ["cl100k_base", "o200k_base"]

# Outside the checked ranges quicktok and tiktoken can differ (these do, as of quicktok 0.4):
# Telugu and Kannada vowel signs, Arabic Extended-B.
OUTSIDE = ["రాజు's ర'T xరA", "ಕನ್ನಡ ೀ's ು'T", "\u0870's \u0871'T x\u0870A"]


def _raw(name: str, texts: list[str]) -> list[int]:
    encoding = tk.get_tokenizer(name).encoding  # type: ignore[attr-defined]
    return [len(encoding.encode_ordinary(t)) for t in texts]


def _mixtures(n: int, seed: int) -> list[str]:
    """Random texts from the checked ranges, heavy on what the regexes split on."""
    rng = random.Random(seed)
    ranges = [(a, b) for a, b in tk._QUICK_RANGES]
    structural = list(" \n\t\r'’0123456789aAsStTdDmMlLvVrRe.,;:!?-_/\\\"(){}[]<>=+*&^%$#@~`|")
    structural += [*"中文日本語한국어。、！？「」（）：；ー", "\u0301", "\u200d", "\ufe0f"]
    structural += ["😀", "👍", "ſ", "\u212a", "İ", "ı", "ǅ", "Σ", "ς", "\x00"]
    out = []
    for _ in range(n):
        p = rng.random()
        chars = []
        for _ in range(rng.randint(1, 60)):
            if rng.random() < p:
                chars.append(rng.choice(structural))
            else:
                a, b = rng.choice(ranges)
                chars.append(chr(rng.randint(max(a, 1), b)))
        out.append("".join(chars))
    return out


@pytest.mark.parametrize("name", TIKTOKEN)
def test_quick_path_is_loaded_and_exact_on_random_mixtures(name: str) -> None:
    tok = tk.get_tokenizer(name)
    assert tok.quick is not None  # type: ignore[attr-defined]
    texts = _mixtures(3000, seed=TIKTOKEN.index(name))
    assert all(tk._quick_ok(t) for t in texts)
    assert tok.count_batch(texts) == _raw(name, texts)
    assert [tok.count(t) for t in texts[:300]] == _raw(name, texts[:300])


@pytest.mark.parametrize("name", TIKTOKEN)
def test_every_code_point_of_a_range_sample_in_context(name: str) -> None:
    # The full check covered every code point of _QUICK_RANGES; this keeps every 7th.
    tok = tk.get_tokenizer(name)
    texts = [
        f"{c} {c}'s {c}'T x{c}A {c}1 \n{c}\n\n.{c}{c}{c}  {c}\ta'{c} A{c}b"
        for a, b in tk._QUICK_RANGES
        for c in map(chr, range(max(a, 1), b + 1, 7))
    ]
    assert tok.count_batch(texts) == _raw(name, texts)


@pytest.mark.parametrize("name", TIKTOKEN)
def test_texts_outside_the_ranges_go_to_tiktoken(name: str) -> None:
    tok = tk.get_tokenizer(name)
    lone = "a\ud800b \udfff"  # a harness log can hold a lone surrogate
    texts = ["plain ascii", *OUTSIDE, "中文 and ascii", lone, "", "x" * 70_000]
    assert [tk._quick_ok(t) for t in texts] == [True, False, False, False, True, False, True, True]
    # order kept when the batch is split between the two engines
    assert tok.count_batch(texts) == _raw(name, texts)
    assert [tok.count(t) for t in texts] == _raw(name, texts)
    assert tok.count_batch([]) == []
    # a batch of only outside texts, big enough for tiktoken's threads
    many = [t * 40 for t in OUTSIDE] * 300
    assert tok.count_batch(many) == _raw(name, many)


@pytest.mark.parametrize("name", TIKTOKEN)
def test_long_texts_groups_and_threads(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tok = tk.get_tokenizer(name)
    texts = [
        "中" * 50_000,
        "   \n\n\n\t  " * 3000,
        "1234567890" * 5000,
        "don't " * 20_000,
        "😀👍🏽" * 10_000,
    ] * 4
    expected = _raw(name, texts)
    assert sum(map(len, texts)) > tk._QUICK_THREADED_CHARS  # the threaded native call
    assert tok.count_batch(texts) == expected
    monkeypatch.setattr(tk, "_QUICK_GROUP_CHARS", 60_000)  # many native calls
    assert tok.count_batch(texts) == expected


@pytest.mark.parametrize("name", TIKTOKEN)
def test_without_quicktok_tiktoken_counts_alone(name: str) -> None:
    raw = tk.get_tokenizer(name).encoding  # type: ignore[attr-defined]
    alone = tk._TiktokenTokenizer(name, raw, None)
    texts = ["hello world", *OUTSIDE, "中文", "x" * 70_000, "a\ud800b"]
    assert alone.count_batch(texts) == _raw(name, texts)
    assert [alone.count(t) for t in texts] == _raw(name, texts)


class _Disagreeing:
    def encode_ordinary(self, text: str) -> list[int]:
        return [0]


def test_a_quicktok_that_disagrees_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import quicktok

    raw = tk.get_tokenizer("cl100k_base").encoding  # type: ignore[attr-defined]
    assert tk._load_quicktok("cl100k_base", raw) is not None
    monkeypatch.setattr(quicktok, "get_encoding", lambda name: _Disagreeing())
    assert tk._load_quicktok("cl100k_base", raw) is None

    def broken(name: str) -> Any:
        raise RuntimeError("no data")

    monkeypatch.setattr(quicktok, "get_encoding", broken)
    assert tk._load_quicktok("cl100k_base", raw) is None


def test_deepseek_batch_equals_the_rust_tokenizer() -> None:
    tok = tk.get_tokenizer("deepseek")
    rust = tok.tokenizer  # type: ignore[attr-defined]
    texts = [*_mixtures(300, seed=3), *OUTSIDE, "", "中" * 5000]
    expected = [len(rust.encode(t, add_special_tokens=False).ids) for t in texts]
    assert tok.count_batch(texts) == expected
    assert [tok.count(t) for t in texts] == expected
    # a lone surrogate is counted as U+FFFD
    assert tok.count_batch(["a\ud800b", "hi"]) == [
        len(rust.encode("a\ufffdb").ids),
        len(rust.encode("hi").ids),
    ]
    assert tok.count_batch(("hi", "a b")) == tok.count_batch(["hi", "a b"])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def corpus() -> bt.Corpus:
    return bt.load_corpus(quick=True)


@pytest.mark.parametrize("name", bt.EXACT_TOKENIZERS)
def test_the_bench_corpus_counts_exactly(corpus: bt.Corpus, name: str) -> None:
    tok = tk.get_tokenizer(name)
    texts = [tk.message_text_for_count(m) for m in corpus.messages]
    texts += [p.text for p in corpus.pieces]
    expected = next(iter(bt.raw_batches(tok).values()))(texts)
    assert tok.count_batch(texts) == expected
    counter = tk.TokenCounter(tok)
    assert counter.count_messages(corpus.messages) == [
        tk.count_message(m, tok) for m in corpus.messages
    ]


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "one text block"}]},
    {"role": "assistant", "content": [{"type": "reasoning", "text": "thinking it over"}]},
    {"role": "user", "content": [{"type": "text", "text": ""}]},
    {"role": "user", "content": [{"type": "text", "text": 42}]},  # malformed: counted as JSON
    {"role": "user", "content": "a plain string content"},
    {"role": "user", "content": None},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "two calls"},
            {"type": "tool-call", "id": "c1", "name": "read", "arguments": '{"path": "a"}'},
            {"type": "tool-call", "id": "c2", "name": "ls", "arguments": "{}"},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "x"}]}
        ],
    },
    {"role": "user", "content": [{"type": "tool-call", "name": "solo", "arguments": "{}"}]},
    {"role": "user", "content": [{"type": "image", "data": "..."}]},
]


@pytest.mark.parametrize("name", bt.EXACT_TOKENIZERS)
def test_counter_text_and_framing_match_the_definitions(name: str) -> None:
    tok = tk.get_tokenizer(name)
    for m in MESSAGES:
        text, framing = tk._text_and_framing(m)
        assert text == tk.message_text_for_count(m), m
        calls = sum(
            1
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if b.get("type") == "tool-call"
        )
        assert framing == tk.CHAT_TOKENS_PER_MESSAGE + tk.CHAT_TOKENS_PER_TOOL_CALL * calls
        assert tk.count_message(m, tok) == framing + len(tok.encode(text))  # type: ignore[attr-defined]
    counter = tk.TokenCounter(tok)
    expected = [
        framing + len(tok.encode(text)) for text, framing in map(tk._text_and_framing, MESSAGES)
    ]  # type: ignore[attr-defined]
    assert counter.count_messages(MESSAGES) == expected
    assert counter.count_messages(MESSAGES) == expected  # warm, from the cache
    distinct = len({tk.message_text_for_count(m) for m in MESSAGES})
    assert (counter.misses, counter.hits) == (distinct, 2 * len(MESSAGES) - distinct)
