"""Hybrid retrieval in the base: one index that Memory and ``fit`` can both rank with.

A :class:`Retriever` holds documents (an id, a text, optionally a group and an order within
it, e.g. a conversation and a turn's position) and answers ``search(query, k)`` with
:class:`Hit` rows. Three signals, each optional but the first:

- **lexical**: Okapi BM25 (k1 = 1.2, b = 0.75) over the base's index terms
  (:func:`ctxsdk.session._lexical.words`: stop words dropped, a light stemmer, CJK character
  bigrams), kept as an inverted index so adding a document costs its own terms only; with
  ``fit``'s additions (coordination, one round of feedback words, answer kinds);
- **neighbours**: a document's score is raised by a share of the scores of the documents
  just before and after it in its group (a conversation answers on the next line);
- **dense**: cosine similarity of embeddings from an :class:`Embedder` (local models in
  ``_embedders``, or a remote endpoint in ``ctxsdk.llm``), embedded lazily in batches.

Lexical and dense are fused either by reciprocal-rank fusion (``"rrf"``: robust to the two
scores' different scales) or by a weighted sum of min-max normalized scores (``"weighted"``:
keeps how far apart the scores are). Both stay available; ``ctxsdk bench memory`` measures
them on LoCoMo. Lexical scoring is pure Python; the dense channel needs numpy (installed with
the core dependencies).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

from ..errors import DataMissing, InvalidArgument
from ._lexical import term_counts, words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "Doc",
    "Embedder",
    "Fusion",
    "Hit",
    "Retriever",
    "answer_kind",
    "answer_kinds",
    "from_texts",
]

Fusion = Literal["rrf", "weighted"]
Mode = Literal["hybrid", "lexical", "dense"]
Smoothing = Literal["sum", "max"]
_BULK = 64  # documents from which add_many builds in one pass (fewer: one add each)
_BATCH = 256  # texts per embedding call: bounded memory, and progress between calls
_FEEDBACK_DOCS = 3  # best first-round matches the feedback words come from
_FEEDBACK_WEIGHT = 0.3  # the weight of the strongest added word (a query word weighs 1)
_SET_BITS = 16  # query terms up to which coordination tells the sets of terms held by bits
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_TIME = re.compile(
    rf"\b(?:\d{{4}}|\d{{1,2}}[:/.]\d{{2}}|{_MONTHS}|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|yesterday|today|tomorrow|tonight|ago|last|next|week|weekend|month|year|"
    r"morning|evening|night|since|recently|soon|earlier|later)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twice|once|several|few)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
# a path (/abs, ./rel, a/b/c, dir/name.ext) or a file name with a common extension; not two
# words with a slash between ("team/player": a conversation's, not a path)
_PATH_TEXT = (
    r"(?<![\w.~-])(?:\.{1,2}|~)?/[\w.-]*[A-Za-z][\w.-]*|[\w.-]+/[\w.-]+/[\w./-]*"
    r"|\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|md|toml|ya?ml|sh|rs|go|java|c|h|cpp|rb|txt|"
    r"cfg|ini|html|css|sql|lock)\b"
)
_PATH = re.compile(_PATH_TEXT)
_PLACE = re.compile(rf"{_NAME.pattern}|{_PATH_TEXT}")  # where: a named place, or a path
_ASKS_FILE = re.compile(r"(?:which|what) (?:files?|paths?|director(?:y|ies)|folders?|modules?)\b")


def _answer_type(query: str) -> re.Pattern[str] | None:
    """What kind of text answers the question, from its question word (when -> a time,
    how many -> a number, who -> a name, where -> a name or a path, which file -> a path),
    as ``fit``'s ranker reads it. In a conversation "where" is a place; in an agent's log
    it is a file or a folder (bench realworld: "Where is to_native_string defined?")."""
    q = query.strip().lower()
    if q.startswith(("when", "what time", "what year", "what month", "what date", "how long ago")):
        return _TIME
    if q.startswith(("how many", "how much", "how old", "how often", "how long")):
        return _NUMBER
    if q.startswith("who"):
        return _NAME
    if q.startswith("where"):
        return _PLACE
    if _ASKS_FILE.match(q):
        return _PATH
    return None


# The kinds of answer text, one bit each, for an index kept outside this class (a
# database's): ``answer_kinds(text)`` at indexing, ``answer_kind(query)`` at the search.
_KINDS = (_TIME, _NUMBER, _NAME, _PLACE, _PATH)


def answer_kinds(text: str) -> int:
    """The kinds of answer ``text`` holds (a time, a number, a name, a place, a path), as
    bits: what the lexical ranking's answer boost looks for in a document."""
    return sum(1 << i for i, pattern in enumerate(_KINDS) if pattern.search(text))


def answer_kind(query: str) -> int:
    """The bit of the kind of text that answers ``query`` (``answer_kinds``), 0 for none."""
    want = _answer_type(query)
    return 0 if want is None else 1 << _KINDS.index(want)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dim`` floats. An embedder whose model embeds queries
    differently from passages (E5's ``query:`` prefix) also has ``embed_query``."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


# add_many's document: add's arguments (id, text, group, order, section, vector, dense)
NewDoc = tuple[
    str, str, Hashable | None, float | None, Hashable | None, Sequence[float] | None, bool
]


class Doc(NamedTuple):
    """A document to index: ``group`` and ``order`` place it among its neighbours;
    ``section`` is the stretch of the conversation it belongs to (a turn, a session)."""

    doc_id: str
    text: str
    group: Hashable | None = None
    order: float | None = None
    section: Hashable | None = None


@dataclass(frozen=True)
class Hit:
    """One result: ``score`` ranks it; ``parts`` says where the score came from
    (``lexical`` after neighbours, ``dense`` cosine, and the fused value)."""

    doc_id: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)


class _Arrays(NamedTuple):
    """Per slot, for numpy: its length in terms, its neighbours (-1: none), its section."""

    length: NDArray[np.float64]
    prev: NDArray[np.int64]
    next: NDArray[np.int64]
    section: NDArray[np.int64]


class _Scores(NamedTuple):
    """Scores of some slots: ascending slot numbers and their scores."""

    slots: NDArray[np.int64]
    values: NDArray[np.float64]

    def as_dict(self) -> dict[int, float]:
        return dict(zip(self.slots.tolist(), self.values.tolist(), strict=True))

    def top(self, k: int) -> list[tuple[int, float]]:
        """The ``k`` best slots scoring above 0, best first, ties to the lower slot."""
        xp = _numpy()
        keep = self.values > 0
        slots, values = self.slots[keep], self.values[keep]
        if len(values) > k:
            cut = xp.partition(values, len(values) - k)[len(values) - k]
            near = values >= cut
            slots, values = slots[near], values[near]
        order = xp.lexsort((slots, -values))[:k]
        return list(zip(slots[order].tolist(), values[order].tolist(), strict=True))


class _Unread(NamedTuple):
    """Matches whose text was not read for the answer kind yet: left unraised."""

    pattern: re.Pattern[str]
    up: float
    slots: NDArray[np.int64]


def _among(a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which elements of ``a`` are in ``b``, which is sorted (``numpy.isin``, by binary
    search rather than by sorting both)."""
    xp = _numpy()
    if not len(b):
        none: NDArray[np.bool_] = xp.zeros(len(a), dtype=bool)
        return none
    pos = xp.minimum(xp.searchsorted(b, a), len(b) - 1)
    found: NDArray[np.bool_] = xp.equal(b[pos], a)
    return found


def _file_postings(
    post: dict[str, dict[int, int]],
    post_arr: dict[str, Any],
    slot: int,
    tf: Mapping[str, int],
) -> int:
    """File document ``slot``'s term counts ``tf`` into the postings, drop the per-term
    arrays they make stale, and return the document's length in terms."""
    for t, f in tf.items():
        got = post.get(t)
        if got is None:
            post[t] = {slot: f}
        else:
            got[slot] = f
    if post_arr:
        for t in tf:
            post_arr.pop(t, None)
    return sum(tf.values())


def _empty() -> _Scores:
    xp = _numpy()
    return _Scores(xp.zeros(0, dtype=xp.int64), xp.zeros(0, dtype=xp.float64))


class LexicalState(NamedTuple):
    """A retriever's lexical index as flat arrays (numpy, int64 / float64) and string
    lists, by name (``Retriever.lexical_state``): what a saved index holds."""

    arrays: dict[str, NDArray[Any]]
    strings: dict[str, list[str]]


def _in_range(a: Mapping[str, NDArray[Any]], n: int, terms: int, groups: int) -> bool:
    """Whether every number of a saved lexical index points inside it (slots below ``n``,
    group numbers below ``groups``, offsets ascending to their array's end): a file
    changed by hand must not make a search fail later."""

    def within(key: str, lo: int, hi: int) -> bool:
        arr = a[key]
        return arr.ndim == 1 and (not arr.size or (int(arr.min()) >= lo and int(arr.max()) < hi))

    def offsets(key: str, size: int) -> bool:
        arr = a[key]
        return (
            arr.ndim == 1
            and arr.size > 0
            and int(arr[0]) == 0
            and int(arr[-1]) == size
            and bool((arr[1:] >= arr[:-1]).all())
        )

    sections = len(a["sec_turn"])
    return (
        within("p_slots", 0, n)
        and within("p_counts", 1, 2**31)
        and within("len", 0, 2**31)
        and offsets("p_ptr", len(a["p_slots"]))
        and len(a["p_ptr"]) == terms + 1
        and within("slot_group", -1, groups)
        and within("prev", -1, n)
        and within("next", -1, n)
        and within("section", -1, sections)
        and within("sec_group", 0, groups)
        and len(a["sec_group"]) == sections
        and offsets("g_ptr", len(a["g_slots"]))
        and len(a["g_ptr"]) == groups + 1
        and within("g_slots", 0, n)
        and len(a["g_orders"]) == len(a["g_slots"])
        and offsets("m_ptr", len(a["m_slots"]))
        and len(a["m_ptr"]) == sections + 1
        and within("m_slots", 0, n)
        and within("wordy", 0, n)
        and len(a["scalars"]) == 3
        and len(a["p_counts"]) == len(a["p_slots"])
    )


_UNREAD: dict[int, int] = {}  # a saved term's postings, not made into a dict yet


class _SavedPostings(dict[str, dict[int, int]]):
    """The postings of a loaded index (``load_lexical_state``): every term is a key from
    the start; its dict (slot -> count) is made from the saved arrays the first time it is
    read or changed, and a search reads its arrays without one (``arrays``)."""

    def __init__(
        self,
        vocab: list[str],
        ptr: NDArray[Any],
        slots: NDArray[Any],
        counts: NDArray[Any],
    ) -> None:
        super().__init__(dict.fromkeys(vocab, _UNREAD))
        self._at = dict(zip(vocab, itertools.pairwise(ptr.tolist()), strict=False))
        self._slots, self._counts = slots, counts

    def unread(self, term: str) -> bool:
        return dict.get(self, term) is _UNREAD

    def count(self, term: str) -> int:
        """How many documents hold ``term`` (its postings' length), from the arrays."""
        i, j = self._at[term]
        return int(j - i)

    def arrays(self, term: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """A term's postings as ``Retriever._postings`` makes them from its dict."""
        i, j = self._at[term]
        xp = _numpy()
        return (
            self._slots[i:j].astype(xp.int64),
            self._counts[i:j].astype(xp.float64),
        )

    def _made(self, term: str) -> dict[int, int]:
        i, j = self._at[term]
        post = dict(zip(self._slots[i:j].tolist(), self._counts[i:j].tolist(), strict=True))
        dict.__setitem__(self, term, post)
        return post

    def __getitem__(self, term: str) -> dict[int, int]:
        post = dict.__getitem__(self, term)
        return self._made(term) if post is _UNREAD else post

    def get(self, term: str, default: Any = None) -> Any:
        post = dict.get(self, term, default)
        return self._made(term) if post is _UNREAD else post

    def values(self) -> list[dict[int, int]]:  # type: ignore[override]
        return [self[t] for t in self]

    def items(self) -> list[tuple[str, dict[int, int]]]:  # type: ignore[override]
        return [(t, self[t]) for t in self]


class _Group:
    """The slots of one group sorted by order, for neighbour links."""

    __slots__ = ("orders", "slots")

    def __init__(self) -> None:
        self.orders: list[tuple[float, int]] = []
        self.slots: list[int] = []


class Retriever:
    """An incremental BM25 + dense index with neighbour smoothing and rank fusion.

    The lexical defaults are ``fit``'s ranker's (``ctxsdk.assemble``), so both rank alike:
    ``coordination`` 0.5, ``feedback`` 8 words, ``answer_boost`` 0.3, and each score raised
    by ``neighbour`` = 0.35 of its better neighbour's (``smoothing="max"``; ``"sum"`` adds
    both neighbours', as ``bench fit``'s BM25 baseline does). Zero turns each off.
    ``dense_neighbour`` smooths cosine similarity the same way. ``dense_weight`` is the
    dense channel's share in the fusion. The defaults (weighted sum, dense weight 0.4,
    dense neighbours 0.3) measured best on LoCoMo with e5-small (``ctxsdk bench memory``):
    RRF at equal weights loses about ten points of R@5 there, the dense channel being the
    weaker one, and weighted fusion kept the lead over RRF at every weight tried.

    ``section_boost`` raises every document of a section by that share of the best score in
    the section: evidence clusters where a topic was talked about, so the turns around the
    best match rank above lone matches elsewhere. 0.1–0.15 measured best on half of LoCoMo
    and 0.15 held on the other half (``bench memory``); documents in no section are left
    alone.
    """

    def __init__(
        self,
        docs: Iterable[Doc | tuple[str, str]] = (),
        *,
        embedder: Embedder | None = None,
        fusion: Fusion = "weighted",
        dense_weight: float = 0.4,
        rrf_k: float = 60.0,
        neighbour: float = 0.35,
        dense_neighbour: float = 0.3,
        smoothing: Smoothing = "max",
        tokenizer: Callable[[str], list[str]] = words,
        k1: float = 1.2,
        b: float = 0.75,
        coordination: float = 0.5,
        feedback: int = 8,
        answer_boost: float = 0.3,
        section_boost: float = 0.15,
    ) -> None:
        if fusion not in ("rrf", "weighted"):
            raise InvalidArgument(f"fusion must be 'rrf' or 'weighted', not {fusion!r}")
        if smoothing not in ("sum", "max"):
            raise InvalidArgument(f"smoothing must be 'sum' or 'max', not {smoothing!r}")
        if not 0.0 <= dense_weight <= 1.0:
            raise InvalidArgument(f"dense_weight must be within 0..1, not {dense_weight}")
        if section_boost < 0.0:
            raise InvalidArgument(f"section_boost must be >= 0, not {section_boost}")
        self.embedder = embedder
        self.fusion: Fusion = fusion
        self.dense_weight = dense_weight
        self.rrf_k = rrf_k
        self.neighbour = neighbour
        self.dense_neighbour = dense_neighbour
        self.smoothing: Smoothing = smoothing
        self.tokenize = tokenizer
        self.k1, self.b = k1, b
        self.coordination, self.feedback, self.answer_boost = coordination, feedback, answer_boost
        self.section_boost = section_boost
        self._section: list[int] = []  # per slot: its section's number, -1 for none
        self._sections: dict[Hashable, int] = {}
        self._members: list[list[int]] = []  # per section number: its slots
        self._section_arr: NDArray[np.int64] | None = None  # _section for numpy, until a change
        # per answer kind, per slot: whether its text holds one (-1: not read yet)
        self._kind: dict[re.Pattern[str], NDArray[np.int8]] = {}
        self._post_arr: dict[str, tuple[NDArray[np.int64], NDArray[np.float64]]] = {}
        self._arr: _Arrays | None = None  # per-slot lists for numpy, until a change
        self._ids: list[str] = []
        self._slot: dict[str, int] = {}
        self._tf: list[Counter[str] | None] = []  # None: counted again from its text
        self._len: list[int] = []
        self._total = 0
        self._post: dict[str, dict[int, int]] = {}
        self._dead: set[int] = set()
        self._wordy: set[int] = set()  # slots kept out of the dense channel
        self._wordy_arr: NDArray[np.bool_] | None = None  # _wordy for numpy, until a change
        self._embedded = 0  # live slots in the dense channel
        self._text: list[str] = []
        self._group: list[Hashable | None] = []
        self._groups: dict[Hashable, _Group] = {}
        self._prev: list[int] = []
        self._next: list[int] = []
        self._seq = 0
        self._vec: NDArray[np.float32] | None = None  # rows = slots, unit length
        self._pending: list[int] = []  # slots still to embed
        self._last_query: tuple[str, Any] | None = None  # one query embedded once per mode
        self.extend(docs)

    # -- building ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids) - len(self._dead)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def add(
        self,
        doc_id: str,
        text: str,
        *,
        group: Hashable | None = None,
        order: float | None = None,
        section: Hashable | None = None,
        vector: Sequence[float] | None = None,
        dense: bool = True,
    ) -> None:
        """Index one document (an id already present is replaced). Its embedding is
        computed at the next search, batched with the other new documents, unless
        ``vector`` gives it (one computed earlier by the same embedder: a stored one).
        ``dense=False`` keeps it out of the dense channel: it is never embedded; the
        weighted fusion ranks it by its lexical score alone (normalized like the rest, so
        it competes evenly), and a search shows it only when its words (or its section)
        reach it. In RRF and dense mode its dense score is the lowest of the rest."""
        if doc_id in self._slot:
            self.remove(doc_id)
        slot = len(self._ids)
        tf = self._counts(text)
        self._ids.append(doc_id)
        self._slot[doc_id] = slot
        self._tf.append(tf)
        # no per-term arrays before the first search: a memory's first read skips them
        n = _file_postings(self._post, self._post_arr, slot, tf)
        self._len.append(n)
        self._total += n
        self._arr = None
        self._text.append(text)
        self._group.append(group)
        self._section.append(self._section_of(section, slot))
        self._section_arr = None
        self._prev.append(-1)
        self._next.append(-1)
        self._seq += 1
        if group is not None:
            self._link(slot, group, float(self._seq) if order is None else float(order))
        self._wordy_arr = None
        if not dense:
            self._wordy.add(slot)
        else:
            self._embedded += 1
        if dense and self.embedder is not None:
            if vector is not None and len(vector) == self.embedder.dim:
                self._place(slot, vector)
            else:
                self._pending.append(slot)

    def _counts(self, text: str) -> Counter[str]:
        """The index terms of ``text`` counted (``words``' without building its list)."""
        tokenize = self.tokenize
        return term_counts(text) if tokenize is words else Counter(tokenize(text))

    def add_many(self, docs: Iterable[NewDoc]) -> None:
        """Index several documents, each ``(doc_id, text, group, order, section, vector,
        dense)`` as ``add`` takes them: the index ``add`` makes of each in turn (the same
        slots, postings, neighbours, sections and vectors), built in one pass when they are
        many and new (a memory's first read), each group's neighbours linked once rather
        than by an insertion each. An id already indexed, or given twice, is added one by
        one."""
        rows = list(docs)
        ids = [r[0] for r in rows]
        slot_of = self._slot
        if (
            len(rows) < _BULK
            or len(set(ids)) < len(ids)
            or any(i in slot_of for i in ids)
            or any(r[3] is not None and math.isnan(r[3]) for r in rows)
        ):
            for doc_id, text, group, order, section, vector, dense in rows:
                self.add(
                    doc_id,
                    text,
                    group=group,
                    order=order,
                    section=section,
                    vector=vector,
                    dense=dense,
                )
            return
        start = len(self._ids)
        counts = self._counts
        post, post_arr = self._post, self._post_arr
        tfs, lens = self._tf, self._len
        section_of, sections = self._section_of, self._section
        linked: dict[Hashable, list[tuple[float, int]]] = {}
        wordy = self._wordy
        pending, place = self._pending, self._place
        dim = -1 if self.embedder is None else self.embedder.dim
        seq, total, embedded = self._seq, 0, 0
        for slot, (_, text, group, order, section, vector, dense) in enumerate(rows, start):
            tf = counts(text)
            tfs.append(tf)
            n = _file_postings(post, post_arr, slot, tf)
            lens.append(n)
            total += n
            sections.append(-1 if section is None else section_of(section, slot))
            seq += 1
            if group is not None:
                key = (float(seq) if order is None else float(order), slot)
                keys = linked.get(group)
                if keys is None:
                    linked[group] = [key]
                else:
                    keys.append(key)
            if not dense:
                wordy.add(slot)
            else:
                embedded += 1
                if dim >= 0:
                    if vector is not None and len(vector) == dim:
                        place(slot, vector)
                    else:
                        pending.append(slot)
        self._ids.extend(ids)
        slot_of.update(zip(ids, range(start, start + len(rows)), strict=True))
        self._text.extend(r[1] for r in rows)
        self._group.extend(r[2] for r in rows)
        self._prev.extend([-1] * len(rows))
        self._next.extend([-1] * len(rows))
        self._seq, self._embedded = seq, self._embedded + embedded
        self._total += total
        self._arr = self._section_arr = self._wordy_arr = None
        prev, nxt = self._prev, self._next
        for group, keys in linked.items():
            g = self._groups.get(group)
            if g is None:
                g = self._groups[group] = _Group()
            # sorted by (order, slot): where inserting them one by one puts them
            g.orders = sorted(g.orders + keys)
            g.slots = chain = [s for _, s in g.orders]
            last = len(chain) - 1
            for i, s in enumerate(chain):
                prev[s] = chain[i - 1] if i else -1
                nxt[s] = chain[i + 1] if i < last else -1

    # -- a saved lexical index -----------------------------------------------------------

    def lexical_state(self) -> LexicalState | None:
        """The lexical index as arrays and string lists, for a caller that saves it and
        gives it back to ``load_lexical_state`` in a later process (a memory's saved index);
        None when it cannot be kept that way: an embedder (vectors are the store's), a
        removed slot, a tokenizer of the caller's, or a group or section that is not a
        string or a (string, int) pair."""
        if self.embedder is not None or self._dead or self.tokenize is not words:
            return None
        xp = _numpy()
        groups: dict[str, int] = {}
        slot_group: list[int] = []
        for g in self._group:
            if g is None:
                slot_group.append(-1)
            elif isinstance(g, str):
                slot_group.append(groups.setdefault(g, len(groups)))
            else:
                return None
        sec_group: list[int] = []
        sec_turn: list[int] = []
        for key in self._sections:  # numbered in order of first sight
            if not (
                isinstance(key, tuple)
                and len(key) == 2
                and isinstance(key[0], str)
                and type(key[1]) is int
            ):
                return None
            sec_group.append(groups.setdefault(key[0], len(groups)))
            sec_turn.append(key[1])
        # the postings term by term (each term's slots ascending: slots are only appended)
        vocab = list(self._post)
        p_ptr = [0]
        p_slots: list[int] = []
        p_counts: list[int] = []
        for post in self._post.values():
            p_slots.extend(post)
            p_counts.extend(post.values())
            p_ptr.append(len(p_slots))
        g_ptr, g_slots, g_orders = [0], list[int](), list[float]()
        g_names = list(groups)
        for name in g_names:
            got = self._groups.get(name)
            if got is not None:
                g_orders.extend(o for o, _ in got.orders)
                g_slots.extend(got.slots)
            g_ptr.append(len(g_slots))
        m_ptr, m_slots = [0], list[int]()
        for members in self._members:
            m_slots.extend(members)
            m_ptr.append(len(m_slots))
        arrays = {
            "len": xp.asarray(self._len, dtype=xp.int64),
            "p_ptr": xp.asarray(p_ptr, dtype=xp.int64),
            "p_slots": xp.asarray(p_slots, dtype=xp.int32),
            "p_counts": xp.asarray(p_counts, dtype=xp.int32),
            "slot_group": xp.asarray(slot_group, dtype=xp.int64),
            "section": xp.asarray(self._section, dtype=xp.int64),
            "sec_group": xp.asarray(sec_group, dtype=xp.int64),
            "sec_turn": xp.asarray(sec_turn, dtype=xp.int64),
            "prev": xp.asarray(self._prev, dtype=xp.int64),
            "next": xp.asarray(self._next, dtype=xp.int64),
            "g_ptr": xp.asarray(g_ptr, dtype=xp.int64),
            "g_slots": xp.asarray(g_slots, dtype=xp.int64),
            "g_orders": xp.asarray(g_orders, dtype=xp.float64),
            "m_ptr": xp.asarray(m_ptr, dtype=xp.int64),
            "m_slots": xp.asarray(m_slots, dtype=xp.int64),
            "wordy": xp.asarray(sorted(self._wordy), dtype=xp.int64),
            "scalars": xp.asarray([self._total, self._seq, self._embedded], dtype=xp.int64),
        }
        strings = {"ids": list(self._ids), "texts": list(self._text), "vocab": vocab}
        strings["groups"] = g_names
        return LexicalState(arrays, strings)

    @property
    def ids(self) -> list[str]:
        """The document ids by slot (a removed one's too)."""
        return self._ids

    def texts(self) -> list[str]:
        """The texts of the documents indexed, in slot order."""
        dead = self._dead
        return [t for s, t in enumerate(self._text) if s not in dead]

    def same_doc(
        self,
        slot: int,
        text: str,
        group: Hashable | None,
        order: float | None,
        section: Hashable | None,
        dense: bool,
    ) -> bool:
        """Whether ``slot`` holds the document ``add`` would make of these arguments (its
        text, its terms' count, its group and place in it, its section, its channel): a
        check of an index loaded from a file against the nodes it was made from."""
        if slot >= len(self._ids) or slot in self._dead or self._text[slot] != text:
            return False
        if self._len[slot] != sum(self._counts(text).values()) or dense == (slot in self._wordy):
            return False
        number = self._section[slot]
        if (number >= 0) != (section is not None) or (
            section is not None and self._sections.get(section) != number
        ):
            return False
        if self._group[slot] != group:
            return False
        if group is not None and order is not None:
            g = self._groups[group]
            return g.orders[g.slots.index(slot)][0] == float(order)
        return True

    def load_lexical_state(
        self, arrays: Mapping[str, NDArray[Any]], strings: Mapping[str, list[str]]
    ) -> None:
        """Make this (empty, lexical) retriever the one ``lexical_state`` was read from:
        the same slots, postings, neighbours and sections (``arrays`` and ``strings``: a
        ``LexicalState``'s). ``InvalidArgument`` when it is
        not empty or has an embedder; the state is trusted to be one ``lexical_state``
        made (the caller checks the file it came from)."""
        if self._ids or self.embedder is not None or self.tokenize is not words:
            raise InvalidArgument("load_lexical_state needs an empty lexical retriever")
        a, s = arrays, strings
        ids, vocab, names = s["ids"], s["vocab"], s["groups"]
        n = len(ids)
        if not (
            len(s["texts"]) == n == len(a["len"]) == len(a["prev"]) == len(a["next"])
            and len(a["p_ptr"]) == len(vocab) + 1
            and len(a["section"]) == n == len(a["slot_group"])
        ):
            raise InvalidArgument("a saved lexical index whose arrays disagree in length")
        if not _in_range(a, n, len(vocab), len(names)):
            raise InvalidArgument("a saved lexical index with an entry out of its range")
        # each document's term counts are counted again from its text if it is removed
        self._tf = [None] * n
        self._post = _SavedPostings(vocab, a["p_ptr"], a["p_slots"], a["p_counts"])
        self._ids = list(ids)
        self._slot = dict(zip(ids, range(n), strict=True))
        self._len = a["len"].tolist()
        self._text = list(s["texts"])
        self._group = [None if g < 0 else names[g] for g in a["slot_group"].tolist()]
        self._prev, self._next = a["prev"].tolist(), a["next"].tolist()
        self._section = a["section"].tolist()
        sec_keys = [
            (names[g], t)
            for g, t in zip(a["sec_group"].tolist(), a["sec_turn"].tolist(), strict=True)
        ]
        self._sections = {k: i for i, k in enumerate(sec_keys)}
        m_ptr, m_slots = a["m_ptr"].tolist(), a["m_slots"].tolist()
        self._members = [m_slots[i:j] for i, j in itertools.pairwise(m_ptr)]
        g_ptr, g_slots, g_orders = (
            a["g_ptr"].tolist(),
            a["g_slots"].tolist(),
            a["g_orders"].tolist(),
        )
        self._groups = {}
        for k, name in enumerate(names):
            i, j = g_ptr[k], g_ptr[k + 1]
            if i == j:
                continue
            g = self._groups[name] = _Group()
            g.slots = g_slots[i:j]
            g.orders = list(zip(g_orders[i:j], g.slots, strict=True))
        self._wordy = set(a["wordy"].tolist())
        self._total, self._seq, self._embedded = a["scalars"].tolist()
        self._arr = self._section_arr = self._wordy_arr = None

    def _grow(self, rows: int) -> None:
        """Room for ``rows`` vectors (doubling, so adding one at a time stays cheap)."""
        assert self.embedder is not None
        xp = _numpy()
        if self._vec is None or self._vec.shape[0] < rows:
            cap = max(rows, 2 * (0 if self._vec is None else self._vec.shape[0]), 64)
            grown = xp.zeros((cap, self.embedder.dim), dtype=xp.float32)
            if self._vec is not None:
                grown[: self._vec.shape[0]] = self._vec
            self._vec = grown

    def _place(self, slot: int, vector: Sequence[float]) -> None:
        xp = _numpy()
        self._grow(slot + 1)
        assert self._vec is not None
        v = xp.asarray(vector, dtype=xp.float32)
        self._vec[slot] = v / max(float(xp.linalg.norm(v)), 1e-12)

    def extend(self, docs: Iterable[Doc | tuple[str, str]]) -> None:
        """Index several documents: ``Doc`` rows or ``(doc_id, text)`` pairs."""
        for d in docs:
            doc = d if isinstance(d, Doc) else Doc(*d)
            self.add(doc.doc_id, doc.text, group=doc.group, order=doc.order, section=doc.section)

    def _section_of(self, section: Hashable | None, slot: int) -> int:
        if section is None:
            return -1
        number = self._sections.get(section)
        if number is None:
            number = self._sections[section] = len(self._members)
            self._members.append([])
        self._members[number].append(slot)
        return number

    def _terms(self, slot: int) -> Counter[str]:
        """The term counts of the document in ``slot``."""
        tf = self._tf[slot]
        if tf is None:  # a loaded index's: counted as add counted them
            tf = self._tf[slot] = self._counts(self._text[slot])
        return tf

    def remove(self, doc_id: str) -> None:
        """Drop a document; its slot is left empty rather than the index rebuilt."""
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        self._arr = None
        for t in self._terms(slot):
            self._post_arr.pop(t, None)
            post = self._post[t]
            del post[slot]
            if not post:
                del self._post[t]
        self._total -= self._len[slot]
        self._tf[slot] = Counter()
        self._len[slot] = 0
        self._dead.add(slot)
        if slot not in self._wordy:
            self._embedded -= 1
        if self._section[slot] >= 0:
            self._members[self._section[slot]].remove(slot)
            self._section[slot] = -1
            self._section_arr = None
        group = self._group[slot]
        if group is not None:
            g = self._groups[group]
            i = g.slots.index(slot)
            del g.slots[i], g.orders[i]
            p, n = self._prev[slot], self._next[slot]
            if p >= 0:
                self._next[p] = n
            if n >= 0:
                self._prev[n] = p
            self._prev[slot] = self._next[slot] = -1
        if slot in self._pending:
            self._pending.remove(slot)

    def _link(self, slot: int, group: Hashable, order: float) -> None:
        g = self._groups.get(group)
        if g is None:
            g = self._groups[group] = _Group()
        key = (order, slot)
        i = bisect.bisect(g.orders, key)
        g.orders.insert(i, key)
        g.slots.insert(i, slot)
        p = g.slots[i - 1] if i else -1
        n = g.slots[i + 1] if i + 1 < len(g.slots) else -1
        self._prev[slot], self._next[slot] = p, n
        if p >= 0:
            self._next[p] = slot
        if n >= 0:
            self._prev[n] = slot

    def neighbours(self, doc_id: str) -> tuple[str | None, str | None]:
        """The documents just before and after ``doc_id`` in its group."""
        slot = self._slot[doc_id]
        p, n = self._prev[slot], self._next[slot]
        return (self._ids[p] if p >= 0 else None, self._ids[n] if n >= 0 else None)

    def flush(self) -> None:
        """Embed the documents added since the last search (in one batch)."""
        if self.embedder is None:
            return
        self._grow(len(self._ids))  # every slot has a row, given or still to embed
        if not self._pending:
            return
        xp = _numpy()
        assert self._vec is not None
        for at in range(0, len(self._pending), _BATCH):
            slots = self._pending[at : at + _BATCH]
            texts = [self._text[s] for s in slots]
            vecs = xp.asarray(self.embedder.embed(texts), dtype=xp.float32)
            if vecs.shape != (len(slots), self.embedder.dim):
                raise InvalidArgument(
                    f"embedder {self.embedder.name!r} returned shape {vecs.shape}, "
                    f"expected ({len(slots)}, {self.embedder.dim})"
                )
            vecs /= xp.maximum(xp.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            self._vec[xp.asarray(slots)] = vecs
        self._pending = []

    # -- scoring -------------------------------------------------------------------------

    def _postings(self, term: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """A term's postings as arrays (slots, term frequencies), in the posting dict's
        order; made at the first search that asks for the term after it changed."""
        got = self._post_arr.get(term)
        if got is None:
            saved = self._post
            if isinstance(saved, _SavedPostings) and saved.unread(term):
                # the arrays straight from the saved ones (the dict's order: ascending)
                got = self._post_arr[term] = saved.arrays(term)
                return got
            xp = _numpy()
            post = self._post[term]
            got = (
                xp.fromiter(post.keys(), dtype=xp.int64, count=len(post)),
                xp.fromiter(post.values(), dtype=xp.float64, count=len(post)),
            )
            self._post_arr[term] = got
        return got

    def _slot_arrays(self) -> _Arrays:
        """Per slot, for numpy: lengths, neighbours, sections (made once per change)."""
        if self._arr is None:
            xp = _numpy()
            self._arr = _Arrays(
                xp.asarray(self._len, dtype=xp.float64),
                xp.asarray(self._prev, dtype=xp.int64),
                xp.asarray(self._next, dtype=xp.int64),
                xp.asarray(self._section, dtype=xp.int64),
            )
        return self._arr

    def _bm25(self, query: dict[str, float]) -> _Scores:
        """BM25 per slot for weighted query terms, for the slots that match one (ascending
        slots, their scores); with ``coordination`` a score is scaled by (the share of the
        query's idf weight it matches) ** coordination, so a turn answering most of the
        question beats one repeating a single rare word.

        The sums run term by term in the query's order, as a loop over the postings would
        add them, so every score is the same float to the last bit."""
        xp = _numpy()
        n = len(self)
        if not n or not self._total:
            return _empty()
        avg = self._total / n
        k1, b = self.k1, self.b
        base, scale = k1 * (1 - b), k1 * b / avg
        lengths = self._slot_arrays().length
        slots: list[NDArray[np.int64]] = []
        parts: list[NDArray[np.float64]] = []
        weights: list[float] = []  # per term: its idf weight
        total = 0.0
        for t, qw in query.items():
            if t not in self._post:  # (a term's postings are never kept empty)
                continue
            s, f = self._postings(t)
            df = len(s)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            total += qw * idf
            w = qw * idf * (k1 + 1)
            slots.append(s)
            parts.append(w * f / (f + base + scale * lengths[s]))
            weights.append(qw * idf)
        if not slots:
            return _empty()
        every = xp.concatenate(slots)
        rows = len(self._ids)
        # bincount adds each slot's values in input order: term by term, as the loop did
        summed = xp.bincount(every, weights=xp.concatenate(parts), minlength=rows)
        matched = xp.flatnonzero(xp.bincount(every, minlength=rows))
        out = summed[matched]
        if self.coordination and total:
            out = out * self._coordinated(every, slots, weights, total, matched, rows)
        return _Scores(matched, out)

    def _coordinated(
        self,
        every: NDArray[np.int64],
        slots: Sequence[NDArray[np.int64]],
        weights: Sequence[float],
        total: float,
        matched: NDArray[np.int64],
        rows: int,
    ) -> NDArray[np.float64]:
        """Per matched slot: (the share of the query's idf weight it matches) **
        coordination. A slot's share depends only on which of the query's terms it holds
        (its weight is their idf weights added in the query's order, as bincount adds
        them), so it is computed once per set of terms held, with Python's ``**`` (numpy's
        power may round differently), not once per slot. The sets are told apart by a bit
        per term (exact in a float: a sum of distinct powers of two), which for up to
        ``_SET_BITS`` terms avoids sorting every match's weight to find the distinct ones."""
        xp = _numpy()
        c = self.coordination
        if len(weights) > _SET_BITS:
            hit = xp.bincount(
                every,
                weights=xp.concatenate(
                    [xp.full(len(s), w) for s, w in zip(slots, weights, strict=True)]
                ),
                minlength=rows,
            )[matched]
            share, back = xp.unique(hit / total, return_inverse=True)
            scaled = xp.fromiter((x**c for x in share.tolist()), dtype=xp.float64)
            found: NDArray[np.float64] = scaled[back.reshape(-1)]
            return found
        bits = xp.concatenate([xp.full(len(s), float(1 << i)) for i, s in enumerate(slots)])
        held = xp.bincount(every, weights=bits, minlength=rows)[matched].astype(xp.int64)
        table = xp.zeros(1 << len(weights), dtype=xp.float64)
        for held_set in xp.flatnonzero(xp.bincount(held, minlength=len(table))).tolist():
            weight = 0.0
            for i, w in enumerate(weights):
                if held_set >> i & 1:
                    weight += w
            table[held_set] = (weight / total) ** c
        got: NDArray[np.float64] = table[held]
        return got

    def _idf(self, term: str) -> float:
        post = self._post
        if isinstance(post, _SavedPostings) and post.unread(term):
            df = post.count(term)  # without making its dict
        else:
            df = len(post.get(term, ()))
        n = len(self)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def lexical_scores(self, query: str) -> dict[int, float]:
        """BM25 per slot (before neighbours), for the slots that match: with ``feedback``
        > 0 one round of pseudo-relevance feedback adds that many words the best
        first-round matches share (evidence answering in other words than the question's),
        and with ``answer_boost`` a match holding the kind of text the question asks for
        (when: a time, how many: a number, where / who: a name) is raised."""
        return self._lexical_arrays(query).as_dict()

    def _lexical_arrays(self, query: str) -> _Scores:
        """``lexical_scores`` as arrays (ascending slots, their scores)."""
        return self._relevance(query, read=True)[0]

    def _relevance(self, query: str, *, read: bool) -> tuple[_Scores, _Unread | None]:
        """``lexical_scores`` as arrays; with ``read=False`` the answer boost is left out
        where a slot's text was not read for the kind yet, and what was left out is
        returned (``_Unread``; None when nothing was)."""
        q = {t: float(f) for t, f in Counter(self.tokenize(query)).items() if t in self._post}
        if not q:
            return _empty(), None
        first = self._bm25(q)
        rel = first
        if self.feedback and len(first.slots):
            # the best first-round matches, ties to the lower slot (numpy's partition, not
            # a heap over every match)
            top = [(v, -s) for s, v in first.top(_FEEDBACK_DOCS)]
            pool: dict[str, float] = {}
            best = top[0][0] if top else 1.0
            for v, neg in top:
                for t, f in self._terms(-neg).items():
                    if t not in q:
                        pool[t] = pool.get(t, 0.0) + f * self._idf(t) * v / best
            extra = sorted(pool, key=lambda t: (-pool[t], t))[: self.feedback]
            if extra:
                top_w = pool[extra[0]]
                expanded = dict(q)
                for t in extra:
                    expanded[t] = _FEEDBACK_WEIGHT * pool[t] / top_w
                rel = self._bm25(expanded)
        if self.answer_boost:
            want = _answer_type(query)
            if want is not None and len(rel.slots):
                xp = _numpy()
                has, unread = self._kind_mask(want, rel.slots, read=read)
                up = 1 + self.answer_boost
                rel = _Scores(rel.slots, xp.where(has, rel.values * up, rel.values))
                if unread.any():
                    return rel, _Unread(want, up, rel.slots[unread])
        return rel, None

    def _kind_mask(
        self, pattern: re.Pattern[str], slots: NDArray[np.int64], *, read: bool = True
    ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Which of ``slots`` hold text of the kind ``pattern`` finds, and which were not
        read (none when ``read``): each slot's text read once, when a search first needs
        it (a slot's text never changes)."""
        xp = _numpy()
        known = self._kind.get(pattern)
        rows = len(self._text)
        if known is None or known.shape[0] < rows:
            grown = xp.full(max(rows, 2 * (0 if known is None else known.shape[0])), -1, xp.int8)
            if known is not None:
                grown[: known.shape[0]] = known
            known = self._kind[pattern] = grown
        got = known[slots]
        todo = slots[got < 0]
        if read and len(todo):
            text = self._text
            known[todo] = [1 if pattern.search(text[t]) else 0 for t in todo.tolist()]
            got = known[slots]
        return got == 1, got < 0

    def _smooth(self, raw: _Scores, share: float) -> _Scores:
        """Each matched slot and its neighbours raised by ``share`` of the neighbours'
        (``smoothing``: the better one, or both)."""
        if not share or not len(raw.slots):
            return raw
        xp = _numpy()
        arr = self._slot_arrays()
        rows = len(self._ids)
        dense = xp.zeros(rows + 1, dtype=xp.float64)  # the last: no neighbour (-1)
        dense[raw.slots] = raw.values
        todo = xp.zeros(rows, dtype=bool)
        todo[raw.slots] = True
        for link in (arr.prev[raw.slots], arr.next[raw.slots]):
            todo[link[link >= 0]] = True
        slots = xp.flatnonzero(todo)
        a = dense[arr.prev[slots]]
        c = dense[arr.next[slots]]
        near = a + c if self.smoothing == "sum" else xp.maximum(a, c)
        return _Scores(slots, dense[slots] + share * near)

    def _dense(self, query: str) -> NDArray[np.float32]:
        xp = _numpy()
        assert self.embedder is not None and self._vec is not None
        if self._last_query is not None and self._last_query[0] == query:
            q = self._last_query[1]
        else:
            embed_query = getattr(self.embedder, "embed_query", None)
            fn: Callable[[list[str]], Any] = embed_query or self.embedder.embed
            q = xp.asarray(fn([query]), dtype=xp.float32).reshape(-1)
            q /= max(float(xp.linalg.norm(q)), 1e-12)
            self._last_query = (query, q)
        rows = len(self._ids)
        cos: NDArray[np.float32] = self._vec[:rows] @ q
        if self.dense_neighbour:
            pad = xp.append(cos, xp.float32(0.0))
            prev = pad[xp.asarray(self._prev)]
            nxt = pad[xp.asarray(self._next)]
            both = prev + nxt if self.smoothing == "sum" else xp.maximum(prev, nxt)
            cos = cos + xp.float32(self.dense_neighbour) * both
        return cos

    def search(self, query: str, k: int = 10, *, mode: Mode | None = None) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first (ties: the earlier added).

        ``mode`` defaults to ``"hybrid"`` with an embedder and ``"lexical"`` without.
        """
        mode = mode or ("hybrid" if self.embedder is not None else "lexical")
        if mode != "lexical" and self.embedder is None:
            raise InvalidArgument(f"mode {mode!r} needs an embedder")
        if k <= 0 or not len(self) or not query.strip():
            return []
        if mode == "hybrid" and not self._embedded:
            mode = "lexical"  # nothing is embedded: no query to embed either
        if mode == "lexical":
            return [Hit(self._ids[s], v, {"lexical": v}) for s, v in self._lexical_top(query, k)]
        lex = self._smoothed(query)
        xp = _numpy()
        fused, lex_arr, cos, alive = self._fused(query, lex, mode)
        rows = cos.shape[0]
        if self._wordy and mode == "hybrid":  # by its words alone: shown when they reach it
            alive = alive & ~(self._wordy_mask(rows) & (fused <= 0))
            fused[~alive] = -xp.inf
        k = min(k, int(alive.sum()))
        if k <= 0:
            return []
        top = xp.argpartition(-fused, k - 1)[:k] if k < rows else xp.arange(rows)
        order = sorted(top.tolist(), key=lambda s: (-fused[s], s))[:k]
        return [
            Hit(
                self._ids[s],
                float(fused[s]),
                {"lexical": float(lex_arr[s]), "dense": float(cos[s]), "fused": float(fused[s])},
            )
            for s in order
        ]

    def scores(self, query: str, *, mode: Mode | None = None) -> dict[str, float]:
        """Every document's relevance to ``query``, by id in the order they were added:
        the lexical score after the neighbour and section steps (0 for a document no query
        word reaches), or with an embedder the fused score (``mode`` as in :meth:`search`).
        Sorting these best first, ties to the earlier added, gives :meth:`search`'s
        ranking (which leaves out lexical scores of 0)."""
        mode = mode or ("hybrid" if self.embedder is not None else "lexical")
        if mode != "lexical" and self.embedder is None:
            raise InvalidArgument(f"mode {mode!r} needs an embedder")
        alive = [s for s in range(len(self._ids)) if s not in self._dead]
        if not alive or not query.strip():
            return {self._ids[s]: 0.0 for s in alive}
        if mode == "lexical":
            lex = self._lexical(query).as_dict()
            return {self._ids[s]: lex.get(s, 0.0) for s in alive}
        fused = self._fused(query, self._smoothed(query), mode)[0].tolist()
        return {self._ids[s]: fused[s] for s in alive}

    def _lexical_top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The lexical ranking's ``k`` best (slot, score), best first, ties to the lower slot.

        The answer boost needs to know which matches hold the kind of text the question
        asks for, and reading every match's text for it would cost a common word's
        thousands of regular-expression searches. The texts are read where the ranking
        depends on them: every score is bounded from below (the unread matches not raised)
        and from above (all of them raised); a slot whose upper bound is below the k-th
        best lower bound cannot be among the ``k`` best, and a candidate's exact score
        depends only on the matches next to it and in its section. Those are read, the
        best candidates' first, and the bounds drawn again until every candidate's score
        is exact. So the ranking and the scores are the ones of every text read."""
        rel, unread = self._relevance(query, read=False)
        if unread is None:
            return self._lift_sections(self._neighbours(rel), k).top(k)
        xp = _numpy()
        batch = max(2 * k, 64)
        while True:
            lo = self._lift_sections(self._neighbours(rel), None)
            raised = rel.values.copy()
            raised[_among(rel.slots, unread.slots)] *= unread.up
            hi = self._lift_sections(self._neighbours(_Scores(rel.slots, raised)), None)
            positive = lo.values[lo.values > 0]
            cut = 0.0
            if len(positive) >= k:
                cut = float(xp.partition(positive, len(positive) - k)[len(positive) - k])
            near = (hi.values >= cut) & (hi.values > 0)
            candidates, bound = hi.slots[near], hi.values[near]
            todo = self._unread_around(candidates, unread)
            if not len(todo):
                break
            if len(candidates) > batch:  # the best candidates' first
                best = candidates[xp.argpartition(-bound, batch)[:batch]]
                first = self._unread_around(best, unread)
                if len(first):
                    todo = first
            self._kind_mask(unread.pattern, todo)
            has, still = self._kind_mask(unread.pattern, rel.slots, read=False)
            values = rel.values.copy()
            now = has & _among(rel.slots, todo)
            values[now] = values[now] * unread.up
            rel = _Scores(rel.slots, values)
            if not still.any():
                return self._lift_sections(self._neighbours(rel), k).top(k)
            unread = _Unread(unread.pattern, unread.up, rel.slots[still])
        exact = self._lift_sections(self._neighbours(rel), None)
        keep = _among(exact.slots, candidates)
        return _Scores(exact.slots[keep], exact.values[keep]).top(k)

    def _unread_around(self, candidates: NDArray[np.int64], unread: _Unread) -> NDArray[np.int64]:
        """The unread matches a candidate's exact score reads: the candidates, the members of
        their sections, and the neighbours of both."""
        xp = _numpy()
        arr = self._slot_arrays()
        secs = arr.section[candidates]
        secs = secs[secs >= 0]
        need = xp.zeros(len(self._ids), dtype=bool)
        need[candidates] = True
        if len(secs):  # the members of those sections (-1, no section, reads the last: no)
            asked = xp.zeros(len(self._members) + 1, dtype=bool)
            asked[secs] = True
            need |= asked[arr.section]
        around = xp.flatnonzero(need)
        for link in (arr.prev[around], arr.next[around]):
            need[link[link >= 0]] = True
        todo: NDArray[np.int64] = unread.slots[need[unread.slots]]
        return todo

    def _smoothed(self, query: str) -> _Scores:
        """Lexical scores after the neighbour step, for the live slots that have one."""
        return self._neighbours(self._lexical_arrays(query))

    def _neighbours(self, rel: _Scores) -> _Scores:
        """``rel`` after the neighbour step, without dead slots."""
        lex = self._smooth(rel, self.neighbour)
        if self._dead and len(lex.slots):
            xp = _numpy()
            live = ~xp.isin(lex.slots, xp.fromiter(self._dead, dtype=xp.int64))
            lex = _Scores(lex.slots[live], lex.values[live])
        return lex

    def _lexical(self, query: str, k: int | None = None) -> _Scores:
        """The lexical ranking's scores: after neighbours, each section raised by
        ``section_boost`` of its best (members no query word reaches join at that lift).

        With ``k`` (a search for the ``k`` best) an unmatched member joins only when its lift
        reaches the k-th best score before lifting: lifting lowers no score, so a smaller
        lift cannot reach the top ``k``, and the ranking is the one without the cut."""
        return self._lift_sections(self._smoothed(query), k)

    def _lift_sections(self, lex: _Scores, k: int | None) -> _Scores:
        """``_lexical``'s section step on scores after neighbours."""
        if not self.section_boost or not self._members or not len(lex.slots):
            return lex
        xp = _numpy()
        sec_of = self._slot_arrays().section
        sec = sec_of[lex.slots]
        inside = sec >= 0
        # each section's best score, where one of its members has a score above 0
        best = xp.zeros(len(self._members), dtype=xp.float64)
        xp.maximum.at(best, sec[inside], lex.values[inside])
        floor = 0.0
        if k is not None and len(lex.slots) >= k:
            floor = float(xp.partition(lex.values, len(lex.values) - k)[len(lex.values) - k])
        lift = self.section_boost * best
        lifted = best > 0
        # every member of a section whose lift reaches the floor joins; elsewhere the
        # matched members alone are raised
        whole = lifted & (lift >= floor)
        rows = len(self._ids)
        values = xp.zeros(rows, dtype=xp.float64)
        values[lex.slots] = lex.values
        scored = xp.zeros(rows, dtype=bool)
        scored[lex.slots] = True
        if whole.any():  # (a slot in no section, -1, reads the last: False)
            scored |= xp.append(whole, False)[sec_of]
        slots = xp.flatnonzero(scored)
        s_sec = sec_of[slots]
        up = (s_sec >= 0) & lifted[xp.maximum(s_sec, 0)]
        values = values[slots]
        values[up] = values[up] + lift[s_sec[up]]
        return _Scores(slots, values)

    def _fused(
        self, query: str, lex: _Scores, mode: Mode
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float32], NDArray[np.bool_]]:
        """Per slot: the fused score (dead slots -inf), the lexical and dense scores, and
        which slots are alive."""
        self.flush()
        xp = _numpy()
        cos = self._dense(query)
        rows = cos.shape[0]
        alive = xp.ones(rows, dtype=bool)
        if self._dead:
            alive[xp.fromiter(self._dead, dtype=xp.int64)] = False
        wordy = self._wordy_mask(rows)
        if self._wordy:  # never embedded: the lowest dense score of the rest
            rest = alive & ~wordy
            cos = xp.where(wordy, cos[rest].min() if rest.any() else 0.0, cos).astype(cos.dtype)
        lex_arr = xp.zeros(rows, dtype=xp.float64)
        if len(lex.slots):
            lex_arr[lex.slots] = lex.values
        if mode == "dense":
            fused = cos.astype(xp.float64)
        elif self.fusion == "rrf":
            fused = self._rrf(lex_arr, cos, alive)
        else:
            fused = self._weighted(lex_arr, cos, alive & ~wordy)
            if self._wordy:  # a document kept out of the dense channel ranks by its words
                top = float(lex_arr.max()) if lex_arr.size else 0.0
                fused = xp.where(wordy, lex_arr / top if top > 0 else lex_arr, fused)
        fused[~alive] = -xp.inf
        if mode != "dense" and self.section_boost and self._members:
            fused = self._lift(fused)
        return fused, lex_arr, cos, alive

    def _wordy_mask(self, rows: int) -> NDArray[np.bool_]:
        """Per slot: whether it was kept out of the dense channel (``add(dense=False)``),
        built once per change of the index, not per query."""
        xp = _numpy()
        if self._wordy_arr is None or self._wordy_arr.shape[0] != rows:
            mask: NDArray[np.bool_] = xp.zeros(rows, dtype=bool)
            if self._wordy:
                mask[xp.fromiter(self._wordy, dtype=xp.int64)] = True
            self._wordy_arr = mask
        return self._wordy_arr

    def _lift(self, fused: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each slot of a section raised by ``section_boost`` of the section's best score."""
        xp = _numpy()
        if self._section_arr is None:  # built once per change of the index, not per query
            self._section_arr = xp.asarray(self._section, dtype=xp.int64)
        sec = self._section_arr[: fused.shape[0]]
        inside = sec >= 0
        best = xp.full(len(self._members), -xp.inf)
        xp.maximum.at(best, sec[inside], fused[inside])
        lift = xp.zeros_like(fused)
        lift[inside] = self.section_boost * xp.maximum(best[sec[inside]], 0.0)
        out: NDArray[np.float64] = fused + lift
        return out

    def _rrf(
        self, lex: NDArray[np.float64], cos: NDArray[np.float32], alive: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """sum of weight / (rrf_k + rank) over the channels; unmatched lexical ranks last."""
        xp = _numpy()
        rows = lex.shape[0]
        out: NDArray[np.float64] = xp.zeros(rows, dtype=xp.float64)
        w = 2 * self.dense_weight
        for arr, weight, matched in (
            (lex, 2 - w, lex > 0),
            (xp.where(alive, cos, -xp.inf), w, alive),
        ):
            if not weight:
                continue
            order = xp.lexsort((xp.arange(rows), -arr))
            rank = xp.empty(rows, dtype=xp.float64)
            rank[order] = xp.arange(1, rows + 1)
            out += xp.where(matched, weight / (self.rrf_k + rank), 0.0)
        return out

    def _weighted(
        self, lex: NDArray[np.float64], cos: NDArray[np.float32], alive: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """(1 - w) * lexical / its max + w * min-max normalized cosine."""
        xp = _numpy()
        top = float(lex.max()) if lex.size else 0.0
        lex_n = lex / top if top > 0 else lex
        c = cos[alive].astype(xp.float64)
        lo, hi = (float(c.min()), float(c.max())) if c.size else (0.0, 1.0)
        dense_n = (cos.astype(xp.float64) - lo) / (hi - lo if hi > lo else 1.0)
        w = self.dense_weight
        out: NDArray[np.float64] = (1 - w) * lex_n + w * dense_n
        return out


def _numpy() -> Any:
    """numpy, which the dense channel needs (a core dependency brings it)."""
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy ships with the core dependencies
        raise DataMissing("dense retrieval needs numpy: pip install numpy") from e
    return numpy


def from_texts(texts: Sequence[str], **options: Any) -> Retriever:
    """A retriever over ``texts`` whose doc ids are their positions, all in one group in
    that order (a conversation's turns)."""
    return Retriever(
        (Doc(str(i), t, group=0, order=float(i)) for i, t in enumerate(texts)), **options
    )
