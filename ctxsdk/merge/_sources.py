"""Which sessions a session merges beliefs from: a runtime layer per session over a config
default (the BeliefMerge seed's ``core/state.js``).

The runtime layer is one JSON file per session id in a store directory, so a change made
from the conversation (the ``merge_sessions`` tool) survives a restart and is seen by every
process. ``set([])`` ("merge nothing") and ``clear()`` ("back to the config default") are
different on purpose: the first is a stored choice, the second removes the choice.

A runtime file that cannot be read or parsed never crashes a turn: the config layer is used
and the selection carries a ``warning`` naming the file. A read leaves the bad file where it
is; the next write moves it aside as ``<name>.corrupt`` (and says so) instead of losing it.
Writes are atomic (temp file in the same directory, fsync, ``os.replace``, directory fsync),
so two processes writing at once leave one of their files, never a torn one; on POSIX a
read-modify-write (``add``, ``remove``) also holds an advisory lock on the store directory,
so concurrent adds do not drop each other.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import InvalidArgument, NotFound, WriteError

__all__ = ["MergeSources", "SourceSelection", "resolve_refs"]

_FORMAT = "ctxsdk.merge.sources/1"
_MAX_ID = 200  # a file name holds 255 bytes; leave room for ".json.corrupt" and temp names
_BAD_CHARS = frozenset("/\\\0")

Layer = Literal["runtime", "config", "none"]


@dataclass(frozen=True)
class SourceSelection:
    """The sources one session merges from, and which layer chose them."""

    session_id: str
    sources: tuple[str, ...]
    """Effective full session ids, in the order chosen (never the session itself)."""
    layer: Layer
    """``runtime``: set for this session; ``config``: the default beneath; ``none``: neither."""
    off: bool
    """The runtime layer says "merge nothing" (``set([])``), which is not ``clear()``."""
    warning: str | None = None
    """Why the runtime layer was not used (or what happened to a bad file), if anything."""

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "layer": self.layer,
            "off": self.off,
            "sources": list(self.sources),
            "warning": self.warning,
        }


def _check_id(value: object, what: str = "session id") -> str:
    """A session id that is safe as a file name: the store keys files by it."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"a {what} must be a non-empty string, not {value!r}")
    if value in (".", "..") or any(c in _BAD_CHARS for c in value) or value != value.strip():
        raise InvalidArgument(
            f"{what} {value!r} is not a safe file name (no path separators, NUL, '.' or '..', "
            "or surrounding spaces)"
        )
    if len(value.encode("utf-8", "surrogatepass")) > _MAX_ID:
        raise InvalidArgument(f"{what} {value[:40]!r}... is longer than {_MAX_ID} bytes")
    return value


def _unique(ids: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def _id_list(sources: Sequence[str], what: str) -> list[str]:
    if isinstance(sources, str):  # a bare string would be read as a list of characters
        raise InvalidArgument(f"{what} is a list of session ids, not the string {sources!r}")
    return [_check_id(s, "source session id") for s in sources]


class MergeSources:
    """The persisted source selection of every session in one store directory.

    ``default`` is the config layer: the sources a session without a runtime choice merges
    from (a session's own id is dropped from it). ``store`` is created (mode 0700) on the
    first write; each file is written 0600.
    """

    def __init__(self, store: str | os.PathLike[str], *, default: Sequence[str] = ()) -> None:
        self.store = Path(store)
        self.default: tuple[str, ...] = _unique(_id_list(default, "default"))

    def __repr__(self) -> str:
        return f"MergeSources({str(self.store)!r}, default={list(self.default)!r})"

    def path(self, session_id: str) -> Path:
        """The runtime file of ``session_id`` (it may not exist)."""
        return self.store / f"{_check_id(session_id)}.json"

    # --- reading -------------------------------------------------------------------------------

    def _config(self, session_id: str, warning: str | None) -> SourceSelection:
        sources = tuple(s for s in self.default if s != session_id)
        layer: Layer = "config" if self.default else "none"
        return SourceSelection(session_id, sources, layer, False, warning)

    def _read(self, session_id: str) -> tuple[list[str] | None, str | None]:
        """The runtime sources (None when there is no usable runtime layer) and, for a file
        that exists but cannot be used, why."""
        path = self.path(session_id)
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None, None
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"the runtime source file {path} cannot be read ({exc})"
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            return None, f"the runtime source file {path} is not JSON ({exc})"
        problem = None
        if not isinstance(data, dict) or not isinstance(data.get("sources"), list):
            problem = "it has no 'sources' list"
        elif data.get("session", session_id) != session_id:
            problem = f"it belongs to session {data.get('session')!r}"
        else:
            try:
                ids = _id_list(data["sources"], "sources")
            except InvalidArgument as exc:
                problem = str(exc)
            else:
                return [s for s in _unique(ids) if s != session_id], None
        return None, f"the runtime source file {path} is not a source selection: {problem}"

    def get(self, session_id: str) -> SourceSelection:
        """The effective selection: the runtime layer if there is a usable one, else config."""
        _check_id(session_id)
        runtime, problem = self._read(session_id)
        if runtime is None:
            warning = None
            if problem is not None:
                warning = (
                    f"{problem}; using the config default instead (the file is left in place; "
                    "the next change moves it aside as .corrupt)"
                )
            return self._config(session_id, warning)
        return SourceSelection(session_id, tuple(runtime), "runtime", not runtime, None)

    # --- writing -------------------------------------------------------------------------------

    def set(self, session_id: str, sources: Sequence[str]) -> SourceSelection:
        """Store exactly ``sources`` for this session; ``[]`` means merge nothing (off)."""
        ids = self._new_sources(session_id, sources)
        with self._locked():
            return self._write(session_id, list(ids))

    def add(self, session_id: str, sources: Sequence[str]) -> SourceSelection:
        """Append ``sources`` to the effective selection (the config default when no runtime
        choice exists; nothing when it is off), keeping the order and dropping repeats."""
        ids = self._new_sources(session_id, sources)
        with self._locked():
            current = self.get(session_id)
            return self._write(session_id, list(_unique([*current.sources, *ids])))

    def remove(self, session_id: str, sources: Sequence[str]) -> SourceSelection:
        """Drop ``sources`` from the effective selection (ids not in it are ignored); removing
        the last one leaves the session off, not back on the config default."""
        _check_id(session_id)
        drop = set(_id_list(sources, "sources"))
        with self._locked():
            current = self.get(session_id)
            return self._write(session_id, [s for s in current.sources if s not in drop])

    def off(self, session_id: str) -> SourceSelection:
        """Merge nothing into this session, whatever the config default says."""
        return self.set(session_id, [])

    def clear(self, session_id: str) -> SourceSelection:
        """Delete this session's runtime layer: it merges from the config default again."""
        path = self.path(session_id)
        with self._locked():
            _, problem = self._read(session_id)
            note = self._move_aside(path) if problem is not None else None
            if note is None:
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise WriteError(
                        f"cannot delete the runtime source file {path}: {exc}"
                    ) from None
                self._sync_dir()
            return self._config(session_id, note)

    def _new_sources(self, session_id: str, sources: Sequence[str]) -> tuple[str, ...]:
        _check_id(session_id)
        ids = _unique(_id_list(sources, "sources"))
        if session_id in ids:
            raise InvalidArgument(
                f"session {session_id!r} cannot merge from itself; name other sessions"
            )
        return ids

    def _write(self, session_id: str, sources: list[str]) -> SourceSelection:
        path = self.path(session_id)
        _, problem = self._read(session_id)
        note = self._move_aside(path) if problem is not None else None
        record = {
            "format": _FORMAT,
            "session": session_id,
            "sources": sources,
            "updatedMs": int(time.time() * 1000),
        }
        data = (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        self._ensure_store()
        fd, tmp = tempfile.mkstemp(dir=self.store, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:  # mkstemp creates the file 0600
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise WriteError(f"cannot write the runtime source file {path}: {exc}") from None
        self._sync_dir()
        return SourceSelection(session_id, tuple(sources), "runtime", not sources, note)

    def _move_aside(self, path: Path) -> str:
        """Keep a bad runtime file as ``<name>.corrupt`` rather than overwrite it unseen."""
        aside = path.with_name(path.name + ".corrupt")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return f"the runtime source file {path} was unusable and is gone"
        except OSError as exc:
            raise WriteError(
                f"the runtime source file {path} is unusable and cannot be moved aside to "
                f"{aside.name} ({exc}); fix or remove it by hand"
            ) from None
        return f"the unusable runtime source file was moved aside to {aside}"

    def _ensure_store(self) -> None:
        try:
            self.store.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteError(f"cannot create the merge source store {self.store}: {exc}") from None

    def _sync_dir(self) -> None:
        """fsync the store directory so a rename or unlink survives a crash (POSIX only)."""
        if os.name != "posix" or not self.store.is_dir():
            return
        fd = os.open(self.store, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError:
            pass  # some file systems refuse fsync on a directory; the replace still happened
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An advisory lock on the store directory around a read-modify-write (POSIX)."""
        try:
            import fcntl
        except ImportError:  # Windows: atomic replace alone, last writer wins
            yield
            return
        self._ensure_store()
        fd = os.open(self.store, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def resolve_refs(
    refs: Sequence[str],
    candidates: Sequence[tuple[str, str]],
    *,
    self_id: str | None = None,
) -> tuple[str, ...]:
    """Full session ids for what a user typed: ``#n`` (1-based, into ``candidates`` as
    ``list`` numbers them, the session itself left out) or a unique id prefix (any case; an
    exact id wins over longer ids it prefixes). Repeats are dropped, the order kept.

    An ambiguous prefix or a bad ``#n`` raises ``InvalidArgument``; a prefix that matches
    nothing raises ``NotFound``; naming the session itself raises ``InvalidArgument``.
    """
    if isinstance(refs, str):
        raise InvalidArgument(f"refs is a list of session references, not the string {refs!r}")
    pool = [sid for sid, _ in candidates if sid != self_id]
    pool = list(_unique(pool))
    out: list[str] = []
    for raw in refs:
        ref = raw.strip() if isinstance(raw, str) else ""
        if not ref:
            raise InvalidArgument(f"a session reference must be a non-empty string, not {raw!r}")
        if ref.startswith("#"):
            digits = ref[1:]
            if not digits.isdigit() or not digits.isascii():
                raise InvalidArgument(f"{ref!r} is not a list number; write #1, #2, ...")
            n = int(digits)
            if not 1 <= n <= len(pool):
                span = f"#1..#{len(pool)}" if pool else "none: there are no other sessions"
                raise InvalidArgument(f"{ref} is not in the list (the numbers are {span})")
            out.append(pool[n - 1])
            continue
        low = ref.lower()
        if self_id is not None and self_id.lower() == low:
            raise InvalidArgument(f"{ref!r} is this session; a session never merges itself")
        exact = [sid for sid in pool if sid.lower() == low]
        matches = exact or [sid for sid in pool if sid.lower().startswith(low)]
        if len(matches) > 1:
            shown = ", ".join(matches[:10]) + (
                f" (+{len(matches) - 10} more)" * (len(matches) > 10)
            )
            raise InvalidArgument(f"{ref!r} is ambiguous: it starts {shown}; give more of the id")
        if not matches:
            if self_id is not None and self_id.lower().startswith(low):
                raise InvalidArgument(f"{ref!r} names this session; a session never merges itself")
            raise NotFound(
                f"no other session's id starts with {ref!r}"
                + (f" (there are {len(pool)}; list them)" if pool else " (there are none)")
            )
        out.append(matches[0])
    return _unique(out)
