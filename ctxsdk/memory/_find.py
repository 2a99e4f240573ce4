"""Finding memories: the base's hybrid retrieval for candidates, then the dsh-trivium seed's
graph rules to rank them and to show how they connect.

1. **Candidates**: the ``Retriever`` over every active node's index text (name, text,
   aliases, fail, fix, until; observations grouped by session in event order, so a turn's
   neighbours lift it), plus *entity anchors* (an entity whose name or alias the query
   mentions), plus, when the query asks about a deadline, every decision with one.
2. **Primary score**: the seed's substring rules (name == query 4, name in query or query in
   name 3, query in the text 2, anchors 4 / 3), or else the retrieval rank scaled into
   (0, 2], so a literal match always outranks a fuzzy one.
3. ``same_as``: a hit merged into another also returns the surviving node.
4. **Expansion**: one hop along the business edges (about, decided, broke, fixed), in and
   out, at score 1 (``expand=0`` turns it off).
5. **Stale decisions** (``until_at`` in the past) are hidden unless the query asks about the
   deadline ("until", "postpone", 下周, 周五, a weekday, or the node's own until label).
6. **Order**: score plus a quarter of the seed's rank boost (+4 a business edge, -6 stale,
   +1 an unexpired deadline, +3 stale but asked), then type (entity, decision, preference,
   experience, observation), then id. Each hit carries its edge path.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Protocol

from .._display import Rendered, badge, esc, plural, table
from ..errors import InvalidArgument
from ..session import Embedder, Hit, redact
from ..session.kernel import query_window
from ._model import BUSINESS_EDGES, Edge, Node
from ._store import MemoryStore

__all__ = [
    "FindResult",
    "MemoryHit",
    "Ranker",
    "Templates",
    "boilerplate",
    "find_nodes",
    "index_text",
    "is_stale",
    "template_shape",
]


class Ranker(Protocol):
    """What ``find`` ranks candidates with: the engine's ``Retriever``, or a database's
    own search (``_db_search.DatabaseSearch``)."""

    tokenize: Callable[[str], list[str]]

    @property
    def embedder(self) -> Embedder | None: ...

    def search(self, query: str, k: int = 10, *, mode: Any = None) -> list[Hit]: ...


_TYPE_RANK = {"entity": 0, "decision": 1, "preference": 2, "experience": 3, "observation": 4}
_NEVER = frozenset({"workspace", "episode"})
_PATH_ORDER = ("about", "decided", "broke", "fixed", "same_as", "observed_in")
_UNTIL_WORDS = re.compile(
    r"\b(?:until|deadline|postpone[sd]?|defer(?:red)?|due|expire[sd]?|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|next week)\b|下周|周[一二三四五六日天]|周末|过期|到期|截止",
    re.I,
)
_TEXT_CAP = 200
_EVIDENCE_CAP = 1000


# Words that say what kind of memory a node is, indexed with it: a question asks "what did
# the user ask …", "which file …", "what error …" in words a memory's own text rarely
# repeats. A preference ingest read is the user's own words; an entity named by a path is a
# file. (Measured in ``bench realworld``: find top-5 0.686 -> 0.700; LoCoMo unchanged.)
_GLOSS = {"preference": "user asked wants", "decision": "decided", "experience": "error fixed"}
_PATHLIKE = re.compile(r"/|\.\w{1,5}$")


def _gloss(node: Node) -> str:
    if node.type == "entity":
        return "file" if _PATHLIKE.search(node.name) else ""
    if node.type == "preference" and not any(s.via == "rule" for s in node.sources):
        return ""  # remembered by hand or by a tool: not known to be the user's words
    return _GLOSS.get(node.type, "")


def index_text(node: Node) -> str:
    """What retrieval indexes for ``node``: its name, aliases, text, fail / fix and until,
    and a few words for its kind (``_GLOSS``)."""
    told = node.extra.get("from")
    return " ".join(
        p for p in (said_text(node), _gloss(node), told if isinstance(told, str) else "") if p
    )


def said_text(node: Node) -> str:
    """The node's own words: its name, aliases, text, fail / fix and until."""
    if not (node.fail or node.fix or node.until or node.aliases):
        # the name and the text alone (an observation, most memories): the same words as
        # below without joining the empty parts (a first find reads every node's)
        stem = node.name.rstrip("…").strip()
        if stem and stem.casefold() not in node.text.casefold():
            return f"{node.name} {node.text}" if node.text else node.name
        return node.text
    body = [node.text, node.fail or "", node.fix or "", node.until or ""]
    seen = " ".join(body).casefold()
    head: list[str] = []
    for part in (node.name, *node.aliases):  # a name the text already says counts once
        stem = part.rstrip("…").strip()
        if stem and stem.casefold() not in seen:
            head.append(part)
            seen += " " + stem.casefold()
    return " ".join(p for p in (*head, *body) if p)


def _cut_line(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def is_stale(node: Node, now: datetime) -> bool:
    """A decision whose deadline instant has passed."""
    if node.type != "decision" or not node.until_at:
        return False
    try:
        at = datetime.fromisoformat(node.until_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at < now


def _asks_until(query: str, node: Node) -> bool:
    return bool(_UNTIL_WORDS.search(query)) or bool(node.until and node.until in query)


@dataclass(frozen=True)
class MemoryHit:
    """One found memory: the ``node``, its ``score``, why it was found (``via``: ``match``,
    ``anchor``, ``retrieval``, ``same_as``, ``expansion``), whether it is ``stale``, and its
    edge ``path`` (``<-decided-n12(Move auth…)``, ``about->n3(AuthGateway)``)."""

    node: Node
    score: float
    via: str
    stale: bool = False
    path: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()  # ids of lower hits with the same sources, folded into this
    evidence: str = ""  # the verbatim record this memory was read from, when that matched

    @property
    def short(self) -> str:
        return _cut_line(" ".join((self.node.text or self.node.name).split()), _TEXT_CAP)

    @property
    def said(self) -> str:
        """The evidence on one line, cut to what a listing shows (empty: none)."""
        return _cut_line(" ".join(self.evidence.split()), _EVIDENCE_CAP)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.node.id,
            "type": self.node.type,
            "name": self.node.name,
            "text": self.short,
            "score": round(self.score, 4),
            "via": self.via,
            "stale": self.stale,
            "until": self.node.until,
            "path": list(self.path),
            **({"folded": list(self.folded)} if self.folded else {}),
            **({"evidence": self.said} if self.evidence else {}),
        }


@dataclass(frozen=True)
class FindResult(Rendered):
    """What ``Memory.find`` returns: the hits, best first."""

    query: str
    hits: tuple[MemoryHit, ...]
    degraded_reason: str | None = None  # why the search fell back to lexical, if it did

    @property
    def degraded(self) -> bool:
        """Whether the hits were ranked without the embeddings the memory was given."""
        return self.degraded_reason is not None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Any:
        return iter(self.hits)

    def __getitem__(self, i: int) -> MemoryHit:
        return self.hits[i]

    def __repr__(self) -> str:
        return f"FindResult({self.query!r}, {len(self.hits)} hits)"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "hits": [h.to_json() for h in self.hits]}
        if self.degraded_reason is not None:
            out["degraded_reason"] = self.degraded_reason
        return out

    def by_type(self) -> dict[str, list[MemoryHit]]:
        out: dict[str, list[MemoryHit]] = {}
        for h in self.hits:
            out.setdefault(h.node.type, []).append(h)
        return out

    def _text_(self) -> str:
        lines = [f"find {self.query!r}: {plural(len(self.hits), 'hit')}"]
        if self.degraded_reason is not None:
            lines.append(f"  lexical only: {self.degraded_reason}")
        for h in self.hits:
            flags = (f" until {h.node.until}" if h.node.until else "") + (
                " [stale]" if h.stale else ""
            )
            lines.append(f"  [{h.score:.2f}] {h.node.id} {h.node.type}{flags}: {h.short}")
            if h.evidence:
                lines.append(f"      said: {_cut_line(h.said, _TEXT_CAP)}")
            if h.path:
                lines.append(f"      {' '.join(h.path)}")
        return "\n".join(lines)

    def _html_(self) -> str:
        rows = [
            (
                f"{h.score:.2f}",
                f"<code>{esc(h.node.id)}</code>",
                badge(h.node.type),
                esc(h.short)
                + (" " + badge("stale", "warn") if h.stale else "")
                + (
                    f"<div class='cx-muted'>said: {esc(_cut_line(h.said, 240))}</div>"
                    if h.evidence
                    else ""
                ),
                " ".join(h.path),  # a plain column: the table escapes it
            )
            for h in self.hits
        ]
        title = f"find {self.query!r}: {plural(len(self.hits), 'hit')}"
        head = f"<div class='cx-title'>{esc(title)}</div>"
        if self.degraded_reason is not None:
            head += f"<div>{badge('lexical only', 'warn')} {esc(self.degraded_reason)}</div>"
        return head + table(["score", "id", "type", "text", "path"], rows, raw=(1, 2, 3))


def _label(node: Node | None, node_id: str) -> str:
    if node is None:
        return node_id
    name = " ".join((node.name or node.text).split())
    return f"{node_id}({name[:24]}…)" if len(name) > 24 else f"{node_id}({name})"


def edge_path(
    node_id: str,
    incoming: Sequence[Edge],
    outgoing: Sequence[Edge],
    get: Callable[[str], Node | None],
    *,
    hide: Callable[[Node], bool] = lambda n: False,
    limit: int = 8,
) -> tuple[str, ...]:
    """The seed's path: incoming business edges as ``<-label-id(name…)`` (hidden sources
    left out), outgoing as ``label->id(name…)``, in label priority, at most ``limit``."""

    def rank(e: Edge) -> int:
        return _PATH_ORDER.index(e.label) if e.label in _PATH_ORDER else len(_PATH_ORDER)

    out: list[str] = []
    for e in sorted(incoming, key=lambda e: (rank(e), e.src)):
        if e.label == "in_workspace":
            continue
        src = get(e.src)
        if src is None or not src.active or hide(src):
            continue
        out.append(f"<-{e.label}-{_label(src, e.src)}")
    for e in sorted(outgoing, key=lambda e: (rank(e), e.dst)):
        if e.label == "in_workspace":
            continue
        dst = get(e.dst)
        if dst is None or not dst.active:
            continue
        out.append(f"{e.label}->{_label(dst, e.dst)}")
    return tuple(out[:limit])


_PUNCT = re.compile(r"[\W_]+")


def _plain(text: str) -> str:
    """``text`` with punctuation as spaces: ``ledger.core`` meets "ledger core"."""
    return " ".join(_PUNCT.sub(" ", text).split())


@lru_cache(maxsize=1 << 16)
def _plain_names(name: str, aliases: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """A node's lowercased name and aliases, and the same without punctuation: read once
    per name, not once per query (a find compares the query with every anchor's)."""
    names = (name.lower(), *(a.lower() for a in aliases))
    return names, frozenset(_plain(n) for n in names)


def _is_name(node: Node, q: str) -> bool:
    """The lowercased query ``q`` is the node's name or one of its aliases (punctuation aside)."""
    names, plain = _plain_names(node.name, node.aliases)
    return q in names or bool(_plain(q) and _plain(q) in plain)


def _rule_score(node: Node, q: str) -> float:
    """The seed's substring score of ``node`` for the lowercased query ``q`` (0: no match)."""
    name = node.name.lower()
    names = [name, *(a.lower() for a in node.aliases)]
    if q in names or (_plain(q) and _plain(q) in {_plain(n) for n in names}):
        return 4.0
    if any(n and (q in n or (len(n) >= 3 and _mentions(q, n))) for n in names):
        return 3.0
    if q and q in said_text(node).lower():
        return 2.0
    return 0.0


# Words that ask rather than say: a question's words in Chinese (a CJK run is indexed by
# character bigrams, so these are taken out of the query before its terms are counted). The
# English ones are the base's stop words already (what, which, how, did, ...).
_ASKING = re.compile(
    r"什么|为什么|为何|怎么样|怎么|怎样|如何|哪里|哪儿|哪些|哪个|哪|谁|多少|几|是否|吗|呢|吧|啊|嗯|"
    r"请问|请|一下|我们|你们|他们|我|你|的|了|是|有没有|有|在|和|与|就|都|也|还|这个|那个|这|那"
)


def query_terms(query: str, retriever: Ranker) -> set[str]:
    """The index terms of ``query`` that can count as a match: its words without stop
    words, question words and fillers (English and Chinese)."""
    return set(retriever.tokenize(_ASKING.sub(" ", query)))


def _relevant(node: Node, terms: set[str], retriever: Ranker, rank: int, *, dense: bool) -> bool:
    """Whether a hit retrieval alone found is worth showing. A verbatim observation is the
    record itself: shown in retrieval order. A durable memory (entity, preference, decision,
    experience) must hold at least one of the query's own index terms (a question word or
    a stop word is none), or (with embeddings) be among the three nearest: a query about
    nothing in the memory finds no durable hit, as the seed's negatives ask, and a natural
    question ("which command runs the tests?") reaches the memory that answers it however
    few of its words the memory repeats. How well it matches is the ranking's to say."""
    if node.type == "observation":
        return True
    if not terms:
        return False
    have = set(retriever.tokenize(index_text(node)))
    return bool(terms & have) or (dense and rank < 3)


def _mentions(q: str, name: str) -> bool:
    """``name`` appears in the query; an ASCII name needs word boundaries."""
    if name not in q:
        return False
    if name.isascii():
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", q) is not None
    return True


def _search(retriever: Ranker, query: str, k: int) -> tuple[list[Hit], str | None]:
    """The retriever's ``k`` best for ``query``, and None; or, when its embedder fails (an
    endpoint's HTTP error or timeout, vectors of the wrong shape, a model that will not
    load), the lexical ranking alone and why: a search never fails for its optional
    dense channel."""
    try:
        return retriever.search(query, k), None
    except Exception as exc:
        if retriever.embedder is None:
            raise
        why = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        reason = (
            f"the embedder {retriever.embedder.name!r} failed "
            f"({type(exc).__name__}: {' '.join(str(why).split())[:300]})"
        )
        return retriever.search(query, k, mode="lexical"), redact(reason).text


# What varies between copies of one template: numbers (a session's number, a time, a
# count, a hex id's digits) and the words of a date. A whole word that is a hex number
# with a digit, or a date's word, goes; elsewhere each run of digits. (One word-bounded
# group before the digits: the same matches as ``\b<hex>\b|\d+|\b<date word>\b`` tried
# in that order, as no date word starts with a digit; 1.8x faster over LoCoMo's turns,
# which a memory's first find reads every one of.)
_DATE_WORDS = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)|am|pm|on|at"
)
_VARYING = re.compile(r"\b(?:[0-9a-f]*\d[0-9a-f]*|" + _DATE_WORDS + r")\b|\d+", re.I)
# The same matches on ASCII text lowercased first (re.I over ASCII is lowercasing, which
# keeps every position and word boundary), and, in a text without a digit, the date
# words alone (the other alternatives need one): a memory's first find shapes every
# observation, and these take a third of the time over LoCoMo's turns, the same shapes
# (tests/test_memory_find_first.py).
_VARYING_ASCII = re.compile(_VARYING.pattern)
_DATE_WORDS_ASCII = re.compile(r"\b(?:" + _DATE_WORDS + r")\b")
_DIGIT = re.compile(r"\d")
_BOILERPLATE_COPIES = 3


def template_shape(text: str) -> str:
    """``text`` without what varies between copies of one template (numbers, dates)."""
    if text.isascii():
        low = text.lower()
        pattern = _VARYING_ASCII if _DIGIT.search(low) else _DATE_WORDS_ASCII
        return " ".join(pattern.sub(" ", low).split())
    return " ".join(_VARYING.sub(" ", text).casefold().split())


def boilerplate(nodes: Iterable[Node]) -> frozenset[str]:
    """The ids of the observations that are copies of one template: records whose words,
    numbers and dates aside, at least ``_BOILERPLATE_COPIES`` observations repeat (an
    importer's "Session 9 … Date and time: …" header, a polling call, an empty tool
    output's frame). The same words say nothing of their own: they stay indexed (a
    header's date still lifts its section's turns) but are not shown as hits, which would
    hold the places of the records that say something (LoCoMo with e5: about one hit in
    thirteen was a session header)."""
    templates = Templates()
    for n in nodes:
        templates.add(n)
    return templates.ids()


def shape_digest(text: str) -> bytes:
    """A 16-byte digest of ``text``'s ``template_shape``: what ``Templates`` compares."""
    return hashlib.blake2b(template_shape(text).encode(), digest_size=16).digest()


class Templates:
    """``boilerplate`` of a set of nodes that changes: each node's shape is computed when
    it comes and forgotten when it goes, so a memory that changed a little does not read
    every observation's text again."""

    def __init__(self) -> None:
        # observation id -> its shape's digest (a memory saves these: a sixth of the size)
        self._shape: dict[str, bytes] = {}
        self._ids: dict[bytes, set[str]] = {}  # shape digest -> the observations of it
        self._hidden: set[str] = set()  # the ids of the shapes with enough copies
        self._frozen: frozenset[str] | None = frozenset()  # ids(), until a change

    def add(self, node: Node) -> None:
        """Count ``node`` (replacing what was counted under its id)."""
        self.remove(node.id)
        if node.type != "observation":
            return
        shape = self._shape[node.id] = shape_digest(node.text)
        ids = self._ids.setdefault(shape, set())
        ids.add(node.id)
        if len(ids) == _BOILERPLATE_COPIES:
            self._hidden |= ids
            self._frozen = None
        elif len(ids) > _BOILERPLATE_COPIES:
            self._hidden.add(node.id)
            self._frozen = None

    def remove(self, node_id: str) -> None:
        shape = self._shape.pop(node_id, None)
        if shape is None:
            return
        ids = self._ids[shape]
        if len(ids) == _BOILERPLATE_COPIES:  # one fewer: no longer a template's copies
            self._hidden -= ids
            self._frozen = None
        elif len(ids) > _BOILERPLATE_COPIES:
            self._hidden.discard(node_id)
            self._frozen = None
        ids.discard(node_id)
        if not ids:
            del self._ids[shape]

    def shapes(self) -> dict[str, bytes]:
        """Each observation's shape digest, by id (what ``restore`` takes back)."""
        return self._shape

    def restore(self, shapes: Mapping[str, bytes]) -> None:
        """Count the observations of ``shapes`` (id -> shape, as ``shapes`` gave them) into
        an empty ``Templates``: the state ``add`` of each of those nodes would make."""
        if self._shape:
            raise InvalidArgument("Templates.restore needs an empty Templates")
        self._shape = dict(shapes)
        for nid, shape in self._shape.items():
            ids = self._ids.get(shape)
            if ids is None:
                self._ids[shape] = {nid}
            else:
                ids.add(nid)
        for ids in self._ids.values():
            if len(ids) >= _BOILERPLATE_COPIES:
                self._hidden |= ids
        self._frozen = None

    def ids(self) -> frozenset[str]:
        """The observations at least ``_BOILERPLATE_COPIES`` others of their shape share."""
        if self._frozen is None:
            self._frozen = frozenset(self._hidden)
        return self._frozen


def _source_keys(node: Node) -> frozenset[tuple[str, int]]:
    """The (session, seq) records ``node`` was read from (empty: none known)."""
    return frozenset(
        (s.session, s.seq) for s in node.sources if s.session is not None and s.seq is not None
    )


def _fold(ranked: list[MemoryHit]) -> list[MemoryHit]:
    """Distinct evidence: a hit whose every source record (session, seq) is a source of
    one higher hit is folded into that hit (``folded`` lists it), so the top k hold k
    records, not one utterance as an observation and again as the preference read from
    it. When one of the two is the verbatim observation and the other a memory read from
    it (a preference, a decision), the memory holds the place and carries the
    observation's text as its ``evidence``, whichever ranked higher: what was decided, and
    the words it was said in (a preference may be one sentence of a request, whose rest
    says what it was about). Entities (names, not statements) and nodes without sources
    never fold."""
    kept: list[MemoryHit] = []
    keys: list[frozenset[tuple[str, int]]] = []
    folded: list[list[str]] = []
    for hit in ranked:
        mine = _source_keys(hit.node) if hit.node.type != "entity" else frozenset()
        into = next((i for i, k in enumerate(keys) if mine and mine <= k), None)
        if into is None:
            kept.append(hit)
            keys.append(mine)
            folded.append([])
            continue
        top = kept[into]
        if top.node.type == "observation" and hit.node.type != "observation":
            # the memory shows in the observation's place, the record as its evidence
            said = top.node.text if _plain(top.node.text) != _plain(hit.node.text) else ""
            kept[into] = MemoryHit(hit.node, top.score, top.via, hit.stale, hit.path, (), said)
            folded[into].append(top.node.id)
        else:
            # the record a higher memory was read from: its evidence all the same
            # (bench realworld lexical: find top-5 tune 0.731 -> 0.750, check 0.755)
            if (
                hit.node.type == "observation"
                and top.node.type != "observation"
                and not top.evidence
                and _plain(hit.node.text) != _plain(top.node.text)
            ):
                kept[into] = replace(top, evidence=hit.node.text)
            folded[into].append(hit.node.id)
    return [replace(h, folded=tuple(f)) if f else h for h, f in zip(kept, folded, strict=True)]


def find_nodes(
    store: MemoryStore,
    retriever: Ranker,
    nodes: Mapping[str, Node],
    query: str,
    *,
    top_k: int = 8,
    expand: int = 1,
    now: datetime | None = None,
    types: Sequence[str] | None = None,
    anchors: Sequence[Node] | None = None,
    hidden_ids: Collection[str] = frozenset(),
    edge_cache: dict[str, tuple[list[Edge], list[Edge]]] | None = None,
    prefetch_nodes: Callable[[Iterable[str]], None] | None = None,
) -> FindResult:
    """Rank the memory for ``query`` (module docs). ``nodes`` are the active nodes by id
    (the index's documents); ``anchors`` the entities and deadline decisions among them
    (computed from ``nodes`` when not given); ``hidden_ids`` the observations not shown
    (``Memory`` passes the ``boilerplate`` of its nodes, computed once per change);
    ``types`` keeps only hits of those types. ``edge_cache`` (node id -> its edges in and
    out) is filled as edges are read, so a caller that keeps it while the store's revision
    stands reads each node's edges once (a query each, on a server store). ``nodes`` may
    read from the store as it is asked (a database's search): ``prefetch_nodes(ids)`` is
    then told, before each step, which nodes the step will look at."""
    now = now or datetime.now(UTC)
    q = " ".join(query.lower().split())
    if not q or top_k <= 0:
        return FindResult(query, ())
    # direct: node id -> (score, via); the score is the retrieval's, in (0, 1], or 1 + it
    # for a node whose name (or alias) is the whole query
    direct: dict[str, tuple[float, str]] = {}
    # neighbours: node id -> (the score of the direct hit that reached it, via)
    near: dict[str, tuple[float, str]] = {}

    def offer(table: dict[str, tuple[float, str]], node_id: str, score: float, via: str) -> None:
        if score > table.get(node_id, (0.0, ""))[0]:
            table[node_id] = (score, via)

    pool = max(top_k * 4, 32)
    hits, degraded = _search(retriever, query, pool)
    if prefetch_nodes is not None:
        prefetch_nodes(h.doc_id for h in hits)
    top = hits[0].score if hits else 0.0
    terms = query_terms(query, retriever)
    plain_q = _plain(q)

    def is_name(node: Node) -> bool:  # _is_name(node, q), the query's plain form made once
        names, plain = _plain_names(node.name, node.aliases)
        return q in names or bool(plain_q and plain_q in plain)

    for rank, h in enumerate(hits):
        node = nodes.get(h.doc_id)
        if node is None or top <= 0:
            continue
        rel = h.score / top
        if is_name(node):
            offer(direct, node.id, 1.0 + rel, "match")
        elif len(q) >= 3 and q in " ".join(said_text(node).casefold().split()):
            offer(direct, node.id, 1.0 + rel, "match")  # the query word for word
        elif _relevant(node, terms, retriever, rank, dense=len(h.parts) > 1):
            offer(direct, node.id, rel, "retrieval")
    if anchors is None:
        anchors = [n for n in nodes.values() if n.type == "entity" or n.until]
    best = max((s for s, _ in direct.values()), default=1.0)
    for node in anchors:  # entity anchors, and deadline decisions when the query asks
        if node.id in direct:
            continue
        if node.type == "entity":
            names, _ = _plain_names(node.name, node.aliases)
            if is_name(node):
                offer(direct, node.id, 1.0 + best, "anchor")
            elif any(len(n) >= 3 and _mentions(q, n) for n in names):
                offer(near, node.id, best, "anchor")
        elif node.type == "decision" and node.until and _asks_until(query, node):
            offer(near, node.id, best, "match")
    cache = {} if edge_cache is None else edge_cache

    def prefetch(ids: Iterable[str]) -> None:
        """Read the edges of every node in ``ids`` not cached yet, in one call."""
        want = [i for i in dict.fromkeys(ids) if i not in cache]
        if not want:
            return
        got: dict[str, tuple[list[Edge], list[Edge]]] = {i: ([], []) for i in want}
        edges = store.edges_touching(want)
        if prefetch_nodes is not None:
            prefetch_nodes(end for e in edges for end in (e.src, e.dst))
        for e in edges:  # (src, dst, label) order, as edges() gives
            if e.dst in got:
                got[e.dst][0].append(e)
            if e.src in got:
                got[e.src][1].append(e)
        cache.update(got)

    def edges_of(nid: str) -> tuple[list[Edge], list[Edge]]:
        prefetch([nid])
        return cache[nid]

    # same_as: a hit that was merged away also returns its keeper, as well as it matched
    prefetch(direct)
    for nid in list(direct):
        for e in edges_of(nid)[1]:
            if e.label == "same_as" and e.dst in nodes:
                offer(direct, e.dst, direct[nid][0], "same_as")
    # one hop along the business edges, both ways: neighbours, placed after the direct hits

    if expand > 0:
        frontier = sorted(direct, key=lambda n: -direct[n][0])[:pool]
        reach = {nid: direct[nid][0] for nid in frontier}
        for _ in range(expand):
            nxt: list[str] = []
            prefetch(frontier)
            for nid in frontier:
                ins, outs = edges_of(nid)
                for e in (*ins, *outs):
                    if e.label not in BUSINESS_EDGES:
                        continue
                    other = e.src if e.dst == nid else e.dst
                    if other in nodes and other not in direct:
                        offer(near, other, reach[nid], "expansion")
                        if other not in reach:
                            reach[other] = reach[nid]
                            nxt.append(other)
            frontier = nxt

    def hidden(node: Node) -> bool:
        return is_stale(node, now) and not _asks_until(query, node)

    # The record of a hidden stale decision is hidden with it: "postpone X until Friday",
    # found word for word as an observation, would bring back what its deadline retired.
    retired = {key for n in anchors if hidden(n) for key in _source_keys(n)}

    # (tier, score, tie-breaks..., hit): direct hits first by their own score; structure
    # (a deadline, a business edge, the node's type) only breaks ties; then neighbours in
    # the order of the direct hits that reached them
    ranked: list[tuple[int, float, float, int, int, str, MemoryHit]] = []
    floor = 0.5 * min((s for s, _ in direct.values()), default=1.0)
    prefetch([*direct, *near])
    if prefetch_nodes is not None:
        prefetch_nodes([*direct, *near])

    def rank_one(tier: int, nid: str, score: float, via: str) -> None:
        node = nodes.get(nid)
        if node is None or node.type in _NEVER or not node.active:
            return
        if types is not None and node.type not in types:
            return
        stale = is_stale(node, now)
        if stale and not _asks_until(query, node):
            return
        keys = _source_keys(node) if node.type == "observation" and retired else frozenset()
        if keys and keys <= retired:
            return
        ins, outs = edges_of(nid)
        prior = 1.0 if stale or node.until else 0.0
        linked = int(any(e.label in BUSINESS_EDGES for e in (*ins, *outs)))
        path = edge_path(nid, ins, outs, nodes.get, hide=hidden)
        if tier == 1:  # shown below every direct hit, in the order of what reached it
            score = round(floor * score / max(best, 1e-9), 6)
        hit = MemoryHit(node, score, via, stale, path)
        ranked.append((tier, -score, -prior, -linked, _TYPE_RANK.get(node.type, 9), nid, hit))

    # Copies of one template are shown only when nothing else would be: "deploy 41
    # failed", "deploy 42 failed", ... remembered, asked "which deploys failed?"
    templated: list[tuple[int, str, float, str]] = []
    for tier, found in ((0, direct), (1, near)):
        for nid, (score, via) in found.items():
            if tier == 1 and nid in direct:
                continue
            if nid in hidden_ids:
                templated.append((tier, nid, score, via))
                continue
            rank_one(tier, nid, score, via)
    if not ranked:
        for tier, nid, score, via in templated:
            rank_one(tier, nid, score, via)
    ranked.sort(key=lambda r: r[:6])
    kept = [_said_part(h, query, terms) for h in _fold([r[-1] for r in ranked])[:top_k]]
    return FindResult(query, tuple(kept), degraded)


def _said_part(hit: MemoryHit, query: str, terms: set[str]) -> MemoryHit:
    """A hit whose evidence is longer than a listing shows keeps the part that holds the
    most query words, not the head: a 7,000-character reply matched for one line near its
    end (bench realworld lexical: find top-5 0.758 -> 0.766)."""
    text = " ".join(hit.evidence.split())
    if len(text) <= _EVIDENCE_CAP:
        return hit
    span = query_window(text, query, _EVIDENCE_CAP - 2, terms=terms)
    if span is None:
        return hit
    a, b = span
    part = ("…" if a > 0 else "") + text[a:b] + ("…" if b < len(text) else "")
    return replace(hit, evidence=part)
