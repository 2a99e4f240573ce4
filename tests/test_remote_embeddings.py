"""A remote OpenAI-compatible embeddings endpoint as the retriever's embedder: over a real
loopback server, through the seam's retries, and into Memory's search."""

from __future__ import annotations

import json

import httpx
import pytest

import ctxsdk as cx
from ctxsdk.errors import LLMOutputError, LLMProviderError
from ctxsdk.llm import LLM, RemoteEmbedder
from ctxsdk.session import Embedder, Retriever

from ._openai_server import openai_server


def test_the_remote_embedder_ranks_and_feeds_a_memory() -> None:
    with openai_server() as server:
        llm = LLM(server.url, "embed-model", api_key="k", env={})
        emb = RemoteEmbedder(llm, batch=2)
        assert isinstance(emb, Embedder) and emb.dim == 64
        vecs = emb.embed(["alpha beta", "gamma", "alpha beta"])
        assert len(vecs) == 3 and vecs[0] == vecs[2] and vecs[0] != vecs[1]
        calls = [r for r in server.requests if "input" in r]
        assert [len(r["input"]) for r in calls][-2:] == [2, 1]  # batched
        assert calls[-1]["model"] == "embed-model"
        r = Retriever(
            [("a", "the cache expires after sixty seconds"), ("b", "logs go to stdout")],
            embedder=emb,
        )
        assert r.search("cache expiry seconds", 1, mode="dense")[0].doc_id == "a"
        mem = cx.Memory(embedder=emb)
        mem.remember("Always write logs to stdout.")
        assert mem.find("stdout logging")[0].node.type == "preference"


def _llm(handler: object) -> LLM:
    return LLM(
        "http://model.test/v1",
        "m",
        env={},
        transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
        max_retries=0,
    )


@pytest.mark.parametrize(
    "answer",
    [
        {"data": []},
        {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 0, "embedding": [1.0, 2.0]}]},
        {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
        {"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1.0]}]},
        {"nope": True},
    ],
)
def test_a_malformed_answer_is_an_output_error(answer: object) -> None:
    llm = _llm(lambda request: httpx.Response(200, json=answer))
    with pytest.raises(LLMOutputError) as err:
        llm.embed(["one", "two"])
    assert err.value.reason.startswith("bad embeddings answer") and "embeddings" in str(err.value)


def test_a_failing_endpoint_raises_the_seams_error() -> None:
    llm = _llm(lambda request: httpx.Response(500, json={"error": {"message": "down"}}))
    with pytest.raises(LLMProviderError):
        RemoteEmbedder(llm).embed(["x"])
    assert llm.embed([]) == []
    assert json.dumps([])  # nothing was sent for no texts
