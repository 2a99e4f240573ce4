"""Small real sessions of other agents, shipped byte for byte with their licences.

``real/manifest.json`` is the one record of where each file came from; this module only reads
it, so the listing, the paths and the checks in the tests cannot drift apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import UnknownName

__all__ = ["REAL_DIR", "RealSample", "real_sample", "real_samples"]

REAL_DIR = Path(__file__).resolve().parent / "real"
_MANIFEST = REAL_DIR / "manifest.json"


@dataclass(frozen=True)
class RealSample:
    """One bundled real session and its provenance (a record of ``real/manifest.json``)."""

    name: str
    format: str  # the importer's format name: Session.open_any detects it, import_file takes it
    path: Path
    size: int  # bytes
    sha256: str
    agent: str  # the agent and model that wrote it
    what: str
    license: str
    license_file: Path
    source: str  # where it was copied from: a git repository or a package archive
    source_url: str
    repo: str  # owner/name on GitHub
    commit: str | None  # None when the source is a published archive, not a git commit
    upstream_path: str
    modified: bool


def _record(raw: dict[str, Any]) -> RealSample:
    return RealSample(
        name=raw["name"],
        format=raw["format"],
        path=REAL_DIR / raw["file"],
        size=raw["bytes"],
        sha256=raw["sha256"],
        agent=raw["agent"],
        what=raw["what"],
        license=raw["license"],
        license_file=REAL_DIR / raw["license_file"],
        source=raw["source"],
        source_url=raw["source_url"],
        repo=raw["repo"],
        commit=raw["commit"],
        upstream_path=raw["upstream_path"],
        modified=raw["modified"],
    )


@cache
def _load() -> dict[str, RealSample]:
    records = json.loads(_MANIFEST.read_text(encoding="utf-8"))
    return {r["name"]: _record(r) for r in records}


def real_samples() -> dict[str, RealSample]:
    """Name -> the bundled real session with its provenance, in the manifest's order."""
    return dict(_load())


def real_sample(name: str) -> Path:
    """The file of one bundled real session, e.g. ``real_sample("claude-code")``."""
    try:
        return _load()[name].path
    except KeyError:
        names = ", ".join(_load())
        raise UnknownName(f"no real sample named {name!r}; the real samples are: {names}") from None
