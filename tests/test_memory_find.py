"""``Memory.find`` on natural questions (no share of the query's words is required, question
words count for nothing), and its lexical answer, with the reason shown, when the embedder
fails: a real loopback endpoint answering 500, garbage or too late, and httpx.MockTransport."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import httpx
import pytest

from ctxsdk.errors import DegradedSearchWarning
from ctxsdk.llm import LLM, RemoteEmbedder
from ctxsdk.memory import Memory
from ctxsdk.session import Session
from ctxsdk.session.kernel import query_window
from ctxsdk.testing import LogBuilder

from ._openai_server import openai_server

FACTS = {
    "test": ("The tests run with make check; never call pytest directly.", "preference"),
    "cache": ("We decided to keep the cache in Redis, not memcached.", "decision"),
    "pm": ("包管理器统一用 pnpm。", "preference"),
    "deploy": ("Deploys go out on Tuesdays after the release review.", "decision"),
}
QUESTIONS = [
    ("which command runs the tests?", "test"),
    ("Which command should I use to run the whole test suite before I push?", "test"),
    ("what did we decide about the cache?", "cache"),
    ("Where do we keep cached values these days?", "cache"),
    ("我们用什么包管理器？", "pm"),
    ("when do deploys happen?", "deploy"),
]


def _fill(mem: Memory) -> dict[str, str]:
    return {k: mem.remember(text, type=kind).id for k, (text, kind) in FACTS.items()}


@pytest.mark.parametrize(("question", "key"), QUESTIONS, ids=[q for q, _ in QUESTIONS])
def test_a_natural_question_reaches_its_answer(question: str, key: str) -> None:
    with Memory() as mem:
        ids = _fill(mem)
        hits = mem.find(question, top_k=3)
        assert hits and hits[0].node.id == ids[key], [h.short for h in hits]


@pytest.mark.parametrize(
    "question",
    ["what is it?", "which one did you mean?", "什么是什么？", "为什么呢？", "tell me the weather"],
)
def test_question_words_alone_match_nothing(question: str) -> None:
    with Memory() as mem:
        _fill(mem)
        assert len(mem.find(question)) == 0


def _embedding_memory(llm: LLM) -> Memory:
    mem = Memory(embedder=RemoteEmbedder(llm, dim=64))
    _fill(mem)
    return mem


def _check_degraded(mem: Memory, why: str) -> None:
    with pytest.warns(DegradedSearchWarning) as caught:
        result = mem.find("which command runs the tests?")
    assert result.degraded and result.degraded_reason is not None
    assert why in result.degraded_reason and "remote:" in result.degraded_reason
    ours = [w.message for w in caught if isinstance(w.message, DegradedSearchWarning)]
    assert [w.reason for w in ours] == [result.degraded_reason]
    assert result[0].node.text.startswith("The tests run")  # answered lexically
    assert f"lexical only: {result.degraded_reason}" in result._text_()
    assert "lexical only" in result._html_()
    assert result.to_json()["degraded_reason"] == result.degraded_reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per memory
        again = mem.find("what did we decide about the cache?")
    assert again.degraded and again[0].node.text.startswith("We decided")


@pytest.mark.parametrize(("mode", "why"), [("500", "LLMProviderError"), ("garbage", "bad")])
def test_a_failing_endpoint_answers_lexically_and_says_why(mode: str, why: str) -> None:
    with openai_server() as server:
        server.embeddings = mode
        llm = LLM(server.url, "embed-model", api_key="k", env={}, max_retries=0)
        with _embedding_memory(llm) as mem:
            _check_degraded(mem, why)
        assert any("input" in r for r in server.requests)  # the endpoint was really asked


def test_a_timing_out_endpoint_answers_lexically() -> None:
    with openai_server() as server:
        server.embeddings, server.delay = "slow", 3.0
        llm = LLM(server.url, "embed-model", api_key="k", env={}, max_retries=0, timeout=0.5)
        with _embedding_memory(llm) as mem:
            _check_degraded(mem, "LLMTimeout")


def test_an_endpoint_that_recovers_is_used_again() -> None:
    with openai_server() as server:
        server.embeddings = "500"
        llm = LLM(server.url, "embed-model", api_key="k", env={}, max_retries=0)
        with _embedding_memory(llm) as mem:
            with pytest.warns(DegradedSearchWarning):
                assert mem.find("cache").degraded
            server.embeddings = "ok"
            result = mem.find("cache")
            assert not result.degraded and "lexical only" not in result._text_()


def test_a_mock_transport_failure_answers_lexically(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": {"message": "down"}})

    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    llm.max_retries = 0
    with _embedding_memory(llm) as mem:
        _check_degraded(mem, "LLMProviderError")


def test_a_wrong_shape_answers_lexically() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        n = len(json.loads(request.read())["input"])
        vectors = [{"index": i, "embedding": [1.0]} for i in range(n)]
        return httpx.Response(200, json={"data": vectors})

    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    llm.max_retries = 0
    with _embedding_memory(llm) as mem:
        _check_degraded(mem, "64")


def test_without_an_embedder_nothing_is_degraded() -> None:
    with Memory() as mem:
        _fill(mem)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = mem.find("cache")
        assert not result.degraded and "degraded_reason" not in result.to_json()


def test_a_question_about_what_the_user_asked_reaches_the_users_words() -> None:
    """A preference ingest read is indexed with words for its kind ("user asked wants"): a
    question in those words finds it though it shares no other word with it; the same text
    remembered by hand is not taken for the user's."""
    from ctxsdk.session import Session

    asked = "put them in a single table for better readability"
    s = Session.from_messages(
        [
            {"role": "user", "content": "list the three options we discussed"},
            {"role": "assistant", "content": "Option 1 keeps the parser; option 2 forks it."},
            {"role": "user", "content": asked},
        ],
        format="openai",
    )
    with Memory(None, embedder=None) as mem:
        mem.ingest(s, verbatim=False)
        prefs = [n for n in mem.nodes("preference") if asked in n.text]
        assert prefs, [n.text for n in mem.nodes()]
        hits = mem.find("How does the user want it presented?")
        assert prefs[0].id in [h.node.id for h in hits]
        # the kind words are not the node's words: no literal match on them
        assert all(h.via != "match" for h in mem.find("user asked wants"))
    with Memory(None, embedder=None) as mem:
        mem.remember(asked)
        assert len(mem.find("How does the user want it presented?")) == 0


def _two_projects() -> list[Session]:
    """Two agents' logs in two projects saying the same words: a call, its output, a reply."""
    out = []
    for sid, cwd, make in (
        ("s-alpha", "/home/dev/alpha-service", "make check"),
        ("s-beta", "/home/dev/beta-portal", "make verify"),
    ):
        b = LogBuilder(session_id=sid, cwd=cwd, runtime_context=None)
        b.turn("How do we run the checks here?").assistant(tool_calls=[("bash", {"cmd": make})])
        b.tool_results(["12 passed in 0.4s"]).next_step()
        b.assistant(text=f"The checks run with {make}, then the linter.").end_turn()
        out.append(Session.from_events(b.header, b.events))
    return out


def test_a_question_naming_the_project_reaches_that_projects_memories() -> None:
    """A memory is indexed with where it came from (the project's directory, the agent, the
    session's id): two projects saying alike are told apart by the question."""
    with Memory(None, embedder=None) as mem:
        for s in _two_projects():
            mem.ingest(s)
        for project, sid in (("beta-portal", "s-beta"), ("alpha-service", "s-alpha")):
            hits = mem.find(f"How are the checks run in {project}?")
            replies = [h for h in hits if h.node.text.startswith("The checks run with make")]
            assert len(replies) == 2 and replies[0].node.sources[0].session == sid
        # where it came from is no literal match: a query of it alone is a fuzzy one
        assert all(h.via != "match" for h in mem.find("beta-portal"))


def test_a_real_codex_run_is_found_by_the_agents_name(tmp_path: Path) -> None:
    from ctxsdk.bench._realworld import corpus_dir, load_session

    root = corpus_dir()
    if root is None:
        pytest.skip("the agent-sessions corpus is not here")
    codex = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    other = "claude-code/codemie__session-624a4a58.jsonl"
    with Memory(tmp_path / "m.db", embedder=None) as mem:
        for rel in (codex, other):
            mem.ingest(load_session(root, rel))
        sid = load_session(root, codex).id
        hits = mem.find("What did the user ask Codex to change?")[:5]
        assert any(h.node.sources[0].session == sid for h in hits)
        top = [h for h in hits if h.node.sources[0].session == sid]
        assert "codex" in str(top[0].node.extra.get("from", ""))


def test_only_a_conversation_lifts_its_neighbours() -> None:
    """In a conversation the next turn answers the last: a turn's neighbours share its
    score. In an agent's log the next record is a call or its output: no neighbours."""
    chat = Session.from_messages(
        [
            {"role": "user", "content": "Where should the release notes go this time?"},
            {"role": "assistant", "content": "Into docs/changes.md, under the new version."},
        ],
        format="openai",
    )
    work = _two_projects()[0]
    with Memory(None, embedder=None) as mem:
        mem.ingest(chat)
        mem.ingest(work)
        mem.find("anything")  # brings the index up to date
        retr = mem._retriever
        for n in mem.nodes("observation"):
            linked = retr.neighbours(n.id) != (None, None)
            assert linked == (not n.extra.get("agent_log")), n.name
        assert any(n.extra.get("agent_log") for n in mem.nodes("observation"))
        assert any(not n.extra.get("agent_log") for n in mem.nodes("observation"))


def _game_session(request: str) -> Session:
    """One request for a game, a write of game.py and the assistant's report."""
    b = LogBuilder(session_id="s-game", cwd="/home/dev/arcade", runtime_context=None)
    b.turn(request)
    b.assistant(tool_calls=[("bash", {"cmd": "cat > game.py"})])
    b.tool_results(["written 120 lines"]).next_step()
    b.assistant(text="I created game.py with the board, the moves and the score.").end_turn()
    return Session.from_events(b.header, b.events)


def test_a_memory_above_its_record_carries_the_record_as_evidence() -> None:
    """A memory read from one message (here the request's second sentence) ranked above that
    message's own observation: the observation is folded into it and shows as its evidence,
    so the hit still holds the rest of what was said (which game), as it does when the
    observation ranks first."""
    s = _game_session("Please create a simple 2048 game. No need to run it, I will try it myself.")
    with Memory(None, embedder=None) as mem:
        mem.ingest(s)
        record = next(n for n in mem.nodes("observation") if "2048" in n.text)
        hits = mem.find("What game did the user ask for?", top_k=5)
        top = hits[0]
        assert top.node.type != "observation" and "2048" not in top.node.text
        assert record.id in top.folded and "2048 game" in top.evidence
        assert "2048 game" in json.dumps(top.to_json())
        assert record.id not in [h.node.id for h in hits]


def test_an_agent_whose_output_comes_back_in_the_users_turn_is_an_agent_log(
    tmp_path: Path,
) -> None:
    """SWE-agent's text actions: the command is in the assistant's text, the environment's
    output comes back as a user message the harness relayed. That is an agent at work (no
    neighbours, no dense channel), not a conversation."""
    from ctxsdk.memory._ingest import is_agent_log

    history = [
        {"role": "system", "content": "SETTING: you are an autonomous programmer"},
        {"role": "user", "content": "We're currently solving the following issue: tabs."},
        {"role": "assistant", "content": "Let me look.\n```\nopen parser.py\n```"},
        {"role": "user", "content": "[File: parser.py (120 lines total)]\n1:import re"},
        {"role": "assistant", "content": "The tokenizer splits on spaces only."},
    ]
    path = tmp_path / "run__acme__parser-7.traj"
    path.write_text(json.dumps({"history": history}))
    assert is_agent_log(Session.from_swe_agent(path))
    chat = Session.from_messages(history[1:3], format="openai")
    assert not is_agent_log(chat)


def _locomo(sessions: list[tuple[str, list[tuple[str, str]]]]) -> list[dict[str, object]]:
    conv: dict[str, object] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for i, (date, turns) in enumerate(sessions, start=1):
        conv[f"session_{i}_date_time"] = date
        conv[f"session_{i}"] = [
            {"speaker": who, "dia_id": f"D{i}:{k}", "text": text}
            for k, (who, text) in enumerate(turns, start=1)
        ]
    return [{"sample_id": "conv-test", "conversation": conv, "qa": []}]


def test_copies_of_one_template_are_not_shown_as_hits() -> None:
    """Each session of an imported conversation opens with the importer's note ("Session 2
    of the conversation between … Date and time: …"): the same words but for a number and
    a date. A question naming the month matches those notes best; they are not shown, so
    the turns that say something hold the places, and the note's date still lifts the
    turns of its own session."""
    data = _locomo(
        [
            ("1:56 pm on 8 May, 2023", [("Caroline", "I went to a support group yesterday.")]),
            ("1:14 pm on 25 June, 2023", [("Melanie", "We went to the beach with the kids.")]),
            (
                "2:31 pm on 17 July, 2023",
                [("Melanie", "We went camping in the mountains, it was lovely.")],
            ),
            ("8:56 pm on 20 July, 2023", [("Caroline", "The painting I did is a sunset.")]),
        ]
    )
    with Memory(None, embedder=None) as mem:
        mem.ingest(Session.from_locomo(data, 0), verbatim=True)
        notes = [n for n in mem.nodes("observation") if "Date and time" in n.text]
        assert len(notes) == 4
        hits = mem.find("When did Melanie go camping in July 2023?")
        shown = [h.node.id for h in hits]
        assert not set(shown) & {n.id for n in notes}
        assert "camping" in hits[0].node.text
        # a record said once, numbers aside, is shown as ever
        assert mem.find("support group")[0].node.text.startswith("Caroline: I went")


def test_copies_of_one_template_are_shown_when_nothing_else_matches() -> None:
    """Notes that differ only in numbers ("deploy 41 failed at 3 pm", ...) are copies of
    one template, held back so they do not crowd out records that say something; asked
    about them alone, ``find`` shows them rather than nothing, best first."""
    with Memory(None, embedder=None) as mem:
        for i in range(12):
            mem.remember(f"deploy {40 + i} failed at {1 + i % 11} pm", type="observation")
        mem.remember("The release checklist lives in docs/release.md.", type="observation")
        hits = mem.find("which deploys failed?", top_k=5)
        assert len(hits) == 5
        assert all(h.node.text.startswith("deploy ") for h in hits)
        # another record that matches still holds the places alone
        mem.remember("The failed deploy was rolled back by the on-call engineer.")
        shown = [h.node.text for h in mem.find("which deploys failed?", top_k=5)]
        assert shown == ["The failed deploy was rolled back by the on-call engineer."]


def test_a_hits_edge_path_is_escaped_once_in_html() -> None:
    with Memory() as mem:
        node = mem.remember("Use ruff for linting.", link_to="ruff")
        hit = next(h for h in mem.find("ruff linting") if h.node.id == node.id)
        assert hit.path and any("<" in step or ">" in step for step in hit.path)
        html = mem.find("ruff linting")._repr_mimebundle_()["text/html"]
        assert "&amp;lt;" not in html and "&amp;gt;" not in html
        assert "&lt;" in html or "&gt;" in html  # the arrows show as arrows


def test_a_long_record_as_evidence_shows_the_part_that_matched() -> None:
    """The record a memory was read from is longer than a listing shows: its evidence is the
    part that holds the query's words (here near the end), not the head."""
    filler = " ".join(
        f"Row {i} of the board slides its tiles to the left and merges equal neighbours."
        for i in range(30)
    )
    s = _game_session(
        "Please create a simple 2048 game. No need to run it, I will try it myself. "
        + filler
        + " My old version stored the high score in highscore.json beside the game file."
    )
    with Memory(None, embedder=None) as mem:
        mem.ingest(s)
        hits = mem.find("What game did the user ask for? Where was the high score stored?")
        top = hits[0]
        assert top.node.type != "observation" and "highscore.json" not in top.node.text
        assert len(top.evidence) <= 1000 and "highscore.json" in top.evidence
        assert top.evidence.startswith("…")  # a part of the record, marked as cut
        assert "highscore.json" in json.dumps(top.to_json())


def test_query_window_holds_the_most_query_words() -> None:
    text = (
        "alpha " * 200 + "the retry limit is set in config.yaml by retry_attempts " + "omega " * 200
    )
    a, b = query_window(text, "Where is the retry limit set?", 120)
    assert b - a <= 120 and "retry limit is set" in text[a:b]
    assert query_window(text, "nothing here matches", 120) is None
    # a search's own terms (stems) instead of the query's words
    span = query_window(text, "ignored", 120, terms=["config.yam", "retr"])
    assert span is not None and "config.yaml" in text[span[0] : span[1]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_templates_kept_as_nodes_come_and_go_are_the_boilerplate_counted_afresh(
    seed: int,
) -> None:
    """``Templates`` (what ``Memory`` keeps between syncs) against the definition counted
    from scratch at every step: observations whose shape at least three observations share,
    through random adds, replacements (an observation turned entity) and removals."""
    import random

    from ctxsdk.memory._find import Templates, template_shape
    from ctxsdk.memory._model import Node

    def counted(nodes: list[Node]) -> frozenset[str]:
        shapes: dict[str, list[str]] = {}
        for n in nodes:
            if n.type == "observation":
                shapes.setdefault(template_shape(n.text), []).append(n.id)
        return frozenset(i for ids in shapes.values() if len(ids) >= 3 for i in ids)

    rng = random.Random(seed)
    texts = [
        *(f"Session {i} header at {i + 9} am" for i in range(3)),
        *(f"unique words {w}" for w in "abcdefg"),
        *(f"poll {i}" for i in range(5)),
    ]
    templates, live = Templates(), dict[str, Node]()
    for _ in range(3000):
        nid = f"n{rng.randrange(40)}"
        if rng.random() < 0.3 and nid in live:
            templates.remove(nid)
            del live[nid]
        else:
            kind = rng.choice(["observation", "observation", "entity"])
            live[nid] = Node(id=nid, type=kind, name="x", text=rng.choice(texts))  # type: ignore[arg-type]
            templates.add(live[nid])
        assert templates.ids() == counted(list(live.values()))
    assert templates.ids()  # the texts do repeat: the check saw templates
