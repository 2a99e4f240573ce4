"""Claims: keyed, normalized assertions read deterministically from a session's surface.

The seed's heuristic extractor keyed a claim by its whole normalized sentence, so two
sessions that say the same thing in different words could never meet in one slot ("known
limitation: paraphrases never align"). This extractor reads *key/value assertions* instead:
"The database is PostgreSQL." and "We switched the database to MySQL." both give the key
``database`` (values ``postgresql`` and ``mysql``), so the merge can weigh them against each
other. It needs no model, and the same session always gives the same claims.

Where claims come from
----------------------
The session's current surface (``session.surface()``), in model order. Every message is
redacted first (``ctxsdk.session.redact_message``), so a credential never becomes a claim.
System messages are skipped (harness boilerplate). Plugin-injected messages
(``source.kind == 'plugin'``) are skipped unless ``include_injected=True``, and then capped
at SPECULATIVE. Evidence by origin: a user's text 4 (USER_STATED), a tool result 3
(TOOL_VERIFIED), assistant text 2 (INFERRED), a reasoning block 1 (SPECULATIVE; skipped with
``include_reasoning=False``).

Sentences
---------
Fenced code blocks (```` ``` ```` … ```` ``` ````) and the line numbers a file-reading tool
puts before each line (``12<TAB>``) are dropped, then the text is split on
newlines, ``!``, ``?``, ``;``, ``。``, ``！``, ``？``, ``；`` and on a ``.`` followed by
whitespace or the end (so ``3.11``, ``node.js`` and ``package.json`` survive). Markdown list
markers, emphasis and backticks are stripped. A question (ends in ``?``/``？``, starts with a
question word such as "should we", "what", "do we", or contains ``吗``/``是否``) and a
hypothetical ("if", "suppose", "would", "maybe", "might", "perhaps", "could", "unless",
``如果``, ``假如``, ``也许``, ``可能`` …) give no claim. A leading hedge or filler ("I think",
"OK,", "so", "note that") is dropped before matching (the evidence level already says how
sure the origin is).

Assertion patterns (first match wins; X is the key phrase, Y the value)
-----------------------------------------------------------------------
English, matched case-insensitively:

=======================================  ==================================================
pattern                                  claims
=======================================  ==================================================
``X is Y, not Z``                        X = Y and a negated X = Z
``use Y, not Z`` / ``Y, not Z``          X = Y and a negated X = Z; X is the noun phrase
``use Y instead of|rather than Z``       after "for"/"as" when present ("use pnpm, not npm,
``Y instead of|rather than Z``           for the package manager"), else the domain of Y
(bare Y and Z: one or two words)         or Z (below), else the pair ("space or tab")
``switch|change|move|migrate X           X = Y, and a negated X = W when "from W" is given;
[from W] to Y`` (any tense, optional     without X the key is the domain of Y/W
"we"/"I"/"have")
``X was|has been|got changed|switched|   X = Y
moved|updated|set to Y``
``set X to Y``                           X = Y (decision)
``X should|must|needs to be Y``          X = Y (constraint)
``we use|we're using|use Y for|as X``    X = Y (decision)
``we use Y`` (Y one or two words)        Y's domain = Y, only if Y has a known domain
``X is|are <participle> <prep> Y``       "X <participle>" = Y ("records are stored as
                                         jsonl": ``records stored`` = ``jsonl``); Y at most
                                         three words
``X <relation verb> [<prep>] Y``         "X <verb>" = Y ("CI runs on jenkins": ``ci run``;
                                         "we deploy to k8s": ``deploy``); a closed verb list
                                         (use, run, go, live, deploy, point, depend, write,
                                         ship, store, ...), Y one or two words
``X is not|isn't|are not Y``             a negated X = Y
``don't|do not|never|avoid use Y`` /     a negated claim on Y, keyed by Y's domain, else
``never|avoid Y`` (Y one token)          by Y itself (constraint)
``[the] X is|are Y``                     X = Y (fact)
``X: Y`` / ``X = Y``                     X = Y (fact); X plain words (no ``.``/``/``,
                                         so ``Edited a/b.py: …`` is no key), Y no
                                         brackets, quotes or operators (so code such as
                                         ``x = f(y)`` or ``p = d / "a"`` is none)
=======================================  ==================================================

Chinese (the key/value phrases may mix scripts): ``X不是Y`` (negated), ``X改为Y`` /
``X改成Y`` / ``把X改为Y``, ``X是Y``, ``X为Y``, ``X：Y``, ``改用Y`` / ``用Y`` / ``使用Y``
(key = Y's domain; no claim without one), ``不用Y`` / ``不要用Y`` / ``别用Y`` (negated; keyed
by Y's domain, else by Y).

The key phrase of "is", ":" and "=" is at most 4 words (12 CJK characters) and is not a
pronoun or a label such as "note"; otherwise the sentence gives no claim.

Normalization
-------------
Keys: lowercase, markdown and punctuation to spaces, spaces collapsed, leading articles,
determiners and possessives dropped ("the", "our", "this project's", ``我们的``, ``这个``),
and a trailing plural "s" dropped from the last word only where that is safe (not after
"s", "u", "i", "o", nor "ses"/"xes"/"zes"/"ches"/"shes"; "ies" becomes "y"). Values: the
same, keeping ``. - + / : @ #`` inside a token (``node.js``, ``3.11``, ``localhost:5432``),
cut at a clause break (a comma, "because", "since", "which", "so that", …), stripped of
filler ("now", "also", "instead", …) and cut to 6 words.

The domain table (``DOMAINS``) maps a few well-known values to their key (``pnpm`` →
``package manager``, ``postgresql`` → ``database``), only for sentences that do not name
the key themselves.

Within one source, a later assertion of a key supersedes the earlier ones (they are kept,
with ``superseded=True``); a later negated claim supersedes earlier claims of that value.
``claims_to_states`` turns the live claims into one ``SlotState`` per key.

Known limits: only these shapes are read ("PostgreSQL it is" or "we went with MySQL" give
nothing); a key phrase is taken literally beyond a few spelled-out short forms (``db``,
``repo``, ``config``, ...), so "data store" and "database" stay apart; negated claims
do not enter a state by default.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from ..session import Session, redact_message
from ._slots import Evidence, SlotState

__all__ = [
    "CLAIM_KINDS",
    "DOMAINS",
    "Claim",
    "claims_of_messages",
    "claims_to_states",
    "extract_claims",
    "normalize_key",
    "normalize_value",
]

ClaimKind = Literal["fact", "decision", "constraint", "refuted"]
CLAIM_KINDS: tuple[str, ...] = ("fact", "decision", "constraint", "refuted")
Origin = Literal["user", "tool", "assistant", "reasoning", "injected"]

_EVIDENCE: Mapping[str, int] = MappingProxyType(
    {
        "user": Evidence.USER_STATED,
        "tool": Evidence.TOOL_VERIFIED,
        "assistant": Evidence.INFERRED,
        "reasoning": Evidence.SPECULATIVE,
    }
)


@dataclass(frozen=True, slots=True)
class Claim:
    """One keyed assertion: ``key`` = ``value`` (or, ``negated``, ≠), said in ``text`` by
    ``source`` at event ``seq``, known at ``evidence`` 1..4."""

    key: str
    value: str
    evidence: int
    text: str
    source: str
    seq: int
    superseded: bool = False
    negated: bool = False
    kind: ClaimKind | None = None
    origin: Origin | None = None
    # The source's trust level (a ``Trust``; None = unlabelled, which the trust check refuses)
    trust: int | None = None
    # Derivation routes (alternatives, each a conjunction of premise keys) the model path names
    derived_from: tuple[tuple[str, ...], ...] = ()

    def __str__(self) -> str:
        op = "≠" if self.negated else "="
        flag = " (superseded)" if self.superseded else ""
        return f"{self.key} {op} {self.value} @{self.evidence} [{self.source}#{self.seq}]{flag}"


# -- the domain table -----------------------------------------------------------------------
def _domains() -> Mapping[str, str]:
    table = {
        "package manager": "npm pnpm yarn bun pip poetry uv pipenv conda cargo maven gradle",
        "database": "postgresql postgres mysql mariadb sqlite mongodb redis dynamodb "
        "cassandra oracle mssql duckdb",
        "test framework": "pytest unittest jest vitest mocha jasmine",
        "web framework": "django flask fastapi express rails laravel nextjs next.js",
        "frontend framework": "react vue svelte angular solid",
        "language": "python typescript javascript rust go java kotlin ruby",
        "bundler": "webpack vite rollup esbuild parcel",
        "linter": "ruff flake8 pylint eslint",
        "formatter": "black prettier",
        "container runtime": "docker podman",
        "ci": "jenkins circleci travis",
        "cloud": "aws gcp azure",
    }
    return MappingProxyType({v: key for key, vs in table.items() for v in vs.split()})


DOMAINS: Mapping[str, str] = _domains()

# -- sentences ------------------------------------------------------------------------------
_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.S)
_SPLIT = re.compile(r"(?<=[!?！？；;。])|\n|(?<=\.)(?=\s|$)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•>]|\d+[.)]|#+)\s+")
_MD = re.compile(r"[*`~]|(?<!\w)_|_(?!\w)")
_QUESTION_START = re.compile(
    r"^(?:should|shall|could|would|can|do(?!\s+not\b)|does|did|is|are|was|were|will|what|"
    r"which|how|why|"
    r"where|when|who|whether)\b",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|suppose|supposing|assuming|imagine|would|maybe|might|perhaps|could|"
    r"whether|unless)\b",
    re.I,
)
_CJK_DOUBT = re.compile(r"吗|呢|是否|要不要|如果|假如|假设|要是|也许|或许|可能|是不是")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


_LINE_NO = re.compile(r"^\s*\d+\t", re.M)  # a read tool's ``cat -n`` line numbers


def _sentences(text: str) -> Iterator[str]:
    for part in _SPLIT.split(_LINE_NO.sub("", _FENCE.sub("\n", text))):
        s = _MD.sub("", _LIST_MARK.sub("", part)).strip()
        if s:
            yield s


def _doubtful(sentence: str) -> bool:
    s = sentence.rstrip()
    if s.endswith(("?", "？")) or _CJK_DOUBT.search(s):
        return True
    return bool(_QUESTION_START.match(s) or _HYPOTHETICAL.search(s))


# -- normalization --------------------------------------------------------------------------
_DETERMINERS = (
    r"(?:the|this|that|our|my|your|their)\s+[\w-]+'s|"
    r"the|a|an|our|my|your|their|its|his|her|this|that|these|those"
)
_LEADING_DET = re.compile(rf"^(?:(?:{_DETERMINERS})\s+)+", re.I)
_KEY_DET = re.compile(rf"^(?:(?:{_DETERMINERS}|current|new|default)\s+)+", re.I)
_CJK_DET = re.compile(
    r"^(?:我们的|我们|咱们的|本项目的|这个项目的|项目的|这个|那个|该|本|我的|你的)+"
)
_KEY_JUNK = re.compile(r"[^\w\u3400-\u9fff\uf900-\ufaff]+")
_VALUE_JUNK = re.compile(r"[^\w\u3400-\u9fff\uf900-\ufaff.+/:@#-]+")
_CLAUSE = re.compile(
    r"\s*(?:,|，|、|\(|（|\s-\s|\s—\s|\bbecause\b|\bsince\b|\bwhich\b|\bso that\b|\bso\b|"
    r"\bbut\b|\bwhile\b|\band then\b|\bas of\b|\bwhen\b|因为|所以|但是)"
)
_FILLER_HEAD = re.compile(r"^(?:(?:now|also|still|actually|currently|always|just|then)\s+)+")
_FILLER_TAIL = re.compile(
    r"(?:\s+(?:now|instead|today|here|too|again|already|from now on|as well|for now))+$"
)
_NOT_KEYS = frozenset(
    "it this that there here he she they we i you what which who everything something "
    "nothing anything all one note todo tip example hint warning answer question result "
    "reason problem issue thing idea plan goal step status update summary output error "
    "这 那 它 他 她 这里 那里 问题 原因 结果 答案".split()
)
_MAX_KEY_WORDS = 4
_MAX_CJK_KEY = 12
_MAX_VALUE_WORDS = 6
_MAX_CJK_VALUE = 24


def _singular(word: str) -> str:
    if len(word) <= 3 or not word.endswith("s") or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is", "os", "ses", "xes", "zes", "ches", "shes")):
        return word
    return word[:-1]


# Short forms a key is often written in, spelled out so that "the db" meets "the database".
# Only unambiguous ones: "auth" (authentication or authorization) stays as it is.
_KEY_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "db": "database",
        "dbs": "database",
        "repo": "repository",
        "repos": "repository",
        "env": "environment",
        "cfg": "configuration",
        "config": "configuration",
        "pkg": "package",
        "deps": "dependencies",
        "k8s": "kubernetes",
    }
)


def normalize_key(phrase: str) -> str:
    """A key phrase as a slot key: lowercase, no markdown, punctuation, determiners or
    possessives, spaces collapsed, common short forms spelled out (``db`` -> ``database``),
    a safe trailing plural dropped."""
    s = _MD.sub("", phrase).lower().strip()
    s = _KEY_DET.sub("", s)
    s = _CJK_DET.sub("", s)
    s = _KEY_JUNK.sub(" ", s.replace("'s ", " ")).replace("_", " ")
    words = [_KEY_WORDS.get(w, w) for w in s.split()]
    if not words:
        return ""
    words[-1] = _singular(words[-1])
    return " ".join(words)


def normalize_value(phrase: str) -> str:
    """A value phrase as a short lowercase value (≤ 6 words), cut at a clause break."""
    s = _MD.sub("", phrase).lower().strip()
    s = _CLAUSE.split(s, maxsplit=1)[0]
    s = _LEADING_DET.sub("", s.strip())
    s = _CJK_DET.sub("", s)
    s = " ".join(_VALUE_JUNK.sub(" ", s).split())
    s = s.strip(".:/-#@ ")
    s = _LEADING_DET.sub("", _FILLER_TAIL.sub("", _FILLER_HEAD.sub("", s)))
    words = s.split()[:_MAX_VALUE_WORDS]
    return " ".join(words).strip(".:/-#@ ")


def _value_ok(value: str) -> bool:
    if not value:
        return False
    return value.isascii() or len(value) <= _MAX_CJK_VALUE


def _key_ok(key: str) -> bool:
    if not key or key in _NOT_KEYS:
        return False
    if _CJK.search(key) and not key.isascii():
        return len(key.replace(" ", "")) <= _MAX_CJK_KEY
    return len(key.split()) <= _MAX_KEY_WORDS and any(c.isalpha() for c in key)


def _domain(*values: str) -> str | None:
    for v in values:
        if v in DOMAINS:
            return DOMAINS[v]
        head = v.split()[0] if v else ""
        if head in DOMAINS:
            return DOMAINS[head]
    return None


# -- the patterns ---------------------------------------------------------------------------
# One raw assertion: (key phrase or None, value phrase, negated, kind); a None key is
# derived from the values' domain (see ``_assertions``).
_Raw = tuple[str | None, str, bool, ClaimKind]

_SUBJ = (
    r"(?:(?:let's|let us|please)\s+)?"
    r"(?:(?:we|i|you|they)\s*(?:'ve\s+|have\s+|had\s+|will\s+|should\s+|must\s+|now\s+)?)?"
)
_P = re.I
_USE = r"(?:use|uses|used|using|are using|'re using|go with|prefer|choose|pick)"
_ALT = r"(?:,\s*not|\s+instead of|\s+rather than)"
_PREP = r"(?:as|at|by|in|on|to|with|from|via|through|into|onto|under|behind|after)"
# Verbs that relate a thing to one value ("CI runs on X", "logs go to X", "auth uses X"),
# in their plain and third-person forms; a closed list keeps chatter out.
_RELATION = (
    r"(?:use|uses|run|runs|go|goes|live|lives|deploy|deploys|point|points|default|defaults|"
    r"depend|depends|rely|relies|listen|listens|connect|connects|talk|talks|write|writes|"
    r"ship|ships|publish|publishes|target|targets|expire|expires|sit|sits|resolve|resolves|"
    r"route|routes|fall back|falls back|belong|belongs|come from|comes from|end up|ends up|"
    r"sign in|signs in|log in|logs in|pass|passes|execute|executes|send|sends|keep|keeps|"
    r"store|stores|hold|holds|read|reads)"
)

_EN: list[tuple[re.Pattern[str], str]] = [
    # X is Y, not Z / X should be Y instead of Z
    (
        re.compile(
            r"^(?P<x>.+?)\s+(?:is|are|should be|must be)\s+(?P<y>[^,]+?)" + _ALT + r"\s+(?P<z>.+)$",
            _P,
        ),
        "alt",
    ),
    # use Y, not Z [for X] / use Y instead of Z [for|as X]
    (
        re.compile(
            rf"^{_SUBJ}{_USE}\s+(?P<y>[^,]+?){_ALT}\s+(?P<z>.+?)"
            r"(?:,?\s+(?:for|as)\s+(?P<x>.+))?$",
            _P,
        ),
        "alt",
    ),
    # Y, not Z / Y instead of Z (Y a word or two)
    (
        re.compile(r"^(?P<y>\S+(?:\s+\S+)?)" + _ALT + r"\s+(?P<z>\S+(?:\s+\S+)?)$", _P),
        "alt",
    ),
    # switch/change/move X [from W] to Y
    (
        re.compile(
            rf"^{_SUBJ}(?:switch|switched|switching|change|changed|changing|move|moved|"
            r"moving|migrate|migrated|migrating)(?:\s+over)?(?!\s+on\b)"
            r"(?:\s+(?P<x>(?!from\b|to\b).+?))?(?:\s+from\s+(?P<w>.+?))?\s+to\s+(?P<y>.+)$",
            _P,
        ),
        "switch",
    ),
    # X was changed to Y
    (
        re.compile(
            r"^(?P<x>.+?)\s+(?:was|were|has been|have been|got|is now|is being|is)\s+"
            r"(?:changed|switched|moved|updated|set|migrated|bumped|pinned)\s+to\s+(?P<y>.+)$",
            _P,
        ),
        "changed",
    ),
    # set X to Y
    (re.compile(rf"^{_SUBJ}set\s+(?!up\b)(?P<x>.+?)\s+to\s+(?P<y>.+)$", _P), "set"),
    # X should be Y
    (
        re.compile(
            r"^(?P<x>.+?)\s+(?:should|must|needs to|has to|shall)\s+(?:always\s+)?be\s+"
            r"(?!not\b)(?P<y>.+)$",
            _P,
        ),
        "should",
    ),
    # don't use Y / never Y / avoid Y
    (
        re.compile(
            rf"^{_SUBJ}(?:don't|do not|never|avoid|stop)\s+"
            r"(?:(?:use|using|install|installing)\s+(?P<y>.+)|(?P<y2>\S+))$",
            _P,
        ),
        "dont",
    ),
    # we use Y for X / use Y as X
    (re.compile(rf"^{_SUBJ}{_USE}\s+(?P<y>.+?)\s+(?:for|as)\s+(?P<x>.+)$", _P), "use"),
    # we use Y (Y of a known domain)
    (re.compile(rf"^{_SUBJ}{_USE}\s+(?P<y>\S+(?:\s+\S+)?)$", _P), "use-bare"),
    # X is not Y
    (
        re.compile(
            r"^(?P<x>.+?)\s+(?:is not|isn't|are not|aren't|was not|wasn't)\s+(?P<y>.+)$", _P
        ),
        "isnot",
    ),
    # X is stored as Y / X are capped at Y (a participle and a preposition)
    (
        re.compile(
            r"^(?P<x>[^:=]+?)\s+(?:is|are)\s+(?:now\s+)?(?P<v>\w+(?:ed|en|wn|lt|pt|ld))\s+"
            rf"{_PREP}\s+(?P<y>\S+(?:\s+\S+){{0,2}})$",
            _P,
        ),
        "passive",
    ),
    # X runs on Y / we deploy to Y (a relation verb, a short value)
    (
        re.compile(
            rf"^(?P<x>[^:=]+?)\s+(?P<v>{_RELATION})(?:\s+{_PREP})?\s+(?:the\s+|a\s+|an\s+)?"
            r"(?P<y>\S+(?:\s+\S+)?)$",
            _P,
        ),
        "relation",
    ),
    # X is Y
    (re.compile(r"^(?P<x>[^:=]+?)\s+(?:is|are)\s+(?P<y>.+)$", _P), "is"),
    # X: Y / X = Y
    (re.compile(r"^(?P<x>[^:=]+?)\s*(?::(?=\s)|=|：)\s*(?P<y>.+)$", _P), "colon"),
]

_ZH: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:我们|我)?(?:不用|不要用|不要使用|别用|不使用|禁止使用)(?P<y>.+)$"), "dont"),
    (re.compile(r"^(?P<x>.+?)不是(?P<y>.+)$"), "isnot"),
    (
        re.compile(r"^(?:我们|我)?(?:把|将)(?P<x>.+?)(?:改为|改成|换成|切换到|切换为)(?P<y>.+)$"),
        "set",
    ),
    (re.compile(r"^(?P<x>.+?)(?:已经|已)?(?:改为|改成|换成|切换到|切换为)(?P<y>.+)$"), "set"),
    (re.compile(r"^(?:我们|我)?(?:改用|使用|采用|用(?!户))(?P<y>.+)$"), "use-bare"),
    (re.compile(r"^(?P<x>.+?)(?:是|(?<![因作成认以])为)(?P<y>.+)$"), "is"),
    (re.compile(r"^(?P<x>[^：:=]+?)\s*(?:：|:(?=\s)|=)\s*(?P<y>.+)$"), "colon"),
]

_KIND: Mapping[str, ClaimKind] = MappingProxyType(
    {
        "alt": "decision",
        "switch": "decision",
        "changed": "decision",
        "set": "decision",
        "should": "constraint",
        "dont": "constraint",
        "use": "decision",
        "use-bare": "decision",
        "isnot": "refuted",
        "passive": "fact",
        "relation": "fact",
        "is": "fact",
        "colon": "fact",
    }
)
_PLAIN_KEY = re.compile(r"^[\w\s'-]+$")  # "X: Y" / "X = Y" name a plain key ...
_CODE = re.compile(r"[(){}\[\]<>\"`]|\s[/*+|&]\s")  # ... and a value that is not code
_EN_WORDS = re.compile(r"\b(?:is|are|use|using|not|should|set|switch|switched)\b", re.I)


def _group(m: re.Match[str], name: str) -> str | None:
    g = m.groupdict().get(name)
    return g if isinstance(g, str) and g.strip() else None


_HEDGE = re.compile(
    r"^(?:(?:i think|i believe|i guess|i see|it seems|apparently|actually|in fact|so|ok|okay|"
    r"well|yes|"
    r"note that|remember that|fyi|also|now|then|and|but|good|great)\s*,?\s+)+",
    re.I,
)


_PRONOUNS = frozenset({"we", "i", "you", "they"})
_REFERENTS = frozenset({"it", "this", "that", "these", "those", "he", "she", "which", "what"})


def _lemma(verb: str) -> str:
    """A relation verb's plain form ("runs" -> "run", "relies" -> "rely"; "falls back" ->
    "fall back"), so "X runs on" and "X run on" give one key."""
    head, _, rest = verb.partition(" ")
    if head.endswith("ies"):
        head = head[:-3] + "y"
    elif head.endswith(("goes", "shes", "ches", "sses")):
        head = head[:-2]
    elif head.endswith("s") and not head.endswith("ss"):
        head = head[:-1]
    return f"{head} {rest}".strip()


def _raw(sentence: str) -> tuple[str, list[_Raw]]:
    """The pattern name and raw assertions of one sentence (``("", [])`` for none)."""
    s = _HEDGE.sub("", sentence.strip().rstrip(".!;；。！ "))
    patterns = _ZH if _CJK.search(s) and not _EN_WORDS.search(s) else _EN
    for pattern, name in patterns:
        m = pattern.match(s)
        if m is None:
            continue
        x, y = _group(m, "x"), _group(m, "y") or _group(m, "y2")
        if y is None:
            continue
        kind = _KIND[name]
        if name == "alt":
            z = _group(m, "z")
            if z is None:
                continue
            return name, [(x, y, False, kind), (x, z, True, "refuted")]
        if name == "switch":
            w = _group(m, "w")
            return name, [(x, y, False, kind)] + ([(x, w, True, "refuted")] if w else [])
        if name in ("dont", "isnot"):
            return name, [(x, y, True, "refuted" if name == "isnot" else kind)]
        if name == "use-bare":
            return name, [(None, y, False, kind)]
        if name in ("passive", "relation"):
            if x is None:
                continue
            verb = _lemma(m.group("v").lower())
            subject = x.strip()
            if subject.lower() in _PRONOUNS:  # "we deploy to X": the verb names the key
                return name, [(verb, y, False, kind)]
            if subject.lower() in _REFERENTS:  # "it comes from X": what "it" is is elsewhere
                continue
            return name, [(f"{subject} {verb}", y, False, kind)]
        if x is None or (name == "colon" and (not _PLAIN_KEY.match(x) or _CODE.search(y))):
            continue
        return name, [(x, y, False, kind)]
    return "", []


def _assertions(sentence: str) -> list[tuple[str, str, bool, ClaimKind]]:
    """The normalized ``(key, value, negated, kind)`` assertions of one sentence."""
    if _doubtful(sentence):
        return []
    name, raws = _raw(sentence)
    if any("[REDACTED" in v for _, v, _, _ in raws):
        return []  # a withheld credential is no belief worth a slot
    values = [normalize_value(v) for _, v, _, _ in raws]
    if not raws or not all(_value_ok(v) for v in values):
        return []
    named = next((r[0] for r in raws if r[0] is not None), None)
    if named is not None:
        key = normalize_key(named)
        if not _key_ok(key):
            return []
    else:
        domain = _domain(*values)
        if domain is not None:
            key = domain
        elif name == "alt":  # "tabs, not spaces": the pair names the choice
            key = " or ".join(sorted({normalize_key(v) for v in values}))
        elif name == "dont":  # "never force-push": the thing itself
            key = normalize_key(values[0])
        else:  # "we use foo" with no known domain says nothing keyable
            return []
        if not key:
            return []
    return [(key, v, neg, kind) for v, (_, _, neg, kind) in zip(values, raws, strict=True)]


# -- reading a session ----------------------------------------------------------------------
def _parts(message: Mapping[str, Any], include_reasoning: bool) -> Iterator[tuple[Origin, str]]:
    """``(origin, text)`` for each readable block of a (redacted) raw message."""
    role = message.get("role")
    source = message.get("source")
    kind = source.get("kind") if isinstance(source, Mapping) else None
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    own: Origin = "assistant"
    if role == "user" and kind in ("user", "tool"):
        own = "user" if kind == "user" else "tool"
    for b in blocks:
        if not isinstance(b, Mapping):
            continue
        t, text = b.get("type"), b.get("text")
        if t == "text" and isinstance(text, str) and role in ("user", "assistant"):
            yield own, text
        elif t == "reasoning" and include_reasoning and isinstance(text, str):
            yield "reasoning", text
        elif t == "tool-result":
            inner = b.get("content")
            items = inner if isinstance(inner, list) else [{"type": "text", "text": inner}]
            for i in items:
                inner_text = i.get("text") if isinstance(i, Mapping) else None
                if isinstance(inner_text, str):
                    yield "tool", inner_text


def extract_claims(
    session: Session, *, include_reasoning: bool = True, include_injected: bool = False
) -> list[Claim]:
    """The claims of ``session``'s current surface, in surface order (see the module docs).

    Every message is redacted before it is read; plugin-injected messages are skipped
    unless ``include_injected`` (and then capped at SPECULATIVE); reasoning blocks are read
    unless ``include_reasoning=False``. Within the session a later assertion of a key marks
    the earlier ones ``superseded``.
    """
    items = []
    for node in session.surface():
        raw = node.message.to_json_dict()
        src = raw.get("source")
        injected = isinstance(src, Mapping) and src.get("kind") == "plugin"
        items.append((node.seq, redact_message(raw)[0], injected))
    return claims_of_messages(
        str(session.id),
        items,
        include_reasoning=include_reasoning,
        include_injected=include_injected,
    )


def claims_of_messages(
    source: str,
    messages: Iterable[tuple[int, Mapping[str, Any], bool]],
    *,
    include_reasoning: bool = True,
    include_injected: bool = False,
    trust: int | None = None,
) -> list[Claim]:
    """The claims of already-redacted ``(seq, raw message, injected)`` triples in model
    order, all from ``source`` and labelled ``trust``; the rules of ``extract_claims``."""
    claims: list[Claim] = []
    sentence_ids: list[int] = []
    n_sentences = 0
    for seq, message, injected in messages:
        if message.get("role") == "system" or (injected and not include_injected):
            continue
        for origin, text in _parts(message, include_reasoning):
            evidence = int(Evidence.SPECULATIVE) if injected else _EVIDENCE[origin]
            for sentence in _sentences(text):
                n_sentences += 1
                for key, value, negated, kind in _assertions(sentence):
                    claims.append(
                        Claim(
                            key=key,
                            value=value,
                            evidence=evidence,
                            text=sentence,
                            source=source,
                            seq=seq,
                            negated=negated,
                            kind=kind,
                            origin="injected" if injected else origin,
                            trust=trust,
                        )
                    )
                    sentence_ids.append(n_sentences)
    return _supersede(claims, sentence_ids)


def _supersede(claims: list[Claim], sentence_ids: list[int]) -> list[Claim]:
    """Mark, per source and key, every claim that a later sentence re-asserted: a positive
    claim supersedes all earlier claims of its key, a negated one the earlier claims of its
    value. Claims of one sentence ("use pnpm, not npm") never supersede each other."""
    out = list(claims)
    for i, c in enumerate(claims):
        for j in range(i):
            p = out[j]
            if sentence_ids[j] == sentence_ids[i] or p.superseded:
                continue
            if p.source != c.source or p.key != c.key:
                continue
            if not c.negated or p.value == c.value:
                out[j] = replace(p, superseded=True)
    return out


def claims_to_states(
    claims: Iterable[Claim], *, include_negated: bool = False
) -> dict[str, SlotState]:
    """One ``SlotState`` per key from the live (not superseded) claims, each source's
    opinions built with ``SlotState.from_opinions`` at the highest evidence it gave a value,
    then joined. Negated claims stay out unless ``include_negated``, and then enter as the
    value ``not <value>``. Keys come out sorted."""
    opinions: dict[str, dict[str, dict[str, int]]] = {}
    for c in claims:
        if c.superseded or (c.negated and not include_negated):
            continue
        value = f"not {c.value}" if c.negated else c.value
        per = opinions.setdefault(c.key, {}).setdefault(c.source, {})
        per[value] = max(per.get(value, 0), c.evidence)
    states: dict[str, SlotState] = {}
    for key in sorted(opinions):
        state = SlotState()
        for source, values in sorted(opinions[key].items()):
            state = state.union(SlotState.from_opinions(source, values))
        states[key] = state
    return states
