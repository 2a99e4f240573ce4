"""Every door into a memory, and every block Merge renders, against the redaction corpus.

The corpus's positives (``ctxsdk.bench._redact_corpus``) are fed to every way text enters a
memory (each ``remember`` argument, ``rename``, ``import_json`` in every text field, the
MEMORY.md import, ``ingest`` of sessions holding them in user text, assistant text,
tool-call arguments and tool results, the session map, the model pass, the four memory
tools) and to Merge (``text``, ``inject``, the ``merge_sessions`` tool, the widgets'
payloads). No secret may be in anything stored (every row of every table, and the raw bytes
of the SQLite file and its WAL) or rendered.

The detection rules are still being improved, so the assertion is relative: every secret
``redact`` withholds from its case's text in isolation is withheld at every door; a case
whose secret ``redact`` does not yet withhold is skipped and counted
(``test_cases_redact_does_not_withhold_yet``). Cases are batched per memory and per session
so the whole file runs in seconds.

Also here: ordinary words are stored (the old word list refused them), a text that is nothing
but a credential is refused at every door, and ``neutralize`` holds at every output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._redact_corpus import Case, positives
from ctxsdk.bench._redact_doors import _stored  # every row and the raw bytes
from ctxsdk.errors import MemoryRefused
from ctxsdk.memory import Memory, Source
from ctxsdk.memory._tools import (
    FindArgs,
    LinkArgs,
    ReadArgs,
    RememberArgs,
    ctx_find,
    ctx_link,
    ctx_read,
    ctx_remember,
)
from ctxsdk.merge import MergeSources
from ctxsdk.merge._tool import MergeSessionsArgs, merge_sessions
from ctxsdk.session import redact
from ctxsdk.session._model_text import CONTROL_CHARS
from ctxsdk.session.kernel import neutralize
from ctxsdk.testing import LogBuilder, ToolOutput

ALL = positives()
CASES = [c for c in ALL if c.secret and c.secret not in redact(c.text).text]
UNDETECTED = [c for c in ALL if c not in CASES]
BATCH = 20


def _batches(cases: Sequence[Case] = CASES, size: int = BATCH) -> Iterator[list[Case]]:
    for i in range(0, len(cases), size):
        yield list(cases[i : i + size])


def _forms(secret: str) -> set[str]:
    """How a secret could show up stored: as written, JSON-escaped, its whitespace joined,
    lowercased (a long one), and each long line of a multi-line one (a key block's body)."""
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1], " ".join(secret.split())}
    if len(secret) >= 12:
        forms.add(secret.lower())  # a claim's value is lowercased
    forms |= {
        line.strip()
        for line in secret.splitlines()
        if len(line.strip()) >= 16 and "-----" not in line
    }
    return {f for f in forms if f}


FORMS = {c.secret: _forms(c.secret) for c in CASES if c.secret}


def _leaks(haystack: str | bytes, cases: Sequence[Case] = CASES) -> list[str]:
    """The cases (shape and family) whose secret, in any form, is in ``haystack``."""
    out = []
    for c in cases:
        assert c.secret is not None
        forms = FORMS[c.secret]
        if isinstance(haystack, bytes):
            found = any(f.encode() in haystack for f in forms)
        else:
            found = any(f in haystack for f in forms)
        if found:
            out.append(f"{c.family}/{c.shape}: {c.text[:60]!r}")
    return out


def _assert_nothing_stored(path: Path, cases: Sequence[Case] = CASES) -> None:
    rows, raw = _stored(path)
    assert rows, "the memory holds nothing: the test would prove nothing"
    assert _leaks(rows, cases) == [], "in a row"
    assert _leaks(raw, cases) == [], "in the file's bytes"


def _assert_not_rendered(value: Any, cases: Sequence[Case] = CASES) -> None:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    assert _leaks(text, cases) == []


def _closed(path: Path, cases: Sequence[Case] = CASES) -> None:
    """After the memory is closed (the WAL checkpointed into the file), the bytes again."""
    _assert_nothing_stored(path, cases)


# -- the count of what the rules do not catch yet ------------------------------------------
def test_cases_redact_does_not_withhold_yet() -> None:
    assert CASES, "no corpus case is withheld by redact: the doors test nothing"
    if UNDETECTED:
        shapes = sorted({f"{c.family}/{c.shape}" for c in UNDETECTED})
        pytest.skip(
            f"{len(UNDETECTED)} of {len(ALL)} corpus positives are not withheld by redact() "
            f"in isolation, so no door is asked to: {', '.join(shapes[:12])}"
        )


# -- remember: every argument ---------------------------------------------------------------
# A memory per batch: a write scans its type's nodes, so one memory for every case is slow.
def test_remember_withholds_every_secret_in_every_argument(tmp_path: Path) -> None:
    for n, batch in enumerate(_batches()):
        db = tmp_path / f"m{n}.db"
        with Memory(db) as mem:
            for i, c in enumerate(batch):
                node = mem.remember(
                    f"case {i} says {c.text}",
                    type="decision" if i % 2 else "preference",
                    name=f"name {i}: {c.text}",
                    link_to=[f"entity {i} {c.text}", f"other {i} {c.text}"],
                    source=Source(
                        session=f"session {c.text}", quote=f"quote {c.text}", via=f"via {c.text}"
                    ),
                    until=f"{c.text}\nuntil next Friday" if i % 3 else f"deadline {c.text}",
                )
                assert c.secret not in str(node)
            _assert_nothing_stored(db, batch)
            _assert_not_rendered([n.to_json() for n in mem.nodes(include_archived=True)], batch)
        _closed(db, batch)


def test_rename_withholds_every_secret(tmp_path: Path) -> None:
    for n, batch in enumerate(_batches()):
        db = tmp_path / f"m{n}.db"
        with Memory(db) as mem:
            for i, c in enumerate(batch):
                node = mem.remember(f"Thing{i}", type="entity")
                renamed = mem.rename(node.id, f"renamed {i} {c.text}")
                assert "[REDACTED:" in renamed.name
                mem.rename(node.id, f"again {i}")  # the redacted name is kept as an alias
            _assert_nothing_stored(db, batch)
        _closed(db, batch)


# -- import: JSON, every text field, and MEMORY.md -----------------------------------------
def _export_holding(cases: Sequence[Case]) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for i, c in enumerate(cases):
        t = f"field {i} {c.text}"
        nodes.append(
            {
                "id": f"n{i}",
                "type": "decision",
                "name": t,
                "text": t,
                "aliases": [t, f"alias {c.text}"],
                "uri": f"ctx://decision/{i}/{c.text}",
                "sources": [{"session": t, "seq": i, "quote": t, "via": t}],
                "until": t,
                "untilAt": t,
                "fail": t,
                "fix": t,
                "status": "active",
                "createdAt": t,
                "updatedAt": t,
                "extra": {t: t, "nested": [t, {"deep": t}]},
            }
        )
        if i:
            edges.append({"src": f"n{i - 1}", "dst": f"n{i}", "label": "about", "createdAt": t})
    return {"format": "ctxsdk-memory-graph", "version": 1, "nodes": nodes, "edges": edges}


def test_import_json_withholds_every_secret_in_every_field(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for batch in _batches():
            report = mem.import_json(_export_holding(batch))
            assert len(report.added) == len(batch)
        _assert_nothing_stored(db)
        _assert_not_rendered(mem.export_json())
        _assert_not_rendered(mem.to_markdown())
    _closed(db)


def test_memory_md_import_withholds_every_secret(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for batch in _batches(size=6):  # the import's caps: 24 items a batch
            lines = ["# Billing"]
            for c in batch:
                # The case's text as it is (the guarantee is for that text), as a rule, a
                # decision, and on one line as a key's value and a heading.
                lines += [f"- always {c.text}", f"- we decided {c.text}"]
                if "\n" not in c.text:
                    lines += [f"- Service{len(lines)}: {c.text}", f"# {c.text}"]
            report = mem.import_memory_md("\n".join(lines))
            _assert_not_rendered(report.dropped, batch)
        _assert_nothing_stored(db)
    _closed(db)


# -- ingest: user text, assistant text, tool calls and results, the session map, the model --
def _session_holding(sid: str, cases: Sequence[Case], *, compact: bool = True) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for i, c in enumerate(cases):
        b.turn(f"Always keep this in mind: {c.text}\nWe decided to go with plan B. {c.text}")
        b.assistant(
            text=f"Noted: {c.text}",
            reasoning=f"the user said {c.text}",
            tool_calls=[("bash", {"command": f"deploy {c.text}"}), ("bash", {"note": c.text})],
        )
        b.tool_results([ToolOutput.failed(f"error: {c.text}", "Exit", "1"), f"ok {c.text}"])
        b.next_step().assistant(text=f"Done with {c.text}").end_turn()
        if compact and i % 10 == 9:
            b.compact(1, f"Summary: {c.text}")
    b.turn(f"the latest request is {cases[-1].text}")  # the session map's tail
    return cx.Session.from_events(b.header, b.events)


def test_ingest_withholds_every_secret_everywhere(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for n, batch in enumerate(_batches()):
            s = _session_holding(f"ingest-{n}", batch)
            report = mem.ingest(s, verbatim=True)
            assert report.added
            _assert_not_rendered(str(report), batch)
            _assert_not_rendered(report.dropped, batch)
            mem.cut(s)  # a box cut by hand: summarised by the last user message
        assert mem.episodes()
        _assert_nothing_stored(db)
        _assert_not_rendered(mem.map(budget=4000).text)
        _assert_not_rendered([b.to_json() for b in mem.episodes()])
    _closed(db)


class _Model:
    """A model that proposes what it was told to (the door must hold whatever it says)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer

    def chat(self, messages: Any, **options: Any) -> Any:
        class Reply:
            text = json.dumps(self.answer)
            truncated = False

        return Reply()


def test_the_model_pass_withholds_every_secret(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for n, batch in enumerate(_batches(size=6)):
            said = f"Always run the linter before pushing {n}."
            b = LogBuilder(session_id=f"model-{n}", runtime_context=None)
            b.turn(f"{said} AuthGateway and AuthGateway.").assistant(text="ok").end_turn()
            s = cx.Session.from_events(b.header, b.events)
            proposals = [
                {"type": "preference", "name": c.text, "text": said, "until": c.text} for c in batch
            ] + [{"type": "decision", "name": "x", "text": c.text, "about": c.text} for c in batch]
            report = mem.ingest(s, llm=_Model({"candidates": proposals}))
            assert report.model is not None and report.model.reason is None
            _assert_not_rendered(str(report), batch)
        _assert_nothing_stored(db)
    _closed(db)


# -- the four tools ---------------------------------------------------------------------------
def test_the_four_tools_withhold_every_secret(tmp_path: Path) -> None:
    # Called as the registry calls them, without its length limits: a long case still
    # reaches every argument.
    for n, batch in enumerate(_batches()):
        db = tmp_path / f"m{n}.db"
        s = _session_holding(f"tools-{n}", batch[:3], compact=False)
        answers: list[Any] = []
        with Memory(db) as mem:
            mem.configure(recall="auto")
            for i, c in enumerate(batch):
                args = RememberArgs.model_construct(
                    text=f"tool case {i}: {c.text}",
                    type="experience",
                    name=f"n{i} {c.text}",
                    link_to=f"link {i} {c.text}",
                    link_label="about",
                )
                out = ctx_remember(s, args, mem)
                assert "id" in out, out
                answers += [
                    out,
                    ctx_find(FindArgs.model_construct(query=c.text, top_k=8), mem),
                    ctx_read(ReadArgs.model_construct(id=out["id"]), mem),
                    ctx_read(ReadArgs.model_construct(id=c.text), mem),  # an echoed id
                    ctx_link(LinkArgs.model_construct(source=out["id"], target=c.text), mem),
                ]
            _assert_nothing_stored(db, batch)
            _assert_not_rendered(answers, batch)
            _assert_not_rendered([mem.context(s, prompt=c.text) for c in batch[:5]], batch)
        _closed(db, batch)


# -- Merge: the block, inject, the tool, the widget -------------------------------------------
def _merge_source(sid: str, cases: Sequence[Case]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    # A clean belief, so the block has something to show whatever the cases give.
    b.turn("The database is PostgreSQL.").assistant(text="Noted.").end_turn()
    for i, c in enumerate(cases):
        title = c.text if len(c.text.encode()) <= 80 else f"title {i}"  # the format's limit
        b.turn(f"The endpoint {i} is {c.text}\n{c.text}\nsecret {i}: {c.text}", title=title)
        b.assistant(
            text=f"The token {i} is {c.text}\nUse {c.text}\nnot plain.",
            reasoning=f"The key {i} is {c.text}\n",
            tool_calls=[("bash", {"command": f"export K={c.text}", "why": c.text})],
        )
        b.tool_results([f"The value {i} is {c.text}\n{c.text}"])
        b.next_step().assistant(text="ok").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _aligner(sources: Sequence[str], cases: Sequence[Case]) -> _Model:
    """A model whose slots carry the cases in their keys and values (quotes are checked
    against the branches, so they are the clean belief)."""
    slots = [
        {
            "key": f"k{i} {c.text}",
            "type": "fact",
            "opinions": [
                {
                    "source": src,
                    "value": c.text,
                    "evidence": 4,
                    "quote": "The database is PostgreSQL.",
                }
                for src in sources
            ],
        }
        for i, c in enumerate(cases)
    ]
    return _Model({"slots": slots})


def test_merge_withholds_every_secret_in_what_it_renders() -> None:
    from ctxsdk.widgets import BeliefSlots

    target = LogBuilder(session_id="target", runtime_context=None)
    target.turn("Hello.").assistant(text="Hi.").end_turn()
    target.turn("Which endpoint?")
    open_turn = cx.Session.from_events(target.header, target.events)
    for n, batch in enumerate(_batches(size=60)):
        half = len(batch) // 2 or 1
        # One source's id is a case's text: it is every claim's source and the provenance.
        ids = [f"m{n}-a {batch[0].text}", f"m{n}-b"]
        sources = [_merge_source(ids[0], batch[:half]), _merge_source(ids[1], batch[half:])]
        for llm in (None, _aligner([redact(i).text for i in ids], batch)):
            r = cx.Merge(sources, llm=llm).budget(200_000).run(query="endpoint")
            assert r.slots and r.text and r.alignment.mode == ("llm" if llm else "heuristic")
            _assert_not_rendered(r.text, batch)
            _assert_not_rendered(str(r), batch)
            _assert_not_rendered(r._html_(), batch)
            _assert_not_rendered(r.message(), batch)
            injected = r.inject(open_turn)
            _assert_not_rendered(injected.raw_events[len(open_turn) :], batch)
            _assert_not_rendered([(b.id, b.title, b.path) for b in r.branches], batch)
            w = BeliefSlots(r)
            _assert_not_rendered([w._rows, w._block, w.summary], batch)
            for s in r.slots[:50]:
                _assert_not_rendered(w._provenance(neutralize(s.key)), batch)


def test_the_block_redacts_and_neutralizes_whatever_its_slots_hold() -> None:
    # The sources are redacted when read; the renderer does not rely on it. Slots built
    # from unredacted claims (keys, values, quotes and sources all holding a case) must
    # still render without a secret or a raw control character.
    from ctxsdk.merge import Claim
    from ctxsdk.merge._render import build_block
    from ctxsdk.merge.kernel import build_slots

    for batch in _batches(size=60):
        claims = [
            Claim(
                key=f"k{i} {c.text}",
                value=c.text,
                evidence=4,
                text=f"said \x1b[2J {c.text}",
                source=f"src {c.text}",
                seq=i,
                trust=2,
            )
            for i, c in enumerate(batch)
        ]
        block = build_block(build_slots(claims), 200_000, trusts={})
        assert block.slots and block.withheld >= len(batch)
        _assert_not_rendered(block.text, batch)
        assert _clean(block.text) and "\\x1b[2J" in block.text


def test_the_merge_tool_withholds_every_secret(tmp_path: Path) -> None:
    s = _merge_source("self", CASES[:1])
    candidates = [(f"s{i}-{c.text}", c.text) for i, c in enumerate(CASES)]
    sources = MergeSources(tmp_path / "sources")
    answers = [
        merge_sessions(s, MergeSessionsArgs(action="list"), sources=sources, candidates=candidates),
        merge_sessions(
            s,
            MergeSessionsArgs(action="set", sessions=["#1", "#2"]),
            sources=sources,
            candidates=candidates,
        ),
        merge_sessions(
            s,
            MergeSessionsArgs(action="add", sessions=[c.text for c in CASES[:20]]),
            sources=sources,
            candidates=candidates,
        ),
    ]
    _assert_not_rendered(answers)


# -- ordinary words are stored --------------------------------------------------------------
ORDINARY = (
    "Always use the tokenizer from tiktoken.",
    "Always keep the token budget under 4000.",
    "Always send the header X-Auth-Token with every request.",
    "Always reset the password flow in staging first.",
    "Always read the api key rotation guide before a release.",
    "Always use the secret manager for configs.",
)


def test_ordinary_words_are_stored_at_every_door(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        for text in ORDINARY:
            node = mem.remember(text, name=text[:40], link_to=text[7:30], until=text)
            assert node.text == text and "[REDACTED" not in json.dumps(node.to_json())
        node = mem.rename(node.id, "the token budget")
        assert node.name == "the token budget"
        b = LogBuilder(session_id="ordinary", runtime_context=None)
        for text in ORDINARY:
            b.turn(text).assistant(text="ok").end_turn()
        report = mem.ingest(cx.Session.from_events(b.header, b.events), verbatim=True)
        assert "secret" not in {why for _, why in report.dropped}
        prefs = {n.text for n in mem.nodes("preference")}
        assert set(ORDINARY) <= prefs
        md = mem.import_memory_md("\n".join(f"- {t.replace('Always', 'must')}" for t in ORDINARY))
        assert len(md.added) == len(ORDINARY) and not md.dropped
        out = ctx_remember(None, RememberArgs(text="header X-Auth-Token is required"), mem)
        assert "error" not in out


# -- refused: nothing but a credential ------------------------------------------------------
def test_a_text_that_is_only_a_credential_is_refused_at_every_door(tmp_path: Path) -> None:
    secret = next(c.secret for c in CASES if c.family == "provider")
    assert secret is not None
    kind = next(iter(redact(secret).counts))
    with Memory(tmp_path / "m.db") as mem:
        base = mem.remember("Always use pnpm.")
        before = len(mem.nodes(include_archived=True))
        for kw in (
            {"text": secret},
            {"text": "ok text", "name": secret},
            {"text": "ok text", "link_to": secret},
            {"text": "ok text", "until": f" {secret} "},
            {"text": "ok text", "source": Source(quote=secret)},
        ):
            with pytest.raises(MemoryRefused, match=re.escape(kind)):
                mem.remember(**kw)  # type: ignore[arg-type]
        with pytest.raises(MemoryRefused, match=re.escape(kind)):
            mem.rename(base.id, secret)
        data = mem.export_json()
        data["nodes"][-1]["aliases"] = [secret]
        with pytest.raises(MemoryRefused, match=r"\$\.nodes\[\d+\]'s aliases\[0\]"):
            mem.import_json(data)
        out = ctx_remember(None, RememberArgs(text=secret), mem)
        assert out["error"]["code"] == "refused" and kind in out["error"]["message"]
        assert secret not in json.dumps(out)
        assert len(mem.nodes(include_archived=True)) == before  # nothing written
        # Ingest drops what the door refuses: a tool output that is only a key.
        b = LogBuilder(session_id="only-key", runtime_context=None)
        b.turn("run it").assistant(tool_calls=[("bash", {"command": "cat key"})])
        b.tool_results([secret]).next_step().assistant(text="ok").end_turn()
        report = mem.ingest(cx.Session.from_events(b.header, b.events), verbatim=True)
        assert ("[REDACTED:" + kind + "]", "secret") in report.dropped


# -- neutralize at every output -------------------------------------------------------------
HOSTILE = "ESC\x1b[31m NUL\x00 BEL\x07 DEL\x7f C1\x9b RLO\u202e ALM\u061c ZW\u200b\u2060\ufeff end"


def _clean(text: str) -> bool:
    return CONTROL_CHARS.search(text) is None


def test_neutralize_escapes_what_reorders_or_hides_text() -> None:
    out = neutralize(HOSTILE + "\n\tnext")
    assert _clean(out) and out.endswith("\n\tnext")
    for escape in ("\\x1b", "\\x00", "\\x07", "\\x7f", "\\x9b", "\\u202e", "\\u061c", "\\u200b"):
        assert escape in out
    assert neutralize(out) == out  # idempotent
    assert neutralize("a\nb\tc\rd", one_line=True) == "a\\nb\\tc\\rd"
    assert neutralize("plain text, 中文, עברית") == "plain text, 中文, עברית"


def test_the_cli_escapes_with_the_same_function() -> None:
    from ctxsdk._cli._terminal import json_safe, visible

    assert visible(HOSTILE) == neutralize(HOSTILE, one_line=True)
    assert visible(HOSTILE + "\n", multiline=True) == neutralize(HOSTILE + "\n")
    assert _clean(json_safe(json.dumps(HOSTILE, ensure_ascii=False)))
    assert json.loads(json_safe(json.dumps(HOSTILE, ensure_ascii=False))) == HOSTILE


def test_memory_outputs_are_neutralized_and_stored_text_kept(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pref = mem.remember(f"Always {HOSTILE}", link_to="Hostile\u202eName")
        # stored as given, but for U+0000, which the door drops (no store can hold it alike)
        assert pref.text == f"Always {' '.join(HOSTILE.split())}".replace("\x00", "")
        mem.pin("s", pref.id)
        mem.configure(recall="auto")
        assert _clean(mem.map().text) and "\\u202e" in mem.map().text
        b = LogBuilder(session_id="s", runtime_context=None)
        b.turn("hostile").assistant(text="ok").end_turn()
        context = mem.context(cx.Session.from_events(b.header, b.events), prompt="Always ESC")
        assert context is not None and _clean(context) and "\\x1b" in context
        answers = [
            ctx_remember(None, RememberArgs(text=f"Always {HOSTILE}", link_to="x\u202ey"), mem),
            ctx_find(FindArgs(query="Always ESC"), mem),
            ctx_read(ReadArgs(id=pref.id), mem),
            ctx_read(ReadArgs(id="no\x1bsuch"), mem),
            ctx_link(LinkArgs(source=pref.id, target="no\u202esuch"), mem),
        ]
        text = json.dumps(answers, ensure_ascii=False)
        assert _clean(text) and "\\x1b" in text and "\\u202e" in text


def test_merge_outputs_are_neutralized(tmp_path: Path) -> None:
    from ctxsdk.widgets import BeliefSlots, MemoryGraph

    b = LogBuilder(session_id="src", runtime_context=None)
    b.turn("The database is post\x1bgres\u202e.", title="ti\x1btle").assistant(text="ok")
    b.end_turn()
    b.turn("The queue broker is Kafka.").assistant(text="ok").end_turn()
    target = LogBuilder(session_id="target", runtime_context=None)
    target.turn("Hello.").assistant(text="Hi.").end_turn()
    target.turn("Which database?")
    r = cx.Merge([cx.Session.from_events(b.header, b.events)]).run()
    # the fact kernel reads no claim from text with control or bidi characters; what the
    # block does show is clean
    assert r.slots and _clean(r.text) and "post" not in r.text
    out = r.inject(cx.Session.from_events(target.header, target.events))
    assert _clean(out.messages()[-1].text)
    w = BeliefSlots(r)
    payload = json.dumps([w._rows, w._block, w.summary], ensure_ascii=False)
    assert _clean(payload) and "\\x1b" in payload
    key = w._rows["key"][0]
    assert _clean(json.dumps(w._provenance(key), ensure_ascii=False))
    answer = merge_sessions(
        cx.Session.from_events(target.header, target.events),
        MergeSessionsArgs(action="list"),
        sources=MergeSources(tmp_path / "sources"),
        candidates=[("src", "ti\x1btle \u202e")],
    )
    assert _clean(json.dumps(answer, ensure_ascii=False))
    with Memory(tmp_path / "m.db") as mem:
        mem.remember(f"Always {HOSTILE}", link_to="Hostile\u202eName")
        mem.ingest(cx.Session.from_events(b.header, b.events), verbatim=True)
        g = MemoryGraph(mem, observations=True)
        shown = json.dumps([g._graph, g.session_map], ensure_ascii=False)
        assert _clean(shown) and "\\u202e" in shown
        hit = g._search(query="Always")
        node = g._read(hit["hits"][0]["id"])
        assert _clean(json.dumps([hit, node], ensure_ascii=False))


def test_observation_names_the_door_keeps_unscanned_are_what_redact_keeps() -> None:
    """The door keeps an observation's name ("user@12") without redaction's scans: each such
    name (a stride of every seq it covers, and its ends) is one ``redact`` keeps whole with
    nothing withheld, and a name outside that shape still goes through redaction."""
    from ctxsdk.memory._door import _SPEAKER_AT, admit

    seqs = [*range(0, 1_000_000, 9_973), *range(0, 200), 999_999]
    for who in ("user", "assistant"):
        for seq in seqs:
            name = f"{who}@{seq}"
            assert _SPEAKER_AT.fullmatch(name) is not None
            red = redact(name)
            assert red.text == name and not red.counts
            assert admit(name) == name
    for other in ("user@1000000", "user@007", "tool@3", "user@3 ", "user@\uff13"):
        assert _SPEAKER_AT.fullmatch(other) is None
    secret = "user@3 password=hunter2horse!Staple9"
    assert admit(secret) == redact(secret).text
