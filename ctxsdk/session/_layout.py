"""Where the harness keeps session logs (spec §1): the DSH home, project keys, session dirs.

A session log lives at ``<root>/<projectKey(cwd) | "_no-cwd">/<encodeSegment(id)>/<file>``,
where the root of a DSH home is ``<home>/sessions`` and ``<file>`` is the canonical name of
a format generation: ``session.jsonl[.zstd]`` (v0) or ``session.v<N>.jsonl[.zstd]``.

The two encoders work on UTF-16 code units, exactly as the harness's JavaScript does, so a
character outside the Basic Multilingual Plane becomes two escapes (its surrogate pair):

>>> project_key("/home/mira/src/invoicer")
'--home-mira-src-invoicer--'
>>> encode_segment("a~b")
'a~007Eb'
>>> encode_segment("😀")
'~D83D~DE00'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import InvalidArgument

__all__ = [
    "NO_CWD",
    "PROJECT_SLUG_MAX",
    "decode_segment",
    "dsh_home",
    "encode_segment",
    "project_dir",
    "project_key",
    "session_dir",
    "sessions_root",
]

NO_CWD = "_no-cwd"
"""The project directory of sessions whose header has no ``cwd``."""

PROJECT_SLUG_MAX = 251
"""``projectKey`` truncates its slug to this many characters (then wraps it in ``--``)."""

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS = frozenset("/\\:")
_ESCAPE_RE = re.compile(r"~([0-9A-F]{4})")


def dsh_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The DSH home: ``explicit`` if given, else ``$DSH_HOME``, else ``~/.dsh``.

    An empty or whitespace-only ``$DSH_HOME`` counts as unset, and a set one is trimmed, as
    the harness's home resolver does. ``~`` is expanded and the result is made absolute
    (symlinks are not resolved).
    """
    if explicit is not None:
        raw = os.fspath(explicit)
    else:
        raw = os.environ.get("DSH_HOME", "").strip()
        if not raw:
            return Path(os.path.abspath(Path.home() / ".dsh"))
    return Path(os.path.abspath(os.path.expanduser(raw)))


def sessions_root(home: str | os.PathLike[str]) -> Path:
    """The session root of a DSH home: ``<home>/sessions`` (the shipped base bundle's root)."""
    return Path(home) / "sessions"


def _units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (lone surrogates kept as they are)."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]


def _escape(unit: int) -> str:
    ch = chr(unit)
    return ch if ch in _SAFE else f"~{unit:04X}"


def project_key(cwd: str | None) -> str:
    """The project directory name for a session's ``cwd`` (the harness's ``projectKey``).

    Each run of ``/``, ``\\`` and ``:`` becomes one ``-``; ``[A-Za-z0-9._-]`` stay; every
    other UTF-16 code unit (``~`` included) becomes ``~HHHH`` (four uppercase hex digits).
    Leading ``-`` are stripped, an empty slug becomes ``root``, the slug is cut to 251
    characters and wrapped as ``--<slug>--``. ``None`` (no cwd in the header) gives
    ``_no-cwd``.

    Lossy on purpose: different cwds may share a project directory (the session id keeps
    sessions apart). The cut at 251 may fall inside an escape, as in the harness.

    >>> project_key("C:\\\\Users\\\\mira\\\\app")
    '--C-Users-mira-app--'
    >>> project_key("/")
    '--root--'
    """
    if cwd is None:
        return NO_CWD
    if not isinstance(cwd, str):
        raise InvalidArgument(f"cwd must be a string or None, not {type(cwd).__name__}")
    if not cwd:
        raise InvalidArgument(
            "cannot encode an empty project path: a header cwd is a non-empty path, or is "
            "absent (pass None for the _no-cwd project)"
        )
    out: list[str] = []
    in_run = False
    for unit in _units(cwd):
        if chr(unit) in _SEPARATORS:
            if not in_run:
                out.append("-")
            in_run = True
        else:
            out.append(_escape(unit))
            in_run = False
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:PROJECT_SLUG_MAX]}--"


def encode_segment(segment: str) -> str:
    """A session id as one safe directory name (the harness's ``encodeSegment``; injective).

    Every UTF-16 code unit outside ``[A-Za-z0-9._-]`` (``~``, separators, NUL, each half of
    a surrogate pair) becomes ``~HHHH`` (four uppercase hex digits); a whole ``.`` or ``..``
    becomes ``~002E`` / ``~002E~002E`` so it can never mean a parent directory. An empty id
    is an error.

    >>> encode_segment("..")
    '~002E~002E'
    >>> encode_segment("a/b")
    'a~002Fb'
    """
    if not isinstance(segment, str):
        raise InvalidArgument(f"a session id must be a string, not {type(segment).__name__}")
    if not segment:
        raise InvalidArgument("cannot encode an empty path segment: a session id must not be empty")
    if segment == ".":
        return "~002E"
    if segment == "..":
        return "~002E~002E"
    return "".join(_escape(u) for u in _units(segment))


def decode_segment(name: str) -> str:
    """The session id a directory name encodes (the inverse of ``encode_segment``).

    Raises ``ValueError`` for a name that ``encode_segment`` never produces (an unsafe
    character left raw, a malformed or lower-case escape, an escaped safe character other
    than the ``.``/``..`` forms): the round trip ``encode_segment(decode_segment(n)) == n``
    holds for every name this accepts.

    >>> decode_segment("a~007Eb")
    'a~b'
    >>> decode_segment("~D83D~DE00")
    '😀'
    """
    if not name:
        raise InvalidArgument("an empty directory name encodes no session id")
    units: list[int] = []
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "~":
            m = _ESCAPE_RE.match(name, i)
            if m is None:
                raise InvalidArgument(
                    f"{name!r} is not an encoded session id: '~' at {i} is not followed by "
                    "four upper-case hex digits"
                )
            units.append(int(m.group(1), 16))
            i = m.end()
        elif ch in _SAFE:
            units.append(ord(ch))
            i += 1
        else:
            raise InvalidArgument(
                f"{name!r} is not an encoded session id: {ch!r} at {i} would have been escaped"
            )
    text = b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")
    if encode_segment(text) != name:
        raise InvalidArgument(
            f"{name!r} is not the canonical encoding of {text!r} (that is {encode_segment(text)!r})"
        )
    return text


def project_dir(root: str | os.PathLike[str], cwd: str | None) -> Path:
    """``<root>/<projectKey(cwd)>`` (``<root>/_no-cwd`` when ``cwd`` is None)."""
    return Path(root) / project_key(cwd)


def session_dir(root: str | os.PathLike[str], cwd: str | None, session_id: str) -> Path:
    """``<root>/<projectKey(cwd)>/<encodeSegment(id)>``: the directory a session owns."""
    return project_dir(root, cwd) / encode_segment(session_id)
