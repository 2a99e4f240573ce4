"""The directory walk: every session dir (and every misplaced log) under a session root."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import NotFound
from .._codec import Compression, version_from_filename
from .._files import file_kind
from .._layout import is_session_file_name

_LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")


@dataclass
class Found:
    """One session the walk found: a session dir's chosen log, or something the harness
    would reject (``problem`` says what, without reading the file)."""

    path: Path  # the log file, or the session dir when it has no log
    project: str
    dir_name: str | None  # the session dir name (None for a flat file)
    problem: str | None = None
    stat: os.stat_result | None = None


def generation(name: str) -> int | None:
    """The format generation a canonical session file name says, None for any other name."""
    if not is_session_file_name(name):
        return None
    named = version_from_filename(name)
    assert named is not None
    return named[0] or 0


def _is_log_name(name: str) -> bool:
    return name.endswith(_LOG_SUFFIXES)


def _odd_entry(entry: os.DirEntry[str]) -> str | None:
    """Why a directory entry is neither a directory nor a regular file and deserves a row: a
    symlink loop, a dangling symlink, or a FIFO, device or socket named like a log (anything
    else that is neither is not the harness's and is passed over). None for the usual entry.

    ``DirEntry`` caches its ``stat``, so a plain file or directory costs no extra syscall."""
    try:
        if entry.is_dir() or entry.is_file():
            return None
    except OSError as exc:  # ELOOP: the follow-up stat of a symlink failed
        return f"{entry.path}: cannot follow the symlink ({exc.strerror}); not read"
    try:
        if entry.is_symlink():
            target = os.readlink(entry.path)
            return f"{entry.path}: a dangling symlink (to {target!r}); nothing to read"
        if not _is_log_name(entry.name):
            return None
        kind = file_kind(entry.stat(follow_symlinks=False).st_mode) or "not a regular file"
    except OSError as exc:
        return f"{entry.path}: cannot stat it ({exc.strerror}); not read"
    return not_regular(entry.path, kind)


def not_regular(path: str | Path, kind: str) -> str:
    """The row error of a log path that is a FIFO, device, socket or directory."""
    return f"{path} is {kind}, not a regular file; a session log is one, so it is not read"


def walk(root: Path, compression: Compression | None) -> list[Found]:
    """Every session dir (and every flat log file) under ``root``, sorted by path."""
    found: list[Found] = []
    try:
        top = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise NotFound(
            f"cannot list the session root {root}: {exc}; make it a readable directory, or "
            "pass dsh_home= for another DSH home"
        ) from exc
    for proj in top:
        odd = _odd_entry(proj)
        if odd is not None:  # a symlink loop, a dangling symlink, a FIFO named like a log
            if not proj.name.startswith("."):
                found.append(Found(Path(proj.path), proj.name, None, odd))
            continue
        if proj.is_file() and _is_log_name(proj.name):
            found.append(
                Found(
                    Path(proj.path),
                    "",
                    None,
                    "a log file directly in the session root; the harness only reads "
                    "<root>/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]: "
                    "move it into its own session directory",
                )
            )
            continue
        if not proj.is_dir() or proj.name.startswith("."):
            continue  # .relocate.<sha256>.json intents and other root-level files
        try:
            entries = sorted(os.scandir(proj.path), key=lambda e: e.name)
        except OSError as exc:
            found.append(Found(Path(proj.path), proj.name, None, f"cannot list: {exc}"))
            continue
        for entry in entries:
            odd = _odd_entry(entry)
            if odd is not None:
                found.append(Found(Path(entry.path), proj.name, entry.name, odd))
            elif entry.is_dir():
                found.append(_session_dir(Path(entry.path), proj.name, compression))
            elif entry.is_file() and _is_log_name(entry.name):
                found.append(
                    Found(
                        Path(entry.path),
                        proj.name,
                        None,
                        "a flat session file, which the harness rejects: a log lives in its "
                        "own directory, <project>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]; "
                        "move it there",
                    )
                )
    return found


def _session_dir(path: Path, project: str, compression: Compression | None) -> Found:
    """Choose a session dir's log: the numerically highest canonical generation (§1)."""
    gens: dict[int, dict[str, Path]] = {}
    try:
        names = os.listdir(path)
    except OSError as exc:
        return Found(path, project, path.name, f"cannot list the session directory: {exc}")
    for name in names:
        gen = generation(name)
        if gen is None:
            continue
        enc = "zstd" if name.endswith(".zstd") else "none"
        gens.setdefault(gen, {})[enc] = path / name
    if not gens:
        return Found(
            path,
            project,
            path.name,
            "no session log in this directory (the harness writes session[.vN].jsonl[.zstd] "
            "on the first append; an empty directory is not a session)",
        )
    if compression is not None:
        usable: dict[int, dict[str, Path]] = {
            g: {compression: f[compression]} for g, f in gens.items() if compression in f
        }
        if not usable:
            other = next(iter(next(iter(gens.values())).values())).name
            return Found(
                path,
                project,
                path.name,
                f"this root is {compression}-encoded but the directory only holds {other} "
                "(the other encoding), which the harness rejects",
            )
        gens = usable
    top = max(gens)
    files = gens[top]
    if len(files) > 1:
        return Found(
            files["zstd"],
            project,
            path.name,
            f"both {files['none'].name} and {files['zstd'].name} exist; a root has one "
            "encoding and the harness rejects the other: pass compression='zstd' or 'none' "
            "to Workspace, or remove one",
        )
    return Found(next(iter(files.values())), project, path.name)
