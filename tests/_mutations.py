"""Hand-broken documents for the readers' fault tests: every field's path, and a copy of a
document with one field replaced or deleted."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

DELETE = object()  # the value that deletes the field instead of replacing it


def field_paths(obj: Any, per_list: int, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every field of ``obj`` (key by key, index by index), depth first; only the
    first ``per_list`` items of a list are walked."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield (*path, k)
            yield from field_paths(v, per_list, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:per_list]):
            yield (*path, i)
            yield from field_paths(v, per_list, (*path, i))


def mutated(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A deep copy of ``obj`` whose field at ``path`` is ``value`` (deleted for ``DELETE``)."""
    out = copy.deepcopy(obj)
    target = out
    for p in path[:-1]:
        target = target[p]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out
