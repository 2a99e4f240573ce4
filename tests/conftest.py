"""Shared pytest fixtures: the ``../shared`` data directory and a small valid v3 session."""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ctxsdk.testing import LocalPostgres

# Embeddings the tests compute are cached in a directory of this run's own, never the user's
# cache (~/.cache/ctxsdk): a test sees what a fresh machine would, and leaves nothing behind.
_TEST_CACHE = tempfile.mkdtemp(prefix="ctxsdk-test-cache-")
os.environ["CTXSDK_CACHE_DIR"] = _TEST_CACHE
atexit.register(shutil.rmtree, _TEST_CACHE, True)

SHARED = Path(__file__).resolve().parents[2] / "shared"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

MODEL_SOURCE = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}
SYSTEM_SOURCE = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` next to the repository; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not available")
    return SHARED


def v3_raw_session(session_id: str = "s-v3-fixture") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A small valid v3 session as raw DSH events: one turn, a tool call, two steps."""
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "createdAt": 1790000000000,
        "isSeeded": False,
        "delegationDepth": 0,
    }
    call = {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": '{"command":"ls"}'}
    rows: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("turn/start", {"turn": 1}, {}),
        ("step/start", {"turn": 1, "step": 1}, {}),
        (
            "system/message",
            {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "sys-1",
                    "role": "system",
                    "content": [{"type": "text", "text": "You are a careful agent."}],
                    "source": SYSTEM_SOURCE,
                },
            },
            {"surfaceOp": "append"},
        ),
        (
            "user/message",
            {
                "content": [{"type": "text", "text": "List the files."}],
                "source": {"kind": "user"},
                "role": "user",
                "id": "u-1",
            },
            {"surfaceOp": "append"},
        ),
        (
            "request/header",
            {
                "header": {
                    "config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}
                },
                "reason": "initial",
            },
            {},
        ),
        (
            "assistant/message",
            {
                "turn": 1,
                "step": 1,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Listing."}, call],
                    "source": MODEL_SOURCE,
                    "id": "a-1",
                },
                "stream": [],
                "usage": {"inputTokens": 30, "outputTokens": 8},
            },
            {"surfaceOp": "append"},
        ),
        (
            "tool/call",
            {
                "turn": 1,
                "step": 1,
                "callId": "call_1",
                "name": "bash",
                "arguments": call["arguments"],
            },
            {},
        ),
        (
            "tool/result",
            {
                "turn": 1,
                "step": 1,
                "message": {
                    "source": {"kind": "tool", "callId": "call_1"},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "call_1",
                            "content": [{"type": "text", "text": "a.txt\nb.txt\n"}],
                            "isError": False,
                        }
                    ],
                    "role": "user",
                    "id": "r-1",
                },
            },
            {"sourceEventSeqs": [6], "surfaceOp": "append"},
        ),
        ("step/end", {"turn": 1, "step": 1}, {}),
        ("step/start", {"turn": 1, "step": 2}, {}),
        (
            "assistant/message",
            {
                "turn": 1,
                "step": 2,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Two files: a.txt and b.txt."}],
                    "source": MODEL_SOURCE,
                    "id": "a-2",
                },
                "stream": [],
                "usage": {"inputTokens": 50, "outputTokens": 9},
            },
            {"surfaceOp": "append"},
        ),
        ("step/end", {"turn": 1, "step": 2}, {}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, {}),
    ]
    events = [
        {"type": etype, "seq": seq, "time": 1790000000100 + 10 * seq, "data": data, **extra}
        for seq, (etype, data, extra) in enumerate(rows)
    ]
    return header, events


@pytest.fixture(scope="session")
def v3_raw() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(header, events)`` of :func:`v3_raw_session`; copy before changing them."""
    return v3_raw_session()


@pytest.fixture
def v3_log(tmp_path: Path) -> Path:
    """A small valid v3 session written as ``session.v3.jsonl.zstd`` in a fresh directory."""
    from ctxsdk.session import Session

    header, events = v3_raw_session()
    return Session.from_events(header, events).save(tmp_path / "session.v3.jsonl.zstd")


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (scripts are not part of the package), loaded once."""
    module_name = f"_ctxsdk_scripts_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None, f"scripts/{name}.py is missing"
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def started_postgres() -> Iterator[LocalPostgres]:
    """A real PostgreSQL server (``ctxsdk.testing.LocalPostgres``) for a fixture to yield,
    stopped after. Without one the test skips, but under ``CI=true`` it fails: CI never
    skips the PostgreSQL backend silently."""
    from ctxsdk.errors import DataMissing, ServerError
    from ctxsdk.testing import LocalPostgres

    server = LocalPostgres()
    try:
        server.start()
    except (DataMissing, ServerError) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true, and no PostgreSQL server could be started: {exc}")
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    """One real PostgreSQL server for the whole run (``started_postgres``)."""
    yield from started_postgres()


_database_numbers = itertools.count(1)


@pytest.fixture
def postgres_dsn(postgres_server: LocalPostgres) -> Iterator[str]:
    """The DSN (user ``ctxsdk``) of a fresh database on ``postgres_server``, one per test;
    dropped after it (open connections are cut)."""
    name = f"test_{next(_database_numbers)}"
    yield postgres_server.create_database(name)
    postgres_server.drop_database(name)


@pytest.fixture(autouse=True)
def _lexical_memory_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Memory(path)`` embeds with the best installed local embedder by default; the suite
    runs lexically (fast, and the same with or without the ``embed`` extra). A test of
    embeddings passes its embedder, or sets ``CTXSDK_EMBEDDER`` itself."""
    monkeypatch.setenv("CTXSDK_EMBEDDER", "none")
