"""The bundle store: the exact messages a fold removes, archived and hash-verified first.

A fold may take messages off the surface only after their bundle is durable
(``BundleDurable ≺ SurfaceLoss``): written atomically, read back, and both hashes checked.
Layout: ``<root>/<session_id>/<checkpoint_id>.bundle.zst``, zstd of canonical JSON,
directories 0700 and files 0600 (archived context can hold secrets).

Reading is bounded: only a regular file is opened (``stat`` first, then ``O_NONBLOCK`` and
``fstat`` again, so a FIFO, a device such as ``/dev/zero``, a directory or a file this
process may not read is a ``CorruptBundle`` naming it, never a hang or a raw ``OSError``);
at most ``max_bytes`` (``MAX_BUNDLE_BYTES``, 256 MiB) are read and decoded, counted as the
text streams, so a decompression bomb is refused at the limit; and JSON nested deeper than
``MAX_BUNDLE_DEPTH`` is refused before anything walks it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias

import zstandard

from ..errors import (
    BundleConflict,
    BundleError,
    BundleMissing,
    CorruptBundle,
    InvalidArgument,
    WriteError,
)
from ..session.kernel import check_byte_limit, read_regular_file

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_FORMAT_VERSION",
    "MAX_BUNDLE_BYTES",
    "MAX_BUNDLE_DEPTH",
    "Bundle",
    "BundleReader",
    "BundleRecord",
    "BundleRef",
    "BundleStatus",
    "FileBundleStore",
    "canonical_json",
]

BUNDLE_FORMAT = "ctxsdk-fold-bundle"
BUNDLE_FORMAT_VERSION = 1
_SUFFIX = ".bundle.zst"
# Ids become file names: no separators, no leading dot (temp files start with one), bounded.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
_ZSTD_LEVEL = 10  # fixed, so the same bundle always compresses to the same bytes
MAX_BUNDLE_BYTES = 256 << 20
"""The most a store reads of one bundle by default (256 MiB of its canonical JSON, and of the
file): a bundle holds the messages of one fold's span, which fit a context window (a
million-token window is a few MB of text), so a larger one is a decompression bomb or
damage. ``FileBundleStore(root, max_bytes=...)`` sets another limit (for reading and for
storing: a store never writes a bundle it would refuse to read back)."""
MAX_BUNDLE_DEPTH = 192
"""The deepest nesting of arrays and objects a bundle's JSON may have (the document is level
1, each archived message level 4): deeper than any message a log may hold (a whole event
nests at most 128 levels there), and far below what Python's ``json`` and the recursive
checks after it can take. Deeper JSON is refused as ``undecodable``."""
_READ_CHUNK = 1 << 20  # bytes read, and decoded, at a time while counting against the limit

Problem: TypeAlias = Literal[
    "undecodable",
    "not-canonical",
    "format",
    "file-hash",
    "logical-hash",
    "source-digest",
    "wrong-id",
    "log-mismatch",  # the archived messages differ from the log's own copies (fold checks)
    "not-a-file",  # a FIFO, a device, a directory or a socket where the bundle file should be
    "unreadable",  # a file this process may not read (its mode, an ACL)
    "too-large",  # more than the store's max_bytes, on disk or decoded (a decompression bomb)
]


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8 (not ASCII-escaped). A lone UTF-16 surrogate, which
    UTF-8 cannot hold, is written as its ``\\udXXX`` escape, as ``JSON.stringify`` does."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except RecursionError:
        raise InvalidArgument(_too_deep("a bundle's data")) from None
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"a bundle must be plain JSON data: {exc}") from exc
    return text.encode("utf-8", "backslashreplace")


def _too_deep(what: str) -> str:
    return (
        f"{what} nests arrays/objects deeper than {MAX_BUNDLE_DEPTH} levels (MAX_BUNDLE_DEPTH; "
        "no message read from a log nests that deep)"
    )


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects deeper than ``limit`` levels (``value`` itself
    is level 1). Iterative, so it never recurses however deep the value is."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


def _check_depth(messages: Sequence[Any]) -> None:
    """Refuse messages a bundle could not hold (each message is level 4 of the document)."""
    if not isinstance(messages, dict | list | tuple):
        return
    if _depth_over(list(messages), MAX_BUNDLE_DEPTH - 2):
        raise InvalidArgument(_too_deep("a message to archive"))


def _check_max_bytes(max_bytes: Any) -> int:
    return check_byte_limit(max_bytes, "MAX_BUNDLE_BYTES", MAX_BUNDLE_BYTES)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_id(value: str) -> bool:
    return bool(_ID.fullmatch(value)) and ".." not in value


def _check_id(kind: str, value: str) -> str:
    if not isinstance(value, str) or not _is_id(value):
        raise InvalidArgument(
            f"{kind} {value!r} cannot name a bundle file: use letters, digits and _ . : - "
            "(at most 128, starting with a letter or digit)"
        )
    return value


@dataclass(frozen=True)
class Bundle:
    """One checkpoint's archive (CheckpointBundleV1): the raw DSH message dicts a fold took
    off the surface, the surface seqs they came from, and the hashes that pin both."""

    checkpoint_id: str
    session_id: str
    created_at: str
    ordered_surface_seqs: tuple[int, ...]
    source_digest: str
    messages: tuple[dict[str, Any], ...]
    logical_hash: str

    @classmethod
    def build(
        cls,
        *,
        checkpoint_id: str,
        session_id: str,
        ordered_surface_seqs: Sequence[int],
        messages: Sequence[dict[str, Any]],
        created_at: str | None = None,
    ) -> Bundle:
        """A bundle with its digests computed; ``created_at`` defaults to now (UTC, ISO 8601)."""
        _check_id("checkpoint id", checkpoint_id)
        _check_id("session id", session_id)
        seqs = tuple(ordered_surface_seqs)
        if not all(type(q) is int for q in seqs):
            raise InvalidArgument(f"ordered_surface_seqs must be ints, got {list(seqs)!r}")
        msgs = tuple(messages)
        if not all(isinstance(m, dict) for m in msgs):
            raise InvalidArgument("messages must be message dicts")
        _check_depth(msgs)
        stamp = created_at or datetime.now(UTC).isoformat(timespec="milliseconds")
        return cls(
            checkpoint_id=checkpoint_id,
            session_id=session_id,
            created_at=stamp,
            ordered_surface_seqs=seqs,
            source_digest=_sha256(canonical_json(list(seqs))),
            messages=msgs,
            logical_hash=_sha256(canonical_json(list(msgs))),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": BUNDLE_FORMAT,
            "format_version": BUNDLE_FORMAT_VERSION,
            "checkpoint_id": self.checkpoint_id,
            "session_id": self.session_id,
            "created_at": self.created_at,
            "source": {
                "ordered_surface_seqs": list(self.ordered_surface_seqs),
                "source_digest": self.source_digest,
            },
            "archive": {"messages": list(self.messages), "logical_hash": self.logical_hash},
        }

    def encode(self) -> bytes:
        """The file bytes: zstd (with its frame checksum) of the canonical JSON."""
        return _compress(canonical_json(self.to_json()))


def _compress(text: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=_ZSTD_LEVEL, write_checksum=True).compress(text)


@dataclass(frozen=True)
class BundleRecord:
    """What ``put`` returns once a bundle is durable."""

    checkpoint_id: str
    session_id: str
    path: Path
    file_sha256: str
    logical_hash: str
    message_count: int
    bytes: int


@dataclass(frozen=True)
class BundleStatus:
    """``verify``'s answer: ``verified``, ``corrupt`` (``problem`` and ``reason`` say how:
    bytes that fail a check, or a file that cannot be read, ``not-a-file``, ``unreadable``,
    ``too-large``) or ``missing``."""

    state: Literal["verified", "corrupt", "missing"]
    checkpoint_id: str
    path: Path | None
    problem: Problem | None = None
    reason: str = ""
    record: BundleRecord | None = None

    @property
    def ok(self) -> bool:
        return self.state == "verified"


@dataclass(frozen=True)
class BundleRef:
    """A bundle file on disk, named by its session and checkpoint id."""

    session_id: str
    checkpoint_id: str
    path: Path


class _Corrupt(Exception):
    def __init__(self, problem: Problem, reason: str) -> None:
        self.problem: Problem = problem
        self.reason = reason
        super().__init__(reason)


# Problems of the file rather than of its bytes: the bundle "cannot be read", not "is corrupt".
_UNREAD: frozenset[str] = frozenset({"not-a-file", "unreadable", "too-large"})


def _too_large(what: str, max_bytes: int) -> _Corrupt:
    return _Corrupt(
        "too-large",
        f"{what} more than {_size(max_bytes)} (max_bytes={max_bytes}), the most this store "
        "reads of one bundle: a decompression bomb, or damage; if it is a real bundle, read "
        "it with a larger limit, FileBundleStore(root, max_bytes=...) (cx.Fold(s, "
        "store=FileBundleStore(root, max_bytes=...)))",
    )


def _not_a_file(kind: str) -> _Corrupt:
    return _Corrupt(
        "not-a-file",
        f"is {kind}, not a regular file; a bundle is one, so it was not read (restore the "
        "bundle file from a backup, or treat the checkpoint as unrecoverable)",
    )


def _read_file(path: Path, max_bytes: int) -> bytes:
    """A bundle file's bytes, read only if it is a regular file of at most ``max_bytes``
    (``read_regular_file``: checked with ``stat``, opened non-blocking, so a FIFO swapped in
    meanwhile never blocks, and checked again with ``fstat``). Raises ``FileNotFoundError``
    for no file, ``_Corrupt`` for anything else that keeps it from being read."""

    def refuse(problem: str, detail: str) -> _Corrupt:
        if problem == "too-large":
            return _too_large(f"is {detail},", max_bytes)
        return _not_a_file(detail)

    try:
        return read_regular_file(path, max_bytes, refuse)
    except (FileNotFoundError, _Corrupt):
        raise
    except PermissionError as exc:
        raise _Corrupt(
            "unreadable",
            f"permission denied ({exc.strerror}): this process may not read it; fix its "
            "permissions (or its directory's), or read it as its owner",
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise FileNotFoundError(errno.ENOENT, exc.strerror, str(path)) from None
        if exc.errno == errno.ELOOP:
            raise _not_a_file("a symlink that cannot be followed (a loop)") from None
        raise _Corrupt("unreadable", f"cannot be read ({exc.strerror or exc})") from None


def _inflate(data: bytes, max_bytes: int) -> bytes:
    """The JSON text of a bundle file: one zstd frame, decoded in chunks and refused as soon
    as it passes ``max_bytes`` (at once when its header declares more)."""
    try:
        declared = zstandard.frame_content_size(data[:18])
    except zstandard.ZstdError:
        declared = -1  # the decode below names the damage
    if declared > max_bytes:
        raise _too_large(f"declares {declared:,} bytes of JSON,", max_bytes)
    reader = zstandard.ZstdDecompressor().stream_reader(data)
    parts: list[bytes] = []
    total = 0
    while chunk := reader.read(_READ_CHUNK):
        total += len(chunk)
        if total > max_bytes:
            raise _too_large("decodes to", max_bytes)
        parts.append(chunk)
    return b"".join(parts)


def _decode(
    data: bytes,
    session_id: str,
    checkpoint_id: str,
    file_sha256: str | None,
    max_bytes: int = MAX_BUNDLE_BYTES,
) -> Bundle:
    """The bundle in ``data``, every hash and id checked; raises ``_Corrupt``."""
    if file_sha256 is not None and _sha256(data) != file_sha256:
        raise _Corrupt(
            "file-hash",
            f"file sha256 {_sha256(data)[:16]}… is not the expected {file_sha256[:16]}…",
        )
    try:
        raw = _inflate(data, max_bytes)
        doc = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _Corrupt("undecodable", _too_deep("its JSON") + "; it was not read") from None
    except (zstandard.ZstdError, UnicodeDecodeError, ValueError) as exc:
        raise _Corrupt("undecodable", f"undecodable ({type(exc).__name__}: {exc})") from None
    # Walked only when it has enough openers to be that deep (a cheap count in C).
    if raw.count(b"[") + raw.count(b"{") > MAX_BUNDLE_DEPTH and _depth_over(doc, MAX_BUNDLE_DEPTH):
        raise _Corrupt("undecodable", _too_deep("its JSON") + "; it was not read")
    try:
        if doc["format"] != BUNDLE_FORMAT or doc["format_version"] != BUNDLE_FORMAT_VERSION:
            raise _Corrupt("format", f"not a {BUNDLE_FORMAT} v{BUNDLE_FORMAT_VERSION}")
        src, arc = doc["source"], doc["archive"]
        bundle = Bundle(
            checkpoint_id=doc["checkpoint_id"],
            session_id=doc["session_id"],
            created_at=doc["created_at"],
            ordered_surface_seqs=tuple(src["ordered_surface_seqs"]),
            source_digest=src["source_digest"],
            messages=tuple(arc["messages"]),
            logical_hash=arc["logical_hash"],
        )
    except (KeyError, TypeError) as exc:
        raise _Corrupt("format", f"a required field is missing or mistyped ({exc})") from None
    # The bytes must be exactly what this writer makes, so no edit can hide behind a re-encoding.
    if canonical_json(doc) != raw:
        raise _Corrupt("not-canonical", "the JSON is not in canonical form")
    if bundle.session_id != session_id or bundle.checkpoint_id != checkpoint_id:
        raise _Corrupt(
            "wrong-id",
            f"holds checkpoint {bundle.checkpoint_id!r} of session {bundle.session_id!r}, "
            f"not {checkpoint_id!r} of {session_id!r}",
        )
    if _sha256(canonical_json(list(bundle.messages))) != bundle.logical_hash:
        raise _Corrupt("logical-hash", "the archived messages do not match their logical hash")
    if _sha256(canonical_json(list(bundle.ordered_surface_seqs))) != bundle.source_digest:
        raise _Corrupt("source-digest", "the surface seqs do not match their source digest")
    return bundle


def _record(bundle: Bundle, path: Path, data: bytes) -> BundleRecord:
    return BundleRecord(
        checkpoint_id=bundle.checkpoint_id,
        session_id=bundle.session_id,
        path=path,
        file_sha256=_sha256(data),
        logical_hash=bundle.logical_hash,
        message_count=len(bundle.messages),
        bytes=len(data),
    )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileBundleStore:
    """Bundles under ``root``, one directory per session.

    >>> store = FileBundleStore(tmp)                                    # doctest: +SKIP
    >>> store.put(Bundle.build(checkpoint_id="cp1", session_id="s1",    # doctest: +SKIP
    ...     ordered_surface_seqs=[3, 4], messages=[{"role": "user", "content": "hi"}]))
    >>> store.reader(lineage=["s1"]).get("cp1").messages                # doctest: +SKIP
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        tracer: Callable[[str, Mapping[str, Any]], None] | None = None,
        max_bytes: int = MAX_BUNDLE_BYTES,
    ) -> None:
        self.root = Path(root)
        # The most one bundle may take, on disk and decoded (read and stored alike).
        self.max_bytes = _check_max_bytes(max_bytes)
        # Called at each durable step of a put ("bundle-temp-written", "bundle-published"):
        # for seeing what happens, and for crash tests that kill the process there.
        self.tracer = tracer

    def _trace(self, point: str, **detail: Any) -> None:
        if self.tracer is not None:
            self.tracer(point, detail)

    def path(self, session_id: str, checkpoint_id: str) -> Path:
        return (
            self.root
            / _check_id("session id", session_id)
            / (_check_id("checkpoint id", checkpoint_id) + _SUFFIX)
        )

    # --- writing ---------------------------------------------------------------------------

    def put(self, bundle: Bundle) -> BundleRecord:
        """Write ``bundle`` atomically and return once it is durable: read back, file and
        logical hashes checked. The same bundle again is a no-op; a different one under the
        same checkpoint id raises ``BundleConflict``; a failed write raises ``WriteError``
        and leaves no bundle."""
        path = self.path(bundle.session_id, bundle.checkpoint_id)
        _check_depth(bundle.messages)
        text = canonical_json(bundle.to_json())
        if len(text) > self.max_bytes:
            raise BundleError(
                f"the bundle of checkpoint {bundle.checkpoint_id!r} is {len(text):,} bytes of "
                f"JSON, more than this store reads back (max_bytes={self.max_bytes}, "
                f"{_size(self.max_bytes)}); it was not stored: use a store with a larger limit, "
                "FileBundleStore(root, max_bytes=...)",
                path=path,
            )
        data = _compress(text)
        if _sha256(canonical_json(list(bundle.messages))) != bundle.logical_hash:
            raise InvalidArgument(
                f"bundle {bundle.checkpoint_id!r}: logical_hash does not match its messages"
            )
        existing = self._existing(path, bundle, data)
        if existing is not None:
            return existing
        try:
            self._mkdir(path.parent)
            tmp = path.parent / f".{bundle.checkpoint_id}.{secrets.token_hex(6)}.tmp"
            self._write_temp(tmp, data)
            self._trace("bundle-temp-written", path=str(tmp))
            try:
                # link, not rename: it refuses to replace a bundle another writer just stored.
                os.link(tmp, path)
            except FileExistsError:
                os.unlink(tmp)
                existing = self._existing(path, bundle, data)
                if existing is not None:
                    return existing
                raise
            os.unlink(tmp)
            _fsync_dir(path.parent)
            self._trace("bundle-published", path=str(path))
            back = _read_file(path, self.max_bytes)
        except OSError as exc:
            raise WriteError(
                exc.errno or errno.EIO, f"{path}: the bundle was not stored ({exc.strerror or exc})"
            ) from exc
        except _Corrupt as exc:
            path.unlink(missing_ok=True)
            raise WriteError(
                errno.EIO, f"{path}: the bundle could not be read back ({exc.reason}); removed"
            ) from None
        try:
            _decode(back, bundle.session_id, bundle.checkpoint_id, _sha256(data), self.max_bytes)
        except _Corrupt as exc:
            path.unlink(missing_ok=True)  # ours, just made, and wrong: never leave it as durable
            raise WriteError(
                errno.EIO, f"{path}: the bundle read back {exc.reason}; it was removed"
            ) from None
        return _record(bundle, path, back)

    def remove(self, session_id: str, checkpoint_id: str) -> bool:
        """Delete one bundle file (a fold that lost a race removes the bundle it stored, which
        no checkpoint references); True if there was one."""
        path = self.path(session_id, checkpoint_id)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        _fsync_dir(path.parent)
        return True

    def _existing(self, path: Path, bundle: Bundle, data: bytes) -> BundleRecord | None:
        """The record of an equal bundle already at ``path``, None if there is none."""
        try:
            old = _read_file(path, self.max_bytes)
        except FileNotFoundError:
            return None
        except _Corrupt as exc:
            raise CorruptBundle(
                f"something is already stored under this id and cannot be read ({exc.reason}); "
                "it was left as it was",
                problem=exc.problem,
                path=path,
            ) from None
        if old == data:
            return _record(bundle, path, old)
        try:
            stored = _decode(old, bundle.session_id, bundle.checkpoint_id, None, self.max_bytes)
        except _Corrupt as exc:
            raise CorruptBundle(
                f"a bundle is already stored under this id and is corrupt ({exc.reason}); "
                "it was left as it was",
                problem=exc.problem,
                path=path,
            ) from None
        # Only the timestamp differs (a retried fold): the archive is the same, keep the first.
        if (
            stored.logical_hash == bundle.logical_hash
            and stored.source_digest == bundle.source_digest
        ):
            return _record(stored, path, old)
        raise BundleConflict(
            f"checkpoint {bundle.checkpoint_id!r} is already stored with other messages or seqs; "
            "it was left as it was (use a new checkpoint id)",
            path=path,
        )

    def _mkdir(self, directory: Path) -> None:
        self.root.parent.mkdir(parents=True, exist_ok=True)
        for d in (self.root, directory):
            try:
                d.mkdir(mode=0o700)
            except FileExistsError:
                continue
            os.chmod(d, 0o700)  # mkdir's mode is filtered by the umask

    @staticmethod
    def _write_temp(tmp: Path, data: bytes) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)

    # --- reading ---------------------------------------------------------------------------

    def verify(
        self, session_id: str, checkpoint_id: str, *, file_sha256: str | None = None
    ) -> BundleStatus:
        """Whether ``session_id``'s bundle ``checkpoint_id`` is on disk and intact; pass the
        ``file_sha256`` a checkpoint recorded to check the file's bytes too."""
        status, _ = self._read(session_id, checkpoint_id, file_sha256)
        return status

    def get(self, session_id: str, checkpoint_id: str, *, file_sha256: str | None = None) -> Bundle:
        """The verified bundle; ``BundleMissing`` or ``CorruptBundle`` otherwise, never
        other bytes."""
        status, bundle = self._read(session_id, checkpoint_id, file_sha256)
        if bundle is not None:
            return bundle
        if status.state == "missing":
            raise BundleMissing(
                f"no bundle for checkpoint {checkpoint_id!r} of session {session_id!r} "
                f"at {status.path}",
                path=status.path,
            )
        assert status.problem is not None
        state = "cannot be read" if status.problem in _UNREAD else "is corrupt"
        raise CorruptBundle(
            f"bundle of checkpoint {checkpoint_id!r} {state}: {status.reason}",
            problem=status.problem,
            path=status.path,
        )

    def _read(
        self, session_id: str, checkpoint_id: str, file_sha256: str | None
    ) -> tuple[BundleStatus, Bundle | None]:
        path = self.path(session_id, checkpoint_id)
        try:
            data = _read_file(path, self.max_bytes)
            bundle = _decode(data, session_id, checkpoint_id, file_sha256, self.max_bytes)
        except FileNotFoundError:
            return BundleStatus("missing", checkpoint_id, path), None
        except _Corrupt as exc:
            return BundleStatus("corrupt", checkpoint_id, path, exc.problem, exc.reason), None
        return BundleStatus(
            "verified", checkpoint_id, path, record=_record(bundle, path, data)
        ), bundle

    def reader(self, lineage: Sequence[str]) -> BundleReader:
        """Reads on behalf of ``lineage[0]``: its bundles and its ancestors' (``lineage[1:]``,
        nearest first), nothing else."""
        return BundleReader(self, lineage)

    def bundles(self, session_id: str | None = None) -> list[BundleRef]:
        """Every bundle file on disk (of one session, or all), sorted; temp files are not
        bundles."""
        if session_id is not None:
            dirs = [self.root / _check_id("session id", session_id)]
        else:
            dirs = (
                sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
            )
        out: list[BundleRef] = []
        for d in dirs:
            if not d.is_dir():
                continue
            for f in sorted(d.iterdir()):
                cp = f.name[: -len(_SUFFIX)]
                if f.name.endswith(_SUFFIX) and _ID.fullmatch(cp) and ".." not in cp:
                    out.append(BundleRef(d.name, cp, f))
        return out

    def orphans(self, referenced: Iterable[str], session_id: str | None = None) -> list[BundleRef]:
        """Bundles on disk whose checkpoint id no checkpoint references (left by a fold that
        crashed after its bundle was durable and before the surface changed)."""
        keep = set(referenced)
        return [b for b in self.bundles(session_id) if b.checkpoint_id not in keep]

    def owners(self, checkpoint_id: str) -> list[str]:
        """The sessions whose folder holds a bundle for ``checkpoint_id`` (sorted)."""
        name = _check_id("checkpoint id", checkpoint_id) + _SUFFIX
        if not self.root.is_dir():
            return []
        return sorted(d.name for d in self.root.iterdir() if (d / name).is_file())

    def temp_files(self, session_id: str) -> list[Path]:
        """Temp files a ``put`` left behind (a writer killed mid-write), oldest first."""
        d = self.root / _check_id("session id", session_id)
        if not d.is_dir():
            return []
        found = [p for p in d.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]
        return sorted(found, key=lambda p: p.stat().st_mtime)

    def clean(
        self,
        referenced: Iterable[str],
        session_id: str,
        *,
        min_age: float = 3600.0,
        dry_run: bool = True,
        now: float | None = None,
    ) -> list[Path]:
        """Orphan bundles and temp files of ``session_id`` older than ``min_age`` seconds:
        listed, and deleted unless ``dry_run``. The age guard leaves alone what a fold in
        another process may have written a moment ago and is about to reference."""
        import time

        t = time.time() if now is None else now
        paths = [b.path for b in self.orphans(referenced, session_id)]
        paths += self.temp_files(session_id)
        old = [p for p in paths if t - p.stat().st_mtime >= min_age]
        if not dry_run:
            for p in old:
                p.unlink(missing_ok=True)
            if old:
                _fsync_dir(old[0].parent)
        return old


class BundleReader:
    """A lineage-scoped view of a store: a sibling's or a child's bundle reads as missing."""

    def __init__(self, store: FileBundleStore, lineage: Sequence[str]) -> None:
        if isinstance(lineage, str) or not lineage:
            raise InvalidArgument(
                "lineage must be a non-empty list of session ids, the reader's own first"
            )
        self.store = store
        # An id that cannot name a bundle file owns no bundle (every write checks it): a
        # log whose id is a fixture's "{{sessionId}}" reads as having none, not as an error.
        self.lineage = tuple(s for s in lineage if isinstance(s, str) and _is_id(s))

    def _owner(self, checkpoint_id: str) -> str | None:
        for sid in self.lineage:
            if self.store.path(sid, checkpoint_id).exists():
                return sid
        return None

    def verify(self, checkpoint_id: str, *, file_sha256: str | None = None) -> BundleStatus:
        owner = self._owner(checkpoint_id)
        if owner is None:
            return BundleStatus("missing", _check_id("checkpoint id", checkpoint_id), None)
        return self.store.verify(owner, checkpoint_id, file_sha256=file_sha256)

    def get(self, checkpoint_id: str, *, file_sha256: str | None = None) -> Bundle:
        owner = self._owner(checkpoint_id)
        if owner is None:
            raise BundleMissing(
                f"no bundle for checkpoint {checkpoint_id!r} in sessions {list(self.lineage)} "
                f"under {self.store.root}"
            )
        return self.store.get(owner, checkpoint_id, file_sha256=file_sha256)

    def bundles(self) -> list[BundleRef]:
        return [b for sid in self.lineage for b in self.store.bundles(sid)]
