"""The public surface: exported names, lazy imports, the error tree."""

from __future__ import annotations

import subprocess
import sys

import ctxsdk as cx
from ctxsdk import errors


def test_exported_names() -> None:
    assert set(cx.__all__) == {
        "LLM",
        "ToolRegistry",
        "run_agent",
        "Event",
        "Message",
        "Session",
        "SessionHeader",
        "Surface",
        "SurfaceNode",
        "TokenUsage",
        "Turn",
        "Workspace",
        "__version__",
        "errors",
    }
    for name in cx.__all__:
        assert getattr(cx, name) is not None
    assert set(dir(cx)) >= set(cx.__all__)


def test_import_is_light() -> None:
    code = (
        "import sys, ctxsdk\n"
        "heavy = {'polars', 'tiktoken', 'tokenizers', 'anywidget', 'networkx', 'httpx', 'pydantic'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_error_tree() -> None:
    assert issubclass(errors.SessionFormatError, errors.CtxError)
    assert issubclass(errors.SessionFormatError, ValueError)
    assert issubclass(errors.UnsupportedVersion, errors.SessionFormatError)
    assert issubclass(errors.CorruptLog, errors.SessionFormatError)
    assert issubclass(errors.NotFound, KeyError)
    assert issubclass(errors.LockHeld, BlockingIOError)
    assert issubclass(errors.WriteError, OSError)
    assert issubclass(errors.SurfaceError, ValueError)
    err = errors.SessionFormatError("bad", path="/x/s.jsonl", line=3, frame=2, seq=1)
    assert str(err) == "/x/s.jsonl, zstd frame 2, line 3, seq 1: bad"
    assert str(errors.NotFound("no such session")) == "no such session"
    for name in errors.__all__:
        assert getattr(errors, name).__module__ == "ctxsdk.errors"
