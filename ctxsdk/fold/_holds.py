"""What the session's key files hold: the outline a person resuming the work needs of a file
without opening it, read from the text the session itself wrote into the file (an edit's new
text, a created file's contents) or read out of it (a read call's output).

An outline is the file's own names, never its prose: the classes, functions (with a short
signature), routes and constants it defines, and the environment variables it reads with
their defaults (``CODEMIE_SESSION_SYNC_INTERVAL (default 300000)``), which are settings with
values. A manifest (``package.json``) gives its package, version and scripts instead: the
project's build, test and run commands. ``FileOutlines`` gathers them per path, bounded
(names per file, files kept), and ``lines()`` ranks them: written files before read ones,
and names the session itself keeps naming (in the assistant's text and its calls) first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..session import (
    PATH_KEYS,
    READ_PROGRAMS,
    READ_TOOLS,
    call_command,
    command_parts,
    edit_texts,
)

__all__ = [
    "FileOutlines",
    "branch_made",
    "heredoc_writes",
    "manifest_facts",
    "outline",
    "read_path",
    "runtime_versions",
    "search_hits",
    "written_text",
]

_SIGNATURE = 48  # characters of a definition's parameters shown
_NAMES_KEPT = 64  # names gathered per file (the shown ones are chosen from these)
_FILES_KEPT = 256  # files gathered per session

# A definition: a keyword, then the name (and its parameters when on the same line).
_DEF = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:public\s+|private\s+|protected\s+)?(?:static\s+)?"
    r"(?:abstract\s+)?(?:async\s+)?(?:pub(?:\([\w:]+\))?\s+)?"
    r"(class|def|function\*?|func|fn|interface|type|struct|enum|trait)\s+"
    r"([A-Za-z_$][\w$]*)(\([^)\n]*\))?",
    re.M,
)
# A constant: an upper-case name given a short literal value.
_CONST = re.compile(
    r"^[ \t]*(?:export\s+)?(?:const\s+|let\s+|var\s+|static\s+|final\s+)?"
    r"([A-Z][A-Z0-9_]{2,})\s*(?::[^=\n]{0,40})?=\s*([^\n;{(\[]{1,40}?)\s*;?\s*$",
    re.M,
)
# A module-level alias in Python (``builtin_str = str``): a name bound to another name.
# (Indented once under a module-level ``if``/``else``/``try``: ``if is_py2:`` …)
_ALIAS = re.compile(r"^( {4}|\t)?([a-z_][a-z0-9_]*)\s*=\s*([A-Za-z_][\w.]{0,30})\s*$", re.M)
_MODULE_BRANCH = re.compile(r"^(?:if|elif|else|try|except)\b")
# A host the code talks to: a quoted URL or dotted host name (``remote("ctf.example.io", 42)``).
# (A dotted name ends on a top-level domain: ``"django.db.models"`` is a module, no host.)
_ENDPOINT = re.compile(
    r"""['"]((?:https?|wss?)://[^'"\s]{3,80}|(?:[a-z0-9-]+\.)+"""
    r"""(?:com|org|net|io|dev|ai|app|co|edu|gov|cloud|local|internal|xyz|me|us|uk|de|ru|cn))['"]"""
)
# An environment variable read in code, with the default that follows it when one does.
_ENV_READ = re.compile(
    r"(?:process\.env\.|process\.env\[['\"]|os\.environ\.get\(\s*['\"]|os\.environ\[['\"]|"
    r"os\.getenv\(\s*['\"]|getenv\(\s*['\"]|env::var\(\s*\"|System\.getenv\(\s*\")"
    r"([A-Z][A-Z0-9_]{2,})['\"]?\]?\)?"
    r"(?:\s*(?:\|\||\?\?|,)\s*['\"]?([\w.:/-]{1,30})['\"]?)?"
)
# An environment variable set on its own line (a .env file, a shell block in a doc).
_ENV_SET = re.compile(
    r"^[ \t]*(?:export\s+)?([A-Z][A-Z0-9]*_[A-Z0-9_]{2,})=([^\s#'\"]{1,40})", re.M
)
# A web route (Flask/FastAPI decorators, Express handlers).
_ROUTE = re.compile(
    r"(?:@\w+\.(?:route|get|post|put|delete|patch)|\b(?:app|router)\.(?:get|post|put|delete|"
    r"patch|route|use))\(\s*['\"](/[^'\"\s]{0,80})['\"]"
)
_DOC = re.compile(r"\.(?:md|markdown|rst|txt|adoc|org)$", re.I)
_LINE_NUMBER = re.compile(r"^\s*\d+(?:→|\t|: |:|\|)", re.M)  # a reader's line numbers
_MANIFESTS = frozenset({"package.json"})
# Scripts a manifest lists, the ones that say how to build, test, run or check it first.
_KEY_SCRIPTS = (
    "build",
    "test",
    "ci",
    "lint",
    "start",
    "dev",
    "check",
    "typecheck",
    "format",
    "test:unit",
    "test:integration",
    "test:e2e",
)
_SCRIPTS_SHOWN = 6
# npm's banner before a script's output: ``> @scope/pkg@1.2.3 build`` then ``> tsc && …``.
_NPM_BANNER = re.compile(r"^> (@?[\w./-]+)@(\d[\w.+-]*) [\w:.-]+\n> .+$", re.M)


def _unnumbered(text: str) -> str:
    """A read's output without the reader's line numbers (``  12→code``, ``12: code``)."""
    lines = text.splitlines()
    numbered = sum(1 for ln in lines if _LINE_NUMBER.match(ln))
    if lines and numbered * 2 >= len(lines):
        return "\n".join(_LINE_NUMBER.sub("", ln, count=1) for ln in lines)
    return text


def _signature(params: str | None) -> str:
    if not params:
        return ""
    inner = " ".join(params.split())
    return inner if len(inner) <= _SIGNATURE else ""


def outline(text: str, path: str = "") -> list[tuple[str, str]]:
    """The names a file's text defines or reads, in order, each as ``(name, shown)``: a
    definition with its short signature (``to_native_string(string, encoding='ascii')``), a
    constant or alias with its value (``builtin_str = str``), a route, an environment variable
    with its default (``APP_TIMEOUT (default 300000)``). Never prose. A document's code
    samples are examples, not its contents: of a doc only the variables it sets count."""
    body = _unnumbered(text)
    found: list[tuple[int, str, str]] = []
    for m in _ENV_SET.finditer(body):
        found.append((m.start(), m.group(1), f"${m.group(1)}={m.group(2)}"))
    if _DOC.search(path):
        return [(name, shown) for _, name, shown in found]
    for m in _DEF.finditer(body):
        kind, name, params = m.group(1), m.group(2), m.group(3)
        shown = (
            f"{kind} {name}"
            if kind in ("class", "interface", "struct", "enum", "trait")
            else (name + _signature(params))
        )
        found.append((m.start(), name, shown))
    for m in _CONST.finditer(body):
        found.append((m.start(), m.group(1), f"{m.group(1)} = {m.group(2).strip()}"))
    for m in _ALIAS.finditer(body):
        name, value = m.group(2), m.group(3)
        if name != value and (not m.group(1) or _under_module_branch(body, m.start())):
            found.append((m.start(), name, f"{name} = {value}"))
    for m in _ENDPOINT.finditer(body):
        found.append((m.start(), m.group(1), m.group(1)))
    for m in _ROUTE.finditer(body):
        found.append((m.start(), m.group(1), f"route {m.group(1)}"))
    for m in _ENV_READ.finditer(body):
        default = m.group(2)
        shown = f"${m.group(1)}" + (f" (default {default})" if default else "")
        found.append((m.start(), m.group(1), shown))
    out: dict[str, str] = {}
    for _, name, shown in sorted(found, key=lambda t: t[0]):
        if name.startswith("__"):
            continue  # __init__, __call__: every class has them, they say nothing of this one
        if name not in out or len(shown) > len(out[name]):
            out[name] = shown  # a name seen again with more said keeps the fuller form
    return list(out.items())


def _under_module_branch(body: str, at: int) -> bool:
    """Whether the line at ``at`` sits in a module-level ``if``/``else``/``try`` block: the
    nearest line above it at column 0 opens one (not a ``def`` or ``class``)."""
    for line in reversed(body[:at].splitlines()):
        if line and not line[0].isspace():
            return bool(_MODULE_BRANCH.match(line))
    return False


def manifest_facts(path: str, text: str) -> list[tuple[str, str]]:
    """A package manifest's project facts as ``(key, value)``: ``package`` (name and
    version) and ``script <name>`` (what ``npm run <name>`` runs), key scripts first. Also
    npm's banner in a script's output (``> pkg@1.2.3 build`` / ``> tsc``)."""
    out: list[tuple[str, str]] = []
    for m in _NPM_BANNER.finditer(text):  # its command line may carry a run's own options
        out.append(("package", f"{m.group(1)} {m.group(2)}"))
    if path.rsplit("/", 1)[-1] not in _MANIFESTS:
        return out
    body = _unnumbered(text)
    data: Any = None
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        name, version, scripts = data.get("name"), data.get("version"), data.get("scripts")
    else:  # a partial read: the fields it shows
        got = {k: re.search(rf'^\s*"{k}"\s*:\s*"([^"]+)"', body, re.M) for k in ("name", "version")}
        name = got["name"].group(1) if got["name"] else None
        version = got["version"].group(1) if got["version"] else None
        block = re.search(r'"scripts"\s*:\s*\{(.*?)\}', body, re.S)
        scripts = (
            dict(re.findall(r'"([^"]+)"\s*:\s*"((?:[^"\\]|\\.)*)"', block.group(1)))
            if block
            else None
        )
    if isinstance(name, str) and name:
        out.append(("package", f"{name} {version}" if isinstance(version, str) else name))
    if isinstance(scripts, Mapping):
        keys = [k for k in _KEY_SCRIPTS if isinstance(scripts.get(k), str)]
        for k in keys[:_SCRIPTS_SHOWN]:
            out.append((f"script {k}", " ".join(str(scripts[k]).split())))
    return out


# ``cat <<'EOF' > path`` … ``EOF``: the body a shell command writes into a file.
_HEREDOC = re.compile(
    r"<<-?\s*(['\"]?)(\w+)\1[^\n]*?>\s*(\S+)[^\n]*\n(.*?)\n\2\s*(?:\n|$)"
    r"|>\s*(\S+)\s*<<-?\s*(['\"]?)(\w+)\6[^\n]*\n(.*?)\n\7\s*(?:\n|$)",
    re.S,
)


def heredoc_writes(command: str) -> list[tuple[str, str]]:
    """The files a shell command writes from a here-document, with the text written:
    ``cat <<'EOF' > test_fix.py`` (or ``cat > f <<EOF``) and its body."""
    out: list[tuple[str, str]] = []
    for m in _HEREDOC.finditer(command):
        path, text = (m.group(3), m.group(4)) if m.group(3) else (m.group(5), m.group(8))
        out.append((path.strip("'\""), text))
    return out


def branch_made(command: str) -> str | None:
    """The git branch a command creates and switches to (``git checkout -b B``, ``git
    switch -c B``): the branch the work goes on."""
    for p in command_parts(command):
        if p.program != "git" or p.sub not in ("checkout", "switch"):
            continue
        args = list(p.args)
        for flag in ("-b", "-B", "-c", "-C"):
            if flag in args and args.index(flag) + 1 < len(args):
                return args[args.index(flag) + 1]
    return None


# The interpreter a command ran on, as it printed it: pytest's header (``platform linux --
# Python 3.9.20, pytest-7.4.0``), ``python --version``, a script printing ``sys.version``.
_PYTHON = re.compile(r"\bPython(?: version)?:? (\d+\.\d+\.\d+)\b")


def runtime_versions(text: str) -> list[tuple[str, str]]:
    """The runtime a command's output shows it ran on (``python_version``), as
    ``(key, value)``: where the work's tests really run, which the repo may not say."""
    m = _PYTHON.search(text[:20_000])
    return [("python_version", m.group(1))] if m else []


_SEARCHERS = frozenset({"grep", "rg", "ag", "ack", "egrep", "fgrep"})
# A search's hit: ``path:line:text`` (grep -n, rg), a reader's path then its line number.
_HIT = re.compile(r"^(?:\./)?([\w./@+-]+\.\w+):(\d+)[:-](.*)$", re.M)


def search_hits(command: str, text: str) -> dict[str, str]:
    """The lines a code search printed, by the file they are in (``grep -n``, ``rg``, ``git
    grep``): where a name the session looked for is defined is what the file holds."""
    ps = command_parts(command)
    if not any(p.program in _SEARCHERS or (p.program == "git" and p.sub == "grep") for p in ps):
        return {}
    out: dict[str, list[str]] = {}
    for m in _HIT.finditer(text[:200_000]):
        out.setdefault(m.group(1), []).append(m.group(3))
    return {path: "\n".join(lines) for path, lines in out.items()}


def read_path(name: str, args: Mapping[str, Any]) -> str | None:
    """The one file a call reads whole or in part: a read tool's path argument (an editor's
    ``view``), or a shell command that only prints one file (``cat``, ``sed -n``, ``head``)."""
    low = name.lower()
    if low in READ_TOOLS or (args.get("command") == "view" and call_command(args) is None):
        target = next(
            (v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v.strip()), None
        )
        return target.strip() if target else None
    command = call_command(args)
    if command is None:
        return None
    ps = command_parts(command)
    reads = [p for p in ps if p.program in READ_PROGRAMS]
    if len(reads) != 1 or any(p.purpose != "read" and p.program != "cd" for p in ps):
        return None
    files = [o for o in reads[0].operands if "." in o.rsplit("/", 1)[-1] and " " not in o]
    files = [
        o for o in files if not o.startswith(("-", "s/")) and not re.fullmatch(r"[\d,.p$]+", o)
    ]
    return files[0] if len(files) == 1 else None


def written_text(args: Mapping[str, Any]) -> str:
    """The text an editing call puts in a file: a created file's contents, an edit's new
    text, a patch's added lines."""
    for key in ("content", "file_text", "contents"):
        value = args.get(key)
        if isinstance(value, str):
            return value
    _, new = edit_texts(args)
    if isinstance(new, str):
        return new
    edits = args.get("edits")
    if isinstance(edits, list):
        return "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, Mapping))
    for value in args.values():  # a patch: its added lines
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            return "\n".join(ln[1:] for ln in value.splitlines() if ln.startswith("+"))
    return ""


_SOURCE_DIRS = frozenset("src lib app pkg packages source tests test".split())


def _root(paths: Iterable[str]) -> str:
    """The working root the absolute paths share (``/Users/me/repo/``), left out when
    shown: ``src/x.ts`` says what ``/Users/me/repo/src/x.ts`` says. Shared by most of them
    (a file under ``~/.config`` aside), and never a source folder (``src/`` stays shown)."""
    absolute = [p for p in paths if p.startswith("/")]
    if len(absolute) < 2:
        return ""
    counts: Counter[str] = Counter()
    for p in absolute:
        parts = p.split("/")[1:-1]
        for i in range(2, len(parts) + 1):
            counts["/" + "/".join(parts[:i]) + "/"] += 1
    shared = [r for r, n in counts.items() if n * 5 >= len(absolute) * 4]
    root = max(shared, key=len) if shared else ""
    while root and root.rstrip("/").rsplit("/", 1)[-1] in _SOURCE_DIRS:
        root = root.rstrip("/").rsplit("/", 1)[0] + "/"
    return root if root.count("/") >= 3 else ""


@dataclass
class _File:
    path: str
    first: int  # the seq it was first seen at
    written: int = 0  # how many times the session wrote it
    read: int = 0  # how many times it read it
    names: dict[str, str] = field(default_factory=dict)  # name -> shown form
    seqs: list[int] = field(default_factory=list)


class FileOutlines:
    """The outlines of the files a session wrote and read, gathered call by call."""

    def __init__(self) -> None:
        self.files: dict[str, _File] = {}
        self.named: Counter[str] = Counter()  # identifiers the session itself names

    def said(self, text: str) -> None:
        """The assistant's text or a call's arguments: the names it mentions count."""
        self.named.update(set(re.findall(r"[A-Za-z_$][\w$]{2,}|/[\w<>:/-]+", text[:20_000])))

    def add(self, path: str, text: str, seq: int, *, written: bool) -> None:
        got = self.files.get(path)
        if got is None:
            if len(self.files) >= _FILES_KEPT:
                return
            got = self.files[path] = _File(path, seq)
        if written:
            got.written += 1
        else:
            got.read += 1
        if seq not in got.seqs:
            got.seqs.append(seq)
        for name, shown in outline(text[:200_000], path):
            if name in got.names or len(got.names) < _NAMES_KEPT:
                old = got.names.get(name)
                got.names[name] = shown if old is None or len(shown) > len(old) else old

    def _score(self, name: str) -> int:
        return self.named.get(name, 0)

    def lines(
        self, keep: int, width: int, known: Iterable[str] = ()
    ) -> list[tuple[str, str, tuple[int, ...]]]:
        """Up to ``keep`` files as ``(path, line, seqs)``: written files first (most written
        first), then files read more than once or whose names the session keeps naming; each
        line the path and the names that matter most, cut to ``width``."""
        shown_known = set(known)
        ranked: list[tuple[tuple[int, int, int], _File]] = []
        for f in self.files.values():
            if not f.names:
                continue
            mentioned = sum(1 for n in f.names if self._score(n) > 0)
            if not f.written and f.read < 2 and mentioned == 0:
                continue
            ranked.append(((0 if f.written else 1, -(f.written + mentioned), f.first), f))
        out: list[tuple[str, str, tuple[int, ...]]] = []
        chosen = [f for _, f in sorted(ranked, key=lambda t: t[0])[:keep]]
        root = _root([f.path for f in self.files.values()])
        for f in chosen:
            order = list(f.names.items())
            # names the session names first (most named first), then the file's order
            order.sort(key=lambda kv: -min(self._score(kv[0]), 3))
            shown_path = f.path[len(root) :] if root and f.path.startswith(root) else f.path
            line = shown_path + ":"
            for _, shown in order:
                if shown in shown_known:
                    continue
                piece = f" {shown};"
                if len(line) + len(piece) > width:
                    break
                line += piece
            if line.endswith(";"):
                out.append(
                    (
                        f.path,
                        line[:-1],
                        tuple(f.seqs[:1] + f.seqs[-1:]) if len(f.seqs) > 1 else tuple(f.seqs),
                    )
                )
        return out
