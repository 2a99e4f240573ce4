"""What the session's key files hold: the outline a person resuming the work needs of a file
without opening it, read from the text the session itself wrote into the file (an edit's new
text, a created file's contents) or read out of it (a read call's output).

An outline is the file's own names, never its prose: the classes, functions (with a short
signature), routes and constants it defines, and the environment variables it reads with
their defaults (``CODEMIE_SESSION_SYNC_INTERVAL (default 300000)``), which are settings with
values. A manifest (``package.json``) gives its package, version and scripts instead: the
project's build, test and run commands; a lint, format or compiler config (``.eslintrc``,
``tsconfig.json``, ``pyproject.toml``'s ``[tool.*]``) its settings with their values; a
Markdown file the session wrote its headings (a short one's first sentence under each).
Of a written file also the values its edits set that it still holds: the lines an edit
added that set or test a value (``timeout: 30000``, ``var bonus = Math.random() <= 0.1 ? 10 :
1``), since a person resuming needs what a value was changed to, which the file's names never
say; a value a later edit took away is gone, and the values an edit changed (a name set
before, set anew) come first. A module-level name set to a number (``screen_width = 640``)
is a setting whatever its case.
``FileOutlines`` gathers them per path, bounded (names and values per file, files kept),
and ``lines()`` ranks them: written files before read ones, and names the session itself
keeps naming (in the assistant's text and its calls) first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..session.kernel import PATH_KEYS, READ_PROGRAMS, READ_TOOLS, call_command, command_parts

__all__ = [
    "FileOutlines",
    "branch_made",
    "changed_values",
    "config_settings",
    "doc_outline",
    "manifest_facts",
    "outline",
    "read_path",
    "root_configs",
    "runtime_versions",
    "search_hits",
]

_SIGNATURE = 48  # characters of a definition's parameters shown
_NAMES_KEPT = 64  # names gathered per file (the shown ones are chosen from these)
_FILES_KEPT = 256  # files gathered per session
_SEEN_KEPT = 20_000  # lines of a file remembered, to tell a rewrite's changed lines

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
# A module-level name set to a number, at the start of its line (``screen_width = 640``,
# ``const port = 3000;``): a setting of the program whatever the name's case.
_MODULE_NUMBER = re.compile(
    r"^(?:export\s+)?(?:(?:const|let|var)\s+)?([a-z_][A-Za-z0-9_]*)\s*(?::\s*[\w.]{1,20}\s*)?"
    r"=\s*(-?\d[\d_]*(?:\.\d+)?(?:e-?\d+)?)\s*;?\s*(?:(?:#|//).*)?$",
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
    if _CONFIG.search(path):
        return config_settings(text, path)
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
    for m in _MODULE_NUMBER.finditer(body):
        found.append((m.start(), m.group(1), f"{m.group(1)} = {m.group(2)}"))
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
        again = name in out and " = " in shown and " = " in out[name]
        if name not in out or again or len(shown) > len(out[name]):
            # a name seen again with more said keeps the fuller form; a value set again
            # (``rate = 0.8`` after ``rate = 0.5``) the later one, as the code reads it
            out[name] = shown
    return list(out.items())


def _under_module_branch(body: str, at: int) -> bool:
    """Whether the line at ``at`` sits in a module-level ``if``/``else``/``try`` block: the
    nearest line above it at column 0 opens one (not a ``def`` or ``class``)."""
    for line in reversed(body[:at].splitlines()):
        if line and not line[0].isspace():
            return bool(_MODULE_BRANCH.match(line))
    return False


# What an edit changed: the lines it added that set or test a value (``timeout: 30000``,
# ``var bonus = Math.random() <= 0.1 ? 10 : 1``, ``score += merged.value * bonus``). A person
# resuming needs what a value was changed to, which a file's names never say.
_CHANGED_KEPT = 6  # lines kept per file (the latest edit that changed a value)
_CHANGED_FIRST = 3  # of them shown before the file's names; the rest after, while room is left
_CHANGED_WIDTH = 64  # characters of each
_NOT_CODE = re.compile(  # a comment, an import, a file's preamble: no value
    r"^(?:#|//|/\*|\*|<!--|--|;|@|export \* |export \{[^}]*\} from|(?:import|from|require|use|"
    r"using|include|package)\b|#include)"
)
_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`[^`\n]*`")
_LITERAL = re.compile(
    r"(?<![\w$.])-?\d+(?:\.\d+)?(?:e-?\d+)?\b|\b(?:true|false|True|False|None|null|nil)\b|\"\""
)
# A name set (``=``, ``+=``, a key's ``:``) or tested (``<``, ``===``, ``?``): checked on the
# line with its strings blanked, so a ``:`` or ``=`` inside a message says nothing.
_SETS = re.compile(r"[\w$\])]\s*(?:[-+*/%|&^]?=(?![=>])|:(?!:))\s*\S")
_TESTS = re.compile(r"\s(?:===?|!==?|<=|>=|<|>|\?|&&|\|\|)\s")
_ARITH = re.compile(r"[\w$)\]]\s(?:[-+*/%]|\*\*)\s[\w$(]|[-+*/]=\s")
# A name set to a number, alone on its line: a setting (``retryAttempts: 3,``, ``BONUS = 10``).
_NUMBER_SET = re.compile(
    r"^(?:(?:export\s+)?(?:const|let|var|final|static|val|local)\s+)?"
    r"[\w$.\[\]'\"]+\s*(?:[-+*/]?=|:)\s*-?\d[\d_]*(?:\.\d+)?(?:e-?\d+)?\s*[,;]?$"
)


def _value_rank(line: str) -> int | None:
    """How surely a code line sets or tests a value: 0 a name set to a number, 1 a literal
    set or tested, 2 an operator on named values; None for no value (a comment, an import, a
    definition, braces, a call that only logs)."""
    if sum(ch.isalnum() for ch in line) < 3 or _NOT_CODE.match(line) or _DEF.match(line):
        return None
    if _NUMBER_SET.match(line):
        return 0
    bare = _STRING.sub('""', line)  # a message's words are no operators
    literal = _LITERAL.search(bare) is not None
    if literal and (_SETS.search(bare) or _TESTS.search(bare)):
        return 1
    if _ARITH.search(bare) or (_TESTS.search(bare) and _SETS.search(bare)):
        return 2
    return None


_TRAILING_COMMENT = re.compile(r"\s(?:#|//)(?:\s|$)")


def _uncommented(line: str) -> str:
    """A code line without its trailing comment (``ret = 0  # the seed``): a ``#`` or ``//``
    after code, outside a string."""
    masked = _STRING.sub(lambda m: "_" * len(m.group(0)), line)
    m = _TRAILING_COMMENT.search(masked)
    return line[: m.start()].rstrip() if m and m.start() > 0 else line


def _value_lines(added: Iterable[str], *, doc: bool = False) -> list[tuple[int, int, str, str]]:
    """Of an edit's added lines, those that set or test a value, as ``(rank, index, line,
    shown)``: ``line`` the added line as written (stripped), ``shown`` without its comment."""
    ranked: list[tuple[int, int, str, str]] = []
    for i, raw in enumerate(added):
        line = _uncommented(" ".join(raw.split()))
        rank = _value_rank(line)
        if rank is None or (doc and rank > 0):
            continue
        ranked.append((rank, i, raw.strip(), line.rstrip(",;") if len(line) > 1 else line))
    return ranked


def changed_values(added: Iterable[str], *, doc: bool = False) -> list[str]:
    """Of an edit's added lines, the few that set or test a value, surest first (a name set
    to a number, then a literal set or tested, then arithmetic on names), shown in the
    file's order, each clipped. Of a document only a name set to a number counts: its
    sentences carry numbers and colons that are no settings."""
    ranked = [(rank, i, shown) for rank, i, _, shown in _value_lines(added, doc=doc)]
    surest = sorted(ranked)[:_CHANGED_KEPT]
    # the surest few first (what an outline shows before the file's names), then the rest,
    # each part in the file's order
    chosen = [
        *sorted(surest[:_CHANGED_FIRST], key=lambda t: t[1]),
        *sorted(surest[_CHANGED_FIRST:], key=lambda t: t[1]),
    ]
    return [_clip(line, _CHANGED_WIDTH) for _, _, line in chosen]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


# A document's outline: its headings (outside code samples), and for a short document with
# few headings the first sentence under each.
_MARKDOWN = re.compile(r"\.(?:md|markdown|mdx)$", re.I)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_HEADINGS_WITH_SENTENCE = 6  # at most this many headings get their first sentence
_SHORT_DOC = 80  # lines
_SENTENCE = 60  # characters of a first sentence shown


def doc_outline(text: str) -> list[tuple[str, str]]:
    """A Markdown text's headings as ``(heading, shown)``, and for a short text with few
    headings the first sentence under each (``Install: Run npm ci first.``)."""
    lines = _unnumbered(text).splitlines()
    heads: list[tuple[int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            heads.append((i, " ".join(m.group(2).replace("*", "").split())))
    say = len(heads) <= _HEADINGS_WITH_SENTENCE and len(lines) <= _SHORT_DOC
    out: list[tuple[str, str]] = []
    for n, (i, head) in enumerate(heads):
        shown = _clip(head, _SENTENCE)
        if say:
            end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
            sentence = _first_sentence(lines[i + 1 : end])
            if sentence:
                shown += ": " + _clip(sentence, _SENTENCE)
        out.append((head, shown))
    return out


def _first_sentence(lines: list[str]) -> str:
    """The first sentence of a section's prose: code samples, tables and markup skipped."""
    words: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        got = line.strip().lstrip("-*>+ ").strip()
        if fenced or not got or got.startswith(("|", "<", "!", "[")):
            if words:
                break
            continue
        words.append(got)
        joined = " ".join(words)
        m = re.search(r"[.!?](?:\s|$)", joined)
        if m:
            return joined[: m.end()].strip()
    return " ".join(words)


# A lint, format or compiler configuration: its settings with their values are the rules the
# code is held to (``consistent-type-definitions: ["error", "type"]``, ``singleQuote: true``).
_CONFIG = re.compile(
    r"(?:^|/)(?:\.eslintrc(?:\.\w+)?|eslint\.config\.\w+|\.prettierrc(?:\.\w+)?|"
    r"prettier\.config\.\w+|\.stylelintrc(?:\.\w+)?|tsconfig[\w.-]*\.json|jsconfig\.json|"
    r"\.editorconfig|pyproject\.toml|setup\.cfg|tox\.ini|\.flake8|\.?ruff\.toml|mypy\.ini|"
    r"biome\.jsonc?|dprint\.jsonc?|\.oxlintrc\.json|\.rubocop\.yml|\.golangci\.ya?ml|"
    r"\.?rustfmt\.toml|\.clang-format)$"
)
_SETTING = re.compile(
    r"""^\s*(?:["']([@\w][\w@/.:-]*)["']|([@A-Za-z_][\w@/.-]*))\s*[:=]\s*"""
    r"""("[^"\n]*"|'[^'\n]*'|\[[^\[\]\n]{0,60}\]|-?\d[\w.]*|[\w.*-]+)\s*,?\s*(?:(?://|#).*)?$"""
)
_SECTION = re.compile(r"^\s*\[([^\]\n]+)\]\s*$")
_CONFIG_NOISE = frozenset({"name", "version", "description", "$schema", "root"})


def config_settings(text: str, path: str) -> list[tuple[str, str]]:
    """A lint/format/compiler config's settings, each as ``(name, "name: value")``: one per
    line that sets a name to a plain value (a string, number, boolean, short list). Of a
    ``pyproject.toml`` only its ``[tool.*]`` sections: the rest is packaging."""
    pyproject = path.endswith("pyproject.toml")
    section = ""
    out: dict[str, str] = {}
    for line in _unnumbered(text).splitlines():
        if (head := _SECTION.match(line)) is not None:
            section = head.group(1).strip()
            continue
        if pyproject and not section.startswith("tool."):
            continue
        m = _SETTING.match(line)
        if m is None:
            continue
        name = m.group(1) or m.group(2)
        if name in _CONFIG_NOISE or name in out:
            continue
        value = " ".join(m.group(3).split())
        out[name] = f"{name}: {_clip(value, 40)}"
    return list(out.items())


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
# The test runner's own version in the same header, as pytest prints it (``pytest-7.4.0``).
_PYTEST_HEADER = re.compile(
    r"^platform \S+ -- Python \d+\.\d+\.\d+\S*, (pytest-\d+\.\d+\.\d+)\b", re.M
)


def runtime_versions(text: str) -> list[tuple[str, str]]:
    """The runtime a command's output shows it ran on (``python_version``; pytest's header
    also its own version, ``test_runner = pytest-7.4.0``), as ``(key, value)``: where the
    work's tests really run, which the repo may not say."""
    head = text[:20_000]
    m = _PYTHON.search(head)
    out = [("python_version", m.group(1))] if m else []
    runner = _PYTEST_HEADER.search(head)
    if runner is not None:
        out.append(("test_runner", runner.group(1)))
    return out


# A file at a project's root that configures one of its tools (what builds, tests, lints,
# formats or packages it): ``vitest.config.ts``, ``tsconfig.json``, ``.eslintrc.json``,
# ``pyproject.toml``, ``tox.ini``, ``Cargo.toml`` …
_TOOL_CONFIG = re.compile(
    r"^(?:[\w-]+(?:\.[\w-]+)?\.config\.(?:js|cjs|mjs|ts|cts|mts|json)|tsconfig(?:\.[\w-]+)?\.json"
    r"|\.(?:eslintrc|prettierrc|babelrc|stylelintrc|swcrc)(?:\.\w+)?|\.pre-commit-config\.ya?ml"
    r"|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|noxfile\.py|Cargo\.toml|go\.mod"
    r"|pom\.xml|build\.gradle(?:\.kts)?|Gemfile|Makefile|justfile|Taskfile\.ya?ml|Dockerfile"
    r"|docker-compose\.ya?ml|compose\.ya?ml|deno\.jsonc?|biome\.jsonc?|dprint\.json"
    r"|turbo\.json|nx\.json|lerna\.json|pnpm-workspace\.yaml)$"
)
_CONFIGS_SHOWN = 10


def root_configs(command: str, text: str) -> list[str]:
    """The tool configuration files (``_TOOL_CONFIG``) a listing of the working directory
    shows (``ls``, ``ls -la``: no path, or ``.``), in the listing's order: how the project
    is built, tested, linted and formatted, which the first look at a repository tells and
    a person resuming the work would otherwise list again."""
    ps = command_parts(command)
    if len(ps) != 1 or ps[0].program != "ls" or any(o not in (".", "./") for o in ps[0].operands):
        return []
    out = text.strip()
    if out.startswith("{") and '"output"' in out[:40]:  # Codex's shell: JSON around the output
        try:
            data = json.loads(out)
        except ValueError:
            data = None
        got = data.get("output") if isinstance(data, Mapping) else None
        out = got if isinstance(got, str) else ""
    found: list[str] = []
    for line in out[:20_000].splitlines():
        words = line.split()
        for name in words[-1:] if line.startswith(("-", "l", "d", "total")) else words:
            if _TOOL_CONFIG.match(name) and name not in found:
                found.append(name)
    return found[:_CONFIGS_SHOWN]


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


@dataclass(frozen=True)
class _Held:
    """A value an edit set that the file still holds, as far as the session saw."""

    line: str  # the added line, stripped
    shown: str  # as shown (no comment, clipped)
    rank: int  # how surely it sets a value (``_value_rank``)
    edit: int  # which write of the file set it (later is larger)
    changed: bool  # it replaced a line that set the same name (``timeout: 300`` -> ``60``)


_HELD_KEPT = 24  # values kept per file


def _target(line: str) -> str:
    """What a value line sets: the name before its ``=`` or ``:`` (``self.dx`` of ``self.dx
    = 2``), declarations left out; empty for a test (``if n <= 0:``)."""
    bare = _STRING.sub('""', line.strip())
    m = _SETS.search(bare)
    if m is None:
        return ""
    name = bare[: m.start() + 1].strip()
    return re.sub(r"^(?:export\s+)?(?:const|let|var|final|static|val|local)\s+", "", name)


@dataclass
class _File:
    path: str
    first: int  # the seq it was first seen at
    written: int = 0  # how many times the session wrote it
    read: int = 0  # how many times it read it
    names: dict[str, str] = field(default_factory=dict)  # name -> shown form
    seqs: list[int] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # its lines the session has seen
    held: list[_Held] = field(default_factory=list)  # the values its edits set, still held
    edits: int = 0  # the writes that changed it


class FileOutlines:
    """The outlines of the files a session wrote and read, gathered call by call."""

    def __init__(self) -> None:
        self.files: dict[str, _File] = {}
        self.named: Counter[str] = Counter()  # identifiers the session itself names

    def said(self, text: str) -> None:
        """The assistant's text or a call's arguments: the names it mentions count."""
        self.named.update(set(re.findall(r"[A-Za-z_$][\w$]{2,}|/[\w<>:/-]+", text[:20_000])))

    def add(
        self, path: str, text: str, seq: int, *, written: bool, replaced: str | None = None
    ) -> None:
        """A file's text as a call wrote it (``written``; ``replaced``: the text an edit
        replaced, None for a whole file) or read it."""
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
        body = text[:200_000]
        if written:
            self._changed(got, text, replaced)
        doc = _MARKDOWN.search(path) is not None
        names = outline(body, path) + (doc_outline(body) if written and doc else [])
        for name, shown in names:
            if name in got.names or len(got.names) < _NAMES_KEPT:
                old = got.names.get(name)
                # a name seen again with more said keeps the fuller form; a value a write
                # sets anew (``LIMIT = 20``) replaces the one it had
                newer = written and " = " in shown and old is not None and " = " in old
                got.names[name] = shown if old is None or newer or len(shown) > len(old) else old
        if len(got.seen) < _SEEN_KEPT:
            got.seen.update(ln.strip() for ln in _unnumbered(body).splitlines())

    def _changed(self, got: _File, text: str, replaced: str | None) -> None:
        """The values a write set (``_File.held``): an edit's added lines (its new text less
        its old), a rewrite's lines the session had not seen in the file; a file's first
        write is its creation, no change."""
        if replaced is not None:
            had = {ln.strip() for ln in replaced.splitlines()}
        elif got.seen:
            had = got.seen
        else:
            return
        lines = text[:200_000].splitlines()
        added = [ln for ln in lines if ln.strip() not in had]
        fresh = _value_lines(added, doc=_DOC.search(got.path) is not None)
        # what the file still holds: a value whose line this write took away is gone (an
        # edit's replaced text, or a rewrite's whole file), and the values it added join,
        # marked changed when the write took away a line that set the same name
        now = {ln.strip() for ln in lines}
        new = {line for _, _, line, _ in fresh}
        got.held = [
            h for h in got.held if (h.line in now or h.line not in had) and h.line not in new
        ]
        got.edits += 1
        took = had - now
        for rank, _, line, shown in fresh[-_HELD_KEPT:]:  # the ones kept
            name = _target(line)
            changed = bool(name) and any(name in ln and _target(ln) == name for ln in took)
            got.held.append(_Held(line, _clip(shown, _CHANGED_WIDTH), rank, got.edits, changed))
        del got.held[: max(len(got.held) - _HELD_KEPT, 0)]

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
            if not f.names and not f.held:
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
            # an edit that set a constant the outline shows (``MAX = 280``) says it once
            consts = [v for v in f.names.values() if " = " in v]
            fresh = [
                (i, c) for i, c in enumerate(_held(f)) if not any(c.endswith(v) for v in consts)
            ]
            # the surest values first, then the names, then more values while room is left
            first = [c for i, c in fresh if i < _CHANGED_FIRST]
            more = [c for i, c in fresh if i >= _CHANGED_FIRST]
            changed = _changed_tail(shown_path, first, width)
            line = shown_path + ":"
            for _, shown in order:
                if shown in shown_known:
                    continue
                piece = f" {shown};"
                if len(line) + len(piece) + len(changed) > width:
                    break
                line += piece
            for v in more:
                piece = f"; `{v}`" if changed else f" — edited `{v}`"
                if len(line.rstrip(":;")) + len(changed) + len(piece) > width:
                    break
                changed += piece
            if line.endswith(";") or changed:
                out.append(
                    (
                        f.path,
                        line.rstrip(":;") + changed,
                        tuple(f.seqs[:1] + f.seqs[-1:]) if len(f.seqs) > 1 else tuple(f.seqs),
                    )
                )
        return out


def _held(f: _File) -> list[str]:
    """The values a file's edits set that it still holds, as shown: the values an edit
    changed (a name set before, set anew) first, then by how surely a line sets a value,
    the latest edit first."""
    order = sorted(f.held, key=lambda h: (not h.changed, h.rank, -h.edit))
    out: list[str] = []
    for h in order:
        if h.shown not in out:
            out.append(h.shown)
    return out


def _changed_tail(path: str, values: list[str], width: int) -> str:
    """What a file's latest edit set, shown after its names: `` — edited `timeout: 30000`;
    `retryAttempts: 3``` (as many as the line's width leaves room for)."""
    tail = ""
    for v in values:
        piece = (" — edited " if not tail else "; ") + f"`{v}`"
        if len(path) + len(tail) + len(piece) + 1 > width:
            break
        tail += piece
    return tail
