"""cx.Memory end to end: the seed's P2 cross-session recall cases (session A distilled, the
memory closed and reopened as session B), the graph rules of find, the writes, the map, the
tools, and many processes on one file."""

from __future__ import annotations

import json
import multiprocessing as mp
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxsdk._agent import run_agent
from ctxsdk.errors import InvalidArgument, MemoryRefused, NotFound
from ctxsdk.llm import LLM
from ctxsdk.memory import Memory
from ctxsdk.session import get_tokenizer
from ctxsdk.tools import ToolContext, default_registry

from .test_agent import reply
from .test_memory_ingest import KEY, MONDAY, SESSION_A, _session, _work

# (case, query, expected type, pattern its text must match) — the seed's 20 P2 cases, read
# through the fact kernel: a name (TriviumDB, AuthGateway) is found in the memories that say
# it (kind None: any type but an observation), no longer as an entity minted from its capitals
CASES: list[tuple[str, str, str | None, str]] = [
    ("P1", "鉴权", "preference", r"header X"),
    ("P2", "pnpm", "preference", r"pnpm"),
    ("P3", "README", "preference", r"英文"),
    ("P4", "中文", "preference", r"中文"),
    ("P5", "tests", "preference", r"tests before you commit"),
    ("E1", "TriviumDB", None, r"TriviumDB"),
    ("E2", "AuthGateway", None, r"AuthGateway"),
    # E3 (dsh-trivium): the kernel reads no fact in "我们在做 dsh-trivium，它是 … 的一个插件" nor in
    # "dsh-trivium 升级后要重启 dsh web" yet, so no memory names it (observations do)
    ("E4", "DeepSeek_Harness", None, r"DeepSeek_Harness"),
    ("E5", "X-Request-Id", None, r"X-Request-Id"),
    ("D1", "下周", "decision", r"下周"),
    ("D2", "方案 A", "decision", r"方案 A"),
    ("D3", "单文件", "decision", r"单文件"),
    ("D4", "Friday migration", "decision", r"postpone"),
    ("X1", "ModuleNotFoundError", "experience", r"pip install trivium-db"),
]
NEGATIVES = [  # (case, query, a type that must not be among the hits, ... named like this)
    ("N1", "天气", None, ""),
    ("N3", "api_key", None, ""),
    ("N4", "嗯好的", None, ""),
    ("N5", "鉴权", "entity", "鉴权"),  # a quoted term is no entity
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Session A distilled into a fresh memory file, which is then closed."""
    path = tmp_path_factory.mktemp("mem") / "memory.db"
    with Memory(path, clock=MONDAY) as mem:
        report = mem.ingest(_session(SESSION_A), now=MONDAY)
        assert report.added and not report.skipped
        mem.ingest(_work(), now=MONDAY)  # tool work: keyed entities and typed edges
    return path


@pytest.fixture
def b(db: Path) -> Any:
    """Session B: the same file, reopened."""
    with Memory(db, clock=MONDAY) as mem:
        yield mem


@pytest.mark.parametrize(("case", "query", "kind", "pattern"), CASES, ids=[c[0] for c in CASES])
def test_p2_cross_session_recall(
    b: Memory, case: str, query: str, kind: str | None, pattern: str
) -> None:
    hits = b.find(query, top_k=8, expand=1)
    want = {kind} if kind else {"entity", "preference", "decision", "experience"}
    assert any(h.node.type in want and re.search(pattern, h.node.text) for h in hits), (
        case,
        [(h.node.type, h.short) for h in hits],
    )


@pytest.mark.parametrize(
    ("case", "query", "banned", "named"), NEGATIVES, ids=[c[0] for c in NEGATIVES]
)
def test_p2_negatives(b: Memory, case: str, query: str, banned: str | None, named: str) -> None:
    """The seed's negatives: chit-chat and a secret make no memory. Observations (kept by
    default) are the record word for word, redacted: the weather remark is in it, the
    key is not, and an acknowledgement ("嗯好的") is not kept at all."""
    hits = b.find(query)
    if banned is None:
        durable = [h for h in hits if h.node.type != "observation"]
        assert not durable, (case, [h.short for h in durable])
        assert not any(KEY in h.node.text or KEY in h.evidence for h in hits)
        if case == "N4":
            assert len(hits) == 0, [h.short for h in hits]
    else:
        bad = [h for h in hits if h.node.type == banned and named in h.node.name]
        assert not bad, (case, [h.short for h in hits])


def test_p2_global_checks(b: Memory, tmp_path: Path) -> None:
    m = b.map(400)
    assert m.tokens <= 400 and get_tokenizer("cl100k_base").count(m.text) == m.tokens
    assert "preference:" in m.text and " until " in m.text
    assert not any(n.name == "README" for n in b.nodes("entity"))  # no singleton entity
    assert not any(n.name in ("鉴权", "「鉴权」") for n in b.nodes("entity"))
    edges = [e for n in b.nodes() for e in b.store.edges(src=n.id)]
    assert sum(e.label == "in_workspace" for e in edges) <= 1
    with Memory(tmp_path / "empty.db") as empty:
        assert not any(h.node.type == "preference" for h in empty.find("鉴权"))
        assert empty.map().text == ""


def test_an_entity_finds_the_decisions_about_it_whose_text_omits_it(b: Memory) -> None:
    hits = b.find("src/app.py")
    app = next(h for h in hits if h.node.type == "entity" and h.node.name == "src/app.py")
    assert any(p.startswith("<-decided-") for p in app.path)
    assert any(p.startswith("<-about-") for p in app.path)
    assert any(p.startswith("<-fixed-") for p in app.path)


def test_ingesting_twice_adds_nothing(db: Path) -> None:
    with Memory(db, clock=MONDAY) as mem:
        before = mem.export_json()
        again = mem.ingest(_session(SESSION_A), now=MONDAY)
        assert again.skipped and mem.export_json() == before


def test_a_session_ingested_by_older_rules_is_read_again_once(tmp_path: Path) -> None:
    """A memory written before observations carried their turn: the marker has no rules
    version and the nodes no turn. The next ingest reads the session again, gives each
    observation its turn and adds no node; the one after that is skipped."""
    session = _session(SESSION_A)
    with Memory(tmp_path / "old.db", clock=MONDAY) as mem:
        mem.ingest(session, now=MONDAY, verbatim=True)
        for n in mem.nodes("observation"):
            mem.store.put(replace(n, extra={k: v for k, v in n.extra.items() if k != "turn"}))
        mem.store.set_meta(f"ingested:{session.id}", {"through": len(session), "verbatim": True})
        count = len(mem.nodes())
        again = mem.ingest(session, now=MONDAY, verbatim=True)
        assert not again.skipped and again.added == ()
        assert len(mem.nodes()) == count
        assert all(isinstance(n.extra.get("turn"), int) for n in mem.nodes("observation"))
        assert mem.ingest(session, now=MONDAY, verbatim=True).skipped


def test_stale_decisions_are_hidden_unless_the_deadline_is_asked(tmp_path: Path) -> None:
    later = datetime(2026, 12, 20, tzinfo=UTC)  # past both deadlines
    with Memory(tmp_path / "m.db", clock=later) as mem:
        mem.ingest(_session(SESSION_A), now=MONDAY)
        assert not any(
            h.node.type == "decision" and "下周" in h.node.text for h in mem.find("AuthGateway")
        )
        # nor does its word-for-word record (the observation it was read from) bring it back
        found = mem.find("AuthGateway", top_k=20)
        assert not any("下周" in h.node.text for h in found)
        assert any(h.node.type == "observation" for h in found)  # the rest of the record shows
        asked = mem.find("下周")
        assert any(h.stale and "下周" in h.node.text for h in asked)


def test_remember_redacts_secrets_and_merges_equal_memories(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        # The secret is withheld and the rest kept; a text that is only a secret is refused.
        kept = mem.remember(f"the deploy key is {KEY}")
        assert kept.text == "the deploy key is [REDACTED:openai]" and KEY not in str(kept)
        with pytest.raises(MemoryRefused, match=r"only a credential \(openai\)"):
            mem.remember(f" {KEY} ")
        with pytest.raises(MemoryRefused):
            mem.remember("   ")
        a = mem.remember("Always squash before merging.", link_to="GitFlow")
        again = mem.remember("Always squash before merging.", link_to="GitFlow")
        assert a.id == again.id and len(mem.nodes("preference")) == 2
        gitflow = mem.get("GitFlow")
        assert gitflow.type == "entity"
        view = mem.read(gitflow.id)
        assert [(e.label, n.id) for e, n in view.incoming] == [("about", a.id)]
        assert "GitFlow" in str(view) and "about" in view._repr_mimebundle_()["text/html"]


def test_link_archive_rename_and_merge(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        a = mem.remember("Use ruff for linting.", link_to="Ruff")
        pg = mem.remember("Postgres", type="entity")
        pg2 = mem.remember("PostgreSQL", type="entity")
        d = mem.remember(
            "We decided to keep Postgres 16.",
            type="decision",
            link_to="PostgreSQL",
            label="decided",
        )
        mem.link(a.id, "Ruff", "about")  # idempotent
        with pytest.raises(InvalidArgument):
            mem.link(a.id, a.id)
        with pytest.raises(NotFound):
            mem.read("n-does-not-exist")
        kept = mem.merge(pg.id, pg2.id)
        assert "PostgreSQL" in kept.aliases
        assert mem.get("PostgreSQL").id == pg.id  # the alias resolves to the keeper
        assert any(e.src == d.id for e in mem.store.edges(dst=pg.id))  # the edge moved
        assert mem.store.get(pg2.id).status == "archived"  # type: ignore[union-attr]
        assert any(h.node.id == pg.id for h in mem.find("PostgreSQL"))
        renamed = mem.rename(pg.id, "Postgres 16")
        assert renamed.name == "Postgres 16" and "Postgres" in renamed.aliases
        mem.archive(a.id)
        assert not any(h.node.id == a.id for h in mem.find("ruff linting"))
        with pytest.raises(InvalidArgument):
            mem.merge(a.id, pg.id)  # two types


def test_export_import_round_trips_into_a_new_memory(db: Path, tmp_path: Path) -> None:
    with Memory(db, clock=MONDAY) as src:
        data = src.export_json()
        md = src.to_markdown()
        g = src.graph()
    assert md.startswith("<!-- ctxsdk-memory-export v1 -->")
    assert g.number_of_nodes() >= 15 and g.number_of_edges() >= 1
    json.loads(json.dumps(data))  # plain JSON
    with Memory(tmp_path / "copy.db", clock=MONDAY) as dst:
        report = dst.import_json(data)
        assert len(report.added) == len(data["nodes"]) - 1  # the root maps onto the new root
        again = dst.import_json(data)
        assert again.added == () and again.edges == 0  # by uri: nothing twice
        assert {n["uri"] for n in dst.export_json()["nodes"]} == {n["uri"] for n in data["nodes"]}
        assert any(h.node.type == "preference" for h in dst.find("pnpm"))


def test_the_four_tools(tmp_path: Path) -> None:
    reg = default_registry()
    s = _session(["Hello."], session_id="tools")
    with Memory(tmp_path / "m.db") as mem:
        ctx = ToolContext(session=s, extras={"memory": mem})
        out = reg.dispatch(
            "ctx_remember", json.dumps({"text": "Always use pnpm.", "link_to": "pnpm"}), ctx
        )
        assert out["type"] == "preference" and out["path"]
        # A secret is withheld and the rest kept; a text that is only a secret is refused.
        kept = reg.dispatch("ctx_remember", json.dumps({"text": f"key {KEY}"}), ctx)
        assert KEY not in json.dumps(kept) and "[REDACTED:openai]" in mem.get(kept["id"]).text
        refused = reg.dispatch("ctx_remember", json.dumps({"text": KEY}), ctx)
        assert refused["error"]["code"] == "refused" and "openai" in refused["error"]["message"]
        found = reg.dispatch("ctx_find", json.dumps({"query": "pnpm"}), ctx)
        assert found["hits"] >= 1 and "preference" in found["by_type"]
        node_id = found["by_type"]["preference"][0]["id"]
        read = reg.dispatch("ctx_read", json.dumps({"id": node_id}), ctx)
        assert read["node"]["text"] == "Always use pnpm." and read["outgoing"]
        assert read["node"]["sources"][0]["session"] == "tools"
        e = reg.dispatch("ctx_link", json.dumps({"source": node_id, "target": "nope"}), ctx)
        assert e["error"]["code"] == "not_found"
    none = reg.dispatch("ctx_find", json.dumps({"query": "x"}), ToolContext(session=s))
    assert "unavailable" in none


def test_settings_pins_and_the_turn_context(db: Path) -> None:
    with Memory(db, clock=MONDAY) as mem:
        pref = next(n for n in mem.nodes("preference") if "pnpm" in n.text)
        assert mem.pins("s1") == [] and mem.pin("s1", pref.id) == [pref.id]
        assert mem.pins("s2") == [] and mem.inherit_pins("s1", "s2") == [pref.id]
        with pytest.raises(InvalidArgument):
            mem.configure(recall="sometimes")
        mem.configure(recall="anchor")
        target = _session(["Hi."], session_id="s1")
        text = mem.context(target, "What about src/app.py?")
        assert text is not None
        assert text.startswith("Memory: use ctx_find") and "Pinned memories:" in text
        assert "Memory recall" in text and "src/app.py" in text
        mem.configure(recall="off")
        mem.unpin("s1", pref.id)


def test_run_agent_carries_the_map_into_the_first_turn(db: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply("OK."))

    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    with Memory(db, clock=MONDAY) as mem:
        start = _session(["Hello."], session_id="agent-mem")
        out = run_agent(start, llm, "Which package manager?", inject=[mem])
        plugin = [
            e
            for e in out.raw_events[len(start) :]
            if e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin"
        ]
        assert len(plugin) == 1 and "ctx_find" in plugin[0]["data"]["content"][0]["text"]
        again = run_agent(out, llm, "And the tests?", inject=[mem])
        assert not any(  # the map only once: recall is off, nothing pinned
            e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin"
            for e in again.raw_events[len(out) :]
        )


def _writer(path: str, n: int, tag: str) -> None:
    with Memory(path) as mem:
        for i in range(n):
            mem.remember(f"{tag} rule number {i} is kept.", link_to=f"Topic{tag}")


def test_processes_writing_one_memory_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    Memory(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 25, tag)) for tag in ("A", "B", "C")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Memory(path) as mem:
        prefs = mem.nodes("preference")
        assert len(prefs) == 75
        for tag in ("A", "B", "C"):
            topic = mem.get(f"Topic{tag}")
            assert len(mem.store.edges(dst=topic.id)) == 25
        assert len(mem.nodes("workspace")) == 1
        assert any(h.node.text.startswith("B rule number 7") for h in mem.find("B rule number 7"))


def test_a_hit_holding_a_third_of_the_query_is_kept(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        mem.remember("Always use pnpm.")
        assert any(h.node.type == "preference" for h in mem.find("package manager pnpm"))
        assert len(mem.find("weather forecast tomorrow")) == 0


def test_rename_keeps_an_entitys_text_with_its_name(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pg = mem.remember("Postgres", type="entity")
        renamed = mem.rename(pg.id, "Postgres 16")
        assert renamed.text == "Postgres 16" and renamed.aliases == ("Postgres",)
        assert mem.find("Postgres 16")[0].short == "Postgres 16"


def test_anchor_recall_names_the_entity_and_its_neighbours(db: Path) -> None:
    with Memory(db, clock=MONDAY) as mem:
        mem.configure(recall="anchor")
        text = mem.context(_session(["Hi."], session_id="anchor"), "What about src/app.py?")
        mem.configure(recall="off")
    assert text is not None
    recall = text.split("Memory recall", 1)[1]
    assert "entity: edited src/app.py" in recall and "single entry point" in recall  # decided


class _Model:
    """A stand-in model answering with a fixed text (the loopback server tier below is real)."""

    def __init__(self, text: str) -> None:
        self.text, self.calls = text, 0

    def chat(self, messages: Any, **options: Any) -> Any:
        self.calls += 1
        self.options = options

        class R:
            truncated = False

        r = R()
        r.text = self.text  # type: ignore[attr-defined]
        return r


def test_model_proposals_pass_the_rules_filters_or_are_refused(tmp_path: Path) -> None:
    s = _session(
        # the second sentence holds no cue the rules read: only the model's proposal keeps it
        [
            "We store invoices in S3 and InvoiceStore reads them.",
            "InvoiceStore latency matters a lot to us.",
        ],
        session_id="model",
    )
    answer = {
        "candidates": [
            {"type": "entity", "name": "S3", "text": "We store invoices in S3"},
            {
                "type": "decision",
                "name": "speed",
                "text": "InvoiceStore latency matters a lot to us.",
                "about": "InvoiceStore",
            },
            {"type": "preference", "name": "x", "text": "We store invoices in S3"},  # no cue
            {"type": "decision", "name": "made up", "text": "We moved to Azure last week."},
            {"type": "entity", "name": "k", "text": f"the key {KEY}"},
            {"type": "spell", "text": "We store invoices in S3"},
        ]
    }
    with Memory(tmp_path / "m.db", clock=MONDAY) as mem:
        report = mem.ingest(s, now=MONDAY, llm=_Model(json.dumps(answer)))
        assert report.model is not None and report.model.reason is None
        whys = [why for _, why in report.model.dropped]
        assert whys == [
            "a preference without a preference cue",
            "not said in the session (invented)",
            "secret",
            "unknown type 'spell'",
        ]
        decision = next(n for n in mem.nodes("decision"))
        assert (
            decision.sources[0].via == "model"
            and decision.text == "InvoiceStore latency matters a lot to us."
        )
        assert any(e.label == "decided" for e in mem.store.edges(src=decision.id))
        assert "Azure" not in json.dumps(mem.export_json())
        assert "model: 2 proposals kept, 4 refused" in str(report)


def test_a_failing_model_leaves_the_rules_alone(tmp_path: Path) -> None:
    s = _session(SESSION_A)
    with Memory(tmp_path / "a.db", clock=MONDAY) as a, Memory(tmp_path / "b.db", clock=MONDAY) as b:
        plain = a.ingest(s, now=MONDAY)
        bad = b.ingest(s, now=MONDAY, llm=_Model("not json at all"))
        assert bad.model is not None and bad.model.reason and "JSON" in bad.model.reason
        assert len(bad.added) == len(plain.added)


def test_the_model_pass_over_the_loopback_server(tmp_path: Path) -> None:
    from ._openai_server import openai_server

    s = _session(["Always deploy from the release branch."], session_id="live")
    answer = {
        "candidates": [
            {
                "type": "preference",
                "name": "release",
                "text": "Always deploy from the release branch.",
            }
        ]
    }
    with openai_server() as server, Memory(tmp_path / "m.db") as mem:
        server.replies.append(json.dumps(answer))
        llm = LLM(server.url, server.model, api_key="k", env={})
        report = mem.ingest(s, llm=llm)
        sent = server.requests[-1]
        prefs = mem.nodes("preference")
    assert report.model is not None and report.model.reason is None
    assert sent["temperature"] == 0 and "Always deploy" in json.dumps(sent["messages"])
    assert len(prefs) == 1  # the rule and the model found the same one


def _two_exchanges() -> Any:
    from ctxsdk.session import Session
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(session_id="sections", runtime_context=None)
    b.turn("deploy the billing service to staging")
    b.assistant(tool_calls=[("bash", {"cmd": f"step {i}"}) for i in range(3)])
    b.tool_results(["pulled image 4.2", "applied manifests", "pods ready in 41 seconds"])
    b.next_step().assistant(text="Deployed.").end_turn()
    b.turn("rename the docs folder")
    b.assistant(tool_calls=[("bash", {"cmd": "mv docs handbook"})])
    b.tool_results(["renamed in 2 seconds"]).next_step().assistant(text="Done.").end_turn()
    return Session.from_events(b.header, b.events)


def test_an_observation_keeps_its_turn_and_its_turn_ranks_with_its_best_match() -> None:
    session = _two_exchanges()
    with Memory(None) as mem:
        mem.ingest(session, verbatim=True)
        obs = {n.text: n for n in mem.nodes("observation")}
        for n in obs.values():
            turn = session.index.turn_of(n.sources[0].seq)
            assert turn is not None and n.extra["turn"] == turn.turn
        # (the request is also a preference now, the kernel's instruction: observations only)
        # (a memory read from an observation shows in its place, the record as evidence)
        found = [
            h.evidence or h.node.text
            for h in mem.find("billing service staging", top_k=12)
            if h.node.type == "observation" or h.node.sources[0].quote in obs
        ]
        # Two nodes away from the prompt, "pods ready" meets no query word and no
        # neighbour that does: it ranks because its turn holds the best match, above the
        # other exchange (which a feedback word reaches, weakly).
        assert found[0] == "deploy the billing service to staging"
        first = {n.text for n in obs.values() if n.extra["turn"] == 1}
        assert set(found[: len(first)]) == first
        assert "pods ready in 41 seconds" in first


def test_memory_open_takes_every_argument_the_constructor_takes() -> None:
    import inspect

    from ctxsdk.errors import InvalidArgument

    ctor = list(inspect.signature(Memory.__init__).parameters)[1:]  # without self
    assert list(inspect.signature(Memory.open).parameters) == ctor
    with pytest.raises(InvalidArgument, match="search is"):
        Memory.open(None, embedder=None, search="nowhere")  # type: ignore[arg-type]
