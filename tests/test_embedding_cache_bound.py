"""The embedding cache's bound: least recently used vectors evicted past it (by the table's
order of use), hot reads writing nothing, the bound from the environment, a lowered bound
applied on open, clearing, and several processes writing under one bound."""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
import struct
import warnings
from pathlib import Path

import pytest

from ctxsdk.session._embedding_cache import (
    EmbeddingCache,
    EmbeddingCacheWarning,
    cache_key,
    cached_embed,
    clear_default_cache,
    default_cache,
    max_bytes_from_env,
    reset_default_cache,
)

DIM = 64  # float64 values: 512 bytes a vector, several to a page


def _vector(text: str) -> list[float]:
    digest = hashlib.sha512(text.encode()).digest()
    return [(b - 127.5) / 97.3 for b in digest[:DIM]]


def _key(text: str) -> bytes:
    return cache_key("m", "1", "passage", text)


def _embed(texts: list[str]) -> list[list[float]]:
    return [_vector(t) for t in texts]


def _used(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def _order(path: Path) -> list[bytes]:
    conn = sqlite3.connect(path)
    try:
        return [bytes(k) for (k,) in conn.execute("SELECT key FROM embedding ORDER BY rowid")]
    finally:
        conn.close()


def _put(cache: EmbeddingCache, texts: list[str]) -> None:
    cache.put([(_key(t), _vector(t)) for t in texts])


def test_eviction_keeps_the_most_recently_used_under_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    bound = 64 * 1024
    cache = EmbeddingCache(path, max_bytes=bound)
    old = [f"old {i}" for i in range(40)]
    _put(cache, old)
    assert _used(path) > bound // 2  # past half the bound: a hit on an old vector moves it
    hit = old[:5]  # the oldest five, read again: in the table's older half
    assert set(cache.get([_key(t) for t in hit])) == {_key(t) for t in hit}
    _put(cache, ["new 0"])  # the pending moves are written with it
    use_order = old[5:] + hit + ["new 0"]  # the five moved after the rest, as read
    assert _order(path) == [_key(t) for t in use_order]

    pruned_at: list[int] = []
    for i in range(1, 400):
        text = f"new {i}"
        _put(cache, [text])
        use_order.append(text)
        assert _used(path) <= bound  # after every write
        if cache.evicted and not pruned_at:
            pruned_at.append(_used(path))
        # what is left is always the most recently used, in their order of use
        order = _order(path)
        assert order == [_key(t) for t in use_order[len(use_order) - len(order) :]]
    assert cache.evicted > 100
    assert pruned_at and pruned_at[0] >= 0.75 * bound  # down to ~90% of it, not far below
    left = set(_order(path))
    assert not left & {_key(t) for t in old}  # the old ones, read once long ago, are gone
    got = cache.get([_key("new 399"), _key("new 398")])
    assert got == {_key("new 399"): _vector("new 399"), _key("new 398"): _vector("new 398")}


def test_a_hit_on_an_old_vector_saves_it_from_eviction(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    cache = EmbeddingCache(path, max_bytes=64 * 1024)
    texts = [f"t {i}" for i in range(400)]
    kept = texts[0]
    for at in range(0, len(texts), 10):
        batch = texts[at : at + 10]
        cached_embed(_embed, [kept, *batch], model="m", version="1", kind="passage", dim=DIM,
                     cache=cache)  # fmt: skip
    assert cache.evicted > 200
    assert _key(kept) in set(_order(path))  # read at every step: never the least recent
    assert _key(texts[1]) not in set(_order(path))  # written with it, never read again


def test_hot_reads_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    bound = 128 * 1024
    cache = EmbeddingCache(path, max_bytes=bound)
    texts = [f"t {i}" for i in range(100)]
    _put(cache, texts)
    assert bound // 2 < _used(path) <= bound
    watcher = sqlite3.connect(path)
    version = watcher.execute("PRAGMA data_version").fetchone()[0]
    recent = [_key(t) for t in texts[60:]]  # the newer half
    for _ in range(300):  # a hot loop
        assert len(cache.get(recent)) == 40
    cache.flush()
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == version  # no commit
    assert len(cache.get([_key(t) for t in texts[:10]])) == 10  # the older half: moved...
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == version  # ...not yet
    cache.close()  # ...when the cache closes
    assert watcher.execute("PRAGMA data_version").fetchone()[0] != version
    assert _order(path)[-10:] == [_key(t) for t in texts[:10]]
    watcher.close()


def test_under_half_the_bound_no_read_writes(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    cache = EmbeddingCache(path, max_bytes=1 << 30)
    texts = [f"t {i}" for i in range(100)]
    _put(cache, texts)
    watcher = sqlite3.connect(path)
    version = watcher.execute("PRAGMA data_version").fetchone()[0]
    for _ in range(50):
        assert len(cache.get([_key(t) for t in texts])) == 100  # the older half too
    cache.close()
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == version
    watcher.close()


def test_the_bound_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXSDK_EMBEDDING_CACHE_MAX_MB", raising=False)
    assert max_bytes_from_env() == 1024 << 20
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE_MAX_MB", "0.0625")
    assert EmbeddingCache(tmp_path / "e.sqlite").max_bytes == 65536
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE_MAX_MB", "unlimited")
    assert EmbeddingCache(tmp_path / "e.sqlite").max_bytes is None
    for bad in ("0", "-5", "lots", "nan"):
        monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE_MAX_MB", bad)
        with pytest.warns(EmbeddingCacheWarning, match="1024 MiB"):
            assert EmbeddingCache(tmp_path / "e.sqlite").max_bytes == 1024 << 20
    assert EmbeddingCache(tmp_path / "e.sqlite", max_bytes=4096).max_bytes == 4096
    with pytest.raises(ValueError, match="above 0"):
        EmbeddingCache(tmp_path / "e.sqlite", max_bytes=0)


def test_a_lowered_bound_is_applied_on_open(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    texts = [f"t {i}" for i in range(600)]
    big = EmbeddingCache(path, max_bytes=None)
    _put(big, texts)
    big.close()
    assert _used(path) > 256 * 1024
    small = EmbeddingCache(path, max_bytes=128 * 1024)
    newest = small.get([_key(texts[-1])])  # the first use opens the file, and prunes it
    assert newest == {_key(texts[-1]): _vector(texts[-1])}
    assert _used(path) <= 128 * 1024 and small.evicted > 300
    left = _order(path)
    assert left == [_key(t) for t in texts[len(texts) - len(left) :]]  # the newest kept


def test_clear_empties_the_cache_and_gives_the_space_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXSDK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CTXSDK_EMBEDDING_CACHE", raising=False)
    reset_default_cache()
    try:
        cache = default_cache()
        assert cache is not None
        texts = [f"t {i}" for i in range(500)]
        _put(cache, texts)
        file = tmp_path / "cache" / "embeddings.sqlite"
        cache.flush()
        full = _used(file)
        assert clear_default_cache() == 500
        assert len(cache) == 0 and file.stat().st_size < full / 4
        assert cache.get([_key(texts[0])]) == {}
        _put(cache, texts[:3])  # and it goes on working
        assert len(cache.get([_key(t) for t in texts[:3]])) == 3
    finally:
        reset_default_cache()


def _writer(path: str, who: int, n: int, bound: int) -> None:
    warnings.simplefilter("error")  # a warning fails the process
    cache = EmbeddingCache(path, max_bytes=bound)
    hot = [f"hot {i}" for i in range(5)]
    for at in range(0, n, 10):
        texts = [f"p{who} t{i}" for i in range(at, at + 10)]
        out = cached_embed(_embed, [*hot, *texts], model="m", version="1", kind="passage",
                           dim=DIM, cache=cache)  # fmt: skip
        assert out == _embed([*hot, *texts])
    cache.close()


def test_processes_writing_at_once_keep_the_bound_and_lose_no_vector(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    bound = 128 * 1024
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 300, bound)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert _used(path) <= bound
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    texts = [f"hot {i}" for i in range(5)]
    texts += [f"p{w} t{i}" for w in range(3) for i in range(300)]
    by_key = {_key(t): t for t in texts}
    rows = conn.execute("SELECT key, dtype, vec FROM embedding").fetchall()
    conn.close()
    assert 0 < len(rows) < len(texts)  # evicted, and not emptied
    for key, dtype, blob in rows:  # every vector left is whole and its text's
        assert dtype == "f8" and bytes(key) in by_key
        got = list(struct.unpack(f"<{DIM}d", blob))
        assert got == _vector(by_key[bytes(key)])
    left = {bytes(k) for k, _, _ in rows}
    assert {_key(f"hot {i}") for i in range(5)} <= left  # read by all, at every step
