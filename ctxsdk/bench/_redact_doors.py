"""``bench redact``'s door count: corpus secrets fed to every way into a memory and to Merge.

Each positive goes through remember (text, name, link, until, a source quote), rename, a
JSON import (every text field), a MEMORY.md import, ingest of a session holding it in a
prompt, a reply, a tool call and a tool result (with the session map and a cut box), the
four memory tools, and a Merge of two sessions holding it (the block and the injected text).
A secret *leaks* when, in any of the forms it could be stored in (as written, JSON-escaped,
whitespace joined, each long line of a key block), it is in the SQLite file, its WAL, any row,
or any text rendered from the memory or the merge. A leak is the doors' fault when
``redact`` withholds the secret from the case's text alone; otherwise it is the engine's miss,
counted apart.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._redact_corpus import Case

__all__ = ["door_leaks"]


def _forms(secret: str) -> set[str]:
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1], " ".join(secret.split())}
    forms |= {ln.strip() for ln in secret.splitlines() if len(ln.strip()) >= 16}
    return {f for f in forms if f}


def _stored(path: Path) -> tuple[str, bytes]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [
            "\n".join(str(v) for v in row)
            for t in tables
            for row in con.execute(f'SELECT * FROM "{t}"')
        ]
    finally:
        con.close()
    raw = b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    return "\n".join(rows), raw


def _batches(cases: Sequence[Case], size: int) -> Iterator[list[Case]]:
    for i in range(0, len(cases), size):
        yield list(cases[i : i + size])


def _session(sid: str, cases: Sequence[Case]) -> Any:
    import ctxsdk as cx
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(session_id=sid, runtime_context=None)
    for c in cases:
        b.turn(f"Always keep this in mind: {c.text}")
        b.assistant(text=f"Noted: {c.text}", tool_calls=[("bash", {"command": f"run {c.text}"})])
        b.tool_results([f"ok {c.text}"])
        b.next_step().assistant(text=f"We decided to use {c.text}").end_turn()
    b.turn(f"the latest request is {cases[-1].text}")
    return cx.Session.from_events(b.header, b.events)


def _feed_memory(db: Path, cases: Sequence[Case]) -> list[Any]:
    """Every door of a memory; returns what was rendered on the way."""
    from ctxsdk.errors import MemoryRefused
    from ctxsdk.memory import Memory, Source
    from ctxsdk.memory.kernel import (
        FindArgs,
        ReadArgs,
        RememberArgs,
        ctx_find,
        ctx_read,
        ctx_remember,
    )

    rendered: list[Any] = []
    with Memory(db) as mem:
        for i, c in enumerate(cases):
            try:
                node = mem.remember(
                    f"case {i}: {c.text}",
                    type="decision",
                    name=f"name {i}: {c.text}",
                    link_to=[f"entity {i} {c.text}"],
                    source=Source(session=f"s{i}", quote=f"quote {c.text}", via="user"),
                    until=f"{c.text} until Friday",
                )
                mem.rename(node.id, f"renamed {i} {c.text}")
            except MemoryRefused as e:
                rendered.append(str(e))
        for n, batch in enumerate(_batches(cases, 20)):
            nodes = [
                {"id": f"n{n}-{i}", "type": "decision", "name": f"f {c.text}",
                 "text": f"f {c.text}", "aliases": [c.text], "until": c.text,
                 "sources": [{"session": "x", "quote": c.text}], "extra": {"k": c.text}}
                for i, c in enumerate(batch)
            ]  # fmt: skip
            export = {"format": "ctxsdk-memory-graph", "version": 1, "nodes": nodes, "edges": []}
            try:  # a field that is nothing but a credential refuses the whole import
                rendered.append(str(mem.import_json(export)))
            except MemoryRefused as e:
                rendered.append(str(e))
        for batch in _batches(cases, 6):
            md = "\n".join(f"- always {c.text}" for c in batch)
            rendered.append(str(mem.import_memory_md(f"# Notes\n{md}")))
        for n, batch in enumerate(_batches(cases, 40)):
            s = _session(f"doors-{n}", batch)
            rendered.append(str(mem.ingest(s, verbatim=True)))
            mem.cut(s)
            rendered.append(ctx_remember(s, RememberArgs.model_construct(
                text=f"tool {batch[0].text}", type="experience", name=None,
                link_to=batch[-1].text, link_label="about"), mem))  # fmt: skip
        for c in cases[:50]:
            hits = ctx_find(FindArgs.model_construct(query=c.text, top_k=5), mem)
            rendered.append(hits)
            rendered.append(ctx_read(ReadArgs.model_construct(id=c.text), mem))
        rendered.append(mem.map(budget=4000).text)
        rendered.append([b.to_json() for b in mem.episodes()])
        rendered.append(mem.export_json())
    return rendered


def _merge(cases: Sequence[Case]) -> list[Any]:
    import ctxsdk as cx

    rendered: list[Any] = []
    for n, batch in enumerate(_batches(cases, 40)):
        a, b = _session(f"merge-a-{n}", batch), _session(f"merge-b-{n}", batch[::-1])
        result = cx.Merge([a, b]).budget(4000).run()
        rendered += [result.text, result.to_polars().write_json()]
    return rendered


def door_leaks(cases: Sequence[Case], *, quick: bool = False) -> tuple[int, int]:
    """How many of ``cases`` (positives) leak through any door (see the module docs): those
    whose secret ``redact`` withholds from the case's text alone (a door that does less
    than the engine), and all of them (the engine's own misses too)."""
    if quick:
        cases = cases[::3]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "doors.db"
        rendered = _feed_memory(db, cases)
        rows, raw = _stored(db)
    rendered += _merge(cases)
    text = rows + "\n" + json.dumps(rendered, ensure_ascii=False, default=str)
    from ctxsdk.session import redact

    through_doors = engine_misses = 0
    for c in cases:
        forms = _forms(c.secret or "")
        if any(f in text for f in forms) or any(f.encode() in raw for f in forms):
            if c.secret and c.secret in redact(c.text).text:
                engine_misses += 1
            else:
                through_doors += 1
    return through_doors, through_doors + engine_misses
