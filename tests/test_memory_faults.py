"""A memory file that is not a regular file, a damaged one, odd values in a log, and bad
command-line arguments: each is refused with a ``CtxError`` that says what and where, never a
hang, a traceback or a raw ``sqlite3`` / ``json`` error.

Every case uses real files: FIFOs made with ``os.mkfifo``, ``/dev/zero`` behind a symlink, a
character device, a memory made by ingesting a sample session and then damaged byte by byte
or with ``sqlite3`` directly. Calls that would hang if they regressed (opening a FIFO) run in a
child process with a timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 60.0  # seconds a child may take before the call counts as hung


# --- 1. a memory path that is not a regular file -------------------------------------------

_OPEN_CHILD = r"""
import json, sys
import ctxsdk as cx
try:
    cx.Memory(sys.argv[1]).close()
except Exception as exc:
    print(json.dumps([type(exc).__name__, str(exc), isinstance(exc, cx.errors.CtxError)]))
else:
    print(json.dumps(None))
"""


def _child(*argv: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, *argv],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT,
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "DSH_HOME": "/nonexistent"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv[-1]}: no answer within {TIMEOUT:.0f} s (hung)")


def _not_regular_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Name -> (path, the word its error must hold), for what this platform has."""
    out: dict[str, tuple[Path, str]] = {}
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.db")
        out["fifo"] = (tmp_path / "fifo.db", "FIFO")
        os.symlink(tmp_path / "fifo.db", tmp_path / "to-fifo.db")
        out["symlink to a fifo"] = (tmp_path / "to-fifo.db", "FIFO")
    (tmp_path / "dir.db").mkdir()
    out["directory"] = (tmp_path / "dir.db", "directory")
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "zero.db")
        out["/dev/zero via a symlink"] = (tmp_path / "zero.db", "character device")
    if os.path.exists("/dev/null"):
        out["a character device"] = (Path("/dev/null"), "character device")
    return out


@pytest.fixture
def not_regular(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    return _not_regular_paths(tmp_path)


def test_memory_refuses_a_path_that_is_not_a_regular_file(
    tmp_path: Path, not_regular: dict[str, tuple[Path, str]]
) -> None:
    from ctxsdk.errors import InvalidArgument

    for name, (path, word) in not_regular.items():
        proc = _child("-c", _OPEN_CHILD, str(path))
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got is not None, f"{name}: opened as a memory"
        kind, message, is_ctx = got
        assert is_ctx and kind == InvalidArgument.__name__, (name, got)
        assert str(path) in message and word in message, (name, message)
        assert "not a regular file" in message, (name, message)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(("-wal", "-shm"))]


def test_cli_memory_show_refuses_a_path_that_is_not_a_regular_file(
    not_regular: dict[str, tuple[Path, str]],
) -> None:
    for name, (path, word) in not_regular.items():
        proc = _child("-m", "ctxsdk", "memory", str(path), "show")
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), (name, proc.stderr)
        assert str(path) in lines[0] and word in lines[0], (name, lines[0])
        assert "Traceback" not in proc.stderr and proc.stdout == ""
