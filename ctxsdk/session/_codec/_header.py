"""The header line and the format version: the versions this reader knows, and the header
checked as the harness checks it."""

from __future__ import annotations

import re
from typing import Any

from ...errors import SessionFormatError, UnsupportedVersion

KNOWN_VERSIONS = (0, 1, 2, 3)
_TEMPLATE_PLACEHOLDER = re.compile(r"\{\{[A-Za-z_][A-Za-z0-9_]*\}\}")
_V01_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "delegationDepth")
_V01_HEADER_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
_V23_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "isSeeded", "delegationDepth")
_V23_HEADER_OPTIONAL = ("cwd", "parentSession", "origin", "agentPreset")


def _is_safe_int(v: Any) -> bool:
    return type(v) is int and 0 <= v <= 2**53 - 1


def validate_header(header: Any, *, expected_version: int | None = None) -> int:
    """Check the header line as the harness does; return its version."""
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionFormatError('line 1 is not a session header (want {"type":"session",...})')
    version = header.get("version")
    if type(version) is not int or version not in KNOWN_VERSIONS:
        raise UnsupportedVersion(
            f"session format version {version!r} is not one this reader knows "
            f"({', '.join(map(str, KNOWN_VERSIONS))}): written by a newer harness, upgrade ctxsdk"
        )
    if expected_version is not None and version != expected_version:
        raise UnsupportedVersion(
            f"header says version {version} but the file name says version {expected_version}"
        )
    required: tuple[str, ...]
    optional: tuple[str, ...]
    if version <= 1:
        required, optional = _V01_HEADER_REQUIRED, _V01_HEADER_OPTIONAL
        for legacy in ("sandboxMode", "approvalPolicy"):
            if legacy in header:
                raise SessionFormatError(f"header has the legacy key {legacy!r}, which is refused")
    else:
        required, optional = _V23_HEADER_REQUIRED, _V23_HEADER_OPTIONAL
    missing = [k for k in required if k not in header]
    if missing:
        raise SessionFormatError(f"v{version} header is missing {', '.join(missing)}")
    if version >= 2:
        extra = [k for k in header if k not in required and k not in optional]
        if extra:
            raise SessionFormatError(f"v{version} header has unknown key(s) {', '.join(extra)}")
    if not isinstance(header["id"], str) or not header["id"]:
        raise SessionFormatError("header id must be a non-empty string")
    if not _is_safe_int(header["createdAt"]):
        raise SessionFormatError("header createdAt must be a non-negative safe integer (epoch ms)")
    if not _is_safe_int(header["delegationDepth"]):
        raise SessionFormatError("header delegationDepth must be a non-negative integer")
    if version >= 2 and type(header["isSeeded"]) is not bool:
        raise SessionFormatError("header isSeeded must be true or false")
    if "seedLength" in header and not _is_safe_int(header["seedLength"]):
        raise SessionFormatError("header seedLength must be a non-negative integer")
    for key in ("cwd", "parentSession", "origin", "agentPreset"):
        if key in header and not isinstance(header[key], str):
            raise SessionFormatError(f"header {key} must be a string")
    # The released header codecs refuse a cwd that is not absolute, v0's too (the harness
    # reads a v0 log through it: "format v0 header cwd must be absolute"). A whole template
    # placeholder ("{{cwd}}") in a v0 header is read: the harness's snapshot fixtures carry
    # one, filled in by its test harness before the harness reads them; migrating one refuses.
    cwd = header.get("cwd")
    if (
        isinstance(cwd, str)
        and not cwd.startswith("/")
        and not (version == 0 and _TEMPLATE_PLACEHOLDER.fullmatch(cwd))
    ):
        raise SessionFormatError(
            f"format v{version} header cwd must be absolute (got {cwd!r}), as the harness "
            "requires: a session's cwd is the absolute directory it ran in; fix the header"
        )
    if "origin" in header and header["origin"] != "subagent":
        raise SessionFormatError(f'header origin may only be "subagent", not {header["origin"]!r}')
    return version
