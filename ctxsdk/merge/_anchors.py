"""Anchors: the named things a session mentions (files, directories, commands, versions,
code names), each with where and how it was named.

Sessions on one project share few sentences but many names: the config file, the script a
run starts with, the command that builds or submits, the class the work is about, the
version a README requires. A name is read, not a sentence: paths, versions and code names
(the base's ``names_in``, shared with Fold) and the test / build / install / lint commands a
call runs or a code span shows (the kernel's ``command_parts`` says what a command is for).

How a name was used matters more than how often: ``user`` (the user's own words, harness
templates left out), ``assistant`` (its text), ``call`` (a tool call's command or path) name
it on purpose; ``result`` only shows it (a file read, a listing). Reasoning is not read
(a guess), nor plugin-injected context (not the session's voice). The messages are the
branch's, already redacted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..session.kernel import (
    call_command,
    call_target,
    command_parts,
    names_in,
    path_name,
    user_text,
)
from ._beliefs import Branch

__all__ = ["USES", "Anchor", "AnchorKind", "Move", "Use", "anchors", "moves", "names_in"]

AnchorKind = Literal["file", "directory", "command", "version", "name"]
Use = Literal["user", "assistant", "call", "result"]
USES: tuple[Use, ...] = ("user", "assistant", "call", "result")


@dataclass(frozen=True, slots=True)
class Anchor:
    """One mention of a name: its ``kind``, ``ident`` (the comparison form: lowercase; a
    file by its name, so ``src/app.py`` and ``app.py`` meet), ``form`` (as written), how it
    was used, the event ``seq`` and the ``line`` it was named in."""

    kind: AnchorKind
    ident: str
    form: str
    use: Use
    seq: int
    line: str


@dataclass(frozen=True, slots=True)
class Move:
    """A file a session's tool call moved or renamed: ``src`` to ``dst`` (as written), at
    event ``seq``, by the command ``line``."""

    src: str
    dst: str
    seq: int
    line: str


_FENCE = re.compile(r"```[\w+-]*[ \t]*\n(.*?)```", re.S)
_SPAN = re.compile(r"`([^`\n]{2,200})`")
_PROMPT = re.compile(r"^\s*[$>]\s+")
_PURPOSES = frozenset({"test", "build", "install", "lint"})
_MAX_TEXT = 40_000  # a tool result beyond this is file contents, not what the session says
_LINE_CHARS = 240


def _commands(line: str) -> Iterator[tuple[str, str]]:
    """``(ident, form)`` of each test / build / install / lint command of a command line."""
    for part in command_parts(_PROMPT.sub("", line)):
        if part.purpose in _PURPOSES:
            launcher, program, sub = part.identity
            ident = " ".join(w for w in (launcher, program, sub) if w).lower()
            yield ident, part.short


def _operands(command: str) -> Iterator[str]:
    """The words a command line acts on: each part's script or subcommand, arguments and
    the files it writes (here-document bodies and quoted program text are contents)."""
    for part in command_parts(command):
        yield from (w for w in (part.sub, *part.args, *part.writes) if w)


def _code_lines(text: str) -> Iterator[str]:
    """The lines of a text's fenced code blocks and inline code spans."""
    for m in _FENCE.finditer(text):
        yield from m.group(1).splitlines()
    for m in _SPAN.finditer(_FENCE.sub(" ", text)):
        yield m.group(1)


def _arguments(raw: object) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


def _segments(branch: Branch) -> Iterator[tuple[int, Use, str, bool]]:
    """``(seq, use, text, is_command)`` for each readable piece of the branch's messages."""
    for m in branch.messages:
        raw = m.raw
        role = raw.get("role")
        if role == "system" or m.injected:
            continue
        source = raw.get("source")
        kind = source.get("kind") if isinstance(source, Mapping) else None
        content = raw.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for b in blocks:
            if not isinstance(b, Mapping):
                continue
            t, text = b.get("type"), b.get("text")
            if t == "text" and isinstance(text, str):
                if role == "assistant":
                    yield m.seq, "assistant", text, False
                elif role == "user" and kind == "tool":
                    yield m.seq, "result", text[:_MAX_TEXT], False
                elif role == "user":
                    own = user_text(text)
                    if own:
                        yield m.seq, "user", own, False
            elif t == "tool-call":
                args = _arguments(b.get("arguments"))
                command = call_command(args)
                if command and " " in command.strip():
                    yield m.seq, "call", command, True
                # the path a call acts on (an editor's ``command`` is its verb, not a line)
                target = call_target({k: v for k, v in args.items() if v != command})
                if target:
                    yield m.seq, "call", target, False
            elif t == "tool-result":
                inner = b.get("content")
                items = inner if isinstance(inner, list) else [{"type": "text", "text": inner}]
                for i in items:
                    it = i.get("text") if isinstance(i, Mapping) else None
                    if isinstance(it, str):
                        yield m.seq, "result", it[:_MAX_TEXT], False


def anchors(branch: Branch) -> list[Anchor]:
    """Every mention of a name in ``branch``'s messages, in message order (module docs)."""
    out: list[Anchor] = []
    for seq, use, text, is_command in _segments(branch):
        if is_command:
            flat = " ".join(text.split())[:_LINE_CHARS]
            for ident, form in _commands(text):
                out.append(Anchor("command", ident, form, use, seq, flat))
            for word in _operands(text):
                for kind, ident, form, _ in names_in(word):
                    out.append(Anchor(kind, ident, form, use, seq, flat))
            continue
        if use != "result":
            for line in _code_lines(text):
                for ident, form in _commands(line):
                    out.append(Anchor("command", ident, form, use, seq, line.strip()))
        for kind, ident, form, line in names_in(text):
            out.append(Anchor(kind, ident, form, use, seq, line))
    return out


def moves(branch: Branch) -> list[Move]:
    """The files ``branch``'s tool calls moved (``mv a b``, ``git mv a b``; one source and
    one destination), in message order. A destination directory (``mv a.py lib/``) is
    resolved the way ``mv`` does."""
    out: list[Move] = []
    for seq, use, text, is_command in _segments(branch):
        if use != "call" or not is_command:
            continue
        for part in command_parts(text):
            if part.program != "mv" and (part.program, part.sub) != ("git", "mv"):
                continue
            paths = [a for a in part.args if not a.startswith("-")]
            if len(paths) != 2 or path_name(paths[0]) is None:
                continue
            src, dst = paths
            if dst.endswith("/"):
                dst += src.rstrip("/").rsplit("/", 1)[-1]
            out.append(Move(src, dst, seq, " ".join(text.split())[:_LINE_CHARS]))
    return out
