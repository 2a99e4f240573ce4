"""The front end without a build step: find ``widgets/`` and join its ES modules into one.

anywidget loads a widget's ``_esm`` as ONE module, so the relative imports between the
files in ``widgets/`` cannot resolve in the browser. ``bundle`` does what a bundler would,
for the small subset of module syntax those files use, and nothing else:

- every module the entry imports (recursively, by relative path) is wrapped in its own scope,
  ``const __cx_base_channel = (() => { ...; return {createChannel, ...}; })();``, in
  dependency order, so top-level names of different files never collide;
- ``import {a, b as c} from "./x.js"`` becomes ``const {a, b: c} = __cx_x;`` and
  ``import * as x from "./x.js"`` becomes ``const x = __cx_x;``;
- ``export`` is dropped from the declarations of an imported module (``export function``,
  ``export class``, ``export const``, ``export {a, b}``), which are returned from its scope;
- the entry module keeps its own ``export default``.

Anything else is refused with ``ValueError`` naming the file and line: a bare or URL import
(a CDN would break offline use), a default import, a side-effect import, an import cycle, a
default export in an imported module. The sources are found in the installed wheel
(``ctxsdk/_widgets_static``, force-included by ``pyproject.toml``) or, in a checkout, in
``widgets/`` at the repository root.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["bundle", "bundle_css", "static_dir", "static_files"]

_IMPORT = re.compile(
    r"^[ \t]*import\b(?P<what>[^;\"']*?)\bfrom[ \t]*"
    r"(?P<q>[\"'])(?P<path>[^\"']+)(?P=q)[ \t]*;?[ \t]*$",
    re.M,
)
_ANY_IMPORT = re.compile(r"^[ \t]*import\b[ \t]*(?:[\"'{*\w])", re.M)
_DYNAMIC_IMPORT = re.compile(r"\bimport[ \t]*\(")
_EXPORT_DECL = re.compile(
    r"^export[ \t]+(?P<kw>(?:async[ \t]+)?function\*?|class|const|let|var)[ \t]+"
    r"(?P<name>[A-Za-z_$][\w$]*)",
    re.M,
)
_EXPORT_LIST = re.compile(r"^export[ \t]*\{(?P<names>[^}]*)\}[ \t]*;?[ \t]*$", re.M)
_EXPORT_DEFAULT = re.compile(r"^export[ \t]+default\b", re.M)
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")


def static_dir(package: Path | None = None) -> Path:
    """Where the front-end sources are: the wheel's copy (``ctxsdk/_widgets_static``), else
    the checkout's ``widgets/`` next to the package. ``package`` is the ``ctxsdk`` directory
    to look from (default: this one)."""
    here = (package or Path(__file__).resolve().parent.parent).resolve()
    for candidate in (here / "_widgets_static", here.parent / "widgets"):
        if (candidate / "base").is_dir():
            return candidate
    raise FileNotFoundError(
        f"the widget sources are missing: neither {here / '_widgets_static'} (an installed "
        f"wheel) nor {here.parent / 'widgets'} (a checkout) holds base/; reinstall ctxsdk"
    )


def static_files(name: str, *, virtualized: bool = False, graph: bool = False) -> list[Path]:
    """The front-end files widget ``name`` is built from (for tests and docs): the base
    channel, components and theme (and the virtualizer when ``virtualized``, pan and zoom
    when ``graph``), then ``name.js`` and ``name.css``."""
    base = ["base/channel.js", *(["base/virtualizer.js"] if virtualized else [])]
    base += ["base/panzoom.js"] if graph else []
    base += ["base/components.js", "base/theme.css", f"{name}.js", f"{name}.css"]
    root = static_dir()
    return [root / p for p in base]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _var(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    return "__cx_" + re.sub(r"[^\w]", "_", rel.as_posix())


def _bindings(what: str, where: str) -> tuple[str, str]:
    """``{a, b as c}`` -> ("destructure", "{ a, b: c }"); ``* as x`` -> ("namespace", "x")."""
    what = " ".join(what.split())
    star = re.fullmatch(r"\*\s+as\s+([A-Za-z_$][\w$]*)", what)
    if star:
        return "namespace", star.group(1)
    named = re.fullmatch(r"\{(.*)\}", what)
    if not named:
        raise ValueError(
            f"{where}: only `import {{a, b as c}} from` and `import * as x from` are "
            f"supported between widget modules, not `import {what} from`"
        )
    parts = []
    for item in (p.strip() for p in named.group(1).split(",")):
        if not item:
            continue
        pieces = item.split()
        if len(pieces) == 1 and _IDENT.match(pieces[0]):
            parts.append(pieces[0])
        elif len(pieces) == 3 and pieces[1] == "as" and all(map(_IDENT.match, pieces[::2])):
            parts.append(f"{pieces[0]}: {pieces[2]}")
        else:
            raise ValueError(f"{where}: cannot read the import binding {item!r}")
    return "destructure", "{ " + ", ".join(parts) + " }"


class _Module:
    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.name = path.relative_to(root).as_posix()
        self.var = _var(path, root)
        self.text = path.read_text(encoding="utf-8")
        self.deps: list[Path] = []
        for m in _IMPORT.finditer(self.text):
            self.deps.append(self._resolve(m.group("path"), m.start(), root))
        found = {m.start() for m in _IMPORT.finditer(self.text)}
        for m in _ANY_IMPORT.finditer(self.text):
            if m.start() not in found:
                raise ValueError(
                    f"{self.name}:{_line_of(self.text, m.start())}: an import the widget "
                    "bundle cannot join (side-effect or dynamic form); use "
                    '`import {a} from "./file.js"`'
                )
        dynamic = _DYNAMIC_IMPORT.search(self.text)
        if dynamic:
            raise ValueError(
                f"{self.name}:{_line_of(self.text, dynamic.start())}: a dynamic import(); "
                "the widget bundle joins static relative imports only (it must work offline)"
            )

    def _resolve(self, spec: str, pos: int, root: Path) -> Path:
        where = f"{self.name}:{_line_of(self.text, pos)}"
        if not spec.startswith(("./", "../")):
            raise ValueError(
                f"{where}: import of {spec!r}: widget modules import only each other by "
                "relative path (no packages, no CDN: the widgets must work offline)"
            )
        target = (self.path.parent / spec).resolve()
        if root.resolve() not in target.parents:
            raise ValueError(f"{where}: import of {spec!r} leaves {root}")
        if not target.is_file():
            raise ValueError(f"{where}: import of {spec!r}: no file {target}")
        return target

    def body(self, modules: dict[Path, _Module]) -> str:
        """The text with each relative import replaced by a binding to its module's scope."""

        def binding(m: re.Match[str]) -> str:
            where = f"{self.name}:{_line_of(self.text, m.start())}"
            dep = modules[(self.path.parent / m.group("path")).resolve()]
            _form, names = _bindings(m.group("what"), where)
            return f"const {names} = {dep.var};"

        return _IMPORT.sub(binding, self.text)

    def scoped(self, modules: dict[Path, _Module]) -> str:
        """The module wrapped in its own scope, returning what it exports."""
        text = self.body(modules)
        default = _EXPORT_DEFAULT.search(text)
        if default:
            raise ValueError(
                f"{self.name}:{_line_of(text, default.start())}: an imported widget module "
                "may not have a default export (only the entry module has one)"
            )
        names = [m.group("name") for m in _EXPORT_DECL.finditer(text)]
        for m in _EXPORT_LIST.finditer(text):
            for item in (p.strip() for p in m.group("names").split(",")):
                pieces = item.split()
                if len(pieces) == 1:
                    names.append(pieces[0])
                elif len(pieces) == 3 and pieces[1] == "as":
                    names.append(f"{pieces[2]}: {pieces[0]}")
        text = _EXPORT_LIST.sub("", text)
        text = _EXPORT_DECL.sub(lambda m: f"{m.group('kw')} {m.group('name')}", text)
        if re.search(r"^export\b", text, re.M):
            line = _line_of(text, re.search(r"^export\b", text, re.M).start())  # type: ignore[union-attr]
            raise ValueError(f"{self.name}:{line}: an export form the widget bundle cannot read")
        exported = ", ".join(sorted(set(names)))
        return (
            f"/* --- {self.name} --- */\n"
            f"const {self.var} = (() => {{\n{text.rstrip()}\n"
            f"return {{ {exported} }};\n}})();\n"
        )


def bundle(entry: str | Path, root: Path | None = None) -> str:
    """One ES module: the modules ``entry`` imports (each in its own scope), then ``entry``.

    ``entry`` is a path relative to ``root`` (default: ``static_dir()``), e.g.
    ``"context_tree.js"``."""
    root = (root or static_dir()).resolve()
    start = (root / entry).resolve()
    if not start.is_file():
        raise FileNotFoundError(f"no widget module {entry!r} under {root}")
    modules: dict[Path, _Module] = {}
    order: list[Path] = []
    state: dict[Path, str] = {}

    def visit(path: Path, chain: Sequence[str]) -> None:
        if state.get(path) == "done":
            return
        if state.get(path) == "active":
            cycle = " -> ".join([*chain, path.relative_to(root).as_posix()])
            raise ValueError(f"an import cycle between widget modules: {cycle}")
        state[path] = "active"
        module = modules.setdefault(path, _Module(path, root))
        for dep in module.deps:
            visit(dep, [*chain, module.name])
        state[path] = "done"
        order.append(path)

    visit(start, [])
    parts = [f"// ctxsdk widget bundle: {modules[start].name} and what it imports\n"]
    parts += [modules[p].scoped(modules) for p in order if p != start]
    parts.append(f"/* --- {modules[start].name} --- */\n" + modules[start].body(modules))
    return "\n".join(parts)


def bundle_css(*names: str, root: Path | None = None) -> str:
    """The stylesheets ``names`` (relative to ``root``), joined in order."""
    root = root or static_dir()
    return "\n".join(f"/* --- {n} --- */\n" + (root / n).read_text(encoding="utf-8") for n in names)
