"""Ingest's dedupe by word sets and its held-text lookup give what the plain scans give:
a near duplicate is found among word sets of every size, and a text held inside any of
the held texts is found, NUL or not."""

from __future__ import annotations

import random

from ctxsdk.memory._facts_in import _holder, _Kept, _near


def test_near_by_size_equals_the_scan_of_every_set() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(30)]
    kept = _Kept()
    added: list[frozenset[str]] = []
    hits = 0
    for _ in range(1500):
        base = rng.choice(added) if added and rng.random() < 0.5 else frozenset()
        words = set(base)
        for _ in range(rng.randint(0, 3)):
            words.discard(rng.choice(vocab))
        while len(words) < rng.randint(4, 24):
            words.add(rng.choice(vocab))
        mine = frozenset(words)
        want = _near(mine, added)
        assert kept.near(mine) == want
        hits += want
        if not want:
            kept.add(mine)
            added.append(mine)
    assert 0 < hits < 1500  # both answers were asked for


def test_holder_equals_the_scan_of_every_text() -> None:
    held = ["the request timeout is 30 s", "use pnpm", "a\x00b", ""]
    for texts in (held, held[:2], []):
        holds = _holder(texts)
        for t in ("timeout is 30", "pnpm", "a\x00b", "s\x00use", "", "nothing here", "\x00"):
            assert holds(t) == any(t in h for h in texts), (texts, t)
