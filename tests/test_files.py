"""The one way a reader opens a file it was handed (``ctxsdk.session._files``): only a regular
file, opened non-blocking, read up to a cap, refused in the caller's own error.

A FIFO would block an ordinary ``open`` for ever, so the FIFO case runs in a child process
with a timeout: a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxsdk.session._files import file_kind, size_text
from ctxsdk.session.kernel import open_regular_file, read_regular_file

TIMEOUT = 60.0


class Refused(Exception):
    def __init__(self, problem: str, detail: str) -> None:
        super().__init__(f"{problem}: {detail}")
        self.problem = problem
        self.detail = detail


def test_a_regular_file_is_read_whole_up_to_the_cap(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"x" * 1000)
    assert read_regular_file(p, 1000, Refused) == b"x" * 1000
    with pytest.raises(Refused) as err:
        read_regular_file(p, 999, Refused)
    assert err.value.problem == "too-large" and err.value.detail == "1,000 bytes"
    with open_regular_file(p, Refused) as fd:
        assert os.read(fd, 3) == b"xxx"


def test_what_is_not_a_regular_file_is_refused_by_what_it_is(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    cases = {tmp_path / "d": "a directory"}
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "zero")
        cases[tmp_path / "zero"] = "a character device"
    for path, kind in cases.items():
        with pytest.raises(Refused) as err:
            read_regular_file(path, 1 << 20, Refused)
        assert (err.value.problem, err.value.detail) == ("not-a-file", kind)


def test_the_system_names_what_it_knows(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "absent", 10, Refused)
    os.symlink("loop", tmp_path / "loop")
    with pytest.raises(OSError):
        read_regular_file(tmp_path / "loop", 10, Refused)


_FIFO_CHILD = r"""
import json, sys
from ctxsdk.session.kernel import read_regular_file
try:
    read_regular_file(sys.argv[1], 100, lambda problem, detail: ValueError(problem, detail))
except ValueError as exc:
    print(json.dumps(list(exc.args)))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _FIFO_CHILD, str(fifo)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a FIFO did not return within {TIMEOUT:.0f} s (hung)")
    assert json.loads(proc.stdout) == ["not-a-file", "a FIFO (named pipe)"], proc.stderr


def test_kinds_and_sizes_read_as_words() -> None:
    assert file_kind(0o100644) is None
    assert file_kind(0o010644) == "a FIFO (named pipe)"
    assert size_text(256 << 20) == "256 MiB" and size_text(1000) == "1000 bytes"


def test_a_name_the_file_system_cannot_encode_is_no_such_file(tmp_path: Path) -> None:
    """A lone surrogate cannot be a file name: the caller hears "no such file", as for any
    missing path, not a bare ``UnicodeEncodeError``."""
    for name in ("\ud800", "log-\udfff.jsonl"):
        with pytest.raises(FileNotFoundError):
            read_regular_file(tmp_path / name, 10, Refused)
