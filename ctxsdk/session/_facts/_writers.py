"""The files a program writes through its own arguments, or through the here-document it
is fed: ``tee``, ``touch``, ``mv``/``cp``/``install``/``git mv`` destinations, ``dd of=``,
``truncate``, ``sponge``, gawk's ``-i inplace``, ``ed``/``ex``/``vim`` scripts that write,
and ``patch``/``git apply`` given a diff whose headers name the files.

Redirections, ``sed -i`` and ``perl -i`` are read where a command line is split
(``_commands``); this module only reads one program's words."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

# programs that change a file already there (an edit), where tee/cp/touch write one anew
IN_PLACE = frozenset("sed perl awk gawk ed ex vim vi nvim patch truncate".split())


def in_place(program: str, sub: str) -> bool:
    """Whether a program that writes a file changes one already there (``sed -i``, ``git
    apply``) rather than writing it anew (``tee``, ``cp``, ``touch``)."""
    return program in IN_PLACE or (program == "git" and sub == "apply")


# a line of an ed/ex/vim script that writes the buffer: w, wq, x, :wq!, %s/a/b/|w ...
_EDITOR_WRITE = re.compile(
    r"(?:^|[|\n])[ \t]*:?[ \t]*(?:w|wq|wq!|x|x!|wall|wqa|xa|up|update)"
    r"(?:[ \t!].*)?[ \t]*(?=$|[|\n])"
)
_DIFF_NEW = re.compile(r"^\+\+\+ (\S+)", re.M)
_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)


def destinations(args: Sequence[str]) -> list[str]:
    """The files ``mv``/``cp`` write: the last operand, or each source's name inside the
    target directory (``-t dir``, several sources, a trailing ``/``)."""
    target = ""
    files: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-t", "--target-directory") and i < len(args):
            target, i = args[i], i + 1
        elif a.startswith("--target-directory="):
            target = a.split("=", 1)[1]
        elif a in ("-S", "--suffix"):
            i += 1
        elif not a.startswith("-") or a == "-":
            files.append(a)
    if not target:
        if len(files) < 2:
            return []
        if len(files) == 2 and not files[1].endswith("/"):
            return files[1:]
        target, files = files[-1], files[:-1]
    return [posixpath.join(target, f.rstrip("/").rsplit("/", 1)[-1]) for f in files]


def _operands(args: Sequence[str], valued: str) -> list[str]:
    """The non-option words, skipping the value of each short option in ``valued``
    (``-s 0``); an attached value (``-s0``, ``--size=0``) is part of its option."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            out += args[i:]
            break
        if len(a) == 2 and a[0] == "-" and a[1] in valued:
            i += 1
        elif not a.startswith("-") or a == "-":
            out.append(a)
    return out


def _awk_files(args: Sequence[str]) -> list[str]:
    """gawk's ``-i inplace`` (``--include=inplace``): the files after its program text."""
    inplace = False
    program = False  # the program text given by -f/-e, or read as the first operand
    files: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        name, _, value = a.partition("=")
        if a in ("-i", "--include") and i < len(args):
            value, i = args[i], i + 1
            inplace = inplace or value.removesuffix(".awk") == "inplace"
        elif name == "--include":
            inplace = inplace or value.removesuffix(".awk") == "inplace"
        elif a in ("-f", "--file", "-e", "--source"):
            program, i = True, i + 1
        elif a in ("-v", "-F", "--assign", "--field-separator"):
            i += 1
        elif a.startswith("-") and a != "-":
            continue
        elif not program:
            program = True
        elif not re.match(r"^[A-Za-z_]\w*=", a):  # var=value operands set a variable
            files.append(a)
    return files if inplace else []


def _editor_files(program: str, args: Sequence[str], bodies: Sequence[str]) -> list[str]:
    """``ed f <<EOF`` / ``ex -sc '%s/a/b/|x' f`` / ``vim -c 'wq' f``: the files, when the
    script it is given writes them. ed's script unseen (``printf … | ed f``) is taken to
    write: ed is run only to edit; vim without ``-c`` is an interactive session."""
    scripts = list(bodies)
    files: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-c", "--cmd", "-S", "-u", "-i") and i < len(args):
            if a == "-c":
                scripts.append(args[i])
            i += 1
        elif a.startswith("+") and len(a) > 1:
            scripts.append(a[1:])
        elif a.startswith("-") and a != "-":
            if program == "ex" and "c" in a[1:] and i < len(args):  # ex -sc 'cmd'
                scripts.append(args[i])
                i += 1
        else:
            files.append(a)
    if not scripts:
        return files if program == "ed" else []
    return files if any(_EDITOR_WRITE.search(s) for s in scripts) else []


def _strip(path: str, level: int | None) -> str:
    if level is None:  # no -p: the a/ b/ prefixes git writes, else the name as given
        return path[2:] if path.startswith(("a/", "b/")) else path
    parts = path.split("/")
    return "/".join(parts[level:]) if level < len(parts) else ""


def diff_files(body: str, level: int | None) -> list[str]:
    """The files a unified or git diff changes, its ``+++`` names (``diff --git`` when a
    header is cut), each with ``level`` leading folders removed (``-p1``)."""
    names = [m.group(1) for m in _DIFF_NEW.finditer(body) if m.group(1) != "/dev/null"]
    if not names:
        names = [m.group(2) for m in _DIFF_GIT.finditer(body)]
        level = 0 if level is None else max(level - 1, 0)  # already without b/
    return [p for p in dict.fromkeys(_strip(n, level) for n in names) if p]


def _patch_files(git: bool, args: Sequence[str], bodies: Sequence[str]) -> list[str]:
    """``patch [-pN] [file] <<EOF`` / ``git apply <<EOF``: the file named, else those the
    diff names; a dry run (``--dry-run``, ``--check``, ``--stat``) or the index alone
    (``git apply --cached``) writes no file."""
    level: int | None = 1 if git else None
    named: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("--dry-run", "--check", "--stat", "--numstat", "--summary", "--cached"):
            return []
        if m := re.match(r"^(?:-p|--strip=)(\d*)$", a):
            digits = m.group(1) or (args[i] if i < len(args) else "")
            i += 0 if m.group(1) else 1
            level = int(digits) if digits.isdigit() else level
        elif a in ("-o", "--output") and i < len(args):
            out.append(args[i])
            i += 1
        elif a in ("-d", "--directory", "-i", "--input", "-D", "-F", "-r", "-B", "-V", "-z"):
            i += 1
        elif not a.startswith("-") and not git:
            named.append(a)
    if out:
        return out
    if named:
        return named[:1]  # patch FILE [PATCHFILE]
    return [p for body in bodies for p in diff_files(body, level)]


def program_writes(
    program: str, sub: str, rest: list[str], bodies: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """The files a program writes through its arguments (``bodies``: the here-documents it
    is fed), and those it appends to."""
    if program in ("tee", "sponge"):
        files = [a for a in rest if not a.startswith("-")]
        append = any(a == "--append" or (a[:1] == "-" and "a" in a[1:2]) for a in rest)
        return files, files if append else []
    if program == "touch":
        return _operands(rest, "dtr"), []
    if program in ("mv", "cp"):
        return destinations(rest), []
    if program == "install":
        if any(a in ("-d", "--directory") for a in rest):
            return [], []
        words = [a for k, a in enumerate(rest) if not (k and rest[k - 1] in ("-m", "-o", "-g"))]
        return destinations([a for a in words if a not in ("-m", "-o", "-g")]), []
    if program == "git" and sub == "mv":
        return destinations(rest), []
    if program == "git" and sub == "apply":
        return _patch_files(True, rest, bodies), []
    if program == "patch":
        return _patch_files(False, rest, bodies), []
    if program == "dd":
        return [a[3:] for a in rest if a.startswith("of=") and len(a) > 3], []
    if program == "truncate":
        return _operands(rest, "sr"), []
    if program in ("awk", "gawk"):
        return _awk_files(rest), []
    if program in ("ed", "ex", "vim", "vi", "nvim"):
        return _editor_files(program, rest, bodies), []
    return [], []
