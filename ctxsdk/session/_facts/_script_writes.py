"""The files a Python script the session wrote rewrites in place: ``patch_plot.py`` that
reads ``seaborn/_core/plot.py``, changes lines and writes it back. Bash-only agents edit
this way when ``sed`` quoting gets hard; running the script is the edit.

Only a read-then-write of one named file counts (``open(p)`` … ``open(p, 'w')``, or
``Path(p).read_text()`` … ``.write_text()``): a script that only writes makes an output
(a log, a figure), not an edit of the project. The script is parsed with ``ast``; one that
does not parse (cut, or not Python) rewrites nothing.
"""

from __future__ import annotations

import ast

__all__ = ["rewritten_files"]

_MAX_CODE = 200_000  # characters of a script read; a longer one is no quick fix script
_READS = frozenset({"read_text", "read_bytes"})
_WRITES = frozenset({"write_text", "write_bytes"})


def _name(func: ast.expr) -> str:
    """What a call calls: ``open``, ``Path``, ``read_text`` (an attribute's last name)."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _path(node: ast.expr, names: dict[str, str]) -> str:
    """The file ``node`` names: a string, a name bound to one, or ``Path(<one of those>)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, "")
    if isinstance(node, ast.Call) and _name(node.func) == "Path" and node.args:
        return _path(node.args[0], names)
    return ""


def _bindings(tree: ast.AST) -> dict[str, str]:
    """``name = 'path'`` and ``name = Path('path')``: the last binding wins."""
    names: dict[str, str] = {}
    assigns = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for node in assigns:
        target = node.targets[0]
        path = _path(node.value, {})
        if isinstance(target, ast.Name) and path:
            names[target.id] = path
    return names


def _mode(call: ast.Call, at: int) -> str:
    """An ``open`` call's mode as written (its ``at``-th argument or ``mode=``); "r" if none."""
    given = call.args[at] if len(call.args) > at else None
    for kw in call.keywords:
        if kw.arg == "mode":
            given = kw.value
    if given is None:
        return "r"
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else ""


def _uses(tree: ast.AST, names: dict[str, str]) -> list[tuple[int, bool, str]]:
    """(line, whether it writes, path) of each file the script opens or reads/writes whole."""
    out: list[tuple[int, bool, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        if called == "open":
            func = node.func
            if isinstance(func, ast.Attribute):  # Path(p).open("w")
                path, mode = _path(func.value, names), _mode(node, 0)
            else:
                path, mode = (_path(node.args[0], names) if node.args else ""), _mode(node, 1)
            if "r" in mode and "+" in mode:  # r+: read and written back through one handle
                out.append((node.lineno, False, path))
            out.append((node.lineno, bool(set(mode) & set("wax+")), path))
        elif (called in _READS or called in _WRITES) and isinstance(node.func, ast.Attribute):
            out.append((node.lineno, called in _WRITES, _path(node.func.value, names)))
    return out


def rewritten_files(code: str) -> list[str]:
    """The files ``code`` reads and then writes back, in order of their first write; a read
    on a write's line is its argument (``p.write_text(p.read_text() + x)``)."""
    if len(code) > _MAX_CODE:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    read: set[str] = set()
    out: list[str] = []
    for _, writes, path in sorted(_uses(tree, _bindings(tree))):
        if not path or path.startswith("/dev/"):
            continue
        if writes and path in read and path not in out:
            out.append(path)
        elif not writes:
            read.add(path)
    return out
