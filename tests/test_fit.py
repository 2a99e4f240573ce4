"""Fit's markers and packing: one marker per off run, counted exactly and bounded; the exact
zero-token option; the budget, explicit choices and protected nodes held under both; the BM25
baseline of ``bench fit`` held to the same constraints; and every written log read by the
harness's own code."""

from __future__ import annotations

import itertools
import json
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxsdk as cx
from ctxsdk.assemble import DigestConfig, FitResult, Target
from ctxsdk.assemble._modes import collapse_mark
from ctxsdk.assemble._planner import compile_plan
from ctxsdk.assemble._rank import Ranker
from ctxsdk.assemble.kernel import FitIndex, fit_plan
from ctxsdk.bench._bm25 import Bm25Baseline, porter
from ctxsdk.samples import sample
from ctxsdk.session._retrieval import Doc, Retriever, from_texts
from ctxsdk.session._tokens import TokenCounter
from ctxsdk.session.importers import from_locomo
from ctxsdk.session.kernel import read_marker

from .conftest import SHARED
from .test_oracle import _applied, _own_collapses, oracle_home  # noqa: F401  (a fixture)

LOCOMO = SHARED / "data" / "locomo" / "locomo10.json"
ZERO = DigestConfig(absorb_off=True)
_CL100K = TokenCounter("cl100k_base")


def _chat(n: int = 40, seed: int = 0) -> cx.Session:
    """A conversation like LoCoMo's: short user messages, an assistant line now and then."""
    msgs: list[dict[str, str]] = [{"role": "system", "content": "You are a careful listener."}]
    for i in range(n):
        topic = ["sailing", "pottery", "chess", "baking"][(i * 7 + seed) % 4]
        msgs.append({"role": "user", "content": f"note {i}: I talked about {topic} " * (1 + i % 3)})
        if i % 5 == 4:
            msgs.append({"role": "assistant", "content": f"(read {i})"})
    msgs.append({"role": "user", "content": "What did we say about chess?"})
    return cx.Session.from_messages(msgs, format="openai")


@pytest.fixture(scope="module")
def locomo() -> cx.Session:
    if not LOCOMO.is_file():
        pytest.skip(f"{LOCOMO} is not available")
    return from_locomo(json.loads(LOCOMO.read_text()), 0)


def _runs(r: FitResult, s: cx.Session) -> list[tuple[int, int]]:
    pos = {q: p for p, q in enumerate(s.surface().seqs)}
    return [(pos[op.start_seq], pos[op.end_seq]) for op in r.ops if op.mode == "off"]


# --- the marker ---------------------------------------------------------------------------------


def test_the_off_marker_says_what_left_and_the_way_back() -> None:
    s = _chat()
    seqs = s.surface().seqs
    a = s.assemble().set(seqs[3], "off").set(seqs[4], "off").set(seqs[5], "off")
    (op,) = a.plan()[0]
    assert (
        op.text == f"[off seq {seqs[3]}-{seqs[5]} ({op.tokens_before} tokens): set {seqs[3]} full]"
    )
    assert op.message is not None and _CL100K.count_message(op.message) == op.tokens_after
    out = a.apply(write=False)
    fold = next(n for n in out.surface() if collapse_mark(out.raw_events[n.seq]))
    assert collapse_mark(out.raw_events[fold.seq]) == ("off", 3)  # the mark is in the source
    # The way back it names: set(first seq, "full") expands the collapse over it.
    back = out.assemble().set(seqs[3], "full")
    assert back.draft == {fold.seq: Target("full")}
    replay = back.apply(write=False).messages()[3].text
    assert "Replayed verbatim" in replay
    assert all(m.text in replay for m in s.messages()[3:6])


def test_an_off_tool_result_rewrite_is_its_header_and_the_way_back() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    result = next(n for n in s.surface() if n.type == "tool/result" and n.op == "append")
    (op,) = s.assemble().set(result.seq, "off").plan()[0]
    assert op.kind == "tool-rewrite"
    assert re.fullmatch(rf"⟨assembled:off items=1 tokens≈\d+⟩ set {result.seq} full", op.text)
    # The header stays the rewrite's mark.
    event = {
        "type": "tool/result",
        "data": {"message": {"content": [{"content": op.tool_content}]}},
    }
    mark = read_marker(event)
    assert mark is not None and (mark.mode, mark.items) == ("off", 1)


def test_logs_with_the_old_marker_text_still_read() -> None:
    old_user = {
        "type": "user/message",
        "data": {
            "source": {
                "kind": "plugin",
                "plugin": "ctxsdk/assemble",
                "form": "notice",
                "summary": "assembled:off items=13 tokens=900",
            },
            "content": [
                {
                    "type": "text",
                    "text": "⟨assembled:off items=13 tokens≈900⟩\n"
                    "[13 items moved out of context, about 900 tokens]",
                }
            ],
        },
    }
    old_tool = {
        "type": "tool/result",
        "data": {
            "message": {
                "content": [
                    {
                        "content": [
                            {
                                "type": "text",
                                "text": "⟨assembled:off items=1 tokens≈340⟩\n"
                                "[1 items moved out of context, about 340 tokens]",
                            }
                        ]
                    }
                ]
            }
        },
    }
    assert collapse_mark(old_user) == ("off", 13)
    assert collapse_mark(old_tool) == ("off", 1)


def test_each_run_pays_one_marker_counted_exactly_and_bounded(locomo: cx.Session) -> None:
    ix = FitIndex.build(locomo, _CL100K, DigestConfig())
    for budget, query in [(1000, "adoption agencies"), (2500, "painting a sunrise"), (4000, None)]:
        r = fit_plan(locomo, budget, query=query, counter=_CL100K, config=DigestConfig(), index=ix)
        assert r.fits and r.tokens_after <= budget
        offs = [op for op in r.ops if op.mode == "off"]
        for op in offs:
            assert op.message is not None
            assert op.tokens_after == _CL100K.count_message(op.message) <= ix.off_cost
        # a key op's header line is its marker (its digest is content)
        heads = [op.text.split("\n", 1)[0] for op in r.ops if op.mode == "key" and op.text]
        said = sum(_CL100K.tokenizer.count(h) for h in heads)
        assert r.marker_tokens(_CL100K) == sum(op.tokens_after for op in offs) + said
        # One marker per run: two runs always have something kept between them.
        runs = _runs(r, locomo)
        assert all(b[0] > a[1] + 1 for a, b in itertools.pairwise(runs))
        # The plan is what the session becomes: the exact count after applying it.
        a = locomo.assemble()
        a.fit(budget, query=query)
        assert a.apply(write=False).tokens().total == r.tokens_after


def test_with_no_query_the_recent_history_stays_in_one_stretch() -> None:
    s = _chat(60)
    r = s.assemble().fit(s.tokens().total // 3)
    assert r.fits and len(_runs(r, s)) == 1  # one off run, one marker
    seqs = s.surface().seqs
    assert r.kept == [seqs[0], *seqs[len(seqs) - len(r.kept) + 1 :]]


def test_an_isolated_weak_match_does_not_cost_a_second_marker() -> None:
    """Keeping a lone node in the middle of an off run splits it (a second marker): fit pays
    that only when the node's relevance is worth its tokens plus the marker."""
    s = _chat(60)
    total = s.tokens().total
    r = s.assemble().fit(total // 3, query="pottery")
    naive = len([n for n in s.surface() if "pottery" in n.message.text])
    assert r.fits and len(_runs(r, s)) < naive  # runs merged, not one per match


# --- the zero-token option ----------------------------------------------------------------------


@pytest.mark.parametrize("budget", [150, 300, 600])
def test_the_zero_token_option_costs_exactly_nothing(budget: int) -> None:
    s = _chat(60)
    a = s.assemble(config=ZERO)
    r = a.fit(budget, query="chess")
    assert r.fits and r.carried and r.marker_tokens(_CL100K) == 0
    tokens = dict(zip(s.surface().seqs, (row.tokens for row in s.tokens().rows), strict=True))
    out = a.apply(write=False)
    # Exactly the kept messages, counted as they were: the off runs cost no token at all.
    assert out.tokens().total == r.tokens_after == sum(tokens[q] for q in r.kept)
    kept_text = [m.text for m in s.messages() if m.id in {s.event(q).message.id for q in r.kept}]  # type: ignore[union-attr]
    assert [m.text for m in out.messages()] == kept_text
    # What left is still in the tree, under the replacements that carry it.
    rows = [row for row in out.assemble().tree().walk() if row.kind == "replacement"]
    shadowed = {q for row in rows for q in row.shadowed}
    assert shadowed >= set(s.surface().seqs) - set(r.kept)


def test_the_zero_token_option_on_locomo(locomo: cx.Session) -> None:
    ix = FitIndex.build(locomo, _CL100K, ZERO)
    for budget in (1000, 2000, 4000, 8000):
        r = fit_plan(locomo, budget, query="support group", counter=_CL100K, config=ZERO, index=ix)
        assert r.fits and r.marker_tokens(_CL100K) == 0
        full = dict(zip(ix.seqs, ix.full, strict=True))
        assert r.tokens_after == sum(full[q] for q in r.kept)


# --- what fit holds, under both markers -------------------------------------------------------


@st.composite
def _chats(draw: st.DrawFn) -> tuple[cx.Session, int, str | None, list[int]]:
    s = _chat(draw(st.integers(5, 40)), draw(st.integers(0, 3)))
    total = s.tokens("estimate").total
    budget = draw(st.integers(1, total + 10))
    query = draw(st.sampled_from([None, "chess", "baking sailing", "nothing matches"]))
    seqs = s.surface().seqs
    explicit = draw(st.lists(st.sampled_from(seqs[1:-1]), max_size=3, unique=True))
    return s, budget, query, explicit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_chats(), st.sampled_from(["full", "off"]), st.booleans())
def test_fit_holds_budget_choices_and_protected_nodes(
    case: tuple[cx.Session, int, str | None, list[int]], mode: str, zero: bool
) -> None:
    s, budget, query, explicit = case
    a = s.assemble(tokenizer="estimate", config=ZERO if zero else DigestConfig())
    for q in explicit:
        a.set(q, mode)  # type: ignore[arg-type]
    r = a.fit(budget, query=query)
    p = a.preview()
    assert p.tokens_after == r.tokens_after
    if r.fits:
        assert r.tokens_after <= budget
    else:
        assert any("cannot fit" in n for n in r.notes)
    for q in explicit:
        assert r.targets[q] == Target(mode)  # type: ignore[arg-type]
        if mode == "full":
            assert q in r.kept
    # Protected nodes stay, unless set off explicitly (an explicit choice wins).
    assert set(r.protected) - set(explicit) <= set(r.kept)
    if zero and r.fits:
        assert r.marker_tokens(TokenCounter("estimate")) <= 0 or any(
            r.targets.get(q) == Target("off") for q in explicit
        )


# --- the baseline -------------------------------------------------------------------------------


def test_the_porter_stemmer() -> None:
    pairs = {
        "caresses": "caress",
        "ponies": "poni",
        "hopping": "hop",
        "relational": "relat",
        "adoption": "adopt",
        "adopted": "adopt",
        "painting": "paint",
        "generalization": "gener",
    }
    assert {w: porter(w) for w in pairs} == pairs


def test_the_bm25_baseline_is_held_to_fits_constraints(locomo: cx.Session) -> None:
    ix = FitIndex.build(locomo, _CL100K, DigestConfig())
    base = Bm25Baseline(ix, _CL100K, DigestConfig())
    protected = {ix.seqs[p] for p in ix.keep}
    for budget in (1000, 4000):
        kept, tokens = base.plan("When did Caroline go to the support group?", budget)
        assert tokens <= budget and protected <= kept
        # Its count is the exact planner's on the plan it made.
        targets = {q: Target("off") for q in ix.seqs if q not in kept}
        ops, _ = compile_plan(locomo, targets, counter=_CL100K)
        assert sum(ix.full) - sum(op.saved for op in ops) == tokens
        # The marker of what it drops is fit's own.
        assert all(op.text.startswith("[off seq ") for op in ops)


# --- the harness reads what fit writes --------------------------------------------------------


@pytest.mark.parametrize("zero", [False, True], ids=["markers", "zero"])
def test_fit_logs_are_accepted(
    oracle_home: Path,  # noqa: F811
    tmp_path: Path,
    locomo: cx.Session,
    zero: bool,
) -> None:
    kind = "fit zero-token" if zero else "fit markers"
    config = ZERO if zero else DigestConfig()
    for name, s, budget, query in [
        ("locomo", locomo, 1500, "adoption agencies"),
        ("chat", _chat(60), 300, "chess"),
        ("flaky", cx.Session.open(sample("fix-flaky-test")), 1500, "the failing test"),
    ]:
        a = cx.Assembly(s, config=config)
        r = a.fit(budget, query=query)
        if not r.ops:
            continue
        out, _ = _applied(oracle_home, a, tmp_path, f"{name}-{int(zero)}", kind)
        b = cx.Assembly(out)
        for seq in _own_collapses(out):
            b.set(seq, "full")
        _applied(oracle_home, b, tmp_path, f"{name}-{int(zero)}-x", f"expand {kind}")


# --- ranking with the base's Retriever ----------------------------------------------------------


class _HashedWords:
    """A tiny deterministic embedder: a hashed bag of words (after ``synonyms``), so two
    texts sharing words are close whatever BM25 thinks of them. Counts what it embeds."""

    name = "hashed-words"
    dim = 64

    def __init__(self, synonyms: dict[str, str] | None = None) -> None:
        self.synonyms = synonyms or {}
        self.embedded = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        out = []
        for t in texts:
            v = [0.0] * self.dim
            for w in re.findall(r"[a-z]+", t.lower()):
                w = self.synonyms.get(w, w)
                v[zlib.crc32(w.encode()) % self.dim] += 1.0
            out.append(v)
        return out


# Computed with fit's own ranker before it delegated to the base's Retriever: the top 8 node
# positions of LoCoMo conversation 0 per question. The delegation keeps them (it reorders
# only questions repeating a word, which the Retriever weighs by count: ``_rank``'s docstring).
# Fit now also gives the Retriever each node's turn as its section; without sections the
# ranking is the pinned one.
_PINNED = {
    "When did Caroline go to the LGBTQ support group?": [4, 80, 215, 256, 213, 216, 5, 3],
    "What is Caroline's identity?": [291, 248, 374, 290, 292, 249, 406, 375],
    "How many children does Melanie have?": [159, 158, 160, 218, 182, 217, 228, 57],
    "Where did Melanie camp?": [434, 435, 433, 192, 223, 71, 224, 222],
}


def test_fits_lexical_ranking_is_unchanged_by_delegating_to_the_retriever(
    locomo: cx.Session,
) -> None:
    ix = FitIndex.build(locomo, _CL100K, DigestConfig())
    unsectioned = Ranker(ix.texts)
    sectioned = Retriever(
        Doc(str(i), t, group=0, order=float(i), section=ix.sections[i])
        for i, t in enumerate(ix.texts)
    )
    for query, top in _PINNED.items():
        got = unsectioned.scores(query)
        assert sorted(range(len(got)), key=lambda i: (-got[i], i))[:8] == top
        # The same scores as the base's Retriever over the node texts, in order.
        assert got == list(from_texts(ix.texts).scores(query).values())
        assert ix.ranker.scores(query) == list(sectioned.scores(query).values())
    assert ix.ranker.scores(None) == [0.0] * len(ix.texts)


def test_fit_gives_each_node_its_turn_and_a_turn_ranks_with_its_best_match(
    locomo: cx.Session,
) -> None:
    ix = FitIndex.build(locomo, _CL100K, DigestConfig())
    turns = [locomo.index.turn_of(n.seq) for n in locomo.surface()]
    assert ix.sections == [t.turn if t is not None else None for t in turns]
    assert len(set(ix.sections)) > 10  # one section per LoCoMo session
    query = "Where did Melanie camp?"
    plain = Ranker(ix.texts).scores(query)
    lifted = ix.ranker.scores(query)
    best = max(range(len(plain)), key=lambda i: plain[i])
    mates = [i for i, s in enumerate(ix.sections) if s == ix.sections[best] and i != best]
    others = [i for i, s in enumerate(ix.sections) if s != ix.sections[best]]
    # Every node of the best match's turn is raised by the same amount; no other turn
    # rises by more than that.
    gain = {round(lifted[i] - plain[i], 9) for i in mates}
    assert len(gain) == 1 and gain.pop() > 0
    assert max(lifted[i] - plain[i] for i in others) < lifted[mates[0]] - plain[mates[0]]


def _paraphrase_chat() -> cx.Session:
    """The answer says 'guitar'; the question asks about an 'instrument'. No word meets."""
    msgs: list[dict[str, str]] = [{"role": "system", "content": "You are a careful listener."}]
    for i in range(30):
        topic = ["sailing", "pottery", "chess", "baking"][i % 4]
        msgs.append({"role": "user", "content": f"note {i}: we spoke about {topic} at length"})
        if i == 6:
            msgs.append({"role": "user", "content": "I practise my guitar every single evening"})
    msgs.append({"role": "user", "content": "Which instrument do I play?"})
    return cx.Session.from_messages(msgs, format="openai")


def test_an_embedder_changes_what_fit_keeps_and_is_embedded_once() -> None:
    s = _paraphrase_chat()
    guitar = next(n.seq for n in s.surface() if "guitar" in n.message.text)
    budget = s.tokens().total // 3
    query = "Which instrument do I play?"
    lexical = s.assemble().fit(budget, query=query)
    assert lexical.fits and guitar not in lexical.kept  # no word of the query reaches it
    emb = _HashedWords({"guitar": "instrument"})
    a = s.assemble()
    hybrid = a.fit(budget, query=query, embedder=emb)
    assert hybrid.fits and guitar in hybrid.kept
    embedded = emb.embedded
    assert embedded == len(s.surface()) + 1  # the nodes, then the query
    a.fit(budget // 2, query=query, embedder=emb)  # a new index, the same session
    assert emb.embedded == embedded + 1  # only the query again: the nodes are remembered


def test_fit_plan_takes_the_embedder_and_the_index_keeps_its_ranker() -> None:
    s = _paraphrase_chat()
    ix = FitIndex.build(s, _CL100K, DigestConfig())
    emb = _HashedWords({"guitar": "instrument"})
    assert ix.ranker_for(None) is ix.ranker
    assert ix.ranker_for(emb) is ix.ranker_for(emb)
    query = "Which instrument do I play?"
    budget = s.tokens().total // 3
    r = fit_plan(
        s, budget, query=query, counter=_CL100K, config=DigestConfig(), index=ix, embedder=emb
    )
    g = next(p for p, t in enumerate(ix.texts) if "guitar" in t)
    assert g not in ix.ranker.retriever.lexical_scores(query)  # lexical: no word meets
    hybrid = ix.ranker_for(emb).scores(query)
    n = len(hybrid)  # the question is last, and lifts its neighbour
    assert hybrid[g] > max(hybrid[p] for p in range(n - 2) if p != g)
    assert r.fits and ix.seqs[g] in r.kept
