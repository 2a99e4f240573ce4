"""Facts from the tool calls: project facts (how to build, test, run, install and lint; the
language, framework and package manager; key files), commands with their exit codes and test
counts, and errors with the change that fixed them.

Every agent names its tools and arguments its own way: a shell is ``Bash``, ``bash``,
``shell``, ``exec_command`` (with Codex's ``write_stdin`` polls of a still-running process),
``run_shell_command``, ``execute_bash``; a command is a string or an argv list under
``command`` or ``cmd``; an edit is ``Edit``/``Write``/``MultiEdit``, ``str_replace_editor``,
``write_file``/``replace``, ``apply_patch``, Aider's ``edit`` (SEARCH/REPLACE) or SWE-agent's
``edit``/``create``/``insert`` on the file it opened; a shell command writes files too
(``sed -i``, ``cat > f <<EOF``). ``ToolFacts`` reads them all into one model.

Project facts are clipped to one per key per log and given at ``finish()``: the source is
where the fact was first established (the first passing run of the test command, the first
edit of a file) and ``evidence`` lists later seqs that back it. An error is given when the
same command (or one that covers it, ``pytest`` after ``pytest tests/test_x.py``) passes
again: its ``fix`` is the edits (and installs) made between the failing run and that passing
run, not whatever came next; errors never fixed are given at ``finish()``. Claims are never
taken from file contents or package-manager chatter: only commands, exit codes, runner
summaries and the paths and strings of the edit calls themselves.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._commands import (
    CommandPart,
    covers,
    heredoc_writes,
    is_scratch,
    package_managers,
    parts,
    sed_args,
    shell_writes,
    written_by_shell,
)
from ._model import QUOTE_MAX, Fact, FactSource
from ._outcomes import RunOutcome, body, exit_code, harness_note, outcome, running_session
from ._prefilter import prefiltered
from ._script_writes import rewritten_files
from ._writers import in_place

__all__ = [
    "PATH_KEYS",
    "READ_PROGRAMS",
    "READ_TOOLS",
    "ToolFacts",
    "call_command",
    "call_target",
    "written_paths",
    "written_text",
]

_NAME_PART = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_SHELL_NAMES = frozenset(
    """bash shell sh zsh exec_command run_shell_command execute_bash local_shell terminal
    run_command execute_command run_terminal_cmd cmd powershell container_exec
    run_in_terminal""".split()
)
_SHELL_PARTS = frozenset("bash shell terminal exec command cmd".split())
_EDIT_PARTS = frozenset("edit write create replace patch insert multiedit append".split())
# the tools that read a file, and the programs a shell reads one with (every reader of the
# kernel and Fold's file outlines use these, so a new agent's read tool is added once)
READ_TOOLS = frozenset(
    "read read_file view open view_file cat open_file readfile read_many_files".split()
)
READ_PROGRAMS = frozenset("cat head tail sed less more nl bat".split())
PATH_KEYS = ("file_path", "path", "filename", "filePath", "notebook_path", "file", "target_file")
# Codex's shell runs apply_patch with the patch as an argument or a here-document.
_SHELL_PATCH = re.compile(r"^\s*(?:cd\s+\S+\s*&&\s*)?apply_patch\b.*?\*\*\* Begin Patch", re.S)
_PATCH_FILE = re.compile(
    r"^(?:\*\*\* (Add|Update|Delete) File: (.+?)\s*$|\+\+\+ (?:b/)?(\S+))", re.M
)
_CODE_EXT = {
    "py": "Python",
    "pyi": "Python",
    "ts": "TypeScript",
    "tsx": "TypeScript",
    "mts": "TypeScript",
    "cts": "TypeScript",
    "js": "JavaScript",
    "jsx": "JavaScript",
    "mjs": "JavaScript",
    "cjs": "JavaScript",
    "rs": "Rust",
    "go": "Go",
    "java": "Java",
    "kt": "Kotlin",
    "scala": "Scala",
    "rb": "Ruby",
    "php": "PHP",
    "cs": "C#",
    "c": "C",
    "h": "C",
    "cc": "C++",
    "cpp": "C++",
    "hpp": "C++",
    "swift": "Swift",
    "m": "Objective-C",
    "ex": "Elixir",
    "exs": "Elixir",
    "erl": "Erlang",
    "hs": "Haskell",
    "ml": "OCaml",
    "lua": "Lua",
    "dart": "Dart",
    "r": "R",
    "jl": "Julia",
    "sh": "Shell",
    "vue": "JavaScript",
    "svelte": "JavaScript",
    "css": "CSS",
    "scss": "CSS",
    "html": "HTML",
}
_LANG_BY_PROGRAM = {
    "pytest": "Python",
    "python": "Python",
    "python3": "Python",
    "pip": "Python",
    "uv": "Python",
    "poetry": "Python",
    "tox": "Python",
    "cargo": "Rust",
    "go": "Go",
    "npm": "JavaScript",
    "pnpm": "JavaScript",
    "yarn": "JavaScript",
    "tsc": "TypeScript",
    "mvn": "Java",
    "gradle": "Java",
    "bundle": "Ruby",
    "rspec": "Ruby",
    "dotnet": "C#",
    "mix": "Elixir",
}
_MARKUP_LANGS = frozenset({"CSS", "HTML", "Shell"})
_LOCKFILES = {
    "package-lock.json": "npm",
    "pnpm-lock.yaml": "pnpm",
    "pnpm-workspace.yaml": "pnpm",
    "yarn.lock": "yarn",
    "bun.lockb": "bun",
    "poetry.lock": "poetry",
    "uv.lock": "uv",
    "Pipfile": "pipenv",
    "Pipfile.lock": "pipenv",
    "requirements.txt": "pip",
    "Cargo.toml": "cargo",
    "Cargo.lock": "cargo",
    "go.mod": "go modules",
    "Gemfile": "bundler",
    "composer.json": "composer",
    "pom.xml": "maven",
    "build.gradle": "gradle",
    "build.gradle.kts": "gradle",
}
_FRAMEWORK_PATHS = (
    (
        re.compile(r"(?:^|/)manage\.py$|(?:^|/)django/|(?:^|/)settings\.py$|tests/runtests\.py$"),
        "Django",
    ),
    (re.compile(r"(?:^|/)next\.config\.[cm]?[jt]s$|(?:^|/)pages/_app\.[jt]sx?$"), "Next.js"),
    (re.compile(r"(?:^|/)nuxt\.config\.[jt]s$"), "Nuxt"),
    (re.compile(r"(?:^|/)angular\.json$"), "Angular"),
    (re.compile(r"(?:^|/)svelte\.config\.js$|\.svelte$"), "Svelte"),
    (re.compile(r"\.vue$"), "Vue"),
    (re.compile(r"\.[jt]sx$"), "React"),
    (re.compile(r"(?:^|/)config/routes\.rb$|(?:^|/)Gemfile$"), "Rails"),
    (re.compile(r"(?:^|/)flask/|(?:^|/)src/flask/"), "Flask"),
)
_FRAMEWORK_IMPORTS = (
    (re.compile(r"^\s*(?:from|import) django\b", re.M), "Django"),
    (re.compile(r"^\s*from flask import\b|^\s*import flask\b", re.M), "Flask"),
    (re.compile(r"^\s*from fastapi import\b|^\s*import fastapi\b", re.M), "FastAPI"),
    (re.compile(r"^\s*import streamlit\b", re.M), "Streamlit"),
    (re.compile(r"""from ['"]react['"]|require\(['"]react['"]\)"""), "React"),
    (re.compile(r"""from ['"]vue['"]"""), "Vue"),
    (re.compile(r"""from ['"]express['"]|require\(['"]express['"]\)"""), "Express"),
)
_FRAMEWORK_PROGRAMS = {
    "flask": "Flask",
    "uvicorn": "FastAPI",
    "streamlit": "Streamlit",
    "next": "Next.js",
    "nuxt": "Nuxt",
    "ng": "Angular",
    "react-scripts": "React",
    "rails": "Rails",
}
_TEST_FRAMEWORKS = {
    "pytest": "pytest",
    "py.test": "pytest",
    "jest": "Jest",
    "vitest": "Vitest",
    "mocha": "Mocha",
    "unittest": "unittest",
    "rspec": "RSpec",
    "phpunit": "PHPUnit",
    "playwright": "Playwright",
    "cypress": "Cypress",
    "tox": "tox",
    "nox": "nox",
    "mix": "ExUnit",
}
_PROJECT_PURPOSES = ("test", "build", "run", "lint", "install")
_REDIRECT = re.compile(r"\s+\d?(?:>>?|&>)\s*(?:&\d|\S+)")
_SYSTEM_DIRS = frozenset(
    """usr etc opt var tmp home Users root bin sbin lib lib64 proc sys dev mnt srv private
    Library System Applications Volumes nix""".split()
)
_MAX_FILES = 12
_MAX_READ_FILES = 5
_MAX_OPEN_ERRORS = 8
_MAX_FIX_STEPS = 4


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _name_parts(name: str) -> frozenset[str]:
    return frozenset(p.lower() for p in _NAME_PART.split(name) if p)


def _command_of(args: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd", "script", "commands"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            words = [str(v) for v in value]
            if (
                len(words) >= 3
                and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
                and words[1] in ("-lc", "-c")
            ):
                return words[2]
            return " ".join(words)
    raw = args.get("_raw")
    return raw if isinstance(raw, str) and raw.strip() else None


_PLAN_NAMES = frozenset({"update_plan", "todowrite", "write_todos", "todo_write"})
_MAX_PLAN_STEPS = 8
_DELEGATE_NAMES = frozenset({"task", "delegate_to_agent", "agent", "spawn_agent", "dispatch_agent"})
_AGENT_NAME = re.compile(r"[\w.:-]{2,60}")

# A result saying that an edit was not made (the tool's error, or a harness refusing it).
_EDIT_FAILED = re.compile(
    r"^\s*(?:<tool_use_error>|error\b|ERROR:|\[?errno|failed to|permission denied)"
    r"|no replacement was performed|did not appear verbatim|(?:have|has) not been applied"
    r"|string to replace not found|file has not been read yet"
    r"|no such file or directory|old_str .{0,80}? (?:is not unique|not found)"
    r"|file already exists|failed to (?:apply|edit|write)|patch (?:failed|does not apply)",
    re.I,
)


@dataclass(slots=True)
class _Edit:
    seq: int
    path: str
    what: str  # a short description: "`old` → `new`", "created", "s/a/b/"
    created: bool = False
    given: str = ""  # the path as the call wrote it (``/workspace/game.py``)


@dataclass(slots=True)
class _Run:
    """One shell command line and how it went."""

    seq: int
    command: str
    parts: list[CommandPart]
    result_seq: int | None = None
    outcome: RunOutcome | None = None


@dataclass(slots=True)
class _Error:
    run: _Run
    line: str
    fails: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _Project:
    """One project fact being gathered: its value, first source and later evidence."""

    key: str
    value: str
    text: str
    seq: int
    quote: str
    count: int = 1
    evidence: list[int] = field(default_factory=list)


class ToolFacts:
    """The tool side of one log, fed calls and results in order (see the module docstring)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._pending: dict[str, tuple[str, str]] = {}  # call id -> the call awaiting a result
        self._runs: dict[str, _Run] = {}  # call id -> shell run awaiting its result
        self._running: dict[int, _Run] = {}  # Codex process session id -> its run
        self._polls: dict[str, _Run] = {}  # write_stdin call id -> the run it polls
        self._partial: dict[int, list[str]] = {}  # output gathered from a running process
        self._edits: list[_Edit] = []
        self._installs: list[_Run] = []
        self._open: list[_Error] = []
        self._reads: dict[str, list[int]] = {}
        self._opened: str | None = None  # SWE-agent's open file
        self._roots: list[str] = []
        self._passes: dict[tuple[str, str], list[_Run]] = {}  # (purpose, short) -> runs
        self._tried: dict[tuple[str, str], list[_Run]] = {}
        # runs of a check script the session wrote that printed test counts (test_fix.py)
        self._scratch_counted: list[_Run] = []
        self._pm: dict[str, list[int]] = {}
        self._lang: dict[str, list[int]] = {}
        self._framework: dict[str, list[int]] = {}
        self._created: set[str] = set()  # files this session created
        self._scripts: set[str] = set()  # scripts it ran (python x.py, node x.js)
        self._script_code: dict[str, str] = {}  # Python scripts it wrote, by path
        self._removed: set[str] = set()  # files it removed
        self._told: tuple[str, int] | None = None  # a command told in text, awaiting output
        self._edit_calls: dict[str, list[_Edit]] = {}  # call id -> the edits it made
        self._planned: set[str] = set()  # plan steps already told

    # ---------------------------------------------------------------- calls

    def call(self, call_id: str, name: str, arguments: Mapping[str, Any], seq: int) -> list[Fact]:
        try:
            return self._call(call_id, name, arguments, seq)
        except Exception:  # odd input gives nothing, never an exception
            return []

    def _call(self, call_id: str, name: str, args: Mapping[str, Any], seq: int) -> list[Fact]:
        # The same call is often seen twice, in the assistant message and as a tool/call
        # event; some agents reuse a call id for a later call, which is a new call.
        seen = (name, json.dumps(args, sort_keys=True, default=str)[:2000])
        if self._pending.get(call_id) == seen:
            return []
        self._pending[call_id] = seen
        before = len(self._edits)
        try:
            return self._dispatch(call_id, name, args, seq)
        finally:
            if len(self._edits) > before:
                self._edit_calls[call_id] = self._edits[before:]

    def _dispatch(self, call_id: str, name: str, args: Mapping[str, Any], seq: int) -> list[Fact]:
        low = name.lower()
        if low in _DELEGATE_NAMES:
            return self._delegated(args, seq)
        if low in _PLAN_NAMES:
            return self._plan(args, seq)
        words = _name_parts(name)
        for key in ("workdir", "cwd", "dir", "directory"):
            root = args.get(key)
            if (
                isinstance(root, str)
                and root.startswith("/")
                and root.rstrip("/") not in self._roots
            ):
                self._roots.append(root.rstrip("/"))
        if low == "write_stdin":
            sid = args.get("session_id")
            if isinstance(sid, int) and sid in self._running:
                self._polls[call_id] = self._running[sid]
            return []
        if low in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor"):
            self._editor(args, seq)
            return []
        command = _command_of(args)
        if _is_shell(name, command):
            if command and _SHELL_PATCH.match(command):
                self._patch(command, seq)
            elif command:
                self._shell(call_id, command, seq)
            return []
        if low == "apply_patch" or "patch" in words:
            text = command or next(
                (v for v in args.values() if isinstance(v, str) and "*** " in v), ""
            )
            self._patch(text, seq)
            return []
        if low in ("open", "goto") and isinstance(args.get("path"), str):
            self._opened = str(args["path"])
            self._read(self._opened, seq)
            return []
        if low in READ_TOOLS:
            path = self._path(args)
            if path:
                self._read(path, seq)
            return []
        if words & _EDIT_PARTS:
            self._edit_call(low, args, seq)
        return []

    def _plan(self, args: Mapping[str, Any], seq: int) -> list[Fact]:
        """The steps of the agent's plan (Codex's update_plan, Claude Code's TodoWrite, Gemini
        CLI's write_todos): each step once, when it first appears, as the agent's decision."""
        items: list[Any] = next(
            (args[k] for k in ("plan", "todos", "items", "steps") if isinstance(args.get(k), list)),
            [],
        )
        out: list[Fact] = []
        for item in items[:_MAX_PLAN_STEPS]:
            if isinstance(item, Mapping):
                step = next(
                    (
                        item[k]
                        for k in ("step", "content", "description", "title", "text")
                        if isinstance(item.get(k), str)
                    ),
                    "",
                )
            else:
                step = item if isinstance(item, str) else ""
            line = " ".join(str(step).split())
            if len(line) < 8 or line.casefold() in self._planned:
                continue
            if len(self._planned) >= _MAX_PLAN_STEPS * 3:
                break
            self._planned.add(line.casefold())
            out.append(
                Fact(
                    kind="decision",
                    text=_clip(f"plan: {line}", 200),
                    source=self._source(seq, "assistant", line),
                )
            )
        return out

    def _delegated(self, args: Mapping[str, Any], seq: int) -> list[Fact]:
        """A sub-agent the agent handed work to (Claude Code's Task, Gemini CLI's
        delegate_to_agent): the decision to delegate, to whom, what."""
        agent = next(
            (
                str(args[k]).strip()
                for k in ("subagent_type", "agent_name", "agent", "name")
                if isinstance(args.get(k), str) and str(args[k]).strip()
            ),
            None,
        )
        what = next(
            (
                str(args[k])
                for k in ("description", "objective", "prompt", "task")
                if isinstance(args.get(k), str) and str(args[k]).strip()
            ),
            "",
        )
        if agent is None or not _AGENT_NAME.fullmatch(agent):
            return []
        first = re.split(r"(?<=[.!?])\s|\n", what.strip(), maxsplit=1)[0].strip()
        first = _clip(re.sub(r"[*_`#]+", "", first), 120)
        text = f"delegated to {agent}" + (f": {first}" if first else "")
        return [
            Fact(
                kind="decision",
                text=text,
                source=self._source(seq, "assistant", f"{agent}: {first}" if first else agent),
            )
        ]

    def _path(self, args: Mapping[str, Any]) -> str | None:
        for key in PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    def _rel(self, path: str) -> str:
        """A path relative to the working root when one is known (``/repo/src/x`` -> ``src/x``)."""
        p = path.strip().strip("'\"")
        for root in self._roots:
            if p.startswith(root + "/"):
                return p[len(root) + 1 :]
        for root in ("/workspace/", "/testbed/", "/repo/", "/app/", "/code/"):
            if p.startswith(root):
                return p[len(root) :]
        return p[2:] if p.startswith("./") else p

    def _read(self, path: str, seq: int) -> None:
        rel = self._rel(path)
        if _valid_path(rel) and not is_scratch(rel):
            self._reads.setdefault(rel, []).append(seq)
            self._notice_path(rel, seq, weight=1)

    def _editor(self, args: Mapping[str, Any], seq: int) -> None:
        command = args.get("command")
        path = self._path(args)
        if not path:
            return
        if command == "view":
            self._read(path, seq)
        elif command == "create":
            self._edit(path, seq, "created", created=True, code=str(args.get("file_text") or ""))
        elif command in ("str_replace", "insert"):
            old = str(args.get("old_str") or "")
            new = str(args.get("new_str") or "")
            self._edit(path, seq, _change(old, new), code=new)

    def _edit_call(self, low: str, args: Mapping[str, Any], seq: int) -> None:
        path = self._path(args)
        if low in ("edit", "insert") and not path and self._opened:  # SWE-agent edits the open file
            path = self._opened
        if not path:
            return
        if low == "create":
            self._opened = path
        content = args.get("content", args.get("file_text"))
        old, new = edit_texts(args)
        edits = args.get("edits")
        if isinstance(content, str) and old is None:
            self._edit(
                path,
                seq,
                "wrote the file",
                created=low in ("write", "write_file", "create", "create_file"),
                code=content,
            )
        elif isinstance(old, str) or isinstance(new, str):
            old_s, new_s = str(old or ""), str(new or "")
            created = low == "edit" and not old_s.strip() and "search" in args
            self._edit(
                path,
                seq,
                "created" if created else _change(old_s, new_s),
                created=created,
                code=new_s,
            )
        elif isinstance(edits, list) and edits:
            first = edits[0] if isinstance(edits[0], Mapping) else {}
            what = _change(str(first.get("old_string", "")), str(first.get("new_string", "")))
            self._edit(path, seq, f"{len(edits)} edits, {what}" if len(edits) > 1 else what)
        else:
            self._edit(
                path, seq, "created" if low == "create" else "edited", created=low == "create"
            )

    def _patch(self, text: str, seq: int) -> None:
        for m in _PATCH_FILE.finditer(text):
            action, path = (m.group(1) or "Update"), (m.group(2) or m.group(3) or "")
            if not path or path == "/dev/null":
                continue
            chunk = text[m.end() : m.end() + 4000]
            nxt = _PATCH_FILE.search(chunk)
            chunk = chunk[: nxt.start()] if nxt else chunk
            minus = next(
                (
                    ln[1:]
                    for ln in chunk.splitlines()
                    if ln.startswith("-") and ln[1:].strip() and not ln.startswith("---")
                ),
                "",
            )
            plus = next(
                (
                    ln[1:]
                    for ln in chunk.splitlines()
                    if ln.startswith("+") and ln[1:].strip() and not ln.startswith("+++")
                ),
                "",
            )
            if action == "Add":
                self._edit(path, seq, "created", created=True, code=chunk)
            elif action == "Delete":
                self._edit(path, seq, "deleted")
            else:
                self._edit(path, seq, _change(minus, plus), code=plus)

    def _edit(
        self, path: str, seq: int, what: str, *, created: bool = False, code: str = ""
    ) -> None:
        rel = self._rel(path)
        if not _valid_path(rel):
            return
        if created:
            self._created.add(rel)
        self._edits.append(_Edit(seq, rel, what, created, path.strip()[:QUOTE_MAX]))
        if not is_scratch(rel):
            self._notice_path(rel, seq, weight=3)
            if code and re.search(r"\.(?:py|[cm]?[jt]sx?|vue|svelte)$", rel):  # code, not docs
                for rule, fw in _FRAMEWORK_IMPORTS:
                    if rule.search(code[:20_000]):
                        self._framework.setdefault(fw, []).append(seq)

    def _notice_path(self, rel: str, seq: int, *, weight: int) -> None:
        name = rel.rsplit("/", 1)[-1]
        if name in _LOCKFILES:
            self._pm.setdefault(_LOCKFILES[name], []).append(seq)
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        lang = _CODE_EXT.get(ext)
        if lang:
            self._lang.setdefault(lang, []).extend([seq] * weight)
        for rule, fw in _FRAMEWORK_PATHS:
            if rule.search(rel):
                self._framework.setdefault(fw, []).append(seq)

    def _shell(self, call_id: str, command: str, seq: int) -> None:
        ps = parts(command)
        for p in ps:
            if p.program == "rm":
                self._removed.update(self._rel(o) for o in p.operands)
            if (
                p.sub
                and re.search(r"\.(?:py|js|mjs|ts|sh|rb)$", p.sub)
                and p.purpose in ("run", "test")
            ):
                self._scripts.add(self._rel(p.sub))
            if p.program == "cd":
                target = next(iter(p.operands), "")
                if (
                    target.startswith("/")
                    and target.rstrip("/") not in self._roots
                    and len(self._roots) < 8
                ):
                    self._roots.append(target.rstrip("/"))
            if p.purpose == "read" and p.program in READ_PROGRAMS:
                for op in p.operands:
                    if (
                        "." in op.rsplit("/", 1)[-1]
                        and not op.startswith(("-", "s/"))
                        and " " not in op
                    ):
                        self._read(op, seq)
        bodies = dict(heredoc_writes(command))
        for p, path, appended in shell_writes(ps):
            # as an edit tool's: > and tee write (create) the file; >>, sed -i, perl -i edit it
            code = bodies.get(path, "") if p.program in ("cat", "tee") else ""
            created = not appended and not in_place(p.program, p.sub)
            what = _shell_change(p, appended, code)
            self._edit(path, seq, what, created=created, code=code)
            if code and path.endswith(".py"):
                self._script_code[self._rel(path)] = code
        for p in ps:  # a script it wrote that rewrites a file: running it is the edit
            script = self._script_code.get(self._rel(p.sub), "") if p.sub.endswith(".py") else ""
            if script and p.purpose in ("run", "test"):
                for path in rewritten_files(script):
                    self._edit(path, seq, f"rewritten by {_clip(p.sub, 60)}")
        self._runs[call_id] = _Run(seq, command, ps)

    # ------------------------------------------------- commands told in text

    def text_action(self, text: str, seq: int) -> None:
        """An assistant message without tool calls whose last block is a fenced command
        (SWE-agent's thought-and-action format): held until the harness relays its output.
        Any other message clears what was held."""
        m = _FENCED_LAST.search(text[-4000:]) if isinstance(text, str) else None
        self._told = (m.group(1), seq) if m and m.group(1).strip() else None

    def user_text(self, text: str, seq: int) -> None:
        """A typed ``/run`` or ``/test`` command (Aider) is held for the output the harness
        relays next; any other user message clears what was held."""
        m = _SLASH_RUN.match(text) if isinstance(text, str) else None
        self._told = (m.group(1).strip(), seq) if m and m.group(1).strip() else None

    def relay(self, text: str, seq: int) -> list[Fact]:
        """Output the harness relayed into the conversation: the result of the command held
        by ``text_action`` or ``user_text``, if any (else nothing)."""
        told, self._told = self._told, None
        if told is None or not isinstance(text, str) or _FORMAT_COMPLAINT.search(text[:600]):
            return []
        action, at = told
        name, args = _told_call(action)
        cid = f"told-{at}"
        out = self.call(cid, name, args, at)
        return out + self.result(cid, _unfence(text), False, seq)

    # -------------------------------------------------------------- results

    def result(self, call_id: str, text: str, is_error: bool, seq: int) -> list[Fact]:
        try:
            return self._result(call_id, text or "", is_error, seq)
        except Exception:
            return []

    def _result(self, call_id: str, text: str, is_error: bool, seq: int) -> list[Fact]:
        self._pending.pop(call_id, None)
        made = self._edit_calls.pop(call_id, None)
        shell = call_id in self._runs  # a shell's exit code says how its last program did
        if made and not shell and (is_error or _EDIT_FAILED.search(text[:600])):
            self._undo(made)  # an edit that failed changed no file
        run = self._runs.pop(call_id, None)
        if harness_note(text):
            return []
        if run is None:
            polled = self._polls.pop(call_id, None)
            if polled is None:
                return []
            run = polled
            code = exit_code(text)
            if code is None:  # still running (or a failed poll): gather its output
                self._partial.setdefault(id(run), []).append(body(text))
                return []
            gathered = [*self._partial.pop(id(run), []), body(text)]
            text = f"Exit code: {code}\n" + "\n".join(gathered)
        else:
            sid = running_session(text)
            if sid is not None:
                self._running[sid] = run
                self._partial[id(run)] = [body(text)]
                return []
        return self._finished(run, text, is_error, seq)

    def _undo(self, made: list[_Edit]) -> None:
        gone = {id(e) for e in made}
        self._edits = [e for e in self._edits if id(e) not in gone]
        for e in made:
            if e.created and not any(x.path == e.path and x.created for x in self._edits):
                self._created.discard(e.path)

    def _finished(self, run: _Run, text: str, is_error: bool, seq: int) -> list[Fact]:
        run.result_seq = seq
        out = outcome(text, is_error)
        run.outcome = out
        mattering = [
            p for p in run.parts if p.purpose in (*_PROJECT_PURPOSES, "other") and not _inline(p)
        ]
        if not mattering:
            return []
        facts: list[Fact] = []
        if not out.failed:
            for p in run.parts:
                if p.purpose == "install":
                    self._installs.append(run)
            facts += self._close(run)
        self._project(run, out)
        if out.failed:
            self._fail(run, out, seq)
        return facts

    def _project(self, run: _Run, out: RunOutcome) -> None:
        for p in run.parts:
            if p.purpose == "test" and _scratch_part(p) and out.counts.get("passed") is not None:
                self._scratch_counted.append(run)
            if p.purpose not in _PROJECT_PURPOSES or _inline(p) or _scratch_part(p):
                continue
            short = _install_value(p) if p.purpose == "install" else p.short
            key = (p.purpose, short)
            self._tried.setdefault(key, []).append(run)
            if not out.failed:
                self._passes.setdefault(key, []).append(run)
            pm = package_managers(p)
            if pm:
                self._pm.setdefault(pm, []).append(run.seq)
            lang = _LANG_BY_PROGRAM.get(
                p.launcher[0] if p.launcher else p.program.rsplit("/", 1)[-1]
            )
            if lang:
                self._lang.setdefault(lang, []).append(run.seq)
            fw = _FRAMEWORK_PROGRAMS.get(p.program)
            if fw:
                self._framework.setdefault(fw, []).append(run.seq)

    def _fail(self, run: _Run, out: RunOutcome, seq: int) -> None:
        opening = [
            p
            for p in run.parts
            if p.purpose in (*_PROJECT_PURPOSES, "run", "other") and not _inline(p)
        ]
        if not any(p.purpose != "other" or p.program.startswith(("./", "bin/")) for p in opening):
            return  # an exploratory command (grep, an unknown tool), not a step of the work
        line = out.error or "failed"
        for err in self._open:
            same = covers(err.run.parts, run.parts) and covers(run.parts, err.run.parts)
            if same or (line == err.line and line != "failed" and covers(err.run.parts, run.parts)):
                err.fails.append(seq)
                return
        self._open.append(_Error(run, out.error or "failed", [seq]))

    def _close(self, run: _Run) -> list[Fact]:
        facts: list[Fact] = []
        still: list[_Error] = []
        for err in self._open:
            if not covers(run.parts, err.run.parts):
                still.append(err)
                continue
            if self._scratch_error(err, run):
                continue  # a throw-away script that failed and was made to pass by itself
            facts.append(self._error_fact(err, run))
        self._open = still
        return facts

    def _scratch_error(self, err: _Error, passed: _Run) -> bool:
        scripts = self._script_of(err.run)
        if not scripts or not all(
            is_scratch(s)
            or self._rel(s) in self._created
            or "No such file" in err.line
            or "can't open file" in err.line
            for s in scripts
        ):
            return False
        between = [e for e in self._edits if err.run.seq < e.seq < passed.seq]
        return all(
            self._throwaway(e.path) or self._rel(e.path) in map(self._rel, scripts) for e in between
        )

    def _error_fact(self, err: _Error, passed: _Run | None) -> Fact:
        first = err.run.seq
        command = _clip(_display(err.run), 100)
        if passed is None:
            text = f"{command}: {err.line} (still failing at the end)"
            return Fact(
                kind="error",
                text=_clip(text, 300),
                source=self._source(first, "tool", err.run.command),
                key=None,
                value=command,
                evidence=tuple(dict.fromkeys(err.fails)),
            )
        edits = [e for e in self._edits if first < e.seq < passed.seq]
        installs = [r for r in self._installs if first < r.seq < passed.seq]
        real = [e for e in edits if not is_scratch(e.path)] or edits
        steps: list[str] = []
        seen: set[str] = set()
        for e in reversed(real):  # the edits nearest the passing run first
            if e.path in seen:
                continue
            seen.add(e.path)
            steps.append(f"{e.path}: {e.what}" if e.what else e.path)
        steps = list(reversed(steps[:_MAX_FIX_STEPS]))
        steps += [_clip(r.command, 80) for r in installs[-2:]]
        fix = "; ".join(steps) if steps else None
        counts = passed.outcome.counts if passed.outcome else {}
        after = f"; then {_clip(_display(passed), 60)} passed" + (
            f" ({_counts_text(counts)})" if counts else ""
        )
        text = f"{command}: {err.line}" + (
            f" — fixed by {', '.join(_fix_paths(real, installs))}"
            if steps
            else " — passed again with no change in between"
        )
        evidence = [
            *err.fails,
            *(e.seq for e in real[-_MAX_FIX_STEPS:]),
            *(r.seq for r in installs[-2:]),
            passed.result_seq or passed.seq,
        ]
        return Fact(
            kind="error",
            text=_clip(text, 300),
            source=self._source(first, "tool", err.run.command),
            value=command,
            fix=_clip(fix, 400) if fix else None,
            reason=_clip(after.lstrip("; "), 200),
            evidence=tuple(dict.fromkeys(s for s in evidence if s != first)),
        )

    def _source(self, seq: int, role: str, quote: str) -> FactSource:
        return FactSource(self.session, seq, role, quote[:QUOTE_MAX])

    # --------------------------------------------------------------- finish

    def finish(self) -> list[Fact]:
        try:
            return self._finish()
        except Exception:
            return []

    def _throwaway(self, path: str) -> bool:
        """A file made for the moment: a scratch name, or a script this session created at
        the top of the tree and ran (or removed) — reproduce and check scripts."""
        rel = self._rel(path)
        if is_scratch(rel):
            return True
        made = rel in self._created
        return made and (rel in self._removed or ("/" not in rel and rel in self._scripts))

    def _script_of(self, run: _Run) -> list[str]:
        return [
            p.sub for p in run.parts if p.sub and re.search(r"\.(?:py|js|mjs|ts|sh|rb)$", p.sub)
        ]

    def _finish(self) -> list[Fact]:
        facts: list[Fact] = []
        facts += self._commands()
        facts += self._inferred()
        facts += self._files()
        opened = [
            e for e in self._open if not any(self._throwaway(s) for s in self._script_of(e.run))
        ]
        opened = sorted(opened, key=lambda e: e.run.seq)[-_MAX_OPEN_ERRORS:]
        facts += [self._error_fact(err, None) for err in opened]
        return sorted(facts, key=lambda f: f.source.seq)

    def _commands(self) -> list[Fact]:
        out: list[Fact] = []

        def kept(table: dict[tuple[str, str], list[_Run]]) -> dict[tuple[str, str], list[_Run]]:
            return {
                k: v
                for k, v in table.items()
                if not any(self._throwaway(s) for s in self._script_of(v[0]) if k[1].endswith(s))
            }

        roots = self._derive_roots()
        passes: dict[tuple[str, str], list[_Run]] = {}
        tried: dict[tuple[str, str], list[_Run]] = {}
        for src, dst in ((kept(self._passes), passes), (kept(self._tried), tried)):
            for (purpose, short), runs in src.items():
                for root in roots:
                    short = short.replace(root + "/", "")
                dst.setdefault((purpose, short), []).extend(runs)
        for purpose in _PROJECT_PURPOSES:
            cands = [(k, v) for k, v in passes.items() if k[0] == purpose]
            passed = True
            if not cands:
                cands = [(k, v) for k, v in tried.items() if k[0] == purpose]
                passed = False
            if not cands:
                continue
            if purpose == "install":
                out += self._install_fact(cands, passed)
                continue
            (_, short), runs = max(cands, key=lambda kv: (len(kv[1]), -kv[1][0].seq))
            first = runs[0]
            text = f"{purpose} command: {short}"
            if not passed:
                text += " (it never passed in this session)"
            last = runs[-1].outcome
            counts = last.counts if last else {}
            if purpose == "test" and counts:
                text += f" (last run: {_counts_text(counts)})"
            others = sorted({k[1] for k, _ in cands if k[1] != short})
            if others:
                text += f"; also {', '.join(others[:3])}"
            out.append(
                Fact(
                    kind="project",
                    text=_clip(text, 240),
                    source=self._source(first.seq, "tool", first.command),
                    key=f"{purpose} command",
                    value=short,
                    evidence=tuple(dict.fromkeys(r.seq for r in runs[1:9])),
                )
            )
            if purpose == "test":
                counted = [
                    r for r in runs if r.outcome and r.outcome.counts.get("passed") is not None
                ]
                if counted:
                    out.append(self._count_fact(counted[-1], ""))
        if self._scratch_counted and not any(f.key == "test count" for f in out):
            # the suite never reported (or never ran): what verified the work was a test
            # script the session wrote, and that is worth knowing too
            out.append(self._count_fact(self._scratch_counted[-1], ", a script written to check"))
        return out

    def _count_fact(self, r: _Run, note: str) -> Fact:
        assert r.outcome is not None
        c = r.outcome.counts
        return Fact(
            kind="project",
            text=f"tests: {_counts_text(c)} ({_clip(_display(r), 80)}{note})",
            source=self._source(r.result_seq or r.seq, "tool", _clip(_display(r), QUOTE_MAX)),
            key="test count",
            value=str(c["passed"]),
            unit="passed",
            evidence=(r.seq,),
        )

    def _install_fact(
        self, cands: list[tuple[tuple[str, str], list[_Run]]], passed: bool
    ) -> list[Fact]:
        cands = sorted(cands, key=lambda kv: kv[1][0].seq)
        project = [kv for kv in cands if _project_install(kv[0][1])]
        (_, value), runs = (project or cands)[0]
        first = runs[0]
        pkgs: list[str] = []
        for (_, v), _r in cands:
            if v != value and not _project_install(v):
                pkgs.append(v)
        text = f"install command: {value}" + (
            "" if passed else " (it never succeeded in this session)"
        )
        if pkgs:
            text += f"; also {', '.join(pkgs[:3])}"
        return [
            Fact(
                kind="project",
                text=_clip(text, 240),
                source=self._source(first.seq, "tool", first.command),
                key="install command",
                value=value,
                evidence=tuple(
                    dict.fromkeys(r.seq for _, rs in cands for r in rs if r is not first)
                )[:8],
            )
        ]

    def _inferred(self) -> list[Fact]:
        out: list[Fact] = []
        for key, table in (
            ("language", self._lang),
            ("package manager", self._pm),
            ("framework", self._framework),
        ):
            if not table:
                continue
            ranked = sorted(table.items(), key=lambda kv: (-len(kv[1]), min(kv[1])))
            if key == "language":
                code = [kv for kv in ranked if kv[0] not in _MARKUP_LANGS]
                ranked = code or ranked
                if (
                    ranked[0][0] == "JavaScript"
                    and "TypeScript" in table
                    and len(table["TypeScript"]) * 2 >= len(ranked[0][1])
                ):
                    ranked.insert(0, ("TypeScript", table["TypeScript"]))
            value, seqs = ranked[0]
            seqs = sorted(set(seqs))
            out.append(
                Fact(
                    kind="project",
                    text=f"{key}: {value}",
                    source=self._source(seqs[0], "tool", value),
                    key=key,
                    value=value,
                    evidence=tuple(seqs[1:9]),
                )
            )
        tests = {
            _TEST_FRAMEWORKS[p.program]: runs
            for (purpose, _), runs in self._tried.items()
            if purpose == "test"
            for p in runs[0].parts
            if p.program in _TEST_FRAMEWORKS
        }
        if tests:
            name, runs = min(tests.items(), key=lambda kv: (-len(kv[1]), kv[1][0].seq))
            out.append(
                Fact(
                    kind="project",
                    text=f"test framework: {name}",
                    source=self._source(runs[0].seq, "tool", runs[0].command),
                    key="test framework",
                    value=name,
                    evidence=tuple(r.seq for r in runs[1:9]),
                )
            )
        return out

    def _derive_roots(self) -> list[str]:
        """Working roots read off the paths themselves: an absolute path that ends with a
        relative one seen in the same log (``/home/u/app/src/x.py`` and ``src/x.py``), or the
        common directory of the absolute paths edited."""
        paths = {e.path for e in self._edits} | set(self._reads)
        rel = {p for p in paths if not p.startswith(("/", "~")) and "/" in p}
        found: dict[str, int] = {}
        for p in paths:
            if not p.startswith("/"):
                continue
            for r in rel:
                if p.endswith("/" + r):
                    root = p[: -len(r) - 1]
                    found[root] = found.get(root, 0) + 1
        roots = sorted(found, key=lambda r: -found[r])
        tops = {p.split("/")[1] for p in paths if p.startswith("/") and p.count("/") >= 2}
        if len(tops) == 1:
            top = next(iter(tops))
            if top not in _SYSTEM_DIRS and "/" + top not in roots:
                roots.append("/" + top)
        edited = [e.path for e in self._edits if e.path.startswith("/") and not _private(e.path)]
        if len(edited) >= 2:
            common = os.path.commonpath(edited)
            if (
                common.count("/") >= 3
                and common not in roots
                and not any(common.startswith(r + "/") for r in roots)
            ):
                roots.append(common)
        return [*self._roots, *roots]

    def _final(self, path: str, roots: list[str]) -> str:
        for root in roots:
            if path.startswith(root + "/"):
                return path[len(root) + 1 :]
        return path

    def _files(self) -> list[Fact]:
        roots = self._derive_roots()
        by_path: dict[str, list[_Edit]] = {}
        for e in self._edits:
            path = self._final(e.path, roots)
            if not self._throwaway(e.path) and not _private(path):
                by_path.setdefault(path, []).append(e)
        reads_by: dict[str, list[int]] = {}
        for p, seqs in self._reads.items():
            path = self._final(p, roots)
            if not _private(path):
                reads_by.setdefault(path, []).extend(seqs)
        ranked = sorted(by_path.items(), key=lambda kv: (-len(kv[1]), kv[1][0].seq))[:_MAX_FILES]
        out: list[Fact] = []
        for path, edits in ranked:
            created = any(e.created for e in edits)
            verb = "created" if created else "edited"
            text = f"{verb} {path}"
            told = [e.what for e in edits if e.what not in _BARE_CHANGES]
            if len(edits) > 1:
                # the count alone says nothing of the work: the last change told is the nearest
                # to how the file ended
                text += f" ({len(edits)} changes" + (f"; last: {told[-1]})" if told else ")")
            elif told:
                text += f": {told[0]}"
            out.append(
                Fact(
                    kind="project",
                    text=_clip(text, 240),
                    source=self._source(edits[0].seq, "tool", _shown_path(edits[0], path)),
                    key=f"file {path}",
                    value=path,
                    evidence=tuple(dict.fromkeys(e.seq for e in edits[1:9])),
                )
            )
        reads = sorted(
            ((p, sorted(s)) for p, s in reads_by.items() if p not in by_path and len(s) >= 3),
            key=lambda kv: (-len(kv[1]), kv[1][0]),
        )[:_MAX_READ_FILES]
        for path, seqs in reads:
            out.append(
                Fact(
                    kind="project",
                    text=f"read {path} ({len(seqs)} times)",
                    source=self._source(seqs[0], "tool", path),
                    key=f"file {path}",
                    value=path,
                    evidence=tuple(seqs[1:9]),
                )
            )
        return out


# What an edit says when it says nothing of the change.
_BARE_CHANGES = frozenset(("", "created", "edited", "wrote the file"))
_FENCED_LAST = re.compile(r"```(?:bash|sh|shell|console|zsh)?[ \t]*\n(.*?)\n?```\s*$", re.S)
# A harness's complaint about the reply's format: no command ran.
_FORMAT_COMPLAINT = re.compile(
    r"(?:provide|include) EXACTLY ONE|format your (?:action|response)|"
    r"no (?:valid )?(?:command|action) (?:was )?found|"
    r"Your (?:output|response) was not formatted correctly",
    re.I,
)
_SLASH_RUN = re.compile(r"^\s*/(?:run|test)\s+(.+?)\s*$", re.S)
# the body may be empty (``edit 6:7`` then ``end_of_edit`` deletes lines 6-7)
_SWE_EDIT = re.compile(r"^edit\s+\d+(?::\d+)?[ \t]*\n(.*?)(?:^end_of_edit\s*)?\Z", re.S | re.M)
_SWE_READS = frozenset(
    """find_file search_dir search_file scroll_down scroll_up goto submit exit_forfeit
    filemap""".split()
)


def _told_call(action: str) -> tuple[str, dict[str, Any]]:
    """The tool call a command told in text stands for: SWE-agent's ``open``, ``create``
    and ``edit N:M ... end_of_edit`` on the open file; anything else a shell command."""
    text = action.strip()
    first = text.split(None, 1)[0] if text else ""
    rest = text[len(first) :].strip()
    if first == "open" and rest:
        return "open", {"path": rest.split()[0].strip("\"'")}
    if first == "create" and rest:
        return "create", {"filename": rest.split()[0].strip("\"'")}
    m = _SWE_EDIT.match(text)
    if m:
        return "edit", {"text": m.group(1)}
    if first in _SWE_READS:
        return "noop", {}
    return "bash", {"command": text}


def _unfence(text: str) -> str:
    t = text.strip()
    if t.startswith("```") and t.endswith("```"):
        t = t[3:-3]
        t = t.split("\n", 1)[1] if "\n" in t else t
    return t


def _sed_expression(p: CommandPart) -> str:
    return next(iter(sed_args(p.args)[1]), "")


def _shell_change(p: CommandPart, appended: bool, code: str) -> str:
    """What a shell write did, as an edit tool's change reads: ``sed s/a/b/``, ``added
    `line``` for a here-document appended, ``moved from `/workspace/a.py``` (the source as the
    command names it, as a quote keeps a path)."""
    if p.program == "sed":
        return f"sed {_clip(_sed_expression(p), 60)}".strip()
    if p.program == "perl":
        return "perl -i"
    if p.program == "patch" or (p.program == "git" and p.sub == "apply"):
        return "applied a patch"
    if in_place(p.program, p.sub):  # awk -i inplace, ed, vim -c, truncate
        return f"{p.program} in place"
    if appended:
        return _change("", code) if code.strip() else "appended to the file"
    sources = [a for a in p.args if not a.startswith("-")][:-1]
    moved = p.program == "mv" or (p.program == "git" and p.sub == "mv")
    if (moved or p.program in ("cp", "install")) and len(sources) == 1:
        verb = "moved" if moved else "copied"
        return f"{verb} from `{_clip(sources[0], 60)}`"
    return "wrote the file"


def _is_shell(name: str, command: str | None) -> bool:
    """A call that runs a command line: a shell tool by name (``bash``, ``exec_command``,
    ``execute_bash`` …), or a name about commands (not about editing) with a command."""
    words = _name_parts(name)
    return name.lower() in _SHELL_NAMES or bool(
        words & _SHELL_PARTS and not words & _EDIT_PARTS and command
    )


def _valid_path(path: str) -> bool:
    """A file path, not an importer's note or a sentence (Aider's failed-edit headers)."""
    return (
        0 < len(path) < 300
        and "\n" not in path
        and not path.startswith(("#", "*"))
        and ": " not in path
        and "  " not in path
    )


def _shown_path(edit: _Edit, path: str) -> str:
    """The path as the call wrote it (``/workspace/game.py``), unless it names a home."""
    given = edit.given
    if not given or re.match(r"^(?:~|/home/|/Users/|/root/|[A-Za-z]:\\Users\\)", given):
        return path
    return given


def _private(path: str) -> bool:
    """A file outside the project: the user's home dot-folders (agent settings, caches)."""
    return bool(re.match(r"^(?:~|/(?:Users|home)/[^/]+|/root)/\.", path)) or path.startswith("~/")


def _inline(p: CommandPart) -> bool:
    """Inline code (``python -c``, ``node -e``): a probe, not a project command."""
    return p.sub in ("-c", "-e")


def _scratch_part(p: CommandPart) -> bool:
    return (bool(p.sub) and (is_scratch(p.sub) or p.sub.startswith("/tmp"))) or (
        any(is_scratch(o) for o in p.operands if o.endswith((".py", ".js", ".ts", ".sh")))
        and p.purpose == "run"
    )


def _install_value(p: CommandPart) -> str:
    ops = [o for o in sorted(p.operands) if not o.startswith(("http", "git+"))][:3]
    words = [*p.launcher, p.program]
    if p.sub:
        words.append(p.sub)
    if (
        p.program in ("pip", "uv pip")
        and any(o.startswith(".") for o in p.operands)
        and "-e" in p.text.split()
    ):
        words.append("-e")
    return " ".join(words + ops)


def _project_install(value: str) -> bool:
    words = value.split()
    return len(words) <= 2 or any(w.startswith((".", "-r", "requirements")) for w in words[2:])


def _display(run: _Run) -> str:
    """The command as a teammate would write it: the parts that matter, without cd/echo."""
    keep = [
        _REDIRECT.sub("", p.text).strip() for p in run.parts if p.purpose not in ("read", "write")
    ]
    return " && ".join(keep) if keep else run.command


def _change(old: str, new: str) -> str:
    o = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    n = next((ln.strip() for ln in new.splitlines() if ln.strip()), "")
    if not o and not n:
        return "edited"
    if not o:
        return f"added `{_clip(n, 60)}`"
    if not n:
        return f"removed `{_clip(o, 60)}`"
    if o == n:  # the first lines agree: show the first line that differs
        ol = [ln.strip() for ln in old.splitlines() if ln.strip()]
        nl = [ln.strip() for ln in new.splitlines() if ln.strip()]
        for a, b in zip(ol, nl, strict=False):
            if a != b:
                o, n = a, b
                break
        else:
            return f"added `{_clip(nl[len(ol)], 60)}`" if len(nl) > len(ol) else "edited"
    return f"`{_clip(o, 60)}` → `{_clip(n, 60)}`"


def _fix_paths(edits: list[_Edit], installs: list[_Run]) -> list[str]:
    paths = list(dict.fromkeys(e.path for e in edits))[-_MAX_FIX_STEPS:]
    return paths + [_clip(_display(r), 50) for r in installs[-2:]]


def _counts_text(c: Mapping[str, int]) -> str:
    order = ("passed", "failed", "errors", "skipped")
    parts = [f"{c[k]} {k}" for k in order if k in c and (c[k] or k in ("passed", "failed"))]
    # a runner that prints a total (unittest's "Ran 3 tests", Jest's "5 total") says it first
    total = c.get("total")
    ran = f"ran {total} test{'s' if total != 1 else ''}, " if total else ""
    return ran + ", ".join(parts)


def edit_texts(args: Mapping[str, Any]) -> tuple[Any, Any]:
    """An edit call's (old text, new text) arguments as given (None when absent): Claude
    Code's Edit (``old_string``/``new_string``), the str_replace editors (``old_str``/
    ``new_str``), Aider's search/replace blocks (``search``/``replace``), an insert's
    ``text``."""
    old = args.get("old_string", args.get("old_str", args.get("search")))
    new = args.get("new_string", args.get("new_str", args.get("replace", args.get("text"))))
    return old, new


def written_text(args: Mapping[str, Any]) -> tuple[str, str | None]:
    """The text an editing call puts in a file and the text it replaced: a created file's
    contents (replaced None: the whole file), an edit's new and old text (``edit_texts``; a
    list of ``edits``), or a patch's added lines (replaced ""); ``("", None)`` for a call
    that writes nothing this way (a shell's here-documents are ``heredoc_writes``')."""
    for key in ("content", "file_text", "contents"):
        value = args.get(key)
        if isinstance(value, str):
            return value, None
    old, new = edit_texts(args)
    if isinstance(new, str):
        return new, old if isinstance(old, str) else ""
    edits = args.get("edits")
    if isinstance(edits, list):
        got = [e for e in edits if isinstance(e, Mapping)]
        return (
            "\n".join(str(e.get("new_string", "")) for e in got),
            "\n".join(str(e.get("old_string", "")) for e in got),
        )
    for value in args.values():  # a patch: its added lines
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            return "\n".join(ln[1:] for ln in value.splitlines() if ln.startswith("+")), ""
    return "", None


def call_command(args: Mapping[str, Any]) -> str | None:
    """The shell command line a tool call runs (``command``/``cmd``/``script``), or None."""
    return _command_of(args)


def call_target(args: Mapping[str, Any]) -> str | None:
    """What a call acts on, for naming it: its command line, else its first path argument."""
    command = _command_of(args)
    if command is not None:
        return command
    return next((v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()), None)


def _patch_paths(text: str) -> list[str]:
    """The paths a patch's file headers name (``*** Update File: a.py``, ``+++ b/a.py``)."""
    return [(m.group(2) or m.group(3) or "").strip() for m in _PATCH_FILE.finditer(text)]


def written_paths(name: str, args: Mapping[str, Any]) -> list[str]:
    """The files a call writes: an editing call's path argument, a patch's file headers; a
    shell call's command line (redirections, ``tee``, ``sed -i``, ``perl -i``, ``touch``,
    ``mv``/``cp`` destinations; here-document bodies are contents, never commands). A file
    under /tmp is a file written and kept; a device (``/dev/null``) never is, nor an
    importer's note in a path argument (Aider's failed-edit header)."""
    command = _command_of(args)
    if _is_shell(name, command):
        if not command:
            return []
        if _SHELL_PATCH.match(command):
            return [p for p in dict.fromkeys(_patch_paths(command)) if p and p != "/dev/null"]
        return written_by_shell(command)
    if not _name_parts(name) & _EDIT_PARTS or args.get("command") == "view":
        return []
    out = [v.strip() for k in PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()]
    for value in args.values():  # a patch names its files in its headers
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            out += _patch_paths(value)
    # a value that is no path (a log's note or heading where a path goes) names no file
    return [
        p for i, p in enumerate(out) if _valid_path(p) and p != "/dev/null" and p not in out[:i]
    ]


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_EDIT_FAILED = prefiltered(_EDIT_FAILED)
_FORMAT_COMPLAINT = prefiltered(_FORMAT_COMPLAINT)
