"""Opening the store a memory lives in, from where a user names it: a file path (its
directory made), a ``postgresql://`` URL and a namespace, a store given as it is, or none
(in memory). One
place, so ``Memory(...)``, ``Memory.copy_to`` and the command line open alike."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidArgument, WriteError
from ._postgres import PostgresStore, is_postgres_url
from ._sqlite import SQLiteStore
from ._store import MemoryStore

__all__ = ["open_store"]


def open_store(
    where: str | os.PathLike[str] | MemoryStore | None,
    *,
    namespace: str | None = None,
    create: bool = True,
    timeout: float = 30.0,
) -> MemoryStore:
    """The store at ``where``: a ``postgresql://`` URL opens ``namespace`` (default ``"default"``)
    of that database; a path opens a SQLite file (its directory made when ``create``); a
    store is returned as it is; None is a private in-memory SQLite database.
    ``create=False`` refuses a file or namespace that does not exist yet (``NotFound``);
    ``timeout`` bounds a writer's wait (and a server's connection)."""
    if namespace is not None and not is_postgres_url(where):
        raise InvalidArgument(
            "a namespace belongs to a PostgreSQL memory (a postgresql:// URL); a SQLite "
            "file is one namespace of its own"
        )
    if where is None:
        return SQLiteStore.memory()
    if is_postgres_url(where):
        return PostgresStore(
            str(where), namespace=namespace or "default", create=create, timeout=timeout
        )
    if isinstance(where, str | os.PathLike):
        path = Path(where)
        if create:
            _make_parent(path)
        return SQLiteStore(path, create=create, timeout=timeout)
    if isinstance(where, MemoryStore):
        return where
    raise InvalidArgument(
        f"a memory is a database path, a postgresql:// URL or a MemoryStore, "
        f"not {type(where).__name__}"
    )


def _make_parent(path: Path) -> None:
    """Make the directory a memory file goes in; a file where a directory of its path
    should be is ``InvalidArgument`` naming both (``mkdir`` says only ``FileExistsError``
    or ``NotADirectoryError``), any other failure ``WriteError``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((a for a in path.parents if a.exists()), path.parent)
        raise InvalidArgument(
            f"{path}: {blocker} is not a directory, so the memory's directory cannot be made "
            "there; give a path whose parent is a directory (or does not exist yet)"
        ) from None
    except OSError as exc:
        raise WriteError(
            f"{path}: cannot make its directory {path.parent} ({exc.strerror or exc})"
        ) from None
