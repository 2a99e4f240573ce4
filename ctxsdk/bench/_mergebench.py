"""MergeBench, rebuilt: the BeliefMerge seed's synthetic merge benchmark (``seed-algorithms.md``
§1(d)), with its baseline arms and its text-parsing scorer.

A scenario is generated from a seeded mulberry32 PRNG over the seed's fixed tables (16 topics,
12 chatter sentences, ``seed-bench/belief-merge/mergebench-vocabulary-and-published.json``).
The tables are repeated here so the generator needs no data file; a test checks them against
the transcription. The order of every PRNG draw follows the seed's generator, so seed ``n``
here gives the same scenario as seed ``n`` there:

1. ``topics = shuffle(TOPICS)[:topic_count]`` (Fisher-Yates from the end, ``j = floor(r·(i+1))``);
2. topic ``i`` is owned by branch ``i mod branch_count``: value ``values[0]``, evidence 4
   (user stated), correct;
3. ``shuffle(topics)[:conflict_count]``: the first branch that is not the owner asserts
   ``values[1]`` with evidence 2, wrong;
4. per branch: a message per fact (user if evidence 4, else assistant), for a wrong fact a
   reasoning block ``"<sentence> I think."``; then one assistant restatement per wrong fact;
   then ``chatter_per_branch`` chatter lines alternating user/assistant, ``pick(CHATTER)``;
5. questions: *local* (consecutive pairs of one branch's correct facts) and *bridge* (each
   topic's correct fact with the first correct fact owned by another branch).

Arms are functions ``(scenario, budget) -> str``; every arm is held to the same budget by
truncation on line boundaries at ``budget·4`` characters. The Merge engine's arm plugs in the
same way. Scoring parses text only (no model): see :func:`score_text`.

``paraphrase=True`` says the same facts in other words (:data:`PARAPHRASES`, three alternative
templates per topic, none of them the seed's own). The template for each (branch, fact) is
drawn from a second PRNG stream (``mulberry32(seed ^ PARAPHRASE_SALT)``), so the facts,
conflicts, chatter and questions are exactly those of the plain scenario. Values appear
verbatim, so the scorer is unchanged; only an extractor tuned to one sentence shape is hurt.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import polars as pl

from ..session import Session
from ..testing import LogBuilder

if TYPE_CHECKING:
    from ctxsdk.merge.kernel import SourceLike

    from ..merge import Merge
    from ..merge.kernel import StrategyLike

__all__ = [
    "ARMS",
    "CHATTER",
    "INFERRED",
    "PARAPHRASES",
    "PARAPHRASE_SALT",
    "TOPICS",
    "USER_STATED",
    "Arm",
    "Branch",
    "Fact",
    "Message",
    "Question",
    "Scenario",
    "Topic",
    "arm_concat",
    "arm_none",
    "arm_single",
    "as_sessions",
    "branch_text",
    "covered",
    "estimate_tokens",
    "generate",
    "mentions",
    "mergebench",
    "mulberry32",
    "normalize",
    "pick",
    "run_mergebench",
    "score_text",
    "shuffle",
    "truncate_to_budget",
]

T = TypeVar("T")
_M32 = 0xFFFFFFFF

USER_STATED = 4
INFERRED = 2
PARAPHRASE_SALT = 0x5A17


# --- the PRNG -------------------------------------------------------------------------------


def mulberry32(seed: int) -> Callable[[], float]:
    """The standard 32-bit mulberry32: a function returning floats in ``[0, 1)``.

    All arithmetic is on unsigned 32-bit words, which equals the JS int32 version bit for bit
    (``Math.imul`` is the low 32 bits of the product; ``>>>`` is a logical shift).
    """
    state = seed & _M32

    def nxt() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _M32
        a = state
        t = ((a ^ (a >> 15)) * (a | 1)) & _M32
        t = ((t + (((t ^ (t >> 7)) * (t | 61)) & _M32)) & _M32) ^ t
        return ((t ^ (t >> 14)) & _M32) / 4294967296.0

    return nxt


def pick(rng: Callable[[], float], items: Sequence[T]) -> T:
    return items[math.floor(rng() * len(items))]


def shuffle(rng: Callable[[], float], items: Sequence[T]) -> list[T]:
    """Fisher-Yates from the end: for ``i = n-1 .. 1``, swap ``i`` with ``floor(r·(i+1))``."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = math.floor(rng() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


# --- the tables -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    key: str
    values: tuple[str, str]  # (correct, challenger)
    template: str  # "{v}" is the value

    def say(self, value: str) -> str:
        return self.template.replace("{v}", value)


TOPICS: tuple[Topic, ...] = (
    Topic("database.engine", ("postgresql", "mysql"), "The database engine is {v}."),
    Topic("cache.ttl_seconds", ("sixty", "three_hundred"), "The cache TTL is {v} seconds."),
    Topic("pool.max_connections", ("twenty", "fifty"), "The connection pool cap is {v}."),
    Topic("retry.max_attempts", ("three", "five"), "Retries are capped at {v}."),
    Topic("auth.provider", ("oauth", "saml"), "Authentication uses {v}."),
    Topic("deploy.target", ("kubernetes", "lambda"), "We deploy to {v}."),
    Topic("queue.broker", ("kafka", "rabbitmq"), "The queue broker is {v}."),
    Topic("storage.format", ("jsonl", "parquet"), "Records are stored as {v}."),
    Topic("cache.backend", ("redis", "memcached"), "The cache backend is {v}."),
    Topic("logging.sink", ("stdout", "file"), "Logs go to {v}."),
    Topic("search.index", ("elasticsearch", "sqlite_fts"), "Search is backed by {v}."),
    Topic("region.primary", ("us_east", "eu_west"), "The primary region is {v}."),
    Topic("metrics.exporter", ("prometheus", "statsd"), "Metrics go to {v}."),
    Topic("ci.runner", ("github_actions", "jenkins"), "CI runs on {v}."),
    Topic("secrets.store", ("vault", "aws_secrets_manager"), "Secrets live in {v}."),
    Topic("cdn.provider", ("cloudflare", "fastly"), "The CDN is {v}."),
)

CHATTER: tuple[str, ...] = (
    "Sure, let me look into that and get back to you with what I find.",
    "That sounds reasonable to me, though I would want to check the details first.",
    "I will check the configuration next and report anything that looks off.",
    "Thanks, that clarifies things quite a bit for the direction we are taking.",
    "Let me know if you want me to dig deeper into any particular part of this.",
    "Okay, moving on to the next item on the list we agreed earlier today.",
    "I think there are a couple of trade-offs worth writing down before we commit.",
    "That matches what I remembered from the earlier discussion on this topic.",
    "Before we change anything I would like to see how it behaves under load.",
    "Good point, I had not considered that angle when we first looked at it.",
    "Let me summarise where we are so far so nothing gets lost in the thread.",
    "I would rather keep the current setup until we have a concrete reason to move.",
)

# Three alternative sentences per topic (ours, not the seed's): other word order, other verbs,
# the key's words mostly avoided, the value verbatim.
PARAPHRASES: Mapping[str, tuple[str, str, str]] = {
    "database.engine": (
        "Our data lives in {v}.",
        "For persistence we settled on {v}.",
        "{v} is what backs the application's tables.",
    ),
    "cache.ttl_seconds": (
        "Cached entries expire after {v} seconds.",
        "Entries stay in the cache for {v} seconds.",
        "We keep cached items around for {v} seconds before dropping them.",
    ),
    "pool.max_connections": (
        "At most {v} connections may be open at once.",
        "The pool never grows beyond {v} connections.",
        "We allow {v} simultaneous connections, no more.",
    ),
    "retry.max_attempts": (
        "A failing call is attempted {v} times at most.",
        "We give up after {v} attempts.",
        "The client tries {v} times before reporting an error.",
    ),
    "auth.provider": (
        "Users sign in through {v}.",
        "Login is handled by {v}.",
        "Identity comes from {v}.",
    ),
    "deploy.target": (
        "Production runs on {v}.",
        "Releases ship to {v}.",
        "The service is hosted on {v}.",
    ),
    "queue.broker": (
        "Messages pass through {v}.",
        "Events are published to {v}.",
        "Background jobs are dispatched via {v}.",
    ),
    "storage.format": (
        "Each record is written in {v} format.",
        "On disk everything is {v}.",
        "Data files use the {v} layout.",
    ),
    "cache.backend": (
        "Cached values are held in {v}.",
        "The caching layer is {v}.",
        "Hot data sits in {v}.",
    ),
    "logging.sink": (
        "Log lines are written to {v}.",
        "Application output is sent to {v}.",
        "All logging ends up in {v}.",
    ),
    "search.index": (
        "Queries are answered by {v}.",
        "Full-text lookups run against {v}.",
        "The search feature is powered by {v}.",
    ),
    "region.primary": (
        "Most of the infrastructure sits in {v}.",
        "Our main region is {v}.",
        "Traffic is served from {v} first.",
    ),
    "metrics.exporter": (
        "Telemetry is exported to {v}.",
        "Counters and gauges are scraped by {v}.",
        "We ship our measurements to {v}.",
    ),
    "ci.runner": (
        "Builds and tests execute on {v}.",
        "Every pull request is checked by {v}.",
        "The pipeline is hosted on {v}.",
    ),
    "secrets.store": (
        "Credentials are kept in {v}.",
        "API keys are stored in {v}.",
        "Passwords and tokens are managed by {v}.",
    ),
    "cdn.provider": (
        "Static assets are served through {v}.",
        "Edge caching is provided by {v}.",
        "Our content delivery goes via {v}.",
    ),
}


# --- the scenario ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    key: str
    value: str
    branch: str
    evidence: int
    correct: bool


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    text: str
    kind: Literal["text", "reasoning"] = "text"


@dataclass(frozen=True)
class Branch:
    id: str
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Question:
    id: str
    kind: Literal["local", "bridge"]
    question: str
    expect: Mapping[str, str]
    spans: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    seed: int
    topics: tuple[Topic, ...]
    facts: tuple[Fact, ...]
    branches: tuple[Branch, ...]
    questions: tuple[Question, ...]
    vocabulary: tuple[str, ...]
    paraphrase: bool = False

    @property
    def local(self) -> list[Question]:
        return [q for q in self.questions if q.kind == "local"]

    @property
    def bridge(self) -> list[Question]:
        return [q for q in self.questions if q.kind == "bridge"]

    def branch(self, branch_id: str) -> Branch:
        for b in self.branches:
            if b.id == branch_id:
                return b
        raise KeyError(branch_id)


def generate(
    seed: int,
    topic_count: int = 10,
    branch_count: int = 2,
    conflict_count: int = 2,
    chatter_per_branch: int = 18,
    *,
    paraphrase: bool = False,
) -> Scenario:
    """One MergeBench scenario; the defaults are those of the seed's ``bench:tight`` run."""
    if branch_count < 2:
        raise ValueError("a merge benchmark needs at least two branches")
    if branch_count > 26:
        raise ValueError("at most 26 branches (branch-a .. branch-z)")
    rng = mulberry32(seed)
    alt = mulberry32(seed ^ PARAPHRASE_SALT)
    topics = tuple(shuffle(rng, TOPICS)[: min(topic_count, len(TOPICS))])
    ids = [f"branch-{chr(97 + i)}" for i in range(branch_count)]
    by_key = {t.key: t for t in topics}

    facts: list[Fact] = []
    owner: dict[str, str] = {}
    for i, topic in enumerate(topics):
        owner[topic.key] = ids[i % branch_count]
        facts.append(Fact(topic.key, topic.values[0], owner[topic.key], USER_STATED, True))
    for topic in shuffle(rng, topics)[: min(conflict_count, len(topics))]:
        challenger = next(b for b in ids if b != owner[topic.key])
        facts.append(Fact(topic.key, topic.values[1], challenger, INFERRED, False))

    branches: list[Branch] = []
    for bid in ids:
        mine = [f for f in facts if f.branch == bid]
        said: dict[str, str] = {}  # key -> the sentence this branch uses for its fact
        for f in mine:
            t = by_key[f.key]
            said[f.key] = (
                pick(alt, PARAPHRASES[f.key]).replace("{v}", f.value)
                if paraphrase
                else t.say(f.value)
            )
        msgs: list[Message] = []
        for f in mine:
            msgs.append(Message("user" if f.evidence == USER_STATED else "assistant", said[f.key]))
            if f.evidence != USER_STATED:
                msgs.append(Message("assistant", f"{said[f.key]} I think.", "reasoning"))
        for f in mine:
            if not f.correct:
                msgs.append(Message("assistant", said[f.key]))
        for i in range(chatter_per_branch):
            msgs.append(Message("user" if i % 2 == 0 else "assistant", pick(rng, CHATTER)))
        branches.append(Branch(bid, tuple(msgs)))

    correct = [f for f in facts if f.correct]
    questions: list[Question] = []
    for bid in dict.fromkeys(f.branch for f in correct):
        mine = [f for f in correct if f.branch == bid]
        for i in range(0, len(mine) - 1, 2):
            a, b = mine[i], mine[i + 1]
            questions.append(
                Question(
                    f"local-{bid}-{a.key}",
                    "local",
                    f"What is the {a.key} and what is the {b.key}?",
                    {a.key: a.value, b.key: b.value},
                    (bid,),
                )
            )
    for topic in topics:
        primary = next((f for f in correct if f.key == topic.key), None)
        if primary is None:
            continue
        partner = next(
            (f for f in correct if f.key != topic.key and f.branch != primary.branch), None
        )
        if partner is None:
            continue
        questions.append(
            Question(
                f"bridge-{topic.key}",
                "bridge",
                f"What is the {topic.key} and what is the {partner.key}?",
                {topic.key: primary.value, partner.key: partner.value},
                tuple(sorted((primary.branch, partner.branch))),
            )
        )
    vocabulary = tuple(dict.fromkeys(v for t in TOPICS for v in t.values))
    return Scenario(
        seed, topics, tuple(facts), tuple(branches), tuple(questions), vocabulary, paraphrase
    )


def as_sessions(scenario: Scenario) -> list[Session]:
    """Each branch as a real DSH v3 session (``LogBuilder``): a user message opens a turn, each
    assistant message is one step of it; a reasoning block is the assistant's reasoning."""
    out: list[Session] = []
    for branch in scenario.branches:
        b = LogBuilder(
            session_id=f"mergebench-{scenario.seed}-{branch.id}",
            runtime_context=None,
            cwd="/work/mergebench",
        )
        open_turn = answered = titled = False
        for m in branch.messages:
            if m.role == "user":
                if open_turn:
                    b.end_turn()
                b.turn(m.text, title=None if titled else branch.id)
                open_turn, answered, titled = True, False, True
                continue
            if not open_turn:  # a branch that opens with the model: an empty prompt
                b.turn("", title=None if titled else branch.id)
                open_turn = titled = True
            if answered:
                b.next_step()
            if m.kind == "reasoning":
                b.assistant(reasoning=m.text)
            else:
                b.assistant(text=m.text)
            answered = True
        if open_turn:
            b.end_turn()
        out.append(Session.from_events(b.header, b.events))
    return out


# --- the arms -------------------------------------------------------------------------------

Arm = Callable[[Scenario, int], str]


def branch_text(branch: Branch) -> str:
    """The branch as a reader sees it: every block's text (reasoning included), one a line."""
    return "\n".join(m.text for m in branch.messages)


def truncate_to_budget(text: str, budget: int) -> str:
    """Whole lines while they fit in ``budget·4`` characters (each line costs its length + 1)."""
    limit = max(0, budget) * 4
    if len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


def arm_none(scenario: Scenario, budget: int) -> str:
    return ""


def arm_single(branch_id: str = "branch-a") -> Arm:
    def arm(scenario: Scenario, budget: int) -> str:
        return truncate_to_budget(branch_text(scenario.branch(branch_id)), budget)

    return arm


def arm_concat(scenario: Scenario, budget: int) -> str:
    full = "\n\n".join(f"### {b.id}\n{branch_text(b)}" for b in scenario.branches)
    return truncate_to_budget(full, budget)


ARMS: dict[str, Arm] = {
    "none": arm_none,
    "single:branch-a": arm_single("branch-a"),
    "concat": arm_concat,
}


# --- scoring --------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Lowercase; ``_`` and the markdown marks `` ` `` and ``*`` to spaces; every character
    that is not a letter, a number or whitespace to a space; spaces collapsed and trimmed."""
    chars = []
    for c in text.lower():
        if c in "_`*":
            chars.append(" ")
        elif c.isspace() or unicodedata.category(c)[0] in "LN":
            chars.append(c)
        else:
            chars.append(" ")
    return " ".join("".join(chars).split())


def mentions(text: str, value: str, *, normalized: bool = False) -> bool:
    needle = normalize(value)
    return bool(needle) and needle in (text if normalized else normalize(text))


def covered(question: Question, text: str) -> bool:
    """Every expected value is a substring of the normalized text."""
    hay = normalize(text)
    return all(mentions(hay, v, normalized=True) for v in question.expect.values())


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _rate(questions: Sequence[Question], text: str) -> float:
    return sum(covered(q, text) for q in questions) / len(questions) if questions else 0.0


@dataclass
class Score:
    local: float
    bridge: float
    best1: float
    gain: float
    unambig: float
    ambiguous: int
    wrong_only: int
    absent: int
    unambiguous: int
    conflicts: int
    invent: float
    invented: list[str] = field(default_factory=list)
    tokens: int = 0


def score_text(scenario: Scenario, text: str) -> Score:
    """The seed's text-parsing metrics of one arm's text on one scenario.

    ``best1`` is the best single (untruncated) branch's bridge coverage; ``gain`` = bridge -
    best1. For each key asserted twice: unambiguous (only the correct value appears),
    ambiguous (both), wrong-only, absent; ``unambig`` = unambiguous / such keys (1 if none).
    ``invent`` = share of the global value vocabulary present although no branch asserted it.
    """
    hay = normalize(text)
    bridge = scenario.bridge
    best1 = max((_rate(bridge, branch_text(b)) for b in scenario.branches), default=0.0)
    bridge_rate = _rate(bridge, text)
    counts = {"unambiguous": 0, "ambiguous": 0, "wrong_only": 0, "absent": 0}
    by_key: dict[str, list[Fact]] = {}
    for f in scenario.facts:
        by_key.setdefault(f.key, []).append(f)
    total = 0
    for facts in by_key.values():
        if len(facts) < 2:
            continue
        total += 1
        right = next(f for f in facts if f.correct)
        wrong = next((f for f in facts if not f.correct), None)
        has_right = mentions(hay, right.value, normalized=True)
        has_wrong = wrong is not None and mentions(hay, wrong.value, normalized=True)
        if has_right and not has_wrong:
            counts["unambiguous"] += 1
        elif has_right:
            counts["ambiguous"] += 1
        elif has_wrong:
            counts["wrong_only"] += 1
        else:
            counts["absent"] += 1
    asserted = {normalize(f.value) for f in scenario.facts}
    invented = [
        v
        for v in scenario.vocabulary
        if normalize(v) not in asserted and mentions(hay, v, normalized=True)
    ]
    vocab = len(scenario.vocabulary)
    return Score(
        local=_rate(scenario.local, text),
        bridge=bridge_rate,
        best1=best1,
        gain=bridge_rate - best1,
        unambig=counts["unambiguous"] / total if total else 1.0,
        ambiguous=counts["ambiguous"],
        wrong_only=counts["wrong_only"],
        absent=counts["absent"],
        unambiguous=counts["unambiguous"],
        conflicts=total,
        invent=len(invented) / vocab if vocab else 0.0,
        invented=invented,
        tokens=estimate_tokens(text),
    )


_ROW_FIELDS = (
    "local",
    "bridge",
    "best1",
    "gain",
    "unambig",
    "ambiguous",
    "wrong_only",
    "absent",
    "invent",
    "tokens",
)


def run_mergebench(
    *,
    seeds: int = 5,
    topics: int = 10,
    branches: int = 2,
    conflicts: int = 2,
    budget: int = 400,
    arms: Mapping[str, Arm] | None = None,
    paraphrase: bool = False,
) -> dict[str, dict[str, Any]]:
    """Scenarios for seeds ``1..seeds``; per arm the mean over scenarios of each metric
    (``both`` = the mean number of ambiguous keys), as the seed's ``run.js`` reports them."""
    panel = ARMS if arms is None else arms
    per: dict[str, list[Score]] = {name: [] for name in panel}
    bridge_total = local_total = 0
    for seed in range(1, seeds + 1):
        sc = generate(seed, topics, branches, conflicts, paraphrase=paraphrase)
        bridge_total += len(sc.bridge)
        local_total += len(sc.local)
        for name, arm in panel.items():
            per[name].append(score_text(sc, arm(sc, budget)))
    rows: dict[str, dict[str, Any]] = {}
    for name, scores in per.items():
        n = len(scores) or 1
        row: dict[str, Any] = {
            f: sum(float(getattr(s, f)) for s in scores) / n for f in _ROW_FIELDS
        }
        row["both"] = row["ambiguous"]
        row["bridge_questions"] = bridge_total
        row["local_questions"] = local_total
        rows[name] = row
    return rows


# --- strategies -----------------------------------------------------------------------------

_MB_COLUMNS = ("bridge", "local", "unambig", "invent", "tokens")
_SESSION_COLUMNS = ("slots", "resolved", "disputed", "hook_decided", "kept", "block_tokens")


def mergebench(
    strategies: Sequence[StrategyLike] | Mapping[str, StrategyLike] = (),
    *,
    sessions: Sequence[SourceLike] | Merge | None = None,
    builtins: bool = True,
    seeds: int = 5,
    topics: int = 10,
    branches: int = 2,
    conflicts: int = 2,
    budget: int = 400,
    paraphrase: bool = False,
    session_budget: int = 1200,
    baselines: bool = False,
    published: bool = False,
) -> pl.DataFrame:
    """Merge strategies scored side by side, one row per strategy (a polars DataFrame).

    ``strategies``: ``Strategy`` values, built-in names or score functions (a mapping names
    them); the built-ins (``egalitarian``, ``elitist``) come first unless ``builtins=False``.
    MergeBench columns (the mean over seeds ``1..seeds`` of the seed's generated scenarios,
    each strategy running the whole Merge pipeline with no model at ``budget`` estimated
    tokens, as ``ctxsdk bench merge`` runs its ``ctxsdk`` arm): ``bridge`` and ``local``
    coverage, ``unambig`` (conflicting keys shown with only the right value), ``invent``
    and ``tokens``. With ``sessions`` (your sessions, paths or a ``Merge``), how each
    strategy decides them: ``slots``, ``resolved``, ``disputed`` (left open), ``hook_decided``
    (ties its resolve hook settled), and the block's ``kept`` slots and ``block_tokens`` at
    ``session_budget``; ``differs`` counts the slots it decides otherwise than the first row.
    ``baselines`` adds the seed's arms run on the same scenarios (``baseline:none``,
    ``baseline:single:branch-a``, ``baseline:concat``); ``published`` adds the seed's published
    rows (``published:<arm>``) when its data file is present (``CTXSDK_SHARED_DATA`` or
    ``../shared/data``, as ``ctxsdk bench merge`` loads it) and the run is one it published
    (5 seeds, 10 topics, 2 branches, 2 conflicts, budget 400 or 1200, no paraphrase).
    """
    from ctxsdk.merge.kernel import decision_text, named_strategies

    from ..merge import Merge
    from ..merge.kernel import STRATEGIES

    chosen = named_strategies(strategies) if strategies else []
    if builtins:
        mine = {s.name for s in chosen}
        chosen = [s for n, s in STRATEGIES.items() if n not in mine] + chosen
    if not chosen:
        raise ValueError("mergebench needs a strategy (or builtins=True)")
    scores: dict[str, list[Score]] = {s.name: [] for s in chosen}
    arms = {f"baseline:{n}": arm for n, arm in ARMS.items()} if baselines else {}
    scores.update({a: [] for a in arms})
    for seed in range(1, seeds + 1):
        sc = generate(seed, topics, branches, conflicts, paraphrase=paraphrase)
        base = Merge(as_sessions(sc), tokenizer="estimate", budget=budget)
        for s in chosen:
            scores[s.name].append(score_text(sc, base.strategy(s).run().text))
        for a, arm in arms.items():
            scores[a].append(score_text(sc, arm(sc, budget)))
    user: Merge | None = None
    if sessions is not None:
        # a copy: the builders change what they are called on, and the caller's merge stays
        user = sessions.copy() if isinstance(sessions, Merge) else Merge(list(sessions))
        user.budget(session_budget)
    rows: list[dict[str, Any]] = []
    first: dict[str, str] | None = None
    for s in chosen:
        got = scores[s.name]
        n = len(got) or 1
        row: dict[str, Any] = {"strategy": s.name, "hooks": ", ".join(s.hooks)}
        row.update({f: sum(float(getattr(x, f)) for x in got) / n for f in _MB_COLUMNS})
        if user is not None:
            r = user.strategy(s).run()
            decided = {slot.key: decision_text(slot) for slot in r.slots}
            first = decided if first is None else first
            row.update(
                slots=len(r.slots),
                resolved=sum(slot.status == "resolved" for slot in r.slots),
                disputed=len(r.disputed),
                hook_decided=sum(by.endswith("(resolve)") for by in r.decided_by.values()),
                kept=len(r.block.slots),
                block_tokens=r.block.tokens,
                differs=sum(decided.get(k) != v for k, v in first.items()),
            )
        rows.append(row)
    for a in arms:
        row = {"strategy": a, "hooks": ""}
        row.update(
            {f: sum(float(getattr(x, f)) for x in scores[a]) / max(seeds, 1) for f in _MB_COLUMNS}
        )
        rows.append(row)
    published_run = (seeds, topics, branches, conflicts, paraphrase) == (5, 10, 2, 2, False)
    if published and published_run and budget in (400, 1200):
        rows += _published_rows(0 if budget == 400 else 1)
    schema: dict[str, Any] = {"strategy": pl.String, "hooks": pl.String}
    schema.update({f: pl.Float64 for f in _MB_COLUMNS})
    if user is not None:
        schema.update({f: pl.Int64 for f in (*_SESSION_COLUMNS, "differs")})
    return pl.DataFrame(rows, schema=schema)


def _published_rows(run: int) -> list[dict[str, Any]]:
    """The seed's published rows of run ``run`` (0: budget 400, 1: budget 1200), or none
    when its data file is not present."""
    import json

    from ._merge_data import MERGEBENCH_FILE, _shared_data

    root = _shared_data()
    if root is None:
        return []
    vocab = json.loads((root / MERGEBENCH_FILE).read_text(encoding="utf-8"))
    rows = vocab["publishedRuns"][run]["rows"]
    return [
        {"strategy": f"published:{arm}", "hooks": "", **{f: float(r[f]) for f in _MB_COLUMNS}}
        for arm, r in rows.items()
    ]
