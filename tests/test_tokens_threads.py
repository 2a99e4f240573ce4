"""Token counts from several Python threads at once, sharing one tokenizer object (the one
``get_tokenizer`` gives every caller), equal the counts of one thread: quicktok's native
counts (single texts, batches on one native thread and on all cores), tiktoken's, the
Hugging Face tokenizer's, and a TokenCounter per thread over the shared tokenizer."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest

from ctxsdk.session import TokenCounter, get_tokenizer
from ctxsdk.session._tokens import _QUICK_THREADED_CHARS, _quick_ok

_PIECES = (
    "The quick brown fox jumps over the lazy dog. ",
    "def f(x):\n    return {'a': [1, 2]}  # don't\n\n",
    "深度求索是一家人工智能公司。東京は日本の首都です。",
    "한국어 텍스트 😀👍🏽 ",
    "  \t<|endoftext|> 12345678 ÀÉÎõü ПРИВЕТ мир ",
    '{"id": 42, "name": "ctxsdk", "tags": ["a", "b"]}\n',
    "ఈ వాక్యం తెలుగులో ఉంది. ",  # outside quicktok's ranges: tiktoken counts it
)


def _texts(seed: int, n: int, pieces: tuple[str, ...] = _PIECES) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def _in_threads(work: Callable[[int], object], n: int = 8) -> list[object]:
    """``work(i)`` in ``n`` threads released together; each one's result, or its error."""
    out: list[object] = [None] * n
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        try:
            out[i] = work(i)
        except BaseException as e:  # reported by the test, not lost in the thread
            out[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads)
    return out


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "deepseek"])
def test_threads_sharing_a_tokenizer_count_as_one_thread(name: str) -> None:
    tok = get_tokenizer(name)
    texts = _texts(7, 600)
    if name != "deepseek":
        assert getattr(tok, "quick", None) is not None  # the native path is the one tested
        assert any(_quick_ok(t) for t in texts) and not all(_quick_ok(t) for t in texts)
    one_each = [tok.count(t) for t in texts]
    batch = tok.count_batch(texts)
    assert batch == one_each

    def work(i: int) -> tuple[list[int], list[int], list[int]]:
        order = list(range(len(texts)))
        random.Random(i).shuffle(order)  # each thread its own order, so they overlap
        singles = [0] * len(texts)
        for _ in range(2):
            for j in order:
                singles[j] = tok.count(texts[j])
        batches: list[int] = []
        for at in range(0, len(texts), 50):
            batches += tok.count_batch(texts[at : at + 50])
        counter = TokenCounter(tok)  # one counter a thread, the tokenizer shared
        msgs = [{"role": "user", "content": [{"type": "text", "text": t}]} for t in texts]
        counted = counter.count_messages(msgs)
        assert counted == counter.count_messages(msgs)  # and again from its cache
        return singles, batches, counted

    results = _in_threads(work)
    reference = TokenCounter(tok).count_messages(
        [{"role": "user", "content": [{"type": "text", "text": t}]} for t in texts]
    )
    for r in results:
        assert not isinstance(r, BaseException), repr(r)
        assert r == (one_each, one_each, reference)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_threads_sharing_quicktok_on_all_cores_count_as_one_thread(name: str) -> None:
    """A batch past ``_QUICK_THREADED_CHARS`` runs quicktok's own native threads: several
    Python threads doing so at once on one tokenizer."""
    tok = get_tokenizer(name)
    texts = _texts(11, 3000, _PIECES[:-1])  # all inside quicktok's ranges
    assert all(_quick_ok(t) for t in texts)
    assert sum(map(len, texts)) > _QUICK_THREADED_CHARS
    expected = tok.count_batch(texts)
    assert sum(expected) == sum(tok.count(t) for t in texts[:200]) + sum(
        tok.count_batch(texts[200:])
    )
    results = _in_threads(lambda i: tok.count_batch(texts), n=4)
    for r in results:
        assert not isinstance(r, BaseException), repr(r)
        assert r == expected
