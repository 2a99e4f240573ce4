"""``ctxsdk cache``: the embedding cache's place, size and bound, and ``--clear``, run as a user
runs it (its own process, the cache directory from the environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ctxsdk.session.kernel import EmbeddingCache


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxsdk", "cache", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=True,
    )


def test_cache_reports_what_it_holds_and_clear_empties_it(tmp_path: Path) -> None:
    env = {"CTXSDK_CACHE_DIR": str(tmp_path), "CTXSDK_EMBEDDING_CACHE_MAX_MB": "8"}
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite", max_bytes=8 << 20)
    cache.put([(bytes([i]) * 32, [0.25] * 384) for i in range(40)])
    cache.close()

    shown = json.loads(_cli("--json", env=env).stdout)
    assert shown["path"] == str(tmp_path / "embeddings.sqlite")
    assert shown["vectors"] == 40 and shown["max_bytes"] == 8 << 20
    assert shown["bytes_used"] >= 40 * 384 * 4
    assert "40 vector(s)" in _cli(env=env).stdout and "bound 8 MiB" in _cli(env=env).stdout

    cleared = json.loads(_cli("--clear", "--json", env=env).stdout)
    assert cleared["cleared"] == 40 and cleared["vectors"] == 0
    assert cleared["bytes_used"] < shown["bytes_used"]
    assert len(EmbeddingCache(tmp_path / "embeddings.sqlite")) == 0


def test_cache_turned_off_says_so_and_writes_nothing(tmp_path: Path) -> None:
    env = {"CTXSDK_CACHE_DIR": str(tmp_path), "CTXSDK_EMBEDDING_CACHE": "0"}
    out = _cli("--clear", env=env).stdout
    assert "off" in out
    assert list(tmp_path.iterdir()) == []
