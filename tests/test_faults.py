"""A failed write leaves the old bytes as they were, in every path (issue 9).

The failures are real, not mocked: the write runs in a child process whose file size limit
(``RLIMIT_FSIZE``) stops it part way, with ``SIGXFSZ`` ignored so the kernel answers
``EFBIG``; or it targets a read-only directory. Afterwards the files are byte-identical,
nothing new is left behind, and the error is a ``WriteError`` that names the file.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import WriteError
from ctxsdk.session._codec import frame_spans
from ctxsdk.testing import LogBuilder

REPO = Path(__file__).resolve().parents[1]

_PRELUDE = r"""
import json, os, resource, signal, sys
import ctxsdk as cx
from ctxsdk.errors import WriteError

arg = json.loads(sys.argv[1])

def pending(s):
    # A title with an incompressible text, so the batch is larger than any slack we allow.
    title = {"title": arg["title"], "messageSeqs": [], "source": {"kind": "user"}}
    return s.append([{"type": "session/title", "data": title, "time": 5}])

def limited(fn):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (arg["limit"], hard))
    try:
        fn()
    except BaseException as exc:
        out = {"type": type(exc).__name__, "write_error": isinstance(exc, WriteError),
               "errno": getattr(exc, "errno", None), "message": str(exc)}
    else:
        out = {"type": None}
    print(json.dumps(out))
"""


def _run(body: str, **arg: Any) -> dict[str, Any]:
    arg.setdefault("title", os.urandom(3000).hex())
    proc = subprocess.run(
        [sys.executable, "-c", _PRELUDE + body, json.dumps(arg)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _log(tmp_path: Path, version: int, compression: str) -> Path:
    b = LogBuilder(version=version)
    b.turn("list the files").assistant("README.md and src").end_turn()
    b.turn("thanks").assistant("welcome").end_turn()
    name = f"session{f'.v{version}' if version else ''}.jsonl"
    name += ".zstd" if compression == "zstd" else ""
    return b.write(tmp_path / "home" / "sessions" / "p" / b.header["id"] / name, compression)  # type: ignore[arg-type]


def _listing(directory: Path) -> list[str]:
    """Every path under ``directory`` (the v3 lease file aside: it is not log data)."""
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if p.name != "session.lock"
    )


def _assert_refused(out: dict[str, Any], path: Path) -> None:
    assert out["type"] == "WriteError" and out["write_error"], out
    assert out["errno"] == errno.EFBIG, out
    assert str(path) in out["message"], out


# --- append ----------------------------------------------------------------------------------

APPEND = """
s = pending(cx.Session.open(arg["path"]))
limited(s.append_to_log)
"""


@pytest.mark.parametrize("compression", ["zstd", "none"])
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_append_past_the_size_limit_leaves_the_log_byte_identical(
    tmp_path: Path, version: int, compression: str
) -> None:
    path = _log(tmp_path, version, compression)
    before, listing = path.read_bytes(), _listing(tmp_path)
    out = _run(APPEND, path=str(path), limit=len(before) + 16)  # room for 16 bytes of it
    _assert_refused(out, path)
    assert path.read_bytes() == before
    assert _listing(tmp_path) == listing
    # The log is whole: the same append goes through once the limit is gone.
    s = cx.Session.open(path)
    assert s.recovery is None
    title = {"title": "after", "messageSeqs": [], "source": {"kind": "user"}}
    after = s.append([{"type": "session/title", "data": title, "time": 5}]).append_to_log()
    assert after.title == "after" and path.read_bytes().startswith(before)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_append_that_repairs_a_torn_tail_and_fails_puts_the_tail_back(
    tmp_path: Path, compression: str
) -> None:
    path = _log(tmp_path, 3, compression)
    whole = path.read_bytes()
    if compression == "zstd":
        spans, _ = frame_spans(whole)
        a, b = spans[1]
        torn = whole + whole[a : b - 6]  # a torn frame after the last complete one
    else:
        torn = whole + b'{"type":"session/title","seq":99,"ti'  # a torn last line
    path.write_bytes(torn)
    # The repair overwrites the torn tail in place; the limit stops it just past the old end.
    out = _run(
        "import warnings\nwarnings.simplefilter('ignore')\n" + APPEND,
        path=str(path),
        limit=len(torn) + 1,
    )
    _assert_refused(out, path)
    assert path.read_bytes() == torn  # the torn bytes are back, byte for byte


# --- save ------------------------------------------------------------------------------------

SAVE = """
s = pending(cx.Session.open(arg["path"]))
limited(lambda: s.save(arg["dest"], overwrite=arg["overwrite"]))
"""


def test_save_past_the_size_limit_leaves_nothing(tmp_path: Path) -> None:
    path = _log(tmp_path, 3, "zstd")
    dest = tmp_path / "out" / "deeper" / "copy.jsonl.zstd"  # directories save would create
    out = _run(SAVE, path=str(path), dest=str(dest), overwrite=False, limit=256)
    _assert_refused(out, dest)
    assert not (tmp_path / "out").exists()  # no temp file, no directory it made


def test_save_over_a_file_past_the_size_limit_keeps_its_bytes(tmp_path: Path) -> None:
    path = _log(tmp_path, 2, "none")
    dest = tmp_path / "copy" / "session.v2.jsonl"
    cx.Session.open(path).save(dest)
    before, listing = dest.read_bytes(), sorted(os.listdir(dest.parent))
    out = _run(SAVE, path=str(path), dest=str(dest), overwrite=True, limit=len(before) + 16)
    _assert_refused(out, dest)
    assert dest.read_bytes() == before
    assert sorted(os.listdir(dest.parent)) == listing  # no temp file left


# --- fork ------------------------------------------------------------------------------------

FORK = """
s = cx.Session.open(arg["path"])
limited(lambda: s.fork(child_id="kid"))
"""


@pytest.mark.parametrize("version", [1, 3])
def test_fork_past_the_size_limit_leaves_no_child(tmp_path: Path, version: int) -> None:
    path = _log(tmp_path, version, "zstd")
    listing = _listing(tmp_path)
    out = _run(FORK, path=str(path), limit=path.stat().st_size // 2)
    assert out["type"] == "WriteError" and out["errno"] == errno.EFBIG, out
    assert str(path.parent.parent / "kid") in out["message"], out
    assert _listing(tmp_path) == listing  # no child session directory, no temp file
    assert not (path.parent.parent / "kid").exists()


# --- a read-only directory ---------------------------------------------------------------------

needs_permissions = pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root ignores directory permissions; the RLIMIT_FSIZE tests cover these paths",
)


@needs_permissions
def test_save_into_a_read_only_directory(tmp_path: Path) -> None:
    s = cx.Session.open(_log(tmp_path, 3, "zstd"))
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        dest = ro / "copy.jsonl.zstd"
        with pytest.raises(WriteError) as info:
            s.save(dest)
        assert str(dest) in str(info.value)
        assert os.listdir(ro) == []
        with pytest.raises(WriteError, match=str(ro / "sub")):
            s.save(ro / "sub" / "copy.jsonl")
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o700)


@needs_permissions
def test_fork_into_a_read_only_project_directory(tmp_path: Path) -> None:
    path = _log(tmp_path, 3, "zstd")
    project = path.parent.parent
    listing = sorted(os.listdir(project))
    project.chmod(0o500)
    try:
        with pytest.raises(WriteError) as info:
            cx.Session.open(path).fork(child_id="kid")
        assert str(project / "kid") in str(info.value)
        assert sorted(os.listdir(project)) == listing
    finally:
        project.chmod(0o700)


def test_a_failed_save_is_a_write_error_not_a_bare_os_error(tmp_path: Path) -> None:
    # A file where a directory must go: the OS refuses (ENOTDIR) whoever runs the test.
    s = cx.Session.open(_log(tmp_path, 3, "zstd"))
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"x")
    dest = blocker / "sub" / "copy.jsonl.zstd"
    with pytest.raises(WriteError) as info:
        s.save(dest)
    assert str(dest) in str(info.value) and blocker.read_bytes() == b"x"
    with pytest.raises(WriteError) as fork_info:
        s.fork(child_id="kid", dest_root=blocker)
    assert str(blocker) in str(fork_info.value) and blocker.read_bytes() == b"x"
