"""Fuzzing the DSH codec, the surface replay and the edit API with hypothesis.

Every property starts from valid logs (the three upstream v0 fixtures, re-saved with real seqs,
as plain JSONL and as zstd frame chains; a small hand-built v3 session and an edited copy of it;
the project's samples when they exist) and damages them:

- bytes: truncation at any offset, flipped, inserted and deleted bytes, appended garbage;
- JSON: wrong, missing or duplicated seqs, bad times, unknown envelope keys, unknown event
  types, random replace ops, tool/result rewrites that change more than the content, bad
  headers, damaged packed chunk rows;
- the API: random ``replace`` spans, ``rewrite_tool_result`` seqs, appends to a changed file.

The contract checked everywhere: a read either succeeds (a dropped torn tail is reported in
``s.recovery`` and a ``LogRecoveryWarning``) or raises a ``ctxsdk.errors.CtxError`` that names
the file, the line or zstd frame, and the seq of a bad event; no other exception escapes; a
read never changes the file it read; a refused edit changes nothing. The importers are fuzzed
the same way: a damaged foreign log imports or raises ``ImportFormatError``.

Every read and import is counted; the terminal summary shows one line, ``fuzz: N cases, R
refused with a located error, O opened, 0 escapes`` (an escape also fails its test).
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import itertools
import json
import os
import tempfile
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxsdk.errors import (
    CtxError,
    LogRecoveryWarning,
    SessionFormatError,
    SurfaceError,
    UnknownEventType,
    UnsupportedVersion,
    WriteError,
)
from ctxsdk.memory import Memory
from ctxsdk.merge import Merge
from ctxsdk.session import Session
from ctxsdk.session._codec import encode_source_seqs, frame_spans, resolve_log_path
from ctxsdk.session._file_writer import write_new
from ctxsdk.session._models import is_known_type

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "data" / "dsh-fixtures"
DATA = FIXTURES.parent
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SAMPLE_MAX_BYTES = 64_000  # bigger samples make each example slow without finding more

# FUZZ_SCALE=20 pytest tests/test_fuzz.py runs twenty times as many examples.
_SCALE = int(os.environ.get("FUZZ_SCALE", "1"))


# Every input the properties read or import, by outcome: "refused" (a located error of the
# ctxsdk.errors tree), "opened", "escaped" (any other exception: the test fails too).
OUTCOMES: Counter[str] = Counter()


def _summary_line() -> str | None:
    cases = sum(OUTCOMES.values())
    if not cases:
        return None
    return (
        f"fuzz: {cases} cases, {OUTCOMES['refused']} refused with a located error, "
        f"{OUTCOMES['opened']} opened, {OUTCOMES['escaped']} escapes"
    )


class _FuzzSummary:
    """Prints the counts once, in the terminal summary (a pytest plugin object)."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        line = _summary_line()
        if line is not None:
            terminalreporter.write_line(line)


@pytest.fixture(scope="module", autouse=True)
def _report_counts(request: pytest.FixtureRequest) -> None:
    plugins = request.config.pluginmanager
    if plugins.get_plugin("ctxsdk-fuzz-summary") is None:
        plugins.register(_FuzzSummary(), "ctxsdk-fuzz-summary")


def fuzz(examples: int) -> settings:
    """Hypothesis settings for one property; the whole file runs in ~30 s on 2 cores."""
    return settings(
        max_examples=examples * _SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- the corpus of valid logs --------------------------------------------------------------


class Base:
    """One valid log file: its canonical file name, bytes, and how to open it.

    A plain class (not a dataclass) so that hypothesis prints the short repr, not the bytes.
    """

    def __init__(
        self, label: str, name: str, data: bytes, version: int, normalized: bool = False
    ) -> None:
        self.label, self.name, self.data = label, name, data
        self.version, self.normalized = version, normalized
        self.strict_clean = False  # whether Session.open(strict=True) reads it unchanged

    @property
    def zstd(self) -> bool:
        return self.data[:4] == ZSTD_MAGIC

    def __repr__(self) -> str:
        return f"<{self.label} {self.name}, {len(self.data)} bytes>"


class Corpus:
    """The valid logs every property starts from (short repr for hypothesis reports)."""

    def __init__(self, bases: list[Base]) -> None:
        self.bases = bases

    def __iter__(self) -> Iterator[Base]:
        return iter(self.bases)

    def __repr__(self) -> str:
        return f"<corpus of {len(self.bases)} logs>"


def _file_name(version: int, zstd: bool) -> str:
    return "session" + (f".v{version}" if version else "") + ".jsonl" + (".zstd" if zstd else "")


def _pack_chunks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v0 rows with every run of 3+ packable ``assistant/chunk`` deltas packed, as the harness
    writes them (spec §2.4)."""
    kinds = {
        "text-delta": ("text-chunks", "texts", "text"),
        "reasoning-delta": ("reasoning-chunks", "texts", "text"),
        "tool-call-delta": ("tool-call-chunks", "args", "argumentsDelta"),
    }

    def key(ev: dict[str, Any]) -> tuple[Any, ...] | None:
        """What a run must share to be packed; None for an event that cannot be packed."""
        if ev["type"] != "assistant/chunk" or set(ev) != {"type", "seq", "time", "data"}:
            return None
        data = ev["data"]
        if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
            return None
        chunk = data["chunk"]
        kind = kinds.get(chunk.get("type")) if isinstance(chunk, dict) else None
        if kind is None or not isinstance(chunk.get(kind[2]), str):
            return None
        if kind[0] == "tool-call-chunks":
            if "id" not in chunk or not set(chunk) <= {"type", "index", "id", "name", kind[2]}:
                return None
        elif set(chunk) != {"type", "index", kind[2]}:
            return None
        name = (chunk.get("id"), "name" in chunk, chunk.get("name"))
        return (kind[0], data["turn"], data["step"], chunk.get("index"), *name)

    rows: list[dict[str, Any]] = []
    i = 0
    while i < len(events):
        k = key(events[i])
        j = i
        while k is not None and j + 1 < len(events) and key(events[j + 1]) == k:
            j += 1
        if k is None or j - i < 2:
            rows.append(events[i])
            i += 1
            continue
        run = events[i : j + 1]
        row_type, turn, step, index, call_id, has_name, name = k
        member_key = "args" if row_type == "tool-call-chunks" else "texts"
        text_key = "argumentsDelta" if row_type == "tool-call-chunks" else "text"
        data: dict[str, Any] = {"turn": turn, "step": step, "index": index}
        if row_type == "tool-call-chunks":
            data["id"] = call_id
            if has_name:
                data["name"] = name
        data["dt"] = [b["time"] - a["time"] for a, b in itertools.pairwise(run)]
        data[member_key] = [ev["data"]["chunk"][text_key] for ev in run]
        rows.append(
            {"type": row_type, "seq0": run[0]["seq"], "time0": run[0]["time"], "data": data}
        )
        i = j + 1
    return rows


def _raw_header(s: Session) -> dict[str, Any]:
    """The header line exactly as read (the typed ``s.header`` may normalize it)."""
    return dict(s._header_raw)


def _write_rows(path: Path, header: Any, rows: list[Any]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *rows]))


def _build_corpus(tmp: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[Base]:
    bases: list[Base] = []

    def add(label: str, session: Session, *, batch: int | None = None, zstd: bool) -> None:
        d = tmp / f"{label.replace(':', '-')}-{'zstd' if zstd else 'plain'}-{batch}"
        d.mkdir()
        name = _file_name(session.version, zstd)
        if batch is None:
            path = session.save(d / name, compression="zstd" if zstd else "none")
        else:  # many small frames: more frame boundaries to cut at
            path = write_new(
                d / name,
                _raw_header(session),
                list(session.raw_events),
                compression="zstd" if zstd else "none",
                batch_size=batch,
            )
        bases.append(Base(label, name, path.read_bytes(), session.version))

    header, events = copy.deepcopy(v3_raw)
    v3 = Session.from_events(header, events)
    add("v3", v3, zstd=False)
    add("v3", v3, zstd=True)
    add("v3", v3, zstd=True, batch=2)
    nodes = v3.surface().seqs
    tool = next(n for n in nodes if v3.raw_events[n]["type"] == "tool/result")
    system = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    edited = (
        v3.replace(nodes[1], nodes[1], "List every file.")
        .rewrite_tool_result(tool, "a.txt\n", time=1790000009000)
        .replace(nodes[0], nodes[0], system, time=1790000009001)
    )
    add("v3-edited", edited, zstd=False)
    add("v3-edited", edited, zstd=True, batch=3)

    if FIXTURES.is_dir():
        for p in sorted(FIXTURES.glob("v0-*.session.jsonl")):
            label = p.name.removesuffix(".session.jsonl")
            raw = p.read_bytes()
            bases.append(Base(label + "-normalized", "fixture.session.jsonl", raw, 0, True))
            s = Session.open(p, normalized=True)
            add(label, s, zstd=False)
            add(label, s, zstd=True)
            add(label, s, zstd=True, batch=16)
            packed = _pack_chunks(list(s.raw_events))
            if len(packed) < len(s):
                d = tmp / f"{label}-packed"
                d.mkdir()
                _write_rows(d / "session.jsonl", _raw_header(s), packed)
                bases.append(
                    Base(label + "-packed", "session.jsonl", (d / "session.jsonl").read_bytes(), 0)
                )

    try:
        from ctxsdk.samples import sample_paths
    except ImportError:
        sample_paths = None  # type: ignore[assignment]
    if sample_paths is not None:
        found = sample_paths()
        items = found.items() if isinstance(found, dict) else ((str(p), p) for p in found)
        for label, p in items:
            with contextlib.suppress(OSError, CtxError):  # samples may be absent or rebuilding
                f = resolve_log_path(p)
                data = f.read_bytes()
                if len(data) <= SAMPLE_MAX_BYTES:
                    s = Session.open(f)
                    bases.append(Base(f"sample:{label}", f.name, data, s.version))
                    add(f"sample:{label}", s, zstd=False)
    return bases


def _strict_clean(base: Base) -> bool:
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(base.data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Session.open(path, strict=True)
        except SessionFormatError:
            return False  # e.g. the fixtures' {{tools}} placeholder, which the harness refuses
        return True


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory,
    v3_raw: tuple[dict[str, Any], list[dict[str, Any]]],
) -> Corpus:
    bases = _build_corpus(tmp_path_factory.mktemp("corpus"), v3_raw)
    for b in bases:
        b.strict_clean = _strict_clean(b)
    return Corpus(bases)


def _pick(data: st.DataObject, corpus: Corpus, pred: Callable[[Base], bool]) -> Base:
    return data.draw(st.sampled_from([b for b in corpus if pred(b)]), label="base")


def _plain_event_logs(b: Base) -> bool:
    """Plain JSONL, one event per line, real seqs."""
    return not b.zstd and not b.normalized and "packed" not in b.label


# --- opening a file and checking the contract ---------------------------------------------


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="ctxsdk-fuzz-") as d:
        yield Path(d)


def _snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    st_ = path.stat()
    return path.read_bytes(), st_.st_mtime_ns, sorted(os.listdir(path.parent))


def _check_location(err: SessionFormatError, path: Path, *, zstd: bool) -> None:
    msg = str(err)
    assert err.path == str(path), f"error does not carry the path: {msg!r}"
    assert str(path) in msg, f"error does not name the file: {msg!r}"
    assert err.line is not None or err.frame is not None, f"no line or frame in {msg!r}"
    if err.line is not None:
        assert f"line {err.line}" in msg, msg
    if err.frame is not None:
        assert f"frame {err.frame}" in msg, msg
    if err.seq is not None:
        assert f"seq {err.seq}" in msg, msg
        assert err.line is not None, f"an event error without its line: {msg!r}"
    if zstd and err.line is not None:
        assert err.frame is not None, f"a zstd log error names a line but no frame: {msg!r}"


def _open(
    path: Path, *, normalized: bool | None = None, strict: bool = False
) -> tuple[Session | None, SessionFormatError | None]:
    """Open ``path`` and check the reader contract; return the session or the error."""
    before = _snapshot(path)
    err: SessionFormatError | None = None
    session: Session | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            session = Session.open(path, normalized=normalized, strict=strict)
        except SessionFormatError as exc:
            err = exc
        except CtxError as exc:
            OUTCOMES["escaped"] += 1
            raise AssertionError(
                f"a read failed with {type(exc).__name__}, which names no location: {exc}"
            ) from exc
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            OUTCOMES["escaped"] += 1
            raise AssertionError(
                f"Session.open raised {type(exc).__name__}, not a CtxError:\n"
                + traceback.format_exc()
            ) from exc
    OUTCOMES["opened" if session is not None else "refused"] += 1
    assert _snapshot(path) == before, "reading the log changed the file or its directory"
    recovered = [w for w in caught if issubclass(w.category, LogRecoveryWarning)]
    if session is not None:
        if session.recovery is None:
            assert not recovered, "LogRecoveryWarning without s.recovery"
        else:
            assert len(recovered) == 1 and str(path) in str(recovered[0].message)
    if err is not None:
        _check_location(err, path, zstd=path.read_bytes()[:4] == ZSTD_MAGIC)
    return session, err


def _engines(s: Session) -> None:
    """What the engines read from a session: a memory's ingest (verbatim, with the session
    map), its search and map, and a merge of its beliefs."""
    with Memory(None) as mem:
        mem.ingest(s, verbatim=True)
        mem.find("error in the test")
        mem.map()
        mem.episodes(s)
    Merge([s]).run()


def _views(s: Session) -> None:
    """Everything a reader derives from a session; only CtxErrors may come out."""
    try:
        s.surface()
        s.messages()
        s.wire("openai")
        s.wire("deepseek")
        s.turns()
        s.usage()
        _ = (s.title, s.system_prompt, s.tools, s.route, s.is_interrupted)
        s.tokens("estimate")
        s.repaired().messages()
        s.request_headers()
        _ = (s.context_window, s.descriptor, s.inherited_event_count, s.is_fork, s.header)
        repr(s)
        s.validate()
        _engines(s)
    except CtxError:
        pass
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        OUTCOMES["escaped"] += 1
        raise AssertionError(
            f"a view of a successfully opened session raised {type(exc).__name__}:\n"
            + traceback.format_exc()
        ) from exc


def _rows(b: Base) -> tuple[Any, list[Any]]:
    lines = b.data.splitlines()
    return orjson.loads(lines[0]), [orjson.loads(x) for x in lines[1:]]


def _messages(s: Session) -> list[Any]:
    return [m.to_json_dict() for m in s.messages()]


# --- byte mutations ------------------------------------------------------------------------


@st.composite
def _mutations(draw: st.DrawFn, size: int) -> list[tuple[str, int, bytes]]:
    """1-3 byte edits: (kind, offset, payload)."""
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "append", "truncate", "set"]))
        off = draw(st.integers(0, max(size - 1, 0)))
        if kind == "flip":
            payload = bytes([draw(st.integers(1, 255))])
        elif kind in ("insert", "append"):
            payload = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=12),
                    st.sampled_from([b"\n", b"{}\n", b"\x28\xb5\x2f\xfd", b'{"type":1}\n']),
                )
            )
        elif kind == "delete":
            payload = bytes(draw(st.integers(1, 16)))
        elif kind == "set":
            payload = draw(st.sampled_from([b"\n", b"\x00", b"}", b'"', b"\xff", b"1", b"-"]))
        else:
            payload = b""
        edits.append((kind, off, payload))
    return edits


def _apply(data: bytes, edits: list[tuple[str, int, bytes]]) -> bytes:
    for kind, off, payload in edits:
        off = min(off, len(data))
        if kind == "flip" and off < len(data):
            data = data[:off] + bytes([data[off] ^ payload[0]]) + data[off + 1 :]
        elif kind == "set" and off < len(data):
            data = data[:off] + payload + data[off + 1 :]
        elif kind == "insert":
            data = data[:off] + payload + data[off:]
        elif kind == "delete":
            data = data[:off] + data[off + len(payload) :]
        elif kind == "append":
            data = data + payload
        elif kind == "truncate":
            data = data[:off]
    return data


def _mode(data: st.DataObject, base: Base) -> bool | None:
    """How to open a (mutated) base: a stripped fixture with normalized=True or by its
    detection (None), a real log by detection."""
    if not base.normalized:
        return None
    return data.draw(st.sampled_from([True, None]), label="normalized")


@fuzz(2000)
@given(data=st.data())
def test_byte_mutations_open_or_raise_a_located_ctx_error(
    corpus: Corpus, data: st.DataObject
) -> None:
    base = _pick(data, corpus, lambda b: True)
    edits = data.draw(_mutations(len(base.data)), label="edits")
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(_apply(base.data, edits))
        s, err = _open(path, normalized=_mode(data, base))
        event("opened" if s is not None else type(err).__name__)
        if s is not None and s.recovery is not None:
            event("opened with recovery")


@fuzz(1200)
@given(data=st.data())
def test_views_of_a_mutated_log_raise_only_ctx_errors(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, lambda b: True)
    edits = data.draw(_mutations(len(base.data)), label="edits")
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(_apply(base.data, edits))
        s, err = _open(path, normalized=_mode(data, base))
        if s is not None:
            _views(s)
        else:
            assert err is not None  # _open checked that it names the file and line/frame


def _events_in(lines: list[bytes]) -> int:
    """How many events some complete event lines hold (a packed chunk row holds several)."""
    n = 0
    for line in lines:
        row = orjson.loads(line)
        packed = row.get("type") in _PACKED
        n += len(row["data"]["args" if "args" in row["data"] else "texts"]) if packed else 1
    return n


def _boundaries(b: Base) -> tuple[list[int], list[int]]:
    """Offsets where a cut leaves only whole frames (zstd) or lines (plain), and how many
    events are readable at each."""
    if b.zstd:
        spans, torn = frame_spans(b.data)
        assert torn is None
        texts = [zstandard.ZstdDecompressor().decompress(b.data[x:y]) for x, y in spans]
        ends = [y for _, y in spans]
    else:
        texts = [line + b"\n" for line in b.data.split(b"\n")[:-1]]
        ends = list(itertools.accumulate(len(t) for t in texts))
    counts, seen = [], 0
    for i, text in enumerate(texts):
        lines = text.split(b"\n")[:-1]
        seen += _events_in(lines[1:] if i == 0 else lines)
        counts.append(seen)
    return ends, counts


@fuzz(800)
@given(data=st.data())
def test_truncation_drops_only_a_torn_tail(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, lambda b: not b.normalized)
    ends, counts = _boundaries(base)
    on_boundary = data.draw(st.booleans(), label="on_boundary")
    if on_boundary:
        cut = data.draw(st.sampled_from([0, *ends]), label="cut")
    else:
        cut = data.draw(st.integers(0, len(base.data) - 1), label="cut")
    full = Session.from_events(*_rows_of(base))
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(base.data[:cut])
        s, err = _open(path)
        whole = [i for i, e in enumerate(ends) if e <= cut]
        if not whole:  # the header line or frame is not complete: nothing to read
            assert err is not None, f"a cut at {cut} before the end of the header opened"
            return
        assert err is None, f"a cut at {cut} after the header failed: {err}"
        assert s is not None
        readable = counts[whole[-1]]
        if cut in ends:
            assert s.recovery is None
            assert len(s) == readable
        else:
            assert s.recovery is not None, f"a cut inside a frame/line at {cut} went unreported"
            assert s.recovery.truncate_at == ends[whole[-1]]
            assert s.recovery.truncate_at + s.recovery.dropped_bytes == cut
            # A torn line is dropped whole; a torn frame keeps the complete lines it decodes.
            assert readable <= len(s) <= (counts[len(whole)] if base.zstd else readable)
        assert list(s.raw_events) == full.raw_events[: len(s)]
        if s.recovery is not None:  # appending repairs the torn tail, as the harness does
            s.append_to_log()
            again, err2 = _open(path)
            assert err2 is None and again is not None and again.recovery is None
            assert list(again.raw_events) == list(s.raw_events)
            assert (
                path.read_bytes()[: s.recovery.truncate_at] == base.data[: s.recovery.truncate_at]
            )


def _rows_of(b: Base) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and events of a (valid, unmutated) base."""
    with _scratch() as d:
        path = d / b.name
        path.write_bytes(b.data)
        s = Session.open(path, normalized=b.normalized)
        return _raw_header(s), [dict(e) for e in s.raw_events]


# --- logical mutations: envelope -----------------------------------------------------------

_BAD_TIMES = [1.5, "1790000000000", None, True, 2**53, -(2**53), [1], {"ms": 1}]
_BAD_SEQ_VALUES = ["0", None, 1.5, [0], {"seq": 0}, -1, True, False]


@st.composite
def _envelope_mutation(draw: st.DrawFn, events: list[dict[str, Any]]) -> tuple[str, int, Any]:
    n = len(events)
    kind = draw(
        st.sampled_from(
            [
                "seq-wrong",
                "seq-missing",
                "seq-dup",
                "time-bad",
                "time-missing",
                "extra-key",
                "type-bad",
                "not-object",
                "delete",
                "swap",
                "duplicate",
                "op-on-log-only",
                "sources-bad",
                "op-missing",
                "op-bad",
                "data-bad",
            ]
        )
    )
    surface = [
        i for i, e in enumerate(events) if "surfaceOp" in e and e["type"] != "system/message"
    ]
    log_only = [i for i, e in enumerate(events) if "surfaceOp" not in e]
    if kind in ("sources-bad", "op-missing", "op-bad", "data-bad"):
        k = draw(st.sampled_from(surface))
    elif kind == "op-on-log-only":
        k = draw(st.sampled_from(log_only))
    elif kind in ("delete", "swap"):
        k = draw(st.integers(0, n - 2))
    elif kind == "seq-dup":
        k = draw(st.integers(1, n - 1))
    else:
        k = draw(st.integers(0, n - 1))
    value: Any = None
    if kind == "seq-wrong":
        value = draw(
            st.one_of(
                st.integers(-3, n + 3).map(lambda v: v if v != k else n + 4),
                st.sampled_from(_BAD_SEQ_VALUES),
            )
        )
    elif kind == "time-bad":
        value = draw(st.sampled_from(_BAD_TIMES))
    elif kind == "extra-key":
        value = draw(
            st.one_of(
                st.sampled_from(["kind", "Seq", "surface_op", "meta", "parentSeq"]),
                st.text(min_size=1, max_size=6),
            ).filter(
                lambda v: (
                    v
                    not in {
                        "type",
                        "seq",
                        "time",
                        "data",
                        "sourceEventSeqs",
                        "surfaceOp",
                        "ignorable",
                    }
                )
            )
        )
    elif kind == "type-bad":
        value = draw(st.sampled_from([5, None, ["user/message"], {"t": 1}, True]))
    elif kind == "not-object":
        value = draw(st.sampled_from([[1, 2], "user/message", 3, None, True]))
    elif kind == "op-on-log-only":
        value = draw(st.sampled_from(["surfaceOp", "sourceEventSeqs"]))
    elif kind == "sources-bad":
        value = draw(
            st.sampled_from(
                [[k], [k + 5], [-1], [[5, 3]], "7", [1.5], [None], [[0, k]], {"0": 1}, [[0]]]
            )
        )
    elif kind == "op-bad":
        value = draw(
            st.sampled_from(["prepend", 1, "", ["append"], {"op": "append"}, {}, "APPEND"])
        )
    elif kind == "data-bad":
        value = draw(st.sampled_from([None, [], "text", 0]))
    return kind, k, value


def _is_seq_gap(rows: list[Any], bad: int) -> bool:
    """Whether the first wrong row claims an integer seq other than its position."""
    row = rows[bad] if bad < len(rows) else None
    return type(row) is dict and type(row.get("seq")) is int and row["seq"] != bad


def _mutate_envelope(
    events: list[dict[str, Any]], kind: str, k: int, value: Any
) -> tuple[list[Any], int]:
    """The mutated event list and the seq whose event is now wrong."""
    out: list[Any] = copy.deepcopy(events)
    ev = out[k]
    bad = k
    if kind == "seq-wrong":
        ev["seq"] = value
    elif kind == "seq-missing":
        del ev["seq"]
    elif kind == "seq-dup":
        ev["seq"] = k - 1
    elif kind == "time-bad":
        ev["time"] = value
    elif kind == "time-missing":
        del ev["time"]
    elif kind == "extra-key":
        ev[value] = 1
    elif kind == "type-bad":
        ev["type"] = value
    elif kind == "not-object":
        out[k] = value
    elif kind == "delete":
        del out[k]
    elif kind == "swap":
        out[k], out[k + 1] = out[k + 1], out[k]
    elif kind == "duplicate":
        out.insert(k + 1, copy.deepcopy(ev))
        bad = k + 1
    elif kind == "op-on-log-only":
        ev[value] = "append" if value == "surfaceOp" else [0]
    elif kind == "sources-bad":
        ev["sourceEventSeqs"] = value
    elif kind == "op-missing":
        del ev["surfaceOp"]
    elif kind == "op-bad":
        ev["surfaceOp"] = value
    elif kind == "data-bad":
        ev["data"] = value
    return out, bad


@fuzz(1200)
@given(data=st.data())
def test_envelope_mutations_name_the_seq_and_line(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, _plain_event_logs)
    header, events = _rows(base)
    kind, k, value = data.draw(_envelope_mutation(events), label="mutation")
    rows, bad = _mutate_envelope(events, kind, k, value)
    with _scratch() as d:
        path = d / base.name
        _write_rows(path, header, rows)
        s, err = _open(path)
        if s is not None and _is_seq_gap(rows, bad):
            # A seq gap that no later turn/end follows is a torn tail (the harness's
            # scanner): the prefix before it is kept and the rest reported.
            assert not any(type(r) is dict and r.get("type") == "turn/end" for r in rows[bad:])
            assert s.recovery is not None and s.recovery.kind == "torn-tail", kind
            assert len(s) == bad, f"{kind} at seq {k}: kept {len(s)} events, not {bad}"
            return
        assert s is None, f"{kind} at seq {k} ({value!r}) was accepted"
        assert err is not None
        assert err.seq == bad, f"{kind} at seq {k}: the error names seq {err.seq}: {err}"
        assert err.line == bad + 2, f"{kind} at seq {k}: the error names line {err.line}: {err}"


# --- logical mutations: event data --------------------------------------------------------

_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 2**54),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path inside a JSON value."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


@fuzz(1600)
@given(data=st.data())
def test_event_data_mutations_raise_only_located_ctx_errors(
    corpus: Corpus, data: st.DataObject
) -> None:
    base = _pick(data, corpus, _plain_event_logs)
    header, events = _rows(base)
    k = data.draw(st.integers(0, len(events) - 1), label="seq")
    ev = events[k]
    path = data.draw(st.sampled_from(list(_paths(ev["data"]))), label="path")
    delete = bool(path) and data.draw(st.booleans(), label="delete")
    value = None if delete else data.draw(_JSON, label="value")
    if not path:
        ev["data"] = value
    else:
        parent = ev["data"]
        for key in path[:-1]:
            parent = parent[key]
        if delete:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    with _scratch() as d:
        file = d / base.name
        _write_rows(file, header, events)
        s, err = _open(file)
        check_strict = data.draw(st.integers(0, 2), label="strict") == 0  # a third, for time
        strict, strict_err = _open(file, strict=True) if check_strict else (None, None)
        if err is not None:
            event(type(err).__name__)
            assert err.seq is not None and err.seq >= k, f"mutated seq {k}: {err}"
            assert err.line == err.seq + 2, str(err)
            assert strict_err is not None or not check_strict, f"strict=True opened: {err}"
        else:
            assert s is not None
            event("opened")
            _views(s)
        if strict_err is not None:  # strict refuses a superset, each on its line and seq
            event(f"strict {type(strict_err).__name__}")
            assert strict_err.seq is not None, str(strict_err)
            assert strict_err.line == strict_err.seq + 2, str(strict_err)
            if base.strict_clean:
                assert strict_err.seq >= k, f"mutated seq {k}: {strict_err}"
        elif check_strict:
            assert strict is not None and s is not None
            assert _messages(strict) == _messages(s)


# --- logical mutations: unknown event types ------------------------------------------------

_PACKED = {"text-chunks", "reasoning-chunks", "tool-call-chunks"}
_PACKED_TAGS = [b'{"type":"%s"' % t.encode() for t in sorted(_PACKED)]


def _shift(events: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """Renumber events for an insertion at seq ``at``: seqs and every seq reference move up."""

    def up(s: Any) -> Any:
        return s + 1 if type(s) is int and s >= at else s

    out = copy.deepcopy(events)
    for ev in out:
        ev["seq"] = up(ev["seq"])
        if "sourceEventSeqs" in ev:
            flat: list[int] = []
            for item in ev["sourceEventSeqs"]:
                flat.extend(range(item[0], item[1] + 1) if isinstance(item, list) else [item])
            ev["sourceEventSeqs"] = encode_source_seqs([up(s) for s in flat])
        op = ev.get("surfaceOp")
        if isinstance(op, dict):
            ev["surfaceOp"] = {k: up(v) if k != "op" else v for k, v in op.items()}
        if ev["type"] == "session/title" and isinstance(ev["data"].get("messageSeqs"), list):
            ev["data"]["messageSeqs"] = [up(s) for s in ev["data"]["messageSeqs"]]
    return out


@fuzz(600)
@given(data=st.data())
def test_unknown_event_types_need_ignorable(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, _plain_event_logs)
    header, events = _rows(base)
    at = data.draw(st.integers(0, len(events)), label="at")
    etype = data.draw(
        st.one_of(
            st.sampled_from(["session/peer-message", "assistant/peer-message", "subagent/catalog"]),
            st.text(min_size=1, max_size=16),
        ).filter(lambda t: not is_known_type(t) and t not in _PACKED),
        label="type",
    )
    marker = data.draw(st.sampled_from([True, None, False, "true", 1]), label="ignorable")
    new: dict[str, Any] = {"type": etype, "seq": at, "time": 1, "data": {"x": [1, 2]}}
    if marker is not None:
        new["ignorable"] = marker
    rows = _shift(events, at)
    rows.insert(at, new)
    with _scratch() as d:
        path = d / base.name
        _write_rows(path, header, rows)
        s, err = _open(path)
        if marker is True:
            assert err is None, f"an ignorable {etype!r} at seq {at} was refused: {err}"
            assert s is not None and len(s) == len(events) + 1
            original = Session.from_events(header, events)
            assert _messages(s) == _messages(original)
        elif marker is None:
            assert isinstance(err, UnknownEventType), f"{etype!r} ignorable={marker!r}: {err!r}"
            assert err.seq == at and err.line == at + 2
        else:  # the harness's envelope admits ignorable only as true, whatever the type
            assert isinstance(err, SessionFormatError), f"{etype!r} ignorable={marker!r}: {err!r}"
            assert "ignorable may only be true" in str(err)
            assert err.seq == at and err.line == at + 2


# --- logical mutations: replace ops (checked against a model of spec §7) -------------------


def _expand(value: Any) -> list[int] | None:
    if not isinstance(value, list):
        return None
    out: list[int] = []
    for item in value:
        if type(item) is int:
            out.append(item)
        elif isinstance(item, list) and len(item) == 2 and all(type(x) is int for x in item):
            out.extend(range(item[0], item[1] + 1))
        else:
            return None
    return out


def _strip_result(data: dict[str, Any]) -> dict[str, Any]:
    d = copy.deepcopy(data)
    d["message"]["content"][0].pop("content", None)
    return d


def _replace_is_valid(
    version: int, nodes: list[int], events: list[dict[str, Any]], ev: dict[str, Any]
) -> bool:
    """Spec §7, written independently of ctxsdk.session.surface."""
    seq, etype, op = ev["seq"], ev["type"], ev["surfaceOp"]
    if version < 3 and etype == "system/message":
        return False
    k_start, k_end = ("startSeq", "endSeq") if version >= 3 else ("start", "end")
    if not isinstance(op, dict) or set(op) != {"op", k_start, k_end} or op["op"] != "replace":
        return False
    a, b = op[k_start], op[k_end]
    if type(a) is not int or type(b) is not int or a not in nodes or b not in nodes:
        return False
    i, j = nodes.index(a), nodes.index(b)
    if i > j:
        return False
    shadowed = nodes[i : j + 1]
    if "sourceEventSeqs" not in ev:
        return False
    sources = _expand(ev["sourceEventSeqs"])
    if (
        sources is None
        or not sources
        or len(set(sources)) != len(sources)
        or not all(0 <= s < seq for s in sources)
    ):
        return False
    if version >= 3 and etype == "assistant/message":
        return False
    if not set(shadowed) <= set(sources):
        return False
    head = nodes[0]
    if (
        version >= 3
        and events[head]["type"] == "system/message"
        and head in shadowed
        and not (etype == "system/message" and shadowed == [head] and sources == [head])
    ):
        return False
    if etype == "tool/result":
        if len(shadowed) != 1 or events[shadowed[0]]["type"] != "tool/result":
            return False
        if _strip_result(events[shadowed[0]]["data"]) != _strip_result(ev["data"]):
            return False
    return True


@st.composite
def _bounds(draw: st.DrawFn, nodes: list[int], n: int) -> tuple[int, int]:
    """Replace bounds: mostly a span of the current surface, else any seqs (in any order)."""
    if draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(nodes) - 1))
        j = draw(st.integers(i, len(nodes) - 1))
        return nodes[i], nodes[j]
    seqs = st.one_of(st.sampled_from(nodes), st.integers(-2, n + 2))
    return draw(seqs), draw(seqs)


@st.composite
def _replacement(
    draw: st.DrawFn, version: int, nodes: list[int], events: list[dict[str, Any]]
) -> dict[str, Any]:
    n = len(events)
    types = ["user/message", "tool/result", "system/message", "assistant/message"]
    results = [s for s in nodes if events[s]["type"] == "tool/result"]
    if not results:
        types.remove("tool/result")
    etype = draw(st.sampled_from(types))
    k_start, k_end = ("startSeq", "endSeq") if version >= 3 else ("start", "end")
    if etype == "tool/result" and draw(st.booleans()):
        a = b = draw(st.sampled_from(results))
    else:
        a, b = draw(_bounds(nodes, n))
    op: Any = {"op": "replace", k_start: a, k_end: b}
    twist = draw(st.sampled_from(["none"] * 6 + ["keys", "extra", "op", "bound", "string"]))
    if twist == "keys":  # the other generation's spelling
        op = {"op": "replace", "startSeq" if version < 3 else "start": a, k_end: b}
    elif twist == "extra":
        op["shadowed"] = [a]
    elif twist == "op":
        op["op"] = "splice"
    elif twist == "bound":
        op[k_start] = draw(st.sampled_from([-1, True, 1.5, None, "3", 2**60]))
    elif twist == "string":
        op = "replace"
    # sourceEventSeqs: the span's nodes (when it is one), maybe changed.
    span: list[int] = []
    if a in nodes and b in nodes and nodes.index(a) <= nodes.index(b):
        span = nodes[nodes.index(a) : nodes.index(b) + 1]
    sources: Any = sorted(span)
    how = draw(st.sampled_from(["exact"] * 4 + ["extra", "drop", "none", "empty", "self", "dup"]))
    if how == "extra":
        sources = sorted(set(sources) | {draw(st.integers(0, n - 1))})
    elif how == "drop" and sources:
        sources = sources[1:]
    elif how == "empty":
        sources = []
    elif how == "self":
        sources = [*sources, n]
    elif how == "dup" and sources:
        sources = [*sources, sources[0]]
    if how != "dup" and draw(st.booleans()):
        sources = encode_source_seqs(sources)
    text = draw(st.text(max_size=20))
    if etype == "user/message":
        data: dict[str, Any] = {
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
            "role": "user",
            "id": "fuzz-user",
        }
    elif etype == "tool/result":
        target = b if b in results else draw(st.sampled_from(results))
        data = copy.deepcopy(events[target]["data"])
        data["message"]["content"][0]["content"] = [{"type": "text", "text": text}]
        change = draw(st.sampled_from(["content"] * 4 + ["id", "isError", "turn", "meta", "call"]))
        msg = data["message"]
        if change == "id":
            msg["id"] = msg["id"] + "-2"
        elif change == "isError":
            msg["content"][0]["isError"] = not msg["content"][0].get("isError", False)
            if version >= 3 and msg["content"][0]["isError"] is False:
                data.pop("error", None)
        elif change == "turn":
            data["turn"] = data["turn"] + 1
        elif change == "meta":
            data["meta"] = {"fuzz": True}
        elif change == "call":
            msg["source"]["callId"] = msg["content"][0]["toolCallId"] = "call_other"
    elif etype == "system/message":
        data = {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "fuzz-sys",
                "role": "system",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
            },
        }
    else:
        data = {
            "turn": 1,
            "step": 1,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": "p", "model": "m"},
                "id": "fuzz-assistant",
            },
        }
        if version >= 2:
            data["stream"] = []
    ev: dict[str, Any] = {"type": etype, "seq": n, "time": 1, "data": data}
    if how != "none":
        ev["sourceEventSeqs"] = sources
    ev["surfaceOp"] = op
    return ev


@fuzz(2000)
@given(data=st.data())
def test_replace_ops_follow_the_surface_rules(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, _plain_event_logs)
    header, events = _rows(base)
    original = Session.from_events(header, events)
    nodes = original.surface().seqs
    ev = data.draw(_replacement(base.version, nodes, events), label="replacement")
    valid = _replace_is_valid(base.version, nodes, events, ev)
    event(f"{ev['type']} replace {'valid' if valid else 'refused'}")
    n = len(events)
    with _scratch() as d:
        path = d / base.name
        _write_rows(path, header, [*events, ev])
        s, err = _open(path)
        if not valid:
            assert err is not None, f"a replace the harness refuses was accepted: {ev}"
            assert err.seq == n and err.line == n + 2, str(err)
            return
        assert err is None, f"a valid replace was refused: {err}\n{ev}"
        assert s is not None
        k_start, k_end = ("startSeq", "endSeq") if base.version >= 3 else ("start", "end")
        i, j = nodes.index(ev["surfaceOp"][k_start]), nodes.index(ev["surfaceOp"][k_end])
        assert s.surface().seqs == [*nodes[:i], n, *nodes[j + 1 :]]
        assert s.surface()[i].shadowed == tuple(nodes[i : j + 1])
        _views(s)


# --- logical mutations: headers ------------------------------------------------------------


@st.composite
def _header_mutation(draw: st.DrawFn, header: dict[str, Any]) -> tuple[Any, str]:
    """A damaged header and what a reader must do: 'version', 'reject' or 'accept'."""
    h: Any = copy.deepcopy(header)
    v = header["version"]
    kind = draw(
        st.sampled_from(
            [
                "version",
                "unknown-key",
                "legacy-key",
                "drop-key",
                "bad-value",
                "missing",
                "not-object",
            ]
        )
    )
    if kind == "version":
        h["version"] = value = draw(
            st.sampled_from([4, 99, -1, "3", str(v), 3.0, None, True, 2**53, [v], (v + 1) % 4])
        )
        if type(value) is float and value == v:  # JSON 3.0 is the number 3, as JS reads it
            return h, "accept"
        return h, "version"
    if kind == "unknown-key":
        h[draw(st.sampled_from(["title", "seedLength" if v >= 2 else "isSeeded", "x"]))] = 1
        return h, "reject" if v >= 2 else "accept"
    if kind == "legacy-key":
        h[draw(st.sampled_from(["sandboxMode", "approvalPolicy"]))] = "x"
        return h, "reject"
    if kind == "drop-key":
        required = ["id", "createdAt", "delegationDepth"] + (["isSeeded"] if v >= 2 else [])
        del h[draw(st.sampled_from(["type", "version", *required]))]
        return h, ("version" if "version" not in h and "type" in h else "reject")
    if kind == "bad-value":
        key, val = draw(
            st.sampled_from(
                [
                    ("type", "sessions"),
                    ("id", ""),
                    ("id", 7),
                    ("createdAt", -1),
                    ("createdAt", 2**53),
                    ("createdAt", "0"),
                    ("createdAt", 1.5),
                    ("delegationDepth", -1),
                    ("delegationDepth", None),
                    ("cwd", 5),
                    ("parentSession", None),
                    ("origin", ["subagent"]),
                    *([("isSeeded", "false"), ("isSeeded", 0)] if v >= 2 else []),
                    *([("seedLength", -3)] if v < 2 else []),
                ]
            )
        )
        h[key] = val
        return h, "reject"
    if kind == "missing":
        return None, "missing"
    return draw(st.sampled_from([[header], "session", 3, None])), "reject"


@fuzz(600)
@given(data=st.data())
def test_header_mutations_are_refused_at_line_1(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, _plain_event_logs)
    header, events = _rows(base)
    h, expect = data.draw(_header_mutation(header), label="header")
    with _scratch() as d:
        path = d / base.name
        if expect == "missing":  # the first event line stands where the header was
            _write_rows(path, events[0], events[1:])
        else:
            _write_rows(path, h, events)
        s, err = _open(path)
        if expect == "accept":
            assert err is None, f"an acceptable header was refused: {err}"
            assert s is not None and len(s) == len(events)
            return
        assert err is not None, f"a bad header was accepted: {h!r}"
        if expect == "version":
            assert isinstance(err, UnsupportedVersion), repr(err)
        assert err.line == 1 and err.seq is None, str(err)


# --- logical mutations: v0 packed chunk rows -----------------------------------------------


@fuzz(800)
@given(data=st.data())
def test_packed_row_mutations_name_line_and_seq(corpus: Corpus, data: st.DataObject) -> None:
    packed = [b for b in corpus if not b.zstd and any(b"\n" + t in b.data for t in _PACKED_TAGS)]
    if not packed:
        pytest.skip("no packed v0 log (../shared/data is not available)")
    base = data.draw(st.sampled_from(packed), label="base")
    header, rows = _rows(base)
    at = data.draw(
        st.sampled_from([i for i, r in enumerate(rows) if r["type"] in _PACKED]), label="row"
    )
    row = copy.deepcopy(rows[at])
    members = "args" if row["type"] == "tool-call-chunks" else "texts"
    kind = data.draw(
        st.sampled_from(
            ["seq0", "time0", "dt-len", "dt-member", "member", "short", "data", "no-seq0"]
        ),
        label="kind",
    )
    seq0 = row.get("seq0", 0)
    if kind == "seq0":
        row["seq0"] = data.draw(st.sampled_from([seq0 + 1, seq0 - 1, "3", None]))
    elif kind == "no-seq0":
        row.pop("seq0", None)
    elif kind == "time0":
        row["time0"] = data.draw(st.sampled_from(["0", 1.5, None, [0]]))
    elif kind == "dt-len":
        row["data"]["dt"] = (
            row["data"]["dt"][:-1] if data.draw(st.booleans()) else [*row["data"]["dt"], 1]
        )
    elif kind == "dt-member":
        row["data"]["dt"][-1] = data.draw(st.sampled_from(["1", 0.5, None, True]))
    elif kind == "member":
        row["data"][members][-1] = data.draw(st.sampled_from([None, 1, ["x"], {"t": "x"}]))
    elif kind == "short":
        row["data"][members] = row["data"][members][:2]
        row["data"]["dt"] = row["data"]["dt"][:1]
    elif kind == "data":
        row["data"] = data.draw(st.sampled_from([None, [], "x"]))
    rows[at] = row
    with _scratch() as d:
        path = d / base.name
        _write_rows(path, header, rows)
        s, err = _open(path, normalized=True if base.normalized else None)
        if base.normalized:
            # Snapshot fixtures have no seq0/time0 to check and may pack short runs; a row
            # with fewer members shifts every later seq, so a later event may be the one named.
            if err is not None:
                assert (err.line or 0) >= at + 2, str(err)
            else:
                assert s is not None and len(s) > 0
                _views(s)
            return
        assert err is not None, f"a damaged packed row ({kind}) was accepted"
        if kind == "short":
            # 1-2 members decode (3 is the encoder's minimum); the next row's seq no longer
            # follows, and that row is the one named.
            assert err.line == at + 3, str(err)
            return
        assert err.line == at + 2, str(err)
        assert err.seq is not None, f"a damaged packed row's error names no seq: {err}"


def test_packed_rows_read_like_unpacked_ones(corpus: Corpus) -> None:
    packed = [b for b in corpus if b.label.endswith("-packed")]
    if not packed:
        pytest.skip("no packed v0 log (../shared/data is not available)")
    for base in packed:
        plain = next(b for b in corpus if b.label == base.label.removesuffix("-packed"))
        assert _rows_of(base) == _rows_of(plain)


# --- edits through the API -----------------------------------------------------------------


@st.composite
def _edit(draw: st.DrawFn, s: Session) -> tuple[int, int, Any, list[int] | None]:
    """(start, end, message, sources) for ``s.replace``."""
    text = draw(st.text(max_size=30))
    message: Any = draw(
        st.sampled_from(
            [
                text,
                {"role": "user", "content": [{"type": "text", "text": text}]},
                {"role": "system", "content": [{"type": "text", "text": text}]},
                {"role": "assistant", "content": [{"type": "text", "text": text}]},
                {"content": []},
            ]
        )
    )
    nodes = s.surface().seqs
    start, end = draw(_bounds(nodes, len(s)))
    sources: list[int] | None = None
    if draw(st.integers(0, 3)) == 0:  # explicit sources: the span, changed a little
        span = (
            nodes[nodes.index(start) : nodes.index(end) + 1] if {start, end} <= set(nodes) else []
        )
        extra = draw(st.lists(st.integers(-1, len(s) + 1), max_size=2))
        sources = [*span[draw(st.integers(0, 1)) :], *extra]
    return start, end, message, sources


def _edit_is_valid(
    s: Session, start: int, end: int, message: Any, sources: list[int] | None
) -> bool:
    role = "user" if isinstance(message, str) else message.get("role")
    if role not in ("user", "system") or (role == "system" and s.version < 3):
        return False
    nodes = s.surface().seqs
    if start not in nodes or end not in nodes or nodes.index(start) > nodes.index(end):
        return False
    span = nodes[nodes.index(start) : nodes.index(end) + 1]
    k_start, k_end = ("startSeq", "endSeq") if s.version >= 3 else ("start", "end")
    ev = {
        "type": f"{role}/message",
        "seq": len(s),
        "data": {},
        "sourceEventSeqs": sorted(set(span if sources is None else sources)),
        "surfaceOp": {"op": "replace", k_start: start, k_end: end},
    }
    return _replace_is_valid(s.version, nodes, list(s.raw_events), ev)


def _state(s: Session) -> tuple[Any, ...]:
    return len(s), s.surface().seqs, _messages(s), len(s.pending_events)


@fuzz(800)
@given(data=st.data())
def test_replace_through_the_api_is_validated(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, lambda b: not b.normalized)
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(base.data)
        s, err = _open(path)
        assert s is not None, err
        for _ in range(data.draw(st.integers(1, 3), label="edits")):
            start, end, message, sources = data.draw(_edit(s), label="edit")
            before = _state(s)
            valid = _edit_is_valid(s, start, end, message, sources)
            event("valid edit" if valid else "refused edit")
            try:
                new = s.replace(start, end, copy.deepcopy(message), sources=sources)
            except SurfaceError as exc:
                assert not valid, f"a valid replace {start}..{end} was refused: {exc}"
                assert _state(s) == before, "a refused edit changed the session"
                continue
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:
                raise AssertionError(
                    f"s.replace({start}, {end}, {message!r}) raised {type(exc).__name__}:\n"
                    + traceback.format_exc()
                ) from exc
            assert valid, f"an invalid replace {start}..{end} ({message!r}) was accepted"
            assert _state(s) == before, "an edit changed the session it was made from"
            nodes = s.surface().seqs
            i, j = nodes.index(start), nodes.index(end)
            assert new.surface().seqs == [*nodes[:i], len(s), *nodes[j + 1 :]]
            new.messages()
            new.wire()
            s = new
        assert path.read_bytes() == base.data, "an edit in memory wrote to the file"
        if not s.pending_events:
            return
        # The edits survive a save and an append, and the append only appends.
        copy_path = s.save(d / "copy" / base.name)
        assert _messages(Session.open(copy_path)) == _messages(s)
        appended = s.append_to_log()
        assert path.read_bytes()[: len(base.data)] == base.data
        assert _messages(appended) == _messages(s)
        assert appended.surface().seqs == s.surface().seqs
        assert len(appended) == len(s) and not appended.pending_events


@fuzz(600)
@given(data=st.data())
def test_rewrite_tool_result_is_validated(corpus: Corpus, data: st.DataObject) -> None:
    base = _pick(data, corpus, lambda b: not b.normalized)
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(base.data)
        s, _ = _open(path)
        assert s is not None
        nodes = s.surface().seqs
        seq = data.draw(st.one_of(st.sampled_from(nodes), st.integers(-2, len(s) + 2)), label="seq")
        content = data.draw(st.text(max_size=20), label="content")
        before = _state(s)
        valid = seq in nodes and s.raw_events[seq]["type"] == "tool/result"
        try:
            new = s.rewrite_tool_result(seq, content)
        except SurfaceError:
            assert not valid, f"rewriting tool/result {seq} was refused"
            assert _state(s) == before
            return
        assert valid, f"rewriting seq {seq} ({s.raw_events[seq]['type']}) was accepted"
        assert _state(s) == before
        assert new.surface().seqs == [len(s) if x == seq else x for x in nodes]
        new.wire()


def _behind_the_back(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "append-byte":
        path.write_bytes(data + b"\n")
    elif how == "drop-byte":
        path.write_bytes(data[:-1])
    elif how == "truncate-half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "grow-frame":
        path.write_bytes(data + data[-40:])
    elif how == "delete":
        path.unlink()


@fuzz(200)
@given(data=st.data())
def test_append_to_a_changed_file_is_refused_and_writes_nothing(
    corpus: Corpus, data: st.DataObject
) -> None:
    base = _pick(data, corpus, lambda b: not b.normalized)
    how = data.draw(
        st.sampled_from(["append-byte", "drop-byte", "truncate-half", "grow-frame", "delete"]),
        label="how",
    )
    with _scratch() as d:
        path = d / base.name
        path.write_bytes(base.data)
        s, _ = _open(path)
        assert s is not None
        edited = s.replace(*[s.surface().seqs[-1]] * 2, "changed behind the back")
        _behind_the_back(path, how)
        before = path.read_bytes() if path.exists() else None
        listing = set(os.listdir(d)) | {"session.lock"}  # the v3 lease file may appear
        with pytest.raises(WriteError):
            edited.append_to_log()
        after = path.read_bytes() if path.exists() else None
        assert after == before, f"a refused append ({how}) changed the file"
        assert set(os.listdir(d)) <= listing, "a refused append left a file behind"


def test_append_under_a_held_lease_is_refused_and_writes_nothing(corpus: Corpus) -> None:
    from ctxsdk.errors import LockHeld

    for base in [b for b in corpus if b.version >= 3 and not b.normalized]:
        with _scratch() as d:
            path = d / base.name
            path.write_bytes(base.data)
            s, _ = _open(path)
            assert s is not None
            edited = s.replace(*[s.surface().seqs[-1]] * 2, "blocked by the lease")
            fd = os.open(d / "session.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                with pytest.raises(LockHeld):
                    edited.append_to_log()
            finally:
                os.close(fd)
            assert path.read_bytes() == base.data


# --- the importers: a damaged foreign log imports or raises ImportFormatError ---------------

_OPENAI_CHAT: list[Any] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is in README.md?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "README.md"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "# app"},
    {"role": "assistant", "content": [{"type": "text", "text": "A one-line README."}]},
]
_ANTHROPIC_CHAT: list[Any] = [
    {"role": "user", "content": "List the files."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "ls will do."},
            {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"command": "ls"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "a.py b.py"}],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
]
# Values a damaged record may hold where another belongs (a lone surrogate among them: a
# str from json may hold one, and it found the importers' one escape, UnicodeEncodeError).
_IMPORT_JUNK = st.one_of(
    st.sampled_from(
        [None, True, 0, -1, 1.5, "", "x", [], {}, [None], {"type": "text"}, 2**70, "\ud800"]
    ).map(copy.deepcopy),  # a fresh [] / {} each time: a later edit may change it
    st.sampled_from(["tool_use", "text", "2026-13-45T99:00:00Z", "user", "assistant"]),
)


def _import_inputs() -> dict[str, Any]:
    """A small valid input of each importer (the real logs trimmed, when ../shared/data is
    here)."""
    inputs: dict[str, Any] = {"openai": _OPENAI_CHAT, "anthropic": _ANTHROPIC_CHAT}
    cc = DATA / "claude-code-transcript" / "sample_main_transcript.jsonl"
    if cc.is_file():
        inputs["claude-code"] = [orjson.loads(x) for x in cc.read_bytes().splitlines()[:24]]
    swe = DATA / "swe-agent-trajectories" / "ctf_crypto__katy.traj"
    if swe.is_file():
        traj = orjson.loads(swe.read_bytes())
        traj["history"] = traj.get("history", [])[:6]
        traj["trajectory"] = traj.get("trajectory", [])[:3]
        inputs["swe-agent"] = traj
    locomo = DATA / "locomo" / "locomo10.json"
    if locomo.is_file():
        sample = orjson.loads(locomo.read_bytes())[0]
        conv = sample["conversation"]
        keep = {"speaker_a", "speaker_b", "session_1", "session_1_date_time", "session_2"}
        keep.add("session_2_date_time")
        sample = {
            "sample_id": sample["sample_id"],
            "conversation": {k: v for k, v in conv.items() if k in keep},
        }
        inputs["locomo"] = [sample]
    return inputs


_IMPORT_INPUTS = _import_inputs()


def _import(fmt: str, value: Any, d: Path) -> Session:
    from ctxsdk.session.importers import (
        from_claude_code,
        from_locomo,
        from_messages,
        from_swe_agent,
    )

    if fmt in ("openai", "anthropic"):
        return from_messages(value, fmt)  # type: ignore[arg-type]
    if fmt == "locomo":
        return from_locomo(value, 0)
    if fmt == "claude-code":
        path = d / "transcript.jsonl"
        rows = value if isinstance(value, list) else [value]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return from_claude_code(path)
    path = d / "run.traj"
    path.write_text(json.dumps(value))
    return from_swe_agent(path)


@fuzz(300)
@given(data=st.data())
def test_importers_import_a_damaged_log_or_raise_import_format_error(data: st.DataObject) -> None:
    from ctxsdk.errors import ImportFormatError, NotFound

    fmt = data.draw(st.sampled_from(sorted(_IMPORT_INPUTS)), label="format")
    value: Any = copy.deepcopy(_IMPORT_INPUTS[fmt])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        path = data.draw(st.sampled_from(list(_paths(value))), label="path")
        if not path:
            value = data.draw(_IMPORT_JUNK, label="value")
            continue
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans(), label="delete"):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(_IMPORT_JUNK, label="value")
    with _scratch() as d:
        try:
            s = _import(fmt, value, d)
        except (ImportFormatError, NotFound) as exc:  # NotFound: LoCoMo data that is a str
            OUTCOMES["refused"] += 1  # is a path, and no such file exists
            event(f"{fmt} refused")
            where = {"claude-code": "transcript.jsonl", "swe-agent": "run.traj"}.get(fmt)
            assert where is None or where in str(exc), f"the error names no record: {exc}"
            return
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            OUTCOMES["escaped"] += 1
            raise AssertionError(
                f"importing a damaged {fmt} log raised {type(exc).__name__}, not "
                "ImportFormatError:\n" + traceback.format_exc()
            ) from exc
        OUTCOMES["opened"] += 1
        event(f"{fmt} imported")
        _views(s)
        again, err = _open(s.save(d / "saved", compression="none"))  # it is a log that opens
        assert err is None and again is not None, str(err)
        assert _messages(again) == _messages(s)


# --- minimal reproducers of reader bugs the properties above found -------------------------
# Each is the smallest input found for one defect; the properties keep covering the class.

V0_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 0}


def _v3_file(
    tmp_path: Path,
    v3_raw: tuple[dict[str, Any], list[dict[str, Any]]],
    change: Callable[[list[dict[str, Any]]], None],
) -> Path:
    header, events = copy.deepcopy(v3_raw)
    change(events)
    path = tmp_path / "session.v3.jsonl"
    _write_rows(path, header, events)
    return path


def _refused_at(
    path: Path, seq: int, *, normalized: bool | None = None, strict: bool = False
) -> SessionFormatError:
    _s, err = _open(path, normalized=normalized, strict=strict)
    assert err is not None, f"{path.name} was accepted"
    assert err.seq == seq, str(err)
    return err


@pytest.mark.parametrize("etype", [["user/message"], {"t": 1}])
@pytest.mark.parametrize("version", [0, 3])
def test_an_event_type_that_is_not_a_string_is_a_located_error(
    tmp_path: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]], version: int, etype: Any
) -> None:
    # Found: TypeError: unhashable type (surface.replay_into `etype in surface`; v0/v1:
    # codec._decode_text `rtype in _PACKED_ROWS`).
    header = v3_raw[0] if version == 3 else V0_HEADER
    path = tmp_path / _file_name(version, zstd=False)
    _write_rows(path, header, [{"type": etype, "seq": 0, "time": 0, "data": {}}])
    _refused_at(path, 0)


@pytest.mark.parametrize("error", ["boom", 7, ["TOOL_FAILED"]])
def test_a_tool_result_error_that_is_not_an_object_is_a_located_error(
    tmp_path: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]], error: Any
) -> None:
    # Found: AttributeError: 'str' object has no attribute 'get' in surface._fold_surface
    # (`(data.get("error") or {}).get("code")`).
    def change(events: list[dict[str, Any]]) -> None:
        events[7]["data"]["error"] = error
        events[7]["data"]["message"]["content"][0]["isError"] = True

    path = _v3_file(tmp_path, v3_raw, change)
    # The harness's production read takes it (its full restorer refuses it: "tool error
    # must be an object"), so the lenient read opens it and its views still work ...
    s, err = _open(path)
    assert err is None and s is not None, str(err)
    _views(s)
    assert s.messages()[-2].tool_results[0].is_error is True
    with pytest.raises(SessionFormatError) as typed:  # ... the typed event names the defect
        s.event(7)
    assert (typed.value.path, typed.value.line, typed.value.seq) == (str(path), 9, 7)
    # ... and strict=True refuses it, on its line and seq.
    _refused_at(path, 7, strict=True)


@pytest.mark.parametrize("data", [None, ["x"], "x"])
def test_an_assistant_replacement_without_a_data_object_is_a_located_error(
    tmp_path: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]], data: Any
) -> None:
    # Found: AttributeError: ... has no attribute 'get' in surface._fold_surface
    # (`data.get("message")` runs before any check when surfaceOp is a replace object).
    op = {"op": "replace", "startSeq": 10, "endSeq": 10}
    bad = {"type": "assistant/message", "seq": 13, "time": 1, "data": data, "surfaceOp": op}
    _refused_at(_v3_file(tmp_path, v3_raw, lambda events: events.append(bad)), 13)


def test_a_huge_source_range_is_refused_without_expanding_it(
    tmp_path: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    # Found: MemoryError from codec.decode_source_seqs, which expands every [start, end] pair
    # before checking that the seqs are < seq. A 40-byte pair like [0, 50000000] makes the
    # reader allocate gigabytes; [0, 2**53 - 1] fails the allocation at once.
    def change(events: list[dict[str, Any]]) -> None:
        events[7]["sourceEventSeqs"] = [[0, 2**53 - 1]]

    _refused_at(_v3_file(tmp_path, v3_raw, change), 7)


def test_a_normalized_packed_row_with_a_bad_time0_is_a_located_error(tmp_path: Path) -> None:
    # Found: TypeError: can only concatenate str (not "int") to str in codec._expand_packed:
    # with normalized=True time0 is taken unchecked and dt is added to it.
    rows = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {
            "type": "text-chunks",
            "time0": "0",
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
        },
    ]
    path = tmp_path / "fixture.session.jsonl"
    _write_rows(path, V0_HEADER, rows)
    err = _refused_at(path, 2, normalized=True)
    assert err.line == 4 and "time0" in str(err), str(err)
    # Read by detection, the row's time0 makes it a harness row among stripped ones, and a
    # log that mixes the two is refused: here on the packed row, whose seq0 is missing.
    err = _refused_at(path, 2)
    assert err.line == 4 and "no seq0" in str(err) and "stripped" in str(err), str(err)
    rows[2]["time0"] = 0  # a valid time0: the same log opens, numbered by position
    _write_rows(path, V0_HEADER, rows)
    s, err = _open(path, normalized=True)
    assert err is None and s is not None, str(err)
    assert [e["seq"] for e in s.raw_events] == list(range(5))
    assert [e["time"] for e in s.raw_events[2:]] == [0, 1, 2]


@pytest.mark.parametrize(("at", "value"), [(1, True), (0, False)])
def test_a_boolean_seq_is_refused(
    tmp_path: Path, v3_raw: tuple[dict[str, Any], list[dict[str, Any]]], at: int, value: bool
) -> None:
    # Found: accepted, because surface.replay_into compares `ev["seq"] == i` and True == 1 in
    # Python; every other integer field of the envelope and header rejects booleans.
    def change(events: list[dict[str, Any]]) -> None:
        events[at]["seq"] = value

    _refused_at(_v3_file(tmp_path, v3_raw, change), at)


@pytest.mark.parametrize("keep", [0, 3, 20])
def test_a_zstd_log_without_a_complete_first_frame_names_frame_1(v3_log: Path, keep: int) -> None:
    # Found: "file is named .zstd but does not start with a zstd frame" (keep=0, 3) and
    # "no complete zstd frame: the header frame is missing or cut" (keep=20) with no frame.
    v3_log.write_bytes(v3_log.read_bytes()[:keep])
    with pytest.raises(SessionFormatError) as info:
        Session.open(v3_log)
    assert info.value.frame == 1 and "frame 1" in str(info.value), str(info.value)


def test_a_v0_row_that_is_not_an_object_names_its_seq(tmp_path: Path) -> None:
    # Found: "line 2: a row must be a JSON object" with no seq (v2/v3 logs name seq 0).
    path = tmp_path / "session.jsonl"
    _write_rows(path, V0_HEADER, [[1, 2]])
    _refused_at(path, 0)


def _set_in(events: list[dict[str, Any]], seq: int, keys: tuple[Any, ...], value: Any) -> None:
    target: Any = events[seq]["data"]
    for key in keys[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("view", "seq", "keys", "value"),
    [
        ("turns", 3, ("content", 0), "a bare string block"),
        ("turns", 3, ("content", 0, "text"), None),
        ("system_prompt", 2, ("message", "content", 0), 0),
        ("system_prompt", 2, ("message", "content", 0, "text"), {}),
        ("request_headers", 4, ("reason",), _DELETE),
        ("wire", 5, ("message", "content", 1, "name"), _DELETE),
        ("wire", 7, ("message", "content", 0, "content", 0, "text"), [{}]),
    ],
)
def test_views_of_a_readable_log_raise_only_ctx_errors(
    tmp_path: Path,
    v3_raw: tuple[dict[str, Any], list[dict[str, Any]]],
    view: str,
    seq: int,
    keys: tuple[Any, ...],
    value: Any,
) -> None:
    # Found: AttributeError / TypeError (session._prompt_between, Session.system_prompt,
    # wire._join), KeyError (wire.to_wire `b["name"]`) and pydantic ValidationError
    # (Session.request_headers) from sessions that Session.open accepted.
    path = _v3_file(tmp_path, v3_raw, lambda events: _set_in(events, seq, keys, value))
    s, err = _open(path)
    assert err is None and s is not None, f"the damaged log is not readable any more: {err}"
    _view_or_located_error(s, view, path, seq)


@pytest.mark.parametrize(
    ("view", "extra"),
    [
        ("context_window", {"type": "request/context", "data": {"contextWindow": "big"}}),
        ("inherited_event_count", {"type": "session/end-seed", "data": "x"}),
        ("descriptor", {"type": "subagent/descriptor", "data": {"version": "two"}}),
    ],
)
def test_views_of_log_only_events_raise_only_ctx_errors(
    tmp_path: Path,
    v3_raw: tuple[dict[str, Any], list[dict[str, Any]]],
    view: str,
    extra: dict[str, Any],
) -> None:
    # Found: pydantic ValidationError (Session.context_window, Session.descriptor) and
    # AttributeError (Session.inherited_event_count) from events the replay does not check.
    header, events = copy.deepcopy(v3_raw)
    ev = {"type": extra["type"], "seq": len(events), "time": 1, "data": extra["data"]}
    if extra["type"] == "request/context":  # needs an open turn: put it before turn/end
        ev["seq"] = len(events) - 1
        events[-1]["seq"] += 1
        events.insert(len(events) - 1, ev)
    else:
        events.append(ev)
    path = tmp_path / "session.v3.jsonl"
    _write_rows(path, header, events)
    s, err = _open(path)
    assert err is None, str(err)
    assert s is not None
    _view_or_located_error(s, view, path, ev["seq"])


def _view_or_located_error(s: Session, view: str, path: Path, seq: int) -> None:
    """The view works, or raises a SessionFormatError naming the file, line and seq of the
    damaged event; nothing else."""
    try:
        attr = getattr(s, view)
        _ = attr() if callable(attr) else attr
    except SessionFormatError as exc:
        assert (exc.path, exc.line, exc.seq) == (str(path), seq + 2, seq), str(exc)
        assert f"line {seq + 2}" in str(exc) and f"seq {seq}" in str(exc), str(exc)
        OUTCOMES["refused"] += 1
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        OUTCOMES["escaped"] += 1
        raise AssertionError(
            f"s.{view} raised {type(exc).__name__}, not a located error:\n" + traceback.format_exc()
        ) from exc
    else:
        OUTCOMES["opened"] += 1


def test_append_refuses_a_same_size_change_behind_the_back(v3_log: Path) -> None:
    # Found: the append goes through: append_batch only compares the file size with the size
    # read, so a rewrite of the same length (an editor, another writer's truncate-and-append)
    # is not noticed and the new frame lands after bytes this session never saw.
    s = Session.open(v3_log)
    edited = s.replace(*[s.surface().seqs[-1]] * 2, "changed behind the back")
    data = v3_log.read_bytes()
    changed = data[:-5] + bytes(b ^ 0xFF for b in data[-5:])
    v3_log.write_bytes(changed)
    with pytest.raises(WriteError):
        edited.append_to_log()
    assert v3_log.read_bytes() == changed


# --- nesting depth: the byte filter never misses, the walker agrees with a recursive count --

_NESTED_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.text(alphabet='[]{}"\\ab,:', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=200 * _SCALE, deadline=None)
@given(values=st.lists(_NESTED_JSON, min_size=1, max_size=6), limit=st.integers(0, 6))
def test_depth_filter_and_walker_agree_with_the_true_depth(values: list[Any], limit: int) -> None:
    from ctxsdk.session._codec._depth import _deep_lines, deep_path

    lines = [orjson.dumps(v) for v in values]
    candidates = _deep_lines(b"\n".join(lines) + b"\n", len(lines), limit)
    for i, v in enumerate(values):
        too_deep = _depth(v) > limit
        assert (deep_path(v, limit) is not None) == too_deep
        if too_deep:
            assert i in candidates  # the byte filter is a bound: it never lets one through


@settings(max_examples=30 * _SCALE, deadline=None)
@given(levels=st.integers(1, 300), where=st.sampled_from(["data", "block"]))
def test_an_event_opens_exactly_when_it_nests_within_the_limit(levels: int, where: str) -> None:
    from ctxsdk.session._codec import MAX_JSON_DEPTH

    hdr = {"type": "session", "version": 3, "id": "s", "createdAt": 1, "isSeeded": False}
    hdr["delegationDepth"] = 0
    nested: Any = 1
    for _ in range(levels):
        nested = [nested]
    msg = {"role": "user", "id": "u", "source": {"kind": "user"}}
    block: dict[str, Any] = {"type": "text", "text": "hi"}
    data: dict[str, Any] = {**msg, "content": [block]}
    if where == "block":
        block["meta"] = nested  # event > data > content > block > levels
        depth = 4 + levels
    else:
        data["meta"] = nested  # event > data > levels
        depth = 2 + levels
    ev = {"type": "user/message", "seq": 0, "time": 1, "data": data, "surfaceOp": "append"}
    text = b"".join(json_line + b"\n" for json_line in map(_dumps_any, [hdr, ev]))
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.jsonl"
        p.write_bytes(text)
        if depth > MAX_JSON_DEPTH:
            with pytest.raises(SessionFormatError, match="MAX_JSON_DEPTH") as err:
                Session.open(p)
            assert (err.value.line, err.value.seq) == (2, 0)
        else:
            s = Session.open(p)
            s.save(Path(tmp) / "copy.jsonl")  # what opens can be written again
            assert len(s.events_df()) == 1


def _dumps_any(value: Any) -> bytes:
    """JSON text of any depth (orjson.dumps stops at 255 levels), for writing test logs."""
    import json

    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()
