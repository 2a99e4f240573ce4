"""The project's rules for agents, read from its instruction files as the log shows them.

Agents load or write files that hold a project's rules for agents: ``AGENTS.md`` (Codex
injects it as a user-turn message, ``# AGENTS.md instructions for <dir>`` wrapping
``<INSTRUCTIONS>``), ``CLAUDE.md``, ``GEMINI.md``, Aider's ``CONVENTIONS.md``,
``.cursorrules``, ``.github/copilot-instructions.md``. A teammate resuming the work wants
those rules, and what the session added to them: an assistant that appends a conventions
section records the user's rules. ``InstructionFiles`` reads such a file's content wherever
the log holds it (an injected message, a read's output, a created file's content, an edit's
added lines) and gives its rules as instruction facts of scope ``PROJECT_SCOPE``, the file
in ``reason`` (``rule_file``).

A rule is one short line: a bullet, a numbered item or a sentence of a paragraph that reads
as an instruction (``instruction_kind``: "ALWAYS prefer MCP graph tools…", "Follow eslint
airbnb coding style"). Headings, code blocks, tables, examples and prose about the project
("This project uses X…", "Agent system (src/agents/)") are not rules. At most ``MAX_RULES``
per file, in the order written; what the session wrote is read before what it only read
(the facts come in log order: Fold shows a file's additions first). A rule the user also
said is not repeated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._commands import heredoc_writes, parts
from ._model import Fact, FactSource
from ._outcomes import body
from ._prefilter import prefiltered
from ._text import instruction_kind
from ._tools import _EDIT_FAILED, READ_PROGRAMS, READ_TOOLS, call_command, edit_texts, written_paths

__all__ = [
    "MAX_RULES",
    "PROJECT_SCOPE",
    "InstructionFiles",
    "file_rules",
    "is_instruction_file",
    "rule_file",
]

PROJECT_SCOPE = "project"
MAX_RULES = 12  # a file's rules kept: enough for its gist, never its whole text
_RULE_MAX = 160  # characters of one rule line

_FILE = re.compile(
    r"(?:^|[/\\])(?:(?:AGENTS|CLAUDE|GEMINI|CONVENTIONS)(?:\.local)?\.md|\.cursorrules"
    r"|\.github[/\\]copilot-instructions\.md|\.cursor[/\\]rules[/\\][^/\\]+\.mdc)$",
    re.I,
)
# a file of that name in a documentation folder is a page about agents, not rules for them
_DOCS_DIR = re.compile(r"(?:^|[/\\])docs?[/\\]", re.I)
# Codex: "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n...\n</INSTRUCTIONS>"
_INJECTED = re.compile(
    r"^#\s*(?P<name>[\w.-]+\.md) instructions for (?P<dir>[^\n]+)\s*<INSTRUCTIONS>\s*"
    r"(?P<body>.*?)(?:</INSTRUCTIONS>|\Z)",
    re.S,
)
_NUMBERED_LINE = re.compile(r"^ {0,8}\d+(?:→|\t)", re.M)  # Read's "   12→", cat -n's "  12\t"
# an HTML comment, and a harness's note appended to a read's output (Claude Code's
# ``<system-reminder>`` about malware): neither is the file's
_COMMENT = re.compile(r"<!--.*?-->|<(system-reminder|system)>.*?(?:</\1>|\Z)", re.S)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_ITEM = re.compile(r"^(\s*)(?:[-*+•]|(\d{1,2})[.)])\s+(.*)$")
# sections that show rather than rule: examples, and a harness's skills catalog (Codex
# lists the installed skills, each with its SKILL.md, inside the AGENTS.md message)
_SHOWN = re.compile(r"\b(?:examples?|samples?|usage|skills|demo)\b", re.I)
_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
_LABEL = re.compile(r"^[\w /&'-]{2,40}:\s+(?=\S)")  # "Trigger rules: If the user names …"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# a line that describes, not rules: a noun and its relative clause ("Interface that all
# agents must implement"), a verb in the third person ("Ensures the status …"; a plural
# subject before a modal is a rule: "Components should …"), a note
# ("Need to ensure …"), a sentence about a thing ("This is enforced by …")
_DESCRIBES = re.compile(
    r"^(?:\w+(?:\s\w+)?\s+(?:that|which|who)\b"
    r"|(?!Always\b|Focus\b|Process\b|Discuss\b)[A-Z][a-z]+[^s\W]s\b"
    r"(?!\s+(?:should|must|shall|will|may|can|need|are|have|do|don't)\b)"  # not "Tests must"
    r"|(?:Need|Needs|Note|NOTE)\b"
    r"|(?:This|That|These|Those|It|They)\s+(?:is|are|was|were|will|can|may)\b)"
)


_BINDING = re.compile(
    r"\b(?:must|never|always|should|shall|do not|don't|avoid|prefer|only|ensure|required?)\b",
    re.I,
)


def is_instruction_file(path: str) -> bool:
    """Whether a path names a file of rules for agents (not one in a docs folder)."""
    p = path.strip().strip("'\"")
    return bool(_FILE.search(p)) and not _DOCS_DIR.search(p)


def rule_file(fact: Fact) -> str | None:
    """The instruction file a project rule was read from, or None for any other fact."""
    if fact.kind == "instruction" and fact.scope == PROJECT_SCOPE and fact.reason:
        return fact.reason
    return None


def _clean(item: str) -> str:
    text = _MARKUP.sub(lambda m: m.group(1) or "", item)
    return " ".join(text.split()).strip()


def _items(text: str) -> Iterable[tuple[str, bool]]:
    """The candidate lines of a markdown file: each list item (its continuation lines
    joined) and each sentence of a paragraph, outside code blocks, tables and sections of
    examples. With each, whether it is a numbered item (a step of a procedure, unless it
    reads as a standing rule)."""
    fenced = shown = numbered = False
    shown_level = 0
    current: list[str] = []
    paragraph: list[str] = []

    def flush() -> Iterable[tuple[str, bool]]:
        if current:
            yield " ".join(current), numbered
            current.clear()
        if paragraph:
            yield from ((s, False) for s in _SENTENCE_END.split(" ".join(paragraph)))
            paragraph.clear()

    for line in _COMMENT.sub("", text).splitlines():
        if _FENCE.match(line):
            yield from flush()
            fenced = not fenced
            continue
        heading = _HEADING.match(line)
        if fenced or heading or not line.strip() or line.lstrip().startswith(("|", ">", "<")):
            yield from flush()
            if heading:
                level = len(line.lstrip()) - len(line.lstrip().lstrip("#"))
                if shown and level > shown_level:
                    continue  # a subsection of a section of examples
                shown, shown_level = bool(_SHOWN.search(heading.group(1))), level
            continue
        if shown:
            continue
        item = _ITEM.match(line)
        if item:
            yield from flush()
            numbered = item.group(2) is not None
            current.append(item.group(3))
        elif current and line.startswith((" ", "\t")):
            current.append(line.strip())  # a list item's continuation
        else:
            if current:
                yield from flush()
            paragraph.append(line.strip())
    yield from flush()


def _rule(item: str, numbered: bool = False) -> str | None:
    """The item as one short rule line, or None when it is not a rule."""
    line = _clean(item)
    line = _LABEL.sub("", line, count=1)  # "Context hygiene: Keep context small" -> the rule
    if len(line.split()) < 3 or line.endswith(":") or "(file:" in line:
        return None
    first = _SENTENCE_END.split(line, maxsplit=1)[0]
    if _DESCRIBES.match(first):
        return None
    got = instruction_kind(first)
    if got is None or (numbered and not got[1]):
        return None  # not a rule; a numbered ask is a step of a procedure
    if len(first) > _RULE_MAX:
        first = first[: _RULE_MAX - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return first


def file_rules(text: str, limit: int = MAX_RULES) -> list[str]:
    """The rules of an instruction file's text, in the order written, at most ``limit``.
    A long file (a development guide whose lists also tell how the code works) keeps its
    binding rules first ("must", "never", "always", "prefer" …), then the other
    imperatives up to ``limit``; the kept ones stay in the order written."""
    found: list[str] = []
    seen: set[str] = set()
    for item, numbered in _items(text):
        rule = _rule(item, numbered)
        if rule is None or _norm(rule) in seen:
            continue
        seen.add(_norm(rule))
        found.append(rule)
    if len(found) <= limit:
        return found
    binding = [i for i, r in enumerate(found) if _BINDING.search(r)][:limit]
    rest = [i for i in range(len(found)) if i not in binding][: limit - len(binding)]
    return [found[i] for i in sorted(binding + rest)]


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _added(old: str, new: str) -> str:
    """The lines an edit adds: the new text's lines the old text did not hold."""
    before = {ln.strip() for ln in old.splitlines()}
    return "\n".join(ln for ln in new.splitlines() if ln.strip() not in before)


def _patch_added(patch: str, path: str) -> str:
    """The ``+`` lines a patch adds to ``path``."""
    out: list[str] = []
    inside = False
    for ln in patch.splitlines():
        if ln.startswith(("*** Add File:", "*** Update File:", "*** Delete File:", "+++ ")):
            inside = ln.rstrip().endswith(path)
        elif inside and ln.startswith("+"):
            out.append(ln[1:])
    return "\n".join(out)


class InstructionFiles:
    """The rules of the instruction files a log loads or writes (see the module docstring).
    Fed the events' calls, results and injected messages in order: an injected file or a
    read gives its rules at once, a write once its result shows it did not fail (an edit
    whose text was not found wrote nothing)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._reads: dict[str, str] = {}  # call id -> the instruction file it reads
        # call id -> what it writes to instruction files, given once the write did not fail
        self._writes: dict[str, list[tuple[str, str, int]]] = {}
        self._given: dict[str, set[str]] = {}  # file -> the rules already given
        self._said: set[str] = set()  # the user's own rules, normalized

    def user_rule(self, text: str) -> None:
        """A rule the user said: a file's same rule is not given again."""
        self._said.add(_norm(text))

    def injected(self, text: str, seq: int) -> list[Fact]:
        """A harness message that carries an instruction file (Codex's AGENTS.md)."""
        m = _INJECTED.match(text.lstrip())
        if m is None:
            return []
        return self._facts(m.group("name"), m.group("body"), seq, "system")

    def call(self, call_id: str, name: str, args: Mapping[str, Any], seq: int) -> list[Fact]:
        """A call that writes an instruction file gives the rules it adds; one that reads
        one waits for its result."""
        try:
            return self._call(call_id, name, args, seq)
        except Exception:  # odd input gives nothing, never an exception
            return []

    def _call(self, call_id: str, name: str, args: Mapping[str, Any], seq: int) -> list[Fact]:
        target = _read_target(name, args)
        if target is not None:
            self._reads[call_id] = target
            return []
        writes = [
            (path, _written(args, path), seq)
            for path in written_paths(name, args)
            if is_instruction_file(path)
        ]
        if writes:
            self._writes[call_id] = writes
        return []

    def result(self, call_id: str, text: str, is_error: bool, seq: int) -> list[Fact]:
        """A read's output: the file's rules; a write's result: the rules it wrote, cited
        at the call (none from a failed read or write)."""
        writes = self._writes.pop(call_id, [])
        if writes:
            if is_error or _EDIT_FAILED.search(text[:600]):
                return []
            return [
                f for path, added, at in writes for f in self._facts(path, added, at, "assistant")
            ]
        path = self._reads.pop(call_id, None)
        if path is None or is_error or not text:
            return []
        return self._facts(path, _NUMBERED_LINE.sub("", body(text)), seq, "tool")

    def finish(self) -> list[Fact]:
        """The writes whose result the log never held (a log cut short): what they wrote."""
        writes, self._writes = self._writes, {}
        return [
            f
            for done in writes.values()
            for path, added, at in done
            for f in self._facts(path, added, at, "assistant")
        ]

    def _facts(self, path: str, text: str, seq: int, role: str) -> list[Fact]:
        where = _shown(path)
        given = self._given.setdefault(where, set())
        out: list[Fact] = []
        for rule in file_rules(text):
            key = _norm(rule)
            if len(given) >= MAX_RULES:
                break
            if key in given or key in self._said:
                continue
            given.add(key)
            out.append(
                Fact(
                    kind="instruction",
                    text=rule,
                    source=FactSource(self.session, seq, role, rule),
                    scope=PROJECT_SCOPE,
                    reason=where,
                )
            )
        return out


def _shown(path: str) -> str:
    """The file as a teammate names it: its path without an absolute root's folders when
    it sits at a root (``/Users/a/repo/CLAUDE.md`` -> ``CLAUDE.md``), else the last three
    parts (``src/agents/CLAUDE.md``)."""
    p = path.strip().strip("'\"").replace("\\", "/")
    if not p.startswith("/") and not re.match(r"^[A-Za-z]:/", p):
        return p[2:] if p.startswith("./") else p
    tail = p.rsplit("/", 3)[1:]
    for i, part in enumerate(tail):
        if part in ("src", "lib", "packages", "apps", "tests", ".github", ".cursor"):
            return "/".join(tail[i:])
    return tail[-1]


def _read_target(name: str, args: Mapping[str, Any]) -> str | None:
    """The instruction file a call reads (a read tool's path, a shell's cat/sed/head)."""
    low = name.lower()
    if low in READ_TOOLS or args.get("command") == "view":
        path = next(
            (
                v
                for k in ("file_path", "path", "absolute_path", "filename", "file")
                if isinstance(v := args.get(k), str)
            ),
            None,
        )
        return path if path and is_instruction_file(path) else None
    command = call_command(args)
    if not command:
        return None
    found = [
        op
        for p in parts(command)
        if p.program in READ_PROGRAMS and p.purpose == "read"
        for op in p.operands
        if is_instruction_file(op)
    ]
    return found[0] if len(found) == 1 else None  # two files' output cannot be told apart


def _written(args: Mapping[str, Any], path: str) -> str:
    """What a write puts in ``path``: a created file's content, an edit's added lines, a
    patch's added lines, a shell's one here-document."""
    content = args.get("content", args.get("file_text"))
    old, new = edit_texts(args)
    if isinstance(content, str) and old is None:
        return content
    if isinstance(new, str):
        return _added(str(old or ""), new)
    patch = next(
        (v for v in args.values() if isinstance(v, str) and ("*** " in v or "+++ " in v)), ""
    )
    command = call_command(args)
    if not patch and command and "*** Begin Patch" in command:
        patch = command
    if not patch and command:
        # cat > AGENTS.md <<'EOF' … EOF: its content
        return next((body for at, body in heredoc_writes(command) if at == path), "")
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return _patch_added(patch, name) if patch else ""


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_BINDING = prefiltered(_BINDING)
