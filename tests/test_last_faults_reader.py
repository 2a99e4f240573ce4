"""Faults of the session reader, each closed by refusing as the harness refuses, with real files.

- a zstd bomb is refused at a limit the caller sets (``Session.open(max_bytes=...)``, a 1 GiB
  default), while it streams, not after inflating all of it; ``Workspace.open`` uses the
  workspace's limit;
- ``strict=True`` refuses a ``turn/end`` reason the harness's types do not have;
- a v0 header whose ``cwd`` is not absolute is refused on every read, as the harness's
  released v0 header codec refuses it (a ``{{cwd}}`` template placeholder aside);
- ``adapterDefaults`` outside the harness's whitelist is refused without ``strict``;
- a session directory holding one generation in both encodings is refused, naming both files.

The bomb cases run in a child process with a timeout and an address-space limit, so a
regression fails instead of hanging or exhausting the machine.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.samples import SAMPLES_HOME
from ctxsdk.session._codec import MAX_DECODED_BYTES, read_log

from ._logs import small_v3

TIMEOUT = 120.0  # seconds a child may take before it counts as hung


def _write(path: Path, head: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, separators=(",", ":")) for r in [head, *events]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _v0_log(tmp_path: Path, cwd: Any, *, stripped: bool = False) -> Path:
    head: dict[str, Any] = {"type": "session", "version": 0, "id": "v0-rel", "createdAt": 1}
    if cwd is not None:
        head["cwd"] = cwd
    head["delegationDepth"] = 0
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {
            "type": "turn/end",
            "seq": 1,
            "time": 2,
            "data": {"turn": 1, "reason": {"kind": "completed"}},
        },
    ]
    if stripped:
        events = [{k: v for k, v in e.items() if k not in ("seq", "time")} for e in events]
    return _write(tmp_path / ("st" if stripped else "s") / "session.jsonl", head, events)


# --- 2. a zstd bomb is refused at a limit the caller can raise --------------------------------


def _rle_bomb(total: int) -> bytes:
    """One zstd frame of RLE blocks: 4 bytes per 128 KiB of zeros (about 131 KB inflate to
    4 GiB), no declared content size, so only counting what it decodes catches it."""
    block = 1 << 17
    n = -(-total // block)
    body = ((block << 3) | 2).to_bytes(3, "little") + b"\0"  # an RLE block, not the last
    last = ((block << 3) | 3).to_bytes(3, "little") + b"\0"
    return b"\x28\xb5\x2f\xfd\x00\x38" + body * (n - 1) + last  # window 128 KiB


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, dest)
    return dest


def _bombed(home: Path, total: int) -> Path:
    """A real session's log with a bomb frame appended after its complete frames."""
    log = sorted((home / "sessions").rglob("session*.jsonl.zstd"))[0]
    log.write_bytes(log.read_bytes() + _rle_bomb(total))
    return log


_CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import ctxsdk as cx
path, limit = sys.argv[1], sys.argv[2]
kw = {} if limit == "default" else {"max_bytes": int(limit)}
t = time.monotonic()
try:
    cx.Session.open(path, **kw)
    out = None
except BaseException as exc:
    out = [type(exc).__name__, str(exc), isinstance(exc, cx.errors.SessionFormatError)]
# the peak of this process's own memory (VmHWM): ru_maxrss would carry the parent's peak
# across exec (a forked pytest process of a gigabyte)
peak_mb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024
print(json.dumps({"error": out, "peak_mb": peak_mb, "seconds": time.monotonic() - t}))
"""


def _child_open(path: Path, limit: str = "default") -> dict[str, Any]:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), limit],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"Session.open did not return within {TIMEOUT:.0f} s (hung)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_a_4_gib_bomb_is_refused_at_the_default_limit_not_after_inflating_it(home: Path) -> None:
    log = _bombed(home, (4 << 30) + (1 << 20))
    assert log.stat().st_size < 200_000  # a few frames of a sample, and ~131 KB of bomb
    out = _child_open(log)
    assert out["error"] is not None, out
    name, message, is_format_error = out["error"]
    assert is_format_error and name == "SessionFormatError", out
    assert str(log) in message and "1 GiB" in message and "max_bytes=" in message
    assert "Session.open" in message  # says how to raise it
    assert out["peak_mb"] < 1800, out  # stopped at the 1 GiB limit, never near the 4 GiB
    assert MAX_DECODED_BYTES == 1 << 30


def test_the_limit_is_a_parameter_of_session_open(home: Path) -> None:
    log = _bombed(home, 64 << 20)
    out = _child_open(log, str(1 << 20))
    _name, message, is_format_error = out["error"]
    assert is_format_error and "more than 1 MiB" in message and str(log) in message
    # in this process: the refusal is a located SessionFormatError, and nothing was changed
    before = log.read_bytes()
    with pytest.raises(errors.SessionFormatError, match=r"max_bytes=1048576") as info:
        cx.Session.open(log, max_bytes=1 << 20)
    assert info.value.path == str(log) and log.read_bytes() == before
    # a limit above the bomb decodes it (and then refuses the text for what it is)
    with pytest.raises(errors.CorruptLog):
        cx.Session.open(log, max_bytes=128 << 20)
    # a real log under a generous limit opens; a plain one larger than the limit is refused
    ok = sorted((home / "sessions").rglob("session*.jsonl.zstd"))[-1]
    assert cx.Session.open(ok, max_bytes=64 << 20).events
    plain = cx.Session.open(ok).save(home / "plain" / "session.v3.jsonl", compression="none")
    with pytest.raises(errors.SessionFormatError, match=r"max_bytes=100\b"):
        cx.Session.open(plain, max_bytes=100)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "1", True, None])
def test_a_limit_that_is_not_a_positive_count_is_refused(home: Path, bad: Any) -> None:
    log = sorted((home / "sessions").rglob("session*.jsonl.zstd"))[0]
    with pytest.raises(errors.InvalidArgument, match="max_bytes"):
        cx.Session.open(log, max_bytes=bad)


def test_workspace_open_reads_under_the_workspace_limit(home: Path) -> None:
    log = _bombed(home, 8 << 20)
    ws = cx.Workspace(home, cache=False, max_bytes=1 << 20)
    rows = {r["path"]: r for r in ws.sessions().to_dicts()}
    row = rows[str(log)]
    assert not row["readable"] and "1 MiB" in row["error"]  # listed with its error
    with pytest.raises(errors.SessionFormatError, match="more than 1 MiB"):
        ws.open(row["id"])
    with pytest.raises(errors.CorruptLog):  # the caller's own limit wins
        ws.open(row["id"], max_bytes=64 << 20)


# --- 4. strict refuses a turn/end reason outside the harness's set ----------------------------


def _with_reason(tmp_path: Path, reason: Any) -> Path:
    head, events = small_v3()
    events = copy.deepcopy(events)
    assert events[-1]["type"] == "turn/end"
    events[-1]["data"]["reason"] = reason
    return _write(tmp_path / "s" / "session.v3.jsonl", head, events)


GOOD_REASONS: list[dict[str, Any]] = [
    {"kind": "completed"},
    {"kind": "blocked"},
    {"kind": "max-tokens"},
    {"kind": "interrupted"},
    {"kind": "aborted", "reason": {"kind": "user"}},
    {"kind": "aborted", "reason": {"kind": "parent"}},
    {"kind": "aborted", "reason": {"kind": "disposed"}},
    {"kind": "aborted", "reason": {"kind": "legacy"}},
    {"kind": "aborted", "reason": {"kind": "hook", "reason": "policy"}},
    {"kind": "error", "error": {"message": "boom", "code": "PROVIDER_ERROR"}},
    {"kind": "error", "error": {"message": "m", "code": "C", "status": 503, "requestId": "r"}},
]

BAD_REASONS: list[tuple[Any, str]] = [
    ({"kind": "bogus"}, "bogus"),
    ({"kind": ""}, "kind"),
    ({"kind": "completed", "extra": 1}, "extra"),
    ({"kind": "aborted"}, "reason"),
    ({"kind": "aborted", "reason": {"kind": "whim"}}, "whim"),
    ({"kind": "aborted", "reason": {"kind": "hook"}}, "reason"),
    ({"kind": "error"}, "error"),
    ({"kind": "error", "error": {"message": "m"}}, "code"),
    ({"kind": "error", "error": {"message": "m", "code": "C", "status": 99}}, "status"),
]


@pytest.mark.parametrize("reason", GOOD_REASONS)
def test_strict_reads_every_reason_the_harness_writes(tmp_path: Path, reason: Any) -> None:
    s = cx.Session.open(_with_reason(tmp_path, reason), strict=True)
    assert s.raw_events[-1]["data"]["reason"] == reason


@pytest.mark.parametrize(("reason", "named"), BAD_REASONS)
def test_strict_refuses_a_reason_outside_the_harness_set(
    tmp_path: Path, reason: Any, named: str
) -> None:
    path = _with_reason(tmp_path, reason)
    before = path.read_bytes()
    s = cx.Session.open(path)  # the harness's codec reads an unknown kind: so does the default
    assert s.raw_events[-1]["data"]["reason"] == reason
    with pytest.raises(errors.SessionFormatError, match="turn/end") as info:
        cx.Session.open(path, strict=True)
    err = info.value
    assert err.seq == len(s.raw_events) - 1 and err.path == str(path)
    assert named in str(err) and "completed" in str(err)  # names what is wrong and the set
    assert path.read_bytes() == before


# --- 5. a v0 header cwd that is not absolute is refused, as the harness refuses it ------------


@pytest.mark.parametrize("cwd", ["rel/dir", ".", "", "~/proj", "w"])
def test_a_relative_v0_cwd_is_refused_on_read(tmp_path: Path, cwd: str) -> None:
    path = _v0_log(tmp_path, cwd)
    for strict in (False, True):
        with pytest.raises(errors.SessionFormatError, match="cwd must be absolute") as info:
            cx.Session.open(path, strict=strict)
        assert info.value.line == 1 and info.value.path == str(path)
        assert repr(cwd) in str(info.value)
    with pytest.raises(errors.SessionFormatError, match="cwd must be absolute"):
        read_log(path)
    with pytest.raises(errors.SessionFormatError, match="cwd must be absolute"):
        cx.Session.from_events(json.loads(path.read_text().splitlines()[0]), [])


@pytest.mark.parametrize("cwd", ["/home/u/proj", None])
def test_an_absolute_or_absent_v0_cwd_still_opens(tmp_path: Path, cwd: str | None) -> None:
    assert cx.Session.open(_v0_log(tmp_path, cwd), strict=True).header.cwd == cwd


@pytest.mark.parametrize("stripped", [True, False])
def test_a_template_placeholder_cwd_still_reads(tmp_path: Path, stripped: bool) -> None:
    # The harness's snapshot fixtures carry "{{cwd}}", which its test harness fills in
    # before the harness reads them; a copy saved with real seqs keeps it.
    s = cx.Session.open(_v0_log(tmp_path, "{{cwd}}", stripped=stripped))
    assert s.header.cwd == "{{cwd}}"
    with pytest.raises(errors.SessionFormatError, match="cwd must be absolute"):
        s.save(tmp_path / "up", version=1)  # the migration still refuses it, as the harness's


# --- 6. adapterDefaults outside the harness's whitelist, refused without strict --------------


def _adapter_log(tmp_path: Path, defaults: Any, config: dict[str, Any] | None = None) -> Path:
    head, events = small_v3()
    events = copy.deepcopy(events)
    rh = next(e for e in events if e["type"] == "request/header")
    rh["data"]["header"]["config"].update(config or {})
    rh["data"]["header"]["adapterDefaults"] = defaults
    return _write(tmp_path / "s" / "session.v3.jsonl", head, events)


@pytest.mark.parametrize(
    ("defaults", "config", "named"),
    [
        ({"temperature": True}, {"temperature": 0.5}, "temperature"),
        ({"reasoningEffort": 1}, {"reasoningEffort": "high"}, "reasoningEffort"),
        ({"reasoningEffort": False}, {"reasoningEffort": "high"}, "reasoningEffort"),
        ({"maxTokens": True}, {}, "maxTokens"),
        ([], {}, "object"),
        ("x", {}, "object"),
    ],
)
def test_adapter_defaults_outside_the_whitelist_are_refused(
    tmp_path: Path, defaults: Any, config: dict[str, Any], named: str
) -> None:
    path = _adapter_log(tmp_path, defaults, config)
    before = path.read_bytes()
    seq = next(i for i, line in enumerate(before.splitlines()[1:]) if b"request/header" in line)
    for strict in (False, True):
        with pytest.raises(errors.SessionFormatError, match="adapter") as info:
            cx.Session.open(path, strict=strict)
        assert info.value.seq == seq and info.value.path == str(path)
        assert named in str(info.value)
    assert path.read_bytes() == before


def test_adapter_defaults_inside_the_whitelist_open(tmp_path: Path) -> None:
    path = _adapter_log(
        tmp_path,
        {"reasoningEffort": True, "maxTokens": True},
        {"reasoningEffort": "high", "maxTokens": 100},
    )
    assert cx.Session.open(path, strict=True).raw_events


# --- 7. one generation in both encodings: refused, naming both --------------------------------


@pytest.mark.parametrize("version", [0, 3])
def test_a_session_dir_with_both_encodings_is_refused(tmp_path: Path, version: int) -> None:
    if version == 3:
        head, events = small_v3()
        s = cx.Session.from_events(head, events)
    else:
        s = cx.Session.open(_v0_log(tmp_path / "src", "/w"))
    d = tmp_path / "both"
    name = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    plain = s.save(d / name, compression="none")
    packed = s.save(d / (name + ".zstd"), compression="zstd")
    with pytest.raises(errors.SessionFormatError) as info:
        cx.Session.open(d)
    msg = str(info.value)
    assert plain.name in msg and packed.name in msg and str(d) in msg
    assert "remove" in msg  # and says what to do
    # either file, named directly, opens
    assert cx.Session.open(plain).id == cx.Session.open(packed).id == s.id
    # a higher generation beside an older one in the other encoding is the usual migration
    other = tmp_path / "mixed"
    s3 = cx.Session.from_events(*small_v3())
    s3.save(other / "session.v3.jsonl", compression="none")
    (other / "session.jsonl.zstd").write_bytes(b"")  # older generation: not read
    assert cx.Session.open(other).path == other / "session.v3.jsonl"
