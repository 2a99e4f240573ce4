"""Reading a session file (``read_log``): the path resolved (a session directory's canonical
log), the bytes read only from a regular file under the cap, the compression told from the
bytes and the name, and the errors a caller can act on (``NotFound``, ``Unreadable``).
"""

from __future__ import annotations

import errno
from pathlib import Path

from ...errors import CorruptLog, SessionFormatError
from .._files import FileRefusal, read_regular_file
from ._byte_cap import MAX_DECODED_BYTES, _too_big, check_max_bytes
from ._decode import decode_bytes
from ._decoded import Compression, DecodedLog
from ._file_names import is_session_file_name, version_from_filename
from ._framing import _ZSTD_MAGIC


def resolve_log_path(path: str | Path) -> Path:
    """A session file, or the canonical file of a session directory (highest generation).

    The log of a directory is chosen by name, as the harness (and the workspace listing)
    choose it: the numerically highest canonical generation (no ``.v0``, no leading zeros),
    whatever kind of file it is, so a FIFO or a directory with that name is then refused by
    the read naming it, never passed over for an older generation or a "no log here".

    A directory whose highest generation is there in both encodings (``session.jsonl`` and
    ``session.jsonl.zstd``, or ``session.vN.jsonl`` and ``session.vN.jsonl.zstd``) is refused
    naming both: a harness root has one encoding and rejects the other, so which log is the
    session's cannot be told from the directory."""

    p = Path(path).expanduser()
    if p.is_dir():
        gens: dict[int, list[Path]] = {}
        for child in p.iterdir():
            named = version_from_filename(child.name)
            if named is not None and is_session_file_name(child.name):
                gens.setdefault(named[0] or 0, []).append(child)
        if not gens:
            raise SessionFormatError(f"{p}: no session.jsonl[.zstd] or session.vN.* file in it")
        top = sorted(gens[max(gens)], key=lambda c: c.name)
        if len(top) > 1:
            names = " and ".join(c.name for c in top)
            raise SessionFormatError(
                f"{p}: holds both {names}, one log in two encodings; a harness root has one "
                "encoding and rejects the other, so which is this session's cannot be told: "
                f"open the file you mean (e.g. Session.open({str(top[-1])!r})), or remove the "
                "other (Workspace(home, compression='zstd' or 'none') reads one encoding)"
            )
        return top[0]
    return p


def _read_file(p: Path, max_bytes: int) -> bytes:
    """A log file's bytes, read only if it is a regular file (a FIFO, device or socket is
    never opened: see ``_files``) of at most ``max_bytes``."""

    def refuse(problem: FileRefusal, detail: str) -> SessionFormatError:
        if problem == "too-large":
            return _too_big(p, max_bytes)
        return SessionFormatError(
            f"is {detail}, not a regular file; a session log is a regular file, so it is not read",
            path=p,
        )

    return read_regular_file(p, max_bytes, refuse)


def read_log(
    path: str | Path, *, normalized: bool | None = None, max_bytes: int = MAX_DECODED_BYTES
) -> DecodedLog:
    """Read and decode a session file (never modifies it).

    A stripped log (no ``seq``/``time`` on any row, like the harness's snapshot fixtures) is
    read as normalized unless ``normalized=False``; see ``decode_bytes``.

    A path that is not a regular file, or that decodes to more than ``max_bytes`` (see
    ``MAX_DECODED_BYTES``), raises ``SessionFormatError``; a log this process may not read
    raises ``Unreadable`` (a ``PermissionError``); a missing one or a symlink loop ``NotFound``.
    """
    from ...errors import NotFound, Unreadable

    check_max_bytes(max_bytes)
    p = Path(path).expanduser()
    try:
        p = resolve_log_path(p)
        data = _read_file(p, max_bytes)
    except FileNotFoundError:
        raise NotFound(f"{p}: no such session file") from None
    except PermissionError as exc:
        where = exc.filename if exc.filename is not None else p
        raise Unreadable(
            f"{where}: permission denied ({exc.strerror}): this process may not read the "
            "session log; fix its permissions (or those of its directory) or read it as its owner",
            path=p,
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise NotFound(f"{p}: no such session file ({exc.strerror})") from None
    named = version_from_filename(p.name)
    if data[:4] == _ZSTD_MAGIC:
        compression: Compression = "zstd"
    elif named is not None:
        compression = named[1]
    else:
        compression = "zstd" if p.name.endswith(".zstd") else "none"
    if compression == "zstd" and data[:4] != _ZSTD_MAGIC:
        raise CorruptLog(
            "file is named .zstd but does not start with a zstd frame", path=p, frame=1
        )
    # Non-canonical names (fixtures, exports) carry no generation; trust the header then.
    expected = named[0] if named is not None else None
    return decode_bytes(
        data,
        compression=compression,
        path=p,
        expected_version=expected,
        normalized=normalized,
        max_bytes=max_bytes,
    )
