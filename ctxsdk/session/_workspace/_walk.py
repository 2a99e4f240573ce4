"""The directory walks: every session dir (and every misplaced log) under a DSH session root,
and every log file under another agent's home."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import NotFound
from .._codec import Compression, is_session_file_name, version_from_filename
from .._files import file_kind

_LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")


@dataclass(slots=True)
class Found:
    """One session the walk found: a session dir's chosen log, or something the harness
    would reject (``problem`` says what, without reading the file).

    ``where`` is the path as a string (what ``os.scandir`` gives; a warm listing of
    thousands of sessions never builds a ``Path`` for each), ``path`` the same as a ``Path``."""

    where: str  # the log file, or the session dir when it has no log
    project: str
    dir_name: str | None  # the session dir name (None for a flat file)
    problem: str | None = None
    stat: os.stat_result | None = None
    format: str | None = "dsh"  # what wrote it ("dsh"; None: detect it from the content)

    @property
    def path(self) -> Path:
        return Path(self.where)


@functools.lru_cache(maxsize=1024)  # a home's logs share a handful of names
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
                found.append(Found(proj.path, proj.name, None, odd))
            continue
        if proj.is_file() and _is_log_name(proj.name):
            found.append(
                Found(
                    proj.path,
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
            found.append(Found(proj.path, proj.name, None, f"cannot list: {exc}"))
            continue
        for entry in entries:
            odd = _odd_entry(entry)
            if odd is not None:
                found.append(Found(entry.path, proj.name, entry.name, odd))
            elif entry.is_dir():
                found.append(_session_dir(entry.path, entry.name, proj.name, compression))
            elif entry.is_file() and _is_log_name(entry.name):
                found.append(
                    Found(
                        entry.path,
                        proj.name,
                        None,
                        "a flat session file, which the harness rejects: a log lives in its "
                        "own directory, <project>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]; "
                        "move it there",
                    )
                )
    return found


def _session_dir(where: str, name: str, project: str, compression: Compression | None) -> Found:
    """Choose a session dir's log (``where``, named ``name``): the numerically highest
    canonical generation (§1). Plain string paths: this runs for every session of a
    listing, warm or cold."""
    gens: dict[int, dict[str, str]] = {}
    try:
        names = os.listdir(where)
    except OSError as exc:
        return Found(where, project, name, f"cannot list the session directory: {exc}")
    for file_name in names:
        gen = generation(file_name)
        if gen is None:
            continue
        enc = "zstd" if file_name.endswith(".zstd") else "none"
        gens.setdefault(gen, {})[enc] = file_name
    if not gens:
        return Found(
            where,
            project,
            name,
            "no session log in this directory (the harness writes session[.vN].jsonl[.zstd] "
            "on the first append; an empty directory is not a session)",
        )
    if compression is not None:
        usable: dict[int, dict[str, str]] = {
            g: {compression: f[compression]} for g, f in gens.items() if compression in f
        }
        if not usable:
            other = next(iter(next(iter(gens.values())).values()))
            return Found(
                where,
                project,
                name,
                f"this root is {compression}-encoded but the directory only holds {other} "
                "(the other encoding), which the harness rejects",
            )
        gens = usable
    top = max(gens)
    files = gens[top]
    if len(files) > 1:
        return Found(
            f"{where}{os.sep}{files['zstd']}",
            project,
            name,
            f"both {files['none']} and {files['zstd']} exist; a root has one "
            "encoding and the harness rejects the other: pass compression='zstd' or 'none' "
            "to Workspace, or remove one",
        )
    return Found(f"{where}{os.sep}{next(iter(files.values()))}", project, name)


# --- another agent's home ----------------------------------------------------------------------

_AGENT_SUFFIXES: dict[str, tuple[str, ...]] = {
    "claude-code": (".jsonl",),  # <root>/<project>/<uuid>.jsonl (and <uuid>/subagents/*.jsonl)
    "codex": (".jsonl",),  # <root>/YYYY/MM/DD/rollout-*.jsonl
    "gemini-cli": (".json",),  # <root>/<hash>/chats/session-*.json (see _agent_file)
    "openhands": (".json",),
    "aider": (".md",),
    "swe-agent": (".traj",),
    "mini-swe-agent": (".traj.json",),
    "openai": (".json", ".jsonl"),
    "anthropic": (".json", ".jsonl"),
    "locomo": (".json",),
    "dsh": (),  # session directories only
}
_AUTO_SUFFIXES = (".jsonl", ".jsonl.zstd", ".json", ".traj", ".md")
_MAX_DEPTH = 12  # directory levels an agent home is walked down


def _agent_file(name: str, parent: str, agent: str) -> bool:
    """Whether a file is one of ``agent``'s logs by its place: the name's ending (the content
    decides the format; ``auto`` takes every ending a log of some format has)."""
    if agent == "gemini-cli":  # its tmp dir also holds logs.json, checkpoints, shell history
        return name.endswith(".json") and (parent == "chats" or name.startswith("session-"))
    return name.endswith(_AGENT_SUFFIXES.get(agent, _AUTO_SUFFIXES))


def walk_agent(root: Path, agent: str) -> list[Found]:
    """Every log file under an agent's home ``root`` (``agent`` a format name, or ``"auto"``:
    each file's format is detected when it is read), sorted by path, hidden entries and
    symlinked directories skipped. A directory holding a DSH log (``session[.vN].jsonl[.zstd]``)
    is one DSH session (with ``"auto"`` or ``"dsh"``), as in a DSH home."""
    found: list[Found] = []
    fmt = None if agent == "auto" else agent

    def visit(directory: Path, rel: str, depth: int) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            if depth == 0:
                raise NotFound(
                    f"cannot list the agent home {root}: {exc}; make it a readable directory"
                ) from exc
            found.append(Found(str(directory), rel, None, f"cannot list: {exc}", format=fmt))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            odd = _odd_entry(entry)
            if odd is not None:
                if _agent_file(entry.name, directory.name, agent):
                    found.append(Found(entry.path, rel, None, odd, format=fmt))
                continue
            if entry.is_dir():
                if entry.is_symlink() or depth >= _MAX_DEPTH:
                    continue  # a walk never loops through links nor runs away down a tree
                sub = Path(entry.path)
                if agent in ("auto", "dsh") and _holds_dsh_log(sub):
                    found.append(_session_dir(entry.path, entry.name, rel, None))
                    continue
                visit(sub, f"{rel}/{entry.name}" if rel else entry.name, depth + 1)
            elif entry.is_file() and _agent_file(entry.name, directory.name, agent):
                found.append(Found(entry.path, rel, None, format=fmt))

    visit(root, "", 0)
    return found


def _holds_dsh_log(path: Path) -> bool:
    try:
        return any(generation(name) is not None for name in os.listdir(path))
    except OSError:
        return False
