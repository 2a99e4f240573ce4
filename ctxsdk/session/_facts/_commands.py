"""Shell commands read as a teammate would: which programs a command line runs, what each part
is for (test, build, run, install, lint; or only reading), and the short form worth writing
down (``pytest tests/test_x.py -q`` is the test command ``pytest``; ``npm run build`` stays
``npm run build``).

Pure string work, no shell is run. ``parts`` splits a command line at ``&&``, ``||``, ``;``,
``|`` and new lines (quotes respected, here-document bodies dropped: they are file contents,
not commands); each ``CommandPart`` knows its launcher (``python -m``, ``uv run``, ``npx`` ...), its
program, its subcommand, its operands and the files it writes. ``covers`` says whether one
command line re-runs what another ran, or more; ``written_by_shell`` which files a line
writes (redirections, ``tee``, ``sed -i``, ``perl -i``, ``touch``, ``mv``/``cp``), as an edit
tool's path argument would say.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Literal

from .._redact import memo_of
from ._writers import program_writes

__all__ = [
    "CommandPart",
    "Purpose",
    "covers",
    "heredoc_bodies",
    "heredoc_writes",
    "is_scratch",
    "package_managers",
    "parts",
    "sed_args",
    "shell_writes",
    "written_by_shell",
]

Purpose = Literal["test", "build", "run", "install", "lint", "read", "write", "other"]

# A here-document: its opener (``<<'EOF'``, ``<<-EOF``, ``<<\\EOF``, never ``<<<``), the rest
# of the opener's line, its body, its closing line.
_HEREDOC_OPEN = r"(?<!<)<<(?!<)-?[ \t]*\\?(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1"
_HEREDOC = re.compile(_HEREDOC_OPEN + r"([^\n]*)\n(?:(.*?)\n)??[ \t]*\2[ \t]*(?=\n|$)", re.S)
_HEREDOC_UNCLOSED = re.compile(_HEREDOC_OPEN)
# Quoted or escaped ``<``/``>`` stand in as these while a line is split: never a redirection.
_MASK = str.maketrans("<>", "\ue000\ue001")
_UNMASK = str.maketrans("\ue000\ue001", "<>")
_REDIRECT_OP = re.compile(r">>|>\||>&|>|<<<|<<|<>|<&|<")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Words that only wrap the real program.
_WRAPPERS = frozenset(
    "sudo env time timeout nohup exec command builtin stdbuf nice xvfb-run".split()
)
_PYTHONS = re.compile(r"^(?:.*/)?(?:python|python3|python3\.\d+|py|pypy3?)$")
# Launchers: (launcher, words that may follow it before the program).
_LAUNCH_WORDS = {
    "uv": ("run",),
    "poetry": ("run",),
    "pipenv": ("run",),
    "pdm": ("run",),
    "hatch": ("run",),
    "rye": ("run",),
    "conda": ("run",),
    "npx": (),
    "pnpx": (),
    "bunx": (),
}
_READ_PROGRAMS = frozenset(
    """ls cd pwd cat less more head tail grep egrep fgrep rg ag ack find fd tree wc echo printf
    which whereis type file stat du df sort uniq cut tr awk jq yq diff cmp realpath dirname
    basename date whoami id uname env printenv history clear true false sleep nl column xxd od
    hexdump strings readlink test [ git-log lsof ps top kill pkill open code curl wget ping
    source . export set unset alias read wait jobs fg bg pushd popd""".split()
)
_WRITE_PROGRAMS = frozenset(
    "mkdir touch rm rmdir mv cp ln chmod chown tee patch truncate install sponge".split()
)
# Words that open a compound command: what follows is a simple command (``then sed -i …``).
_KEYWORDS = frozenset("if then elif else while until do ! {".split())
_GIT_READ = frozenset(
    "status diff log show blame branch remote rev-parse ls-files grep describe shortlog".split()
)
_TEST_PROGRAMS = frozenset(
    """pytest py.test tox nox vitest jest mocha ava jasmine karma playwright cypress rspec
    phpunit ctest prove minitest gotestsum nextest unittest""".split()
)
_LINT_PROGRAMS = frozenset(
    """ruff flake8 pylint mypy pyright black isort eslint prettier tslint stylelint biome
    golangci-lint staticcheck shellcheck rubocop clang-tidy clang-format hadolint markdownlint
    pyflakes pycodestyle pydocstyle bandit vulture codespell""".split()
)
_BUILD_PROGRAMS = frozenset("tsc webpack vite rollup esbuild parcel cmake ninja bazel".split())
_RUN_PROGRAMS = frozenset("uvicorn gunicorn flask streamlit hypercorn daphne nodemon".split())
_INSTALL_PROGRAMS = frozenset("apt apt-get brew apk dnf yum pacman".split())
# Package managers: subcommand -> purpose.
_NODE_PM = frozenset("npm pnpm yarn bun".split())
_NODE_SUB: dict[str, Purpose] = {
    "install": "install",
    "i": "install",
    "ci": "install",
    "add": "install",
    "test": "test",
    "t": "test",
    "start": "run",
    "build": "build",
}
_SCRIPT_PURPOSE = (
    (re.compile(r"^(?:test|tests|e2e|spec|coverage|cover)(?:[:_-].*)?$"), "test"),
    (re.compile(r"^(?:build|compile|bundle|package|dist)(?:[:_-].*)?$"), "build"),
    (
        re.compile(
            r"^(?:lint|typecheck|type-check|types|check|format|fmt|prettier|eslint)(?:[:_-].*)?$"
        ),
        "lint",
    ),
    (re.compile(r"^(?:dev|start|serve|preview|watch)(?:[:_-].*)?$"), "run"),
)
_CARGO_SUB: dict[str, Purpose] = {
    "test": "test",
    "nextest": "test",
    "build": "build",
    "check": "lint",
    "clippy": "lint",
    "fmt": "lint",
    "run": "run",
    "add": "install",
    "install": "install",
    "fetch": "install",
}
_GO_SUB: dict[str, Purpose] = {
    "test": "test",
    "build": "build",
    "vet": "lint",
    "run": "run",
    "get": "install",
    "install": "install",
    "mod": "install",
}
_PY_PM_SUB: dict[str, Purpose] = {
    "install": "install",
    "add": "install",
    "sync": "install",
    "lock": "install",
    "build": "build",
}
_MAKE_TARGETS: dict[str, Purpose] = {
    "test": "test",
    "tests": "test",
    "check": "test",
    "unittest": "test",
    "lint": "lint",
    "format": "lint",
    "fmt": "lint",
    "typecheck": "lint",
    "mypy": "lint",
    "install": "install",
    "deps": "install",
    "build": "build",
    "all": "build",
    "dist": "build",
    "run": "run",
    "serve": "run",
    "dev": "run",
    "start": "run",
}
_JVM_SUB: dict[str, Purpose] = {
    "test": "test",
    "verify": "test",
    "check": "test",
    "build": "build",
    "package": "build",
    "compile": "build",
    "assemble": "build",
    "install": "install",
    "run": "run",
    "bootrun": "run",
}
# Build tools whose first word is the task: mix (Elixir), dotnet.
_TASK_SUB: dict[str, dict[str, Purpose]] = {
    "mix": {
        "test": "test",
        "compile": "build",
        "deps.get": "install",
        "deps.compile": "install",
        "format": "lint",
        "credo": "lint",
        "dialyzer": "lint",
        "phx.server": "run",
        "run": "run",
        "release": "build",
    },
    "dotnet": {
        "test": "test",
        "build": "build",
        "run": "run",
        "restore": "install",
        "add": "install",
    },
}
_SCRATCH_NAME = re.compile(
    r"(?:^|[/_\-.])(?:reproduce|repro|debug|scratch|sandbox|tmp|temp|verify|demo|try|check|"
    r"quick|simple|minimal|test_fix|test_issue|test_reproduce|test_bug|test_edge|test_my)",
    re.I,
)


_SCRATCH_DIR = re.compile(r"(?:^|/)(?:repro\w*|reproduc\w*|scratch\w*|tmp|temp|debug\w*)/", re.I)


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, posix=True)
    except ValueError:  # an unbalanced quote: fall back on plain words
        return segment.split()


def _split(command: str) -> list[str]:
    """The simple commands of a command line, quotes respected; here-document bodies dropped.
    A ``<`` or ``>`` inside quotes or after a backslash comes back masked (``_UNMASK``)."""
    command = _drop_heredocs(command)
    out: list[str] = []
    buf: list[str] = []
    quote = ""
    i, n = 0, len(command)
    while i < n:
        ch = command[i]
        if quote:
            buf.append(ch.translate(_MASK))
            if ch == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                buf.append(ch)
                buf.append(command[i + 1].translate(_MASK))
            i += 1
        elif ch in ";\n|&" or ch in "()":
            redirect = (
                ch == "&"
                and ((i + 1 < n and command[i + 1] == ">") or (i > 0 and command[i - 1] in "<>"))
            ) or (ch == "|" and i > 0 and command[i - 1] == ">")
            if redirect:  # &> file, 2>&1, >| file
                buf.append(ch)
            else:
                out.append("".join(buf))
                buf = []
        else:
            buf.append(ch)
        i += 1
    out.append("".join(buf))
    return [p.strip() for p in out if p.strip()]


def _drop_heredocs(command: str) -> str:
    """The line without here-document bodies (file contents, never commands); a body whose
    closing line is missing (a log cut short) runs to the end and is dropped too."""
    command = _HEREDOC.sub(lambda m: " " + m.group(3), command)
    m = _HEREDOC_UNCLOSED.search(command)
    if m:
        nl = command.find("\n", m.end())
        command = command if nl < 0 else command[:nl]
    return command


def heredoc_bodies(command: str) -> list[str]:
    """The bodies of a command line's here-documents, in order (what ``cat <<EOF > f`` writes)."""
    return [m.group(4) or "" for m in _HEREDOC.finditer(command)]


def _strip_redirects(words: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Words without redirections; the files written by ``>``/``>>``/``>|``/``&>``; those
    of them appended to (``>>``). Standard error sent to a file (``2> err.log``) is a log,
    not a file the work writes; ``>&2`` and ``2>&1`` copy a stream."""
    out: list[str] = []
    written: list[str] = []
    appended: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        at = min((k for k in (w.find("<"), w.find(">")) if k >= 0), default=-1)
        if at < 0:
            out.append(w)
            continue
        head, tail = w[:at], w[at:]
        fd = ""
        if head.isdigit() or head == "&":
            fd, head = head, ""
        elif head.endswith("&"):
            fd, head = "&", head[:-1]
        if head:  # echo x>f: the word before the operator is an argument
            out.append(head)
        m = _REDIRECT_OP.match(tail)
        op = m.group(0) if m else ">"
        target = tail[len(op) :]
        if not target and i < len(words):
            target = words[i]
            i += 1
        if not target:
            continue
        to_file = op in (">", ">>", ">|") and fd in ("", "1", "&")
        if op == ">&" and not fd and not target.isdigit() and target != "-":
            to_file = True  # >&file is &>file
        if to_file:
            written.append(target)
            if op == ">>":
                appended.append(target)
    return out, written, appended


def _cluster(word: str, takes: str, stop: str) -> tuple[str, str]:
    """A short-option cluster (``-pi.bak``, ``-ne``): the letter that ends it, taking
    the rest of the word or the next one (``takes``) or the rest only (``stop``), and that
    rest; ("", "") when no letter does."""
    for k, ch in enumerate(word[1:], 1):
        if ch in takes or ch in stop:
            return ch, word[k + 1 :]
    return "", ""


def sed_args(args: list[str] | tuple[str, ...]) -> tuple[bool, list[str], list[str]]:
    """What ``sed`` is asked: whether in place (``-i``, ``-i.bak``, ``--in-place=.orig``,
    BSD's ``-i ''``), its scripts (``-e``/``-f`` or the first operand), its files."""
    inplace = False
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            operands += args[i:]
            break
        if a.startswith("--"):
            name, _, value = a.partition("=")
            if name == "--in-place":
                inplace = True
            elif name in ("--expression", "--file"):
                if not value and i < len(args):
                    value, i = args[i], i + 1
                scripts.append(value)
            elif name == "--line-length" and not value:
                i += 1
            continue
        if not a.startswith("-") or a == "-":
            operands.append(a)
            continue
        letter, rest = _cluster(a, "efl", "i")
        if letter == "i":
            inplace = True
            rest_ops = [x for x in args[i:] if not x.startswith("-")]
            bsd = not rest and i < len(args) and (args[i] == "" or re.match(r"^\.\w+$", args[i]))
            if bsd and len(rest_ops) >= (1 if args[i] == "" else 3):  # BSD: a suffix word
                i += 1
        elif letter in ("e", "f", "l"):
            if not rest and i < len(args):
                rest, i = args[i], i + 1
            if letter != "l":
                scripts.append(rest)
    if not scripts and operands:
        scripts, operands = operands[:1], operands[1:]
    return inplace, scripts, operands


def _perl_in_place(args: list[str] | tuple[str, ...]) -> tuple[bool, str, list[str]]:
    """``perl -pi -e 's/a/b/' f`` / ``perl -i.bak -pe …``: whether in place, its code, its
    files."""
    inplace = False
    code = ""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
        a = args[i]
        i += 1
        letter, rest = _cluster(a, "eE", "iMmIFxlCd0")
        if letter == "i":
            inplace = True
        elif letter in ("e", "E"):
            if not rest and i < len(args):
                rest, i = args[i], i + 1
            code = code or rest
    files = [a for a in args[i:] if a != "--"]
    if not code and files:
        files = files[1:]  # the first operand is the script
    return inplace, code, files


@dataclass(frozen=True, slots=True)
class CommandPart:
    """One simple command of a command line."""

    text: str  # the segment as written
    launcher: tuple[str, ...]  # ("python", "-m") / ("uv", "run") / ("npx",) / ()
    program: str  # "pytest", "npm", "cargo", "./manage.py", "python" (a script run)
    sub: str  # subcommand or script: "test", "run build", "tests/runtests.py", ""
    operands: frozenset[str]  # non-option arguments after the subcommand
    purpose: Purpose
    writes: tuple[str, ...] = ()  # files it writes (redirections, sed -i, tee ...)
    args: tuple[str, ...] = ()  # the arguments after the subcommand, in order
    appends: tuple[str, ...] = ()  # of ``writes``, those added to, not replaced (>>, tee -a)

    @property
    def short(self) -> str:
        """The form worth writing down: launcher, program and subcommand, without operands
        and options (``go test ./...`` keeps its package pattern)."""
        words = [*self.launcher, self.program]
        if self.sub:
            words.append(self.sub)
        if self.program == "go" and "./..." in self.operands:
            words.append("./...")
        return " ".join(words)

    @property
    def identity(self) -> tuple[str, str, str]:
        """Launcher, program and subcommand; a script by its file name (``node build.js``
        run from ``assets/`` is ``node assets/build.js``)."""
        sub = self.sub.rsplit("/", 1)[-1] if re.search(r"\.\w+$", self.sub) else self.sub
        launcher = " ".join(self.launcher).replace("python3", "python")
        return (launcher, self.program.replace("python3", "python"), sub)


def _script_purpose(script: str) -> Purpose:
    name = script.rsplit("/", 1)[-1].lower()
    if name in ("manage.py",):
        return "run"
    if re.match(r"^(?:run_?)?tests?(?:\.py|\.sh)?$|^runtests", name) or name.startswith("test_"):
        return "test"
    if name in ("setup.py",):
        return "build"
    return "run"


def _classify(words: list[str]) -> tuple[tuple[str, ...], str, str, list[str], Purpose]:
    """(launcher, program, sub, rest, purpose) of one simple command's words."""
    while words and (words[0] in _WRAPPERS or words[0] in _KEYWORDS or _ENV_ASSIGN.match(words[0])):
        head = words.pop(0)
        if head == "timeout":
            while words and (words[0].startswith("-") or re.match(r"^\d+[smhd]?$", words[0])):
                words.pop(0)
        elif head == "env":
            while words and (words[0].startswith("-") or _ENV_ASSIGN.match(words[0])):
                words.pop(0)
    if not words:
        return ((), "", "", [], "other")
    launcher: list[str] = []
    head = words[0]
    if head in _LAUNCH_WORDS and len(words) > 1:
        follow = _LAUNCH_WORDS[head]
        if follow and words[1] in follow:
            launcher, words = [head, words[1]], words[2:]
        elif not follow:
            launcher, words = [head], [w for w in words[1:]]
            while words and words[0].startswith("-"):
                words.pop(0)
    if words and _PYTHONS.match(words[0]):
        py = words[0].rsplit("/", 1)[-1]
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
            rest = rest[1:]
        if rest and rest[0] == "-m" and len(rest) > 1:
            launcher += [py, "-m"]
            words = rest[1:]
            module = rest[1]
            if module in ("pip",):
                rest = words[1:]
                first = _first(rest)
                return (tuple(launcher), "pip", first, _after(rest, first), _pip(rest))
            words = [module, *words[1:]]
        elif rest and rest[0] == "-c":
            return (tuple(launcher), py, "-c", rest[1:], "run")
        elif rest and rest[0] != "-":
            script = rest[0]
            args = rest[1:]
            purpose = _script_purpose(script)
            sub = script
            if script.rsplit("/", 1)[-1] == "manage.py" and args:
                cmd = args[0]
                sub = f"{script} {cmd}"
                args = args[1:]
                purpose = "test" if cmd == "test" else "run" if cmd == "runserver" else "other"
            return (tuple(launcher), py, sub, args, purpose)
        else:
            return (tuple(launcher), py, "", rest, "run")
    if not words:
        return (tuple(launcher), "", "", [], "other")
    program = words[0]
    base = program.rsplit("/", 1)[-1]
    args = words[1:]
    first = _first(args)
    if base == "manage.py" or base.endswith("runtests.py"):
        if base == "manage.py" and first:
            p: Purpose = "test" if first == "test" else "run" if first == "runserver" else "other"
            return (tuple(launcher), program, first, args[1:], p)
        return (tuple(launcher), program, "", args, "test" if "test" in base else "run")
    if "/" in program and _script_purpose(program) == "test":
        # a project's own runner by its path (sympy's ``bin/test``, ``./run_tests.sh``), not
        # the shell's ``test`` builtin
        return (tuple(launcher), program, "", args, "test")
    if base in _NODE_PM:
        if first == "run" and len(args) > 1:
            script = _first(args[args.index("run") + 1 :])
            return (tuple(launcher), base, f"run {script}", [], _npm_script(script))
        if first in _NODE_SUB:
            return (tuple(launcher), base, first, _after(args, first), _NODE_SUB[first])
        if base != "npm" and first and first not in ("exec", "dlx", "x", "create", "init"):
            return (tuple(launcher), base, first, _after(args, first), _npm_script(first))
        if first in ("exec", "dlx", "x") and len(args) > 1:
            inner = _after(args, first)
            return _classify([*inner])
        return (tuple(launcher), base, first, _after(args, first), "other")
    if base in ("pip", "pip3"):
        return (tuple(launcher), "pip", first, _after(args, first), _pip(args))
    if base in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye"):
        if base == "uv" and first == "pip":
            rest = _after(args, "pip")
            return (tuple(launcher), "uv pip", _first(rest), rest, _pip(rest))
        return (tuple(launcher), base, first, _after(args, first), _PY_PM_SUB.get(first, "other"))
    if base == "conda" or base == "mamba":
        return (
            tuple(launcher),
            base,
            first,
            _after(args, first),
            "install" if first == "install" else "other",
        )
    if base == "cargo":
        return (tuple(launcher), base, first, _after(args, first), _CARGO_SUB.get(first, "other"))
    if base == "go":
        return (tuple(launcher), base, first, _after(args, first), _GO_SUB.get(first, "other"))
    if base in ("make", "gmake", "just", "task"):
        target = first
        purpose = _MAKE_TARGETS.get(target, "build" if not target else "other")
        for key, value in _MAKE_TARGETS.items():
            if target.startswith(key + "-") or target.startswith(key + "_"):
                purpose = value
        return (tuple(launcher), base, target, _after(args, first), purpose)
    if base in ("mvn", "gradle", "./gradlew", "gradlew", "./mvnw", "mvnw", "sbt", "lein"):
        verb = first.split(":")[-1].lower()
        return (tuple(launcher), base, first, _after(args, first), _JVM_SUB.get(verb, "other"))
    if base in _TASK_SUB:  # mix, dotnet: a fixed table of tasks
        purpose = _TASK_SUB[base].get(first, "other")
        return (tuple(launcher), base, first, _after(args, first), purpose)
    if base in ("bundle", "gem", "composer"):
        if first in ("install", "add", "require", "update"):
            return (tuple(launcher), base, first, _after(args, first), "install")
        if first == "exec" and len(args) > 1:
            return _classify(_after(args, "exec"))
        return (tuple(launcher), base, first, _after(args, first), "other")
    if base in ("deno", "bun"):
        d2: dict[str, Purpose] = {
            "test": "test",
            "run": "run",
            "lint": "lint",
            "fmt": "lint",
            "install": "install",
            "add": "install",
        }
        return (tuple(launcher), base, first, _after(args, first), d2.get(first, "other"))
    if base == "perl" and _perl_in_place(args)[0]:
        return (tuple(launcher), "perl", "", args, "write")
    if base in ("node", "ts-node", "tsx", "ruby", "perl", "php", "bash", "sh", "zsh", "Rscript"):
        if not args:
            return (tuple(launcher), base, "", [], "other")
        if args[0] in ("-c", "-e"):
            return (tuple(launcher), base, args[0], args[1:], "run")
        script = args[0]
        name = script.rsplit("/", 1)[-1]
        purpose = "test" if re.search(r"(?:^|/)(?:run_?)?tests?\b|\.test\.|spec", script) else "run"
        if re.match(r"^(?:build|compile|bundle)\b", name):
            purpose = "build"
        return (tuple(launcher), base, script, args[1:], purpose)
    if base == "git":
        sub = first
        purpose = "read" if sub in _GIT_READ else "other"
        return (tuple(launcher), "git", sub, _after(args, first), purpose)
    if base == "sed":
        return (tuple(launcher), "sed", "", args, "write" if sed_args(args)[0] else "read")
    if base == "dd":
        return (
            tuple(launcher),
            "dd",
            "",
            args,
            "write" if program_writes("dd", "", args)[0] else "read",
        )
    if base in _TEST_PROGRAMS:
        return (tuple(launcher), base, "", args, "test")
    if base in _LINT_PROGRAMS:
        sub = first if base in ("ruff", "black", "biome") and first in ("check", "format") else ""
        return (tuple(launcher), base, sub, _after(args, sub) if sub else args, "lint")
    if base in _BUILD_PROGRAMS:
        purpose = "lint" if base == "tsc" and "--noEmit" in args else "build"
        if base == "vite":
            purpose = "build" if first == "build" else "run"
            return (tuple(launcher), base, first, _after(args, first), purpose)
        return (tuple(launcher), base, "", args, purpose)
    if base in ("next", "nuxt", "astro", "react-scripts", "ng", "vue-cli-service", "expo"):
        vp: dict[str, Purpose] = {
            "build": "build",
            "dev": "run",
            "start": "run",
            "serve": "run",
            "test": "test",
            "lint": "lint",
        }
        return (tuple(launcher), base, first, _after(args, first), vp.get(first, "other"))
    if base in _RUN_PROGRAMS:
        return (tuple(launcher), base, first if base in ("flask", "streamlit") else "", args, "run")
    if base in _INSTALL_PROGRAMS:
        return (
            tuple(launcher),
            base,
            first,
            _after(args, first),
            "install" if first == "install" else "other",
        )
    if base == "docker" or base == "docker-compose":
        dp: dict[str, Purpose] = {"build": "build", "run": "run", "up": "run"}
        return (tuple(launcher), base, first, _after(args, first), dp.get(first, "other"))
    if base in _READ_PROGRAMS:
        return (tuple(launcher), base, "", args, "read")
    if base in _WRITE_PROGRAMS:
        return (tuple(launcher), base, "", args, "write")
    if program.startswith("./") or program.startswith("bin/"):
        purpose = (
            "test"
            if re.search(r"test", base)
            else "build"
            if re.search(r"build|compile", base)
            else "run"
        )
        return (tuple(launcher), program, "", args, purpose)
    if launcher[-1:] == ["-m"]:  # python -m a module of the project or a server
        return (tuple(launcher), program, "", args, "run")
    return (tuple(launcher), program, "", args, "other")


def _first(args: list[str]) -> str:
    for a in args:
        if not a.startswith("-"):
            return a
    return ""


def _after(args: list[str], word: str) -> list[str]:
    if word and word in args:
        return args[args.index(word) + 1 :]
    return args


def _pip(args: list[str]) -> Purpose:
    return "install" if _first(args) in ("install", "sync") else "other"


def _npm_script(script: str) -> Purpose:
    for rule, purpose in _SCRIPT_PURPOSE:
        if rule.match(script):
            return purpose  # type: ignore[return-value]
    return "other"


def parts(command: str) -> list[CommandPart]:
    """The simple commands of a command line, classified (never raises). Within
    ``redaction_memo()`` a command line read before is answered from its first reading (a
    new list): one log names the same command at a call, its result and its files."""
    if not isinstance(command, str) or not command.strip():
        return []
    memo = memo_of("command parts")
    if memo is None:
        return _parts(command)
    got: tuple[CommandPart, ...] | None = memo.get(command)
    if got is None:
        got = memo[command] = tuple(_parts(command))
    return list(got)


def _parts(command: str) -> list[CommandPart]:
    out: list[CommandPart] = []
    try:
        # a command substitution is a value ("GH_TOKEN=$(gh auth token) pytest"), not a step
        line = _SUBST.sub("_", command[:20_000])
        bodies = _segment_bodies(line)
        for at, masked in enumerate(_split(line)):
            split, written, appended = _strip_redirects(_words(masked))
            words = [w.translate(_UNMASK) for w in split]
            segment = masked.translate(_UNMASK)
            inner = _shell_c(words)
            if inner is not None:  # bash -c "cd repo && pytest -q": the line it runs
                out.extend(parts(inner) if inner.strip() and inner != command else [])
                continue
            launcher, program, sub, rest, purpose = _classify(list(words))
            if not program:
                if written:
                    out.append(
                        CommandPart(
                            segment,
                            (),
                            "",
                            "",
                            frozenset(),
                            "write",
                            _files(written),
                            appends=_files(appended),
                        )
                    )
                continue
            writes, adds = list(written), list(appended)
            if program == "sed" and purpose == "write":
                writes += sed_args(rest)[2]
            elif program == "perl" and purpose == "write":
                writes += _perl_in_place(rest)[2]
            elif not launcher:
                more, more_adds = program_writes(program, sub, rest, bodies.get(at, ()))
                writes += more
                adds += more_adds
            if writes and purpose in ("read", "other"):
                purpose = "write"  # echo/cat/printf ... > file, git mv, awk -i inplace
            operands = frozenset(a for a in rest if not a.startswith("-"))
            out.append(
                CommandPart(
                    segment,
                    launcher,
                    program,
                    sub,
                    operands,
                    purpose,
                    _files(writes),
                    tuple(rest),
                    _files(adds),
                )
            )
    except Exception:  # pragma: no cover - parsing odd input must never raise
        return []
    return out


_SUBST = re.compile(r"\$\(\((?:[^()]|\([^()]*\))*\)\)|\$\((?!\()(?:[^()]|\([^()]*\))*\)|`[^`\n]*`")


def _files(paths: list[str]) -> tuple[str, ...]:
    """Paths that are files: never a device (``/dev/null``, ``/dev/stderr``) or stdout (``-``),
    nor a word the shell expands (``$f``, ``*.py``, ``{a,b}.py``: which files, the log does
    not say). A scratch file under /tmp is still a file written: whether it matters is the
    reader's call (``is_scratch``)."""
    return tuple(
        dict.fromkeys(
            p
            for p in paths
            if p and p != "-" and not p.startswith("/dev/") and not _EXPANDS.search(p)
        )
    )


# a variable, a glob or a brace list: the shell makes other words of it
_EXPANDS = re.compile(r"[$*?`]|\{[^}]*,[^}]*\}|\[[^]]*\]")


def _segment_bodies(line: str) -> dict[int, list[str]]:
    """The here-document bodies each simple command of ``line`` is fed, by its index among
    ``_split(line)``: a body belongs to the command its ``<<`` stands in."""
    out: dict[int, list[str]] = {}
    if "<<" not in line:
        return out
    for m in _HEREDOC.finditer(line):
        at = len(_split(line[: m.start()])) - 1
        out.setdefault(max(at, 0), []).append(m.group(4) or "")
    return out


def _shell_c(words: list[str]) -> str | None:
    """The command line of ``bash -c '…'`` / ``sh -lc "…"``, else None."""
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh", "dash"):
        flag = words[1]
        if flag.startswith("-") and not flag.startswith("--") and flag.endswith("c"):
            return words[2]
    return None


def shell_writes(ps: list[CommandPart]) -> list[tuple[CommandPart, str, bool]]:
    """Each file the parts of one command line write: the part, the path (a relative one
    under the directory an earlier ``cd`` of the line moved to: ``cd src && echo > a`` writes
    ``src/a``), and whether it is appended to."""
    out: list[tuple[CommandPart, str, bool]] = []
    cwd: str | None = ""  # "" where the line started; None after a cd we cannot follow
    for p in ps:
        if p.program == "cd" and not p.launcher:
            target = next((a for a in p.args if not a.startswith("-")), "")
            if not target or re.search(r"[$~`*?]", target):
                cwd = None
            elif target.startswith("/"):
                cwd = posixpath.normpath(target)
            elif cwd is not None:
                cwd = posixpath.normpath(posixpath.join(cwd, target))
            continue
        for w in p.writes:
            path = w
            if cwd and not w.startswith(("/", "~", "$")):
                path = posixpath.normpath(posixpath.join(cwd, w))
            out.append((p, path, w in p.appends))
    return out


def heredoc_writes(command: str) -> list[tuple[str, str]]:
    """The files a command line writes from here-documents, each with the text written:
    ``cat <<'EOF' > test_fix.py`` … ``EOF`` (or ``cat > f <<EOF``, ``tee f <<EOF``, ``>>``),
    a relative path under the directory a ``cd`` of the line moved to. A body belongs to
    the simple command its ``<<`` stands in; one that feeds a program (``python - <<EOF``)
    writes no file."""
    if not isinstance(command, str) or "<<" not in command:
        return []
    ps = parts(command)
    writes = shell_writes(ps)
    out: list[tuple[str, str]] = []
    for m in _HEREDOC.finditer(command):
        k = len(parts(command[: m.start()])) - 1  # the simple command the body goes to
        if not 0 <= k < len(ps) or ps[k].program not in ("cat", "tee"):
            continue
        out += [(path, m.group(4) or "") for p, path, _ in writes if p is ps[k]]
    return out


def written_by_shell(command: str) -> list[str]:
    """The files a command line writes: redirections (``>``, ``>>``, ``&>``, ``>|``; not
    ``2>``, ``>&2`` or a device), ``tee``, ``sed -i``, ``perl -i``, ``touch``, ``dd of=``, the
    destination of ``mv``/``cp``, and the rest ``_writers`` reads (``patch``/``git apply`` fed
    a diff, ``awk -i inplace``, ``ed`` …). Here-document bodies are file contents, never read
    as commands (a diff fed to ``patch`` is read for its file names); a ``>`` inside quotes
    is text; a word the shell expands (``$f``, ``*.py``) names no file."""
    return list(dict.fromkeys(path for _, path, _ in shell_writes(parts(command))))


def covers(success: list[CommandPart], failure: list[CommandPart]) -> bool:
    """Whether a passing command line re-ran what a failing one ran, or more: every part of
    the failure that mattered (not reading, not changing directory) has a part of the success
    with the same launcher, program and subcommand whose operands include the failed part's,
    or that has none (``pytest -q`` runs every test ``pytest tests/test_x.py`` ran; a narrower
    run never covers a broader failure). Options are ignored."""
    wanted = [p for p in failure if p.purpose not in ("read", "write")]
    done = [p for p in success if p.purpose not in ("read", "write")]
    if not wanted or not done:
        return False
    return all(
        any(
            d.identity == w.identity
            and (not d.operands or (w.operands and w.operands <= d.operands))
            for d in done
        )
        for w in wanted
    )


_PM_BY_PROGRAM = {
    "npm": "npm",
    "pnpm": "pnpm",
    "yarn": "yarn",
    "bun": "bun",
    "pip": "pip",
    "uv": "uv",
    "uv pip": "uv",
    "poetry": "poetry",
    "pipenv": "pipenv",
    "pdm": "pdm",
    "conda": "conda",
    "mamba": "conda",
    "cargo": "cargo",
    "go": "go modules",
    "bundle": "bundler",
    "gem": "gem",
    "composer": "composer",
    "mvn": "maven",
    "./mvnw": "maven",
    "gradle": "gradle",
    "./gradlew": "gradle",
    "dotnet": "dotnet",
    "mix": "mix",
}


def package_managers(part: CommandPart) -> str | None:
    """The package manager a part uses (``uv run pytest`` uses uv, ``npx`` npm), if any."""
    if part.launcher and part.launcher[0] in ("uv", "poetry", "pipenv", "pdm"):
        return part.launcher[0]
    if part.launcher and part.launcher[0] == "npx":
        return "npm"
    if part.launcher and part.launcher[0] == "pnpx":
        return "pnpm"
    if part.program in _PM_BY_PROGRAM and part.purpose in (
        "install",
        "test",
        "build",
        "run",
        "lint",
    ):
        if part.program == "go" and part.purpose != "install":
            return None
        return _PM_BY_PROGRAM[part.program]
    return None


def is_scratch(path: str) -> bool:
    """A temporary or throw-away file: under /tmp, or a reproduce/debug/check script."""
    p = path.strip()
    if (
        p.startswith(("/tmp/", "/var/tmp/", "/private/tmp/", "~/.cache", "/dev/"))
        or p == "/dev/null"
    ):
        return True
    if _SCRATCH_DIR.search(p):
        return True
    name = p.rsplit("/", 1)[-1]
    return bool(_SCRATCH_NAME.search(name))
