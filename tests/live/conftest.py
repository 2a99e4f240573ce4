"""The live tier: a real OpenAI-compatible server on loopback (``make test-live`` starts one).

Every test here is marked ``live`` and skips unless ``CTXSDK_LIVE_BASE_URL`` is set, so
``make test`` stays green and offline without a server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from ctxsdk.llm import LLM

BASE_URL = os.environ.get("CTXSDK_LIVE_BASE_URL")
MODEL = os.environ.get("CTXSDK_LIVE_MODEL", "gemma3-270m")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="CTXSDK_LIVE_BASE_URL is not set (run `make test-live`)")
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.live)
            if not BASE_URL:
                item.add_marker(skip)


@pytest.fixture
def llm() -> Iterator[LLM]:
    assert BASE_URL
    with LLM(BASE_URL, MODEL, env={}, timeout=120, max_retries=1) as client:
        yield client
