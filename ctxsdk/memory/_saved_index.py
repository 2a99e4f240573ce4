"""A memory file's saved search index: what a first ``find`` derives from every node (the
lexical index, each observation's template shape, the anchors, each node's uri), written
beside the SQLite file as ``<file>-index`` so the next process loads it instead of reading
and indexing every node again (about 5 s of CPU at 100k nodes).

The file is one blob: a magic line, the length of a JSON header, the header (the format,
the store revision the index holds, its node count and last id, and a table of the arrays
and string lists that follow), their bytes, and a BLAKE2b digest of everything before it.
It holds no pickled object: arrays are read with ``numpy.frombuffer`` as the table says,
string lists from one UTF-8 text cut at offsets. ``read`` returns None for a missing,
short, torn or altered file, or one of another format: the caller builds the index as it
would without one. ``write`` goes to a temporary file in the same directory, renamed over
the old one (``os.replace``): readers see the old file or the new one, never half of one,
and processes that race each write a whole file, the last one kept. A directory that
cannot be written leaves no file, and nothing is raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import struct
import tempfile
import time
from collections.abc import Collection, Mapping
from glob import escape as glob_escape
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..session import Retriever
from ._sqlite import SQLiteStore
from ._store import MemoryStore

__all__ = [
    "FORMAT",
    "Saved",
    "anchors_of",
    "pack",
    "read",
    "remove",
    "shapes_of",
    "sidecar",
    "write",
]

FORMAT = 1  # bump when what is saved, or how an index is built from nodes, changes
_MAGIC = b"ctxsdk memory index\n"
_DIGEST = 32
_DTYPES = frozenset({"<i4", "<i8", "<f8", "|S16"})
_I4 = (-(2**31), 2**31 - 1)
_STALE_SECONDS = 120.0  # a temp file untouched this long is a crashed save's (a save takes seconds)


class Saved(NamedTuple):
    """A saved index as read: its header's values, its arrays, its string lists."""

    header: dict[str, Any]
    arrays: dict[str, NDArray[Any]]
    strings: dict[str, list[str]]


def sidecar(store: MemoryStore) -> Path | None:
    """Where ``store``'s saved index lives: ``<file>-index`` beside a SQLite file (None for
    an in-memory database or another store)."""
    if not isinstance(store, SQLiteStore) or store.location == ":memory:":
        return None
    return Path(store.location + "-index")


def write(
    path: Path,
    header: Mapping[str, Any],
    arrays: Mapping[str, NDArray[Any]],
    strings: Mapping[str, list[str]],
    *,
    like: Path | None = None,
) -> bool:
    """Write a saved index to ``path`` atomically, with the permissions of the file
    ``like`` (the memory's: whoever may read the memory may read its index); False when it
    could not be written (the old file, if any, left as it was)."""
    table: dict[str, Any] = {"arrays": {}, "strings": {}}
    parts: list[bytes] = []
    at = 0
    for name, arr in arrays.items():
        data = np.ascontiguousarray(arr)
        if data.dtype.kind == "i" and (
            not data.size or (_I4[0] <= data.min() and data.max() <= _I4[1])
        ):
            data = data.astype("<i4")  # half the bytes; read back as Python ints alike
        elif data.dtype.kind != "S":
            data = data.astype(data.dtype.newbyteorder("<"), copy=False)
        raw = data.tobytes()
        table["arrays"][name] = [data.dtype.str, list(data.shape), at, len(raw)]
        parts.append(raw)
        at += len(raw)
    for name, items in strings.items():
        text = "".join(items)
        ends = np.cumsum([len(s) for s in items], dtype=np.int64)
        raw_ends, raw_text = ends.astype("<i8").tobytes(), text.encode("utf-8", "surrogatepass")
        table["strings"][name] = [len(items), at, len(raw_ends), len(raw_text)]
        parts += [raw_ends, raw_text]
        at += len(raw_ends) + len(raw_text)
    head = json.dumps({**header, "format": FORMAT, "table": table}).encode()
    blob = b"".join([_MAGIC, struct.pack("<Q", len(head)), head, *parts])
    blob += hashlib.blake2b(blob, digest_size=_DIGEST).digest()
    _remove_leftovers(path, older_than=_STALE_SECONDS)
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        if like is not None:
            os.chmod(tmp, stat.S_IMODE(os.stat(like).st_mode))
        os.replace(tmp, path)
    except OSError:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    return True


def remove(path: Path) -> None:
    """Delete the saved index at ``path`` and every temp file a save left beside it (a
    crashed save's too: each holds the index terms of the texts as they were)."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    _remove_leftovers(path, older_than=None)


def _remove_leftovers(path: Path, *, older_than: float | None) -> None:
    """Delete the temp files of saves of ``path`` (``<name>.*.tmp``, as ``write`` names
    them) last written more than ``older_than`` seconds ago (None: all of them). A save
    whose temp file is taken fails and keeps nothing, as any failed save does."""
    try:
        found = [p for p in path.parent.glob(glob_escape(path.name) + ".*.tmp") if p.is_file()]
    except OSError:
        return
    now = time.time()
    for leftover in found:
        with contextlib.suppress(OSError):
            if older_than is None or now - leftover.stat().st_mtime > older_than:
                leftover.unlink()


def read(path: Path) -> Saved | None:
    """The saved index at ``path``; None when there is none or it is not whole and ours."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        return _parse(blob)
    except (ValueError, TypeError, KeyError, IndexError, struct.error, UnicodeDecodeError):
        return None


def _parse(blob: bytes) -> Saved | None:
    if not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 8 + _DIGEST:
        return None
    body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
    if hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:
        return None  # torn or altered
    (n,) = struct.unpack_from("<Q", body, len(_MAGIC))
    start = len(_MAGIC) + 8
    header = json.loads(body[start : start + n])
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    table = header.pop("table")
    base = start + n
    data = memoryview(body)[base:]
    arrays: dict[str, NDArray[Any]] = {}
    for name, (dtype, shape, at, size) in table["arrays"].items():
        if dtype not in _DTYPES or at < 0 or at + size > len(data):
            return None
        arrays[name] = np.frombuffer(data[at : at + size], dtype=dtype).reshape(shape)
    strings: dict[str, list[str]] = {}
    for name, (count, at, n_ends, n_text) in table["strings"].items():
        if at < 0 or at + n_ends + n_text > len(data) or n_ends != 8 * count:
            return None
        ends = np.frombuffer(data[at : at + n_ends], dtype="<i8").tolist()
        text = bytes(data[at + n_ends : at + n_ends + n_text]).decode("utf-8", "surrogatepass")
        if ends and ends[-1] != len(text):
            return None
        strings[name] = [text[i:j] for i, j in zip([0, *ends], ends, strict=False)]
    return Saved(header, arrays, strings)


def pack(
    revision: int,
    retriever: Retriever,
    uris: list[str],
    shapes: Mapping[str, bytes],
    anchors: Collection[str],
    redaction: Any,
) -> Saved | None:
    """What a memory saves of its index at ``revision``: the retriever's lexical state,
    each indexed node's uri (in slot order, which is the cache's), each observation's
    template shape and the anchors' ids, stamped with the memory's ``redaction`` record
    as it was before the nodes were read (a scrub changes it: an index read before one
    holds the old texts); None when the index cannot be saved (``Retriever.lexical_state``)."""
    state = retriever.lexical_state()
    if state is None or len(uris) != len(state.strings["ids"]):
        return None
    ids = state.strings["ids"]
    slot = {nid: i for i, nid in enumerate(ids)}
    arrays = dict(state.arrays)
    arrays["shape_slot"] = np.asarray([slot[nid] for nid in shapes], dtype=np.int64)
    arrays["shapes"] = np.asarray(list(shapes.values()), dtype="|S16")
    arrays["anchors"] = np.asarray(sorted(slot[a] for a in anchors), dtype=np.int64)
    strings = {**state.strings, "uris": uris}
    header = {"revision": revision, "nodes": len(ids), "redaction": redaction}
    return Saved(header, arrays, strings)


def shapes_of(saved: Saved) -> dict[str, bytes]:
    """The template shape digests ``pack`` saved, by node id."""
    ids = saved.strings["ids"]
    slots, raw = saved.arrays["shape_slot"].tolist(), saved.arrays["shapes"].tobytes()
    # cut from the bytes: numpy's bytes items drop a digest's trailing zero bytes
    shapes = [raw[i : i + 16] for i in range(0, len(raw), 16)]
    if (
        len(slots) != len(shapes)
        or saved.arrays["shapes"].dtype != np.dtype("S16")
        or not all(0 <= s < len(ids) for s in slots)
    ):
        raise ValueError("a saved index's shapes and their slots disagree")
    return {ids[s]: shape for s, shape in zip(slots, shapes, strict=True)}


def anchors_of(saved: Saved) -> set[str]:
    """The anchors' ids ``pack`` saved."""
    ids = saved.strings["ids"]
    slots = saved.arrays["anchors"].tolist()
    if not all(0 <= s < len(ids) for s in slots):
        raise ValueError("a saved index's anchors point outside it")
    return {ids[s] for s in slots}
