"""Lineage: how listed sessions relate (parent, fork, subagent) and the tree they form."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..._display import Rendered, badge, esc
from ...errors import NotFound

if TYPE_CHECKING:
    import polars as pl

Kind = Literal["root", "fork", "subagent", "child"]


@dataclass(frozen=True)
class LineageNode:
    """One session in a lineage tree, with its children (forks and subagents)."""

    id: str
    kind: Kind  # root, or how this session relates to its parent
    title: str | None
    path: str
    readable: bool
    children: tuple[LineageNode, ...] = field(default=(), repr=False)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, LineageNode]]:
        """(depth, node) pairs, this node first, then its children depth-first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


@dataclass(frozen=True)
class SessionTree(Rendered):
    """The lineage tree a session belongs to (``Workspace.tree``).

    ``root`` is the topmost ancestor found in the workspace; ``missing_parent`` names its
    parent when the header points at a session that is not in this workspace.
    """

    root: LineageNode
    focus: str
    missing_parent: str | None = None

    def __iter__(self) -> Iterator[LineageNode]:
        return (node for _, node in self.root.walk())

    def __len__(self) -> int:
        return sum(1 for _ in self.root.walk())

    def find(self, session_id: str) -> LineageNode:
        for node in self:
            if node.id == session_id:
                return node
        raise NotFound(f"session {session_id} is not in this lineage tree (root {self.root.id})")

    def to_polars(self) -> pl.DataFrame:
        """One row per session, depth-first: id, parent, kind, depth, title, readable, path."""
        import polars as pl

        rows: list[dict[str, Any]] = []

        def visit(node: LineageNode, parent: str | None, depth: int) -> None:
            rows.append(
                {
                    "id": node.id,
                    "parent": parent,
                    "kind": node.kind,
                    "depth": depth,
                    "title": node.title,
                    "readable": node.readable,
                    "path": node.path,
                }
            )
            for child in node.children:
                visit(child, node.id, depth + 1)

        visit(self.root, self.missing_parent, 0)
        schema = {
            "id": pl.Utf8,
            "parent": pl.Utf8,
            "kind": pl.Utf8,
            "depth": pl.Int64,
            "title": pl.Utf8,
            "readable": pl.Boolean,
            "path": pl.Utf8,
        }
        return pl.DataFrame(rows, schema=schema)

    def _text_(self) -> str:
        lines: list[str] = []
        if self.missing_parent is not None:
            lines.append(f"({self.missing_parent}: parent not in this workspace)")

        def label(node: LineageNode) -> str:
            mark = "  <--" if node.id == self.focus else ""
            kind = "" if node.kind == "root" else f"[{node.kind}] "
            title = node.title if node.title is not None else "(untitled)"
            bad = "" if node.readable else " (unreadable)"
            return f"{kind}{node.id[:8]}  {title}{bad}{mark}"

        def visit(node: LineageNode, prefix: str, last: bool, top: bool) -> None:
            if top:
                lines.append(label(node))
                child_prefix = ""
            else:
                lines.append(f"{prefix}{'└── ' if last else '├── '}{label(node)}")
                child_prefix = prefix + ("    " if last else "│   ")
            for i, child in enumerate(node.children):
                visit(child, child_prefix, i == len(node.children) - 1, False)

        visit(self.root, "", True, True)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"SessionTree(root {self.root.id[:8]}, {len(self)} sessions, focus {self.focus[:8]})"

    def _html_(self) -> str:
        def item(node: LineageNode) -> str:
            kind = "" if node.kind == "root" else badge(node.kind, "tool")
            title = esc(node.title if node.title is not None else "(untitled)")
            bad = badge("unreadable", "error") if not node.readable else ""
            mine = " style='font-weight:600'" if node.id == self.focus else ""
            kids = "".join(f"<li>{item(c)}</li>" for c in node.children)
            sub = f"<ul>{kids}</ul>" if kids else ""
            return (
                f"<span class='cx-row'{mine}>{kind}<code>{esc(node.id[:8])}</code> {title}"
                f"{bad}</span>{sub}"
            )

        head = ""
        if self.missing_parent is not None:
            gone = f"{self.missing_parent}: parent not in this workspace"
            head = f"<div class='cx-muted'>{esc(gone)}</div>"
        return f"{head}<ul><li>{item(self.root)}</li></ul>"


LineageNode.__module__ = "ctxsdk.session"
SessionTree.__module__ = "ctxsdk.session"


def kind(row: dict[str, Any]) -> Kind:
    """How a session relates to its parent (§12): seeded children are forks, unseeded
    ``origin: 'subagent'`` children are spawned subagents."""
    if row.get("parent") is None:
        return "root"
    if row.get("seeded"):
        return "fork"
    if row.get("origin") == "subagent":
        return "subagent"
    return "child"


def by_id(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Id -> row; with duplicate ids (copied dirs) the first (newest) readable row wins."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        prev = out.get(r["id"])
        if prev is None or (not prev["readable"] and r["readable"]):
            out[r["id"]] = r
    return out


def ancestors(
    rows_by_id: dict[str, dict[str, Any]], start: dict[str, Any]
) -> tuple[list[dict[str, Any]], str | None]:
    """(the ancestors of ``start`` in the workspace, nearest first; the id of the parent that
    ends the chain by not being listed, or None). A ``parentSession`` cycle (hand-edited
    headers) ends the chain too."""
    chain: list[dict[str, Any]] = []
    seen = {start["id"]}
    parent = start.get("parent")
    while parent is not None:
        row = rows_by_id.get(parent)
        if row is None:
            return chain, parent
        if row["id"] in seen:
            break
        seen.add(row["id"])
        chain.append(row)
        parent = row.get("parent")
    return chain, None


def missing_row(session_id: str, child: dict[str, Any]) -> dict[str, Any]:
    """A listing-shaped row for a parent that is not in the workspace."""
    row: dict[str, Any] = {k: None for k in child}
    row.update(
        id=session_id,
        readable=False,
        error=(
            f"session {session_id} (parent of {child['id']}) is not in this workspace: "
            "deleted, or kept under another DSH home"
        ),
    )
    return row


def _created_key(row: dict[str, Any]) -> tuple[Any, str]:
    created = row.get("created")
    return (created.timestamp() if created is not None else float("inf"), row["id"])


def lineage_tree(
    rows: Sequence[dict[str, Any]],
    top: dict[str, Any],
    focus: str,
    missing_parent: str | None,
) -> SessionTree:
    """The tree under ``top``: every listed descendant, children oldest first."""
    kids: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=_created_key):
        if r.get("parent") is not None and r["id"] != r["parent"]:
            kids.setdefault(r["parent"], []).append(r)

    def build(row: dict[str, Any], seen: frozenset[str]) -> LineageNode:
        seen = seen | {row["id"]}
        children = tuple(build(c, seen) for c in kids.get(row["id"], []) if c["id"] not in seen)
        return LineageNode(
            id=row["id"],
            kind=kind(row),
            title=row.get("title"),
            path=row["path"],
            readable=bool(row["readable"]),
            children=children,
        )

    return SessionTree(root=build(top, frozenset()), focus=focus, missing_parent=missing_parent)
