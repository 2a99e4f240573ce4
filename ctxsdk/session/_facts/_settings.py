"""Settings: a named value with its unit and polarity, read from one sentence.

``setting_facts(sentence, role=, seq=, session=, quote=)`` gives the key/value facts of one
sentence (the text reader calls it once per sentence). Every way of saying one setting gives
one key ("the request timeout is now 60 seconds", "set the request timeout to 60 seconds",
"request timeout: 60s", "bump the request timeout to 60 s", "请求超时设为60秒" all give
``request timeout`` = ``60`` ``seconds``), so a later value supersedes an earlier one
(``Facts.current()``) and two sessions that disagree meet in one slot.

What is read (X the key phrase, Y the value; English matched case-insensitively)
-------------------------------------------------------------------------------
=====================================================  ===========================================
shape                                                  fact
=====================================================  ===========================================
set|bump|raise|lower|change|update|... X [from W] to Y setting X = Y (rejected W)
switch|move|migrate [X] [from W] to Y                  decision X = Y (rejected W); no X: the
                                                       domain of Y ("switch to pnpm":
                                                       package manager)
X was|is now|has been set|changed|... to Y             setting (switched/moved: decision)
X defaults to Y                                        setting "default X" = Y
use Y for|as X / for X, we went with Y                 decision X = Y (a quantity: setting)
use Y instead of|rather than|, not Z [for X]           decision X = Y, rejected Z; X the domain
Y instead of Z / prefer Y over Z                       of Y or Z, else "Y or Z"
we use|are using|go with|chose Y                       decision, only when Y has a known domain
don't|never|no longer use Y                            negated decision, Y of a known domain
X should|must be [not] Y                               setting (negated with "not")
X is not|isn't|is no longer Y                          negated setting
X is|are [now] Y / X is Y, not Z                       setting; see "strict" below
X is enabled|disabled|public|private|required ...      polarity: "disabled" is "enabled", negated
X is|are <stored|capped|backed|hosted|...> <prep> Y    setting "X stored" = Y (MergeBench shapes)
X runs on|goes to|lives in|deploys to ... Y            setting "X run" = Y (a closed verb list);
                                                       "X uses Y": X = Y
... [on|at] port N                                     setting port = N
X: Y / X = Y                                           setting; see "strict" below ("X = Y" from
                                                       the assistant only for ENV_NAMES)
=====================================================  ===========================================

Chinese: ``不用/不使用/别用/避免使用 Y`` (negated decision), ``X不是Y`` (negated),
``把X设为/改为/调整为Y``, ``X设为/改为Y`` (setting), ``把X换成/切换到Y``, ``X换成Y``
(decision), ``用/使用/采用Y作为X`` (decision), ``改用/使用/采用Y[而不是Z]`` (decision; key
the domain of Y), ``X是/为Y``, ``X：Y``.

Strict by design: real assistant text is full of "X is Y" sentences that are no setting ("the
issue is that ...", "this is correct", "`f` is `[coeff]`"). A copula or colon sentence gives a
setting only when its key is a short noun phrase (``_keys.key_phrase``: no pronoun, verb,
function word, code or label; a head noun that can name a setting) *and* its value is a
quantity (a number with an optional unit), a boolean, a polarity word, a value of a known
domain, or a short name under a key whose head names a setting ("timeout", "region",
"package manager"). Questions, hypotheticals ("if", "would", "maybe", "吗", "如果"), hedged
statements ("I think", "probably"), examples ("e.g."), long sentences and code give nothing.
A missed setting costs less than noise.

Values keep their original case; a quantity is split into number and unit (``60`` +
``seconds``; see ``_units``). The fact's text is one readable line: ``request timeout = 60
seconds``, ``API is not public``, ``package manager = pnpm (not npm)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._redact import memo_of
from ._formats import READINGS as _FORMAT_READINGS
from ._formats import format_statement
from ._keys import CJK, KeyPhrase, domain_of, is_setting_head, key_phrase
from ._model import QUOTE_MAX, Fact, FactKind, FactSource
from ._prefilter import TableGate, literal_scan, prefiltered, spaced_branches
from ._units import quantity

__all__ = ["Setting", "facts_of_setting", "parse_setting", "setting_facts"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One key/value reading of a sentence (before it becomes a ``Fact``)."""

    kind: FactKind
    key: str
    shown: str  # the key as written (for the text)
    value: str
    unit: str | None = None
    negated: bool = False
    rejected: tuple[str, ...] = ()
    polar: bool = False  # the value is a state word ("public", "enabled"): "X is public"

    def text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.negated:
            return f"{self.shown} is not {self.value}{unit}"
        if self.polar:
            return f"{self.shown} is {self.value}"
        alt = f" (not {', '.join(self.rejected)})" if self.rejected else ""
        return f"{self.shown} = {self.value}{unit}{alt}"


# -- sentences that give nothing -------------------------------------------------------------
_QUESTION_START = re.compile(
    r"^(?:should|shall|could|would|can|do(?!\s+not\b)(?!n't)|does|did|is|are|was|were|will|"
    r"what|which|how|why|where|when|who|whether|have you|has|had)\b",
    re.I,
)
_DOUBT = re.compile(
    r"\b(?:if|suppose|supposing|assuming|imagine|would|maybe|might|perhaps|could|whether|"
    r"unless|probably|possibly|likely|unlikely|seems?|seemed|appears?|guess|wonder|"
    r"think|believe|suspect|hopefully|e\.g|i\.e|for example|for instance|such as|"
    r"try|trying|tried|expected|assume|assumed|hypothetically|wish|can|may|consider|"
    r"considering|option|options|alternatively|suggest|suggests|propose|proposes)\b",
    re.I,
)
# ``_DOUBT`` read fast: on an ASCII sentence each of its one-word forms matches exactly a
# whole run of word characters (``\b`` on both sides), so a set lookup of the sentence's
# words answers for them, and only its forms with a dot or a space are searched for
_DOUBT_WORDS = frozenset(
    "if suppose supposing assuming imagine would maybe might perhaps could whether unless "
    "probably possibly likely unlikely seem seems seemed appear appears guess wonder think "
    "believe suspect hopefully try trying tried expected assume assumed hypothetically wish "
    "can may consider considering option options alternatively suggest suggests propose "
    "proposes".split()
)
_DOUBT_PHRASES = re.compile(r"\b(?:e\.g|i\.e|for example|for instance|such as)\b")
_RUN = re.compile(r"\w+")


def _doubt(s: str) -> bool:
    """``_DOUBT.search(s) is not None``, without a search at every position of an ASCII
    sentence (any other is searched as it is)."""
    if not s.isascii():
        return _DOUBT.search(s) is not None
    low = s.lower()
    if not _DOUBT_WORDS.isdisjoint(_RUN.findall(low)):
        return True
    return _DOUBT_PHRASES.search(low) is not None


_ZH_DOUBT = re.compile(
    r"吗|呢|是否|要不要|如果|假如|假设|要是|也许|或许|可能|是不是|能否|可否|应该是|大概|估计|好像|似乎|比如|例如|"
    r"觉得|认为|猜|建议|考虑"
)
_START_CLAUSE = re.compile(
    r"^(?:when|while|once|after|before|until|since|because|although|though)\b", re.I
)

# -- cleaning ---------------------------------------------------------------------------------
_LIST_MARK = re.compile(r"^\s*(?:[-*+•>]+|\d+[.)]|#+|\[[ xX]\])\s+")
_EMPH = re.compile(r"\*\*|__|(?<![\w*])\*(?!\s)|(?<!\s)\*(?![\w*])|~~")
_LEAD_LABEL = re.compile(
    r"^(?:thought|note|update|fyi|decision|summary|answer|important|ps|tl;dr|tldr|"
    r"决定|注意|更新|总结)\s*[:：]\s*",
    re.I,
)
_LEAD_FILLER = re.compile(
    r"^(?:(?:ok|okay|so|now|also|then|and|but|yes|well|good|great|alright|right|actually|"
    r"from now on|going forward|in addition|additionally|finally|note that|remember that|"
    r"please note that|fyi|just|important|for the record|to be clear|"
    r"好的|好|那么|另外|现在|以后|从现在开始|注意)\s*[,，:：]?\s+)+",
    re.I,
)
# A lead word before a statement, with its comma ("Remember, timeout = 30", "Again, …").
_LEAD_COMMA = re.compile(
    r"^(?:(?:remember|again|next|reminder|recall|as i said|as mentioned|as discussed|once more|"
    r"once again|to recap|to repeat|anyway|in short|so yes|yes|no)\s*[,，:：]\s*)+",
    re.I,
)
_ZH_LEAD = re.compile(r"^(?:好的|好|那么|另外|现在|以后|从现在开始|注意)[,，:：]?\s*")
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget)(?:\s+(?:this|that)"
    r"(?:\s+fact)?(?:\s+for later)?\s*[:,]|\s+that\b|\s*:)\s*",
    re.I,
)
_LABEL = re.compile(r"^[^\W\d_][\w -]{0,24}?\s*\d{0,3}\s*[:：]\s+(?=\S)")
_PARTS = re.compile(r"(?<=[.!?;。！？；])\s+(?=[A-Z\u3400-\u9fff])")
_TRAIL = re.compile(r"[\s.!;；。！:：]+$")

# -- value cleaning --------------------------------------------------------------------------
_CLAUSE = re.compile(
    r"\s*(?:,|，|、|;|\(|（|\s[-—–]\s|\bbecause\b|\bsince\b|\bwhich\b|\bso that\b|\bso\b|"
    r"\bbut\b|\bwhile\b|\band\b|\bthen\b|\bas of\b|\bwhen\b|\bfor\b|\bin order\b|\bif\b|"
    r"\bunless\b|\buntil\b|\bto avoid\b|\bto make\b|\bto keep\b|\bto match\b|\bto get\b|"
    r"\bto reduce\b|\bto prevent\b|\bacross\b|\beverywhere\b|\bin all\b|"
    r"因为|所以|但是|以便|并且|然后|而且)"
)
_VALUE_FILLER_TAIL = re.compile(
    r"(?:\s+(?:now|instead|today|here|too|again|already|from now on|going forward|as well|"
    r"for now|please|only|by default|then|yesterday|recently|lately|earlier|tonight|"
    r"(?:last|this|next|past) (?:week|month|year|quarter|sprint|night|time|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|morning|afternoon|evening)|"
    r"(?:a|one|two|three|few|\d+) (?:days?|weeks?|months?|years?) ago|a while ago|"
    r"(?:in|since|back in) (?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|\d{4})|(?:on|since) (?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)))+$",
    re.I,
)
_VALUE_FILLER_HEAD = re.compile(r"^(?:(?:now|also|still|always|just|then|only|exactly)\s+)+", re.I)
_VALUE_DET = re.compile(r"^(?:the|a|an|our|my|its|their)\s+", re.I)
_VALUE_CODE = re.compile(r"[()\[\]{}<>=|&$\\;]|\s[/*+]\s|->|=>|\.\.\.|…")
_VALUE_STOP = frozenset(
    "i me my we us our you your he him his she her it its they them their this that these "
    "those who which what where when why how is are was were be been being am do does did "
    "have has had will would can could should shall may might must to if because not no "
    "there here than like also just very really still already".split()
)
_VERB_START = frozenset(
    "return returns be make use call handle accept include support work run print raise "
    "throw check read write take get give show allow let keep avoid ensure add remove fix "
    "pass point match contain load save create build install update change set switch do "
    "go see look find test try follow compute convert parse render send fetch".split()
)
_LIST = re.compile(
    r"^\s*[\"'`]?[\w.-]+[\"'`]?\s*,\s*[\"'`]?[\w.-]+[\"'`]?\s*(?:,|\band\b|\bor\b|etc)"
)
_QTY_LEAD = re.compile(
    r"^(?P<q>\S+(?:\s+[^\W\d_]{1,12})?)\s+(?:in|on|at|for|from|with|via|by|under|inside|"
    r"within|per|across|when|if|instead|now|everywhere)\b",
    re.I,
)
_FILLER_WORDS = frozenset("now instead today here too again already then only please".split())
_BOOLEAN = frozenset("true false yes no on off none null".split())
# Polarity words: (value, negated). "disabled" is "enabled" negated, so the two dispute.
_POLAR: dict[str, tuple[str, bool]] = {
    "enabled": ("enabled", False),
    "disabled": ("enabled", True),
    "on": ("enabled", False),
    "off": ("enabled", True),
    "public": ("public", False),
    "private": ("private", False),
    "internal": ("internal", False),
    "required": ("required", False),
    "mandatory": ("required", False),
    "optional": ("required", True),
    "supported": ("supported", False),
    "unsupported": ("supported", True),
    "allowed": ("allowed", False),
    "forbidden": ("allowed", True),
    "disallowed": ("allowed", True),
    "deprecated": ("deprecated", False),
    "async": ("async", False),
    "asynchronous": ("async", False),
    "sync": ("async", True),
    "synchronous": ("async", True),
    "read-only": ("read-only", False),
    "readonly": ("read-only", False),
    "writable": ("read-only", True),
    "immutable": ("immutable", False),
    "mutable": ("immutable", True),
    "persistent": ("persistent", False),
    "encrypted": ("encrypted", False),
    "unencrypted": ("encrypted", True),
    "compressed": ("compressed", False),
    "uncompressed": ("compressed", True),
    "case-sensitive": ("case-sensitive", False),
    "case-insensitive": ("case-sensitive", True),
    "thread-safe": ("thread-safe", False),
    "strict": ("strict", False),
    "experimental": ("experimental", False),
    "stable": ("stable", False),
    "open-source": ("open-source", False),
    "blocking": ("blocking", False),
    "non-blocking": ("blocking", True),
    "idempotent": ("idempotent", False),
    "公开": ("public", False),
    "公开的": ("public", False),
    "私有": ("private", False),
    "私有的": ("private", False),
    "启用": ("enabled", False),
    "开启": ("enabled", False),
    "打开": ("enabled", False),
    "禁用": ("enabled", True),
    "关闭": ("enabled", True),
    "关掉": ("enabled", True),
    "必填": ("required", False),
    "必需": ("required", False),
    "必须的": ("required", False),
    "可选": ("required", True),
    "可选的": ("required", True),
    "异步": ("async", False),
    "异步的": ("async", False),
    "同步": ("async", True),
    "同步的": ("async", True),
}

_MAX_WORDS = 24  # a longer sentence is prose, not a setting statement
_MAX_VALUE_WORDS = 4
_MAX_CJK_VALUE = 16


@dataclass(frozen=True, slots=True)
class _Value:
    value: str
    unit: str | None
    cls: str  # "quantity" | "boolean" | "polar" | "domain" | "name" | "quoted"
    negated: bool = False


def _clean_value(raw: str, *, cut: bool = True) -> _Value | None:
    """A value phrase as a short value, or None when it is not one (code, a clause, a verb
    phrase, a pronoun, too long)."""
    s = raw.strip()
    if not s:
        return None
    if _LIST.match(s):
        return None
    q = re.match(
        r"^[`\"'\u201c\u2018](?P<v>[^`\"'\u201d\u2019\n]{1,80})[`\"'\u201d\u2019](?P<rest>.*)$", s
    )
    if q is not None:
        inner = q.group("v").strip()
        rest = q.group("rest").strip()
        if rest and cut:
            head = _CLAUSE.match(" " + rest) or re.match(r"^[\s.!;。！]*$", rest)
            unit_rest = quantity(f"{inner} {rest}")
            if unit_rest is not None:
                return _Value(unit_rest[0], unit_rest[1], "quantity")
            if head is None:
                return None
        if not inner or "\n" in inner:
            return None
        qty = quantity(inner)
        if qty is not None:
            return _Value(qty[0], qty[1], "quantity")
        low = inner.lower()
        if low in _BOOLEAN:
            return _Value(low, None, "boolean")
        if _VALUE_CODE.search(inner) and raw.lstrip()[0] == "`":
            return None
        return _Value(inner, None, "domain" if domain_of(inner) else "quoted")
    s = s.replace("`", "").replace("**", "")
    if _LIST.match(s):
        return None  # "3", "4", "5": a list of values, not one
    if cut:
        s = _CLAUSE.split(s, maxsplit=1)[0]
        lead = _QTY_LEAD.match(s)
        if lead is not None and quantity(lead.group("q")) is not None:
            s = lead.group("q")  # "90 in env var": the number is the value
    s = _VALUE_FILLER_TAIL.sub("", _VALUE_FILLER_HEAD.sub("", s.strip()))
    s = _VALUE_DET.sub("", s).strip().rstrip(".:!;。！；：").strip()
    if not s or "\n" in s or "[REDACTED" in s or s.lower() in _FILLER_WORDS:
        return None
    qty = quantity(s)
    if qty is not None:
        return _Value(qty[0], qty[1], "quantity")
    low = s.lower()
    if low in _POLAR:
        v, neg = _POLAR[low]
        return _Value(v, None, "polar", neg)
    if low in _BOOLEAN:
        return _Value(low, None, "boolean")
    if _VALUE_CODE.search(s) or s.count('"') or s.count("'") > 1:
        return None
    if re.search(r"\w\.\w", s) and "_" in s:
        return None  # MultiWidget.value_from_datadict: a name in code
    if CJK.search(s):
        s = s.removesuffix("的") if s.endswith("的") and len(s) > 2 else s
        if len(s.replace(" ", "")) > _MAX_CJK_VALUE or re.search(
            r"[我你他她它这那了吗呢吧把被]", s
        ):
            return None
        if s in _POLAR:
            v, neg = _POLAR[s]
            return _Value(v, None, "polar", neg)
        return _Value(s, None, "domain" if domain_of(s) else "name")
    words = s.split()
    if len(words) > _MAX_VALUE_WORDS:
        return None
    lw = [w.lower() for w in words]
    if any(w in _VALUE_STOP for w in lw) or lw[0] in _VERB_START:
        return None
    if not all(re.fullmatch(r"[\w.+#/:@~%-]+", w) for w in words):
        return None
    if not any(c.isalnum() for c in s):
        return None
    return _Value(s, None, "domain" if domain_of(s) else "name")


def _strong(value: _Value, key: KeyPhrase) -> bool:
    """Whether a copula/colon value is a setting's value (see the module docstring)."""
    if value.cls in ("quantity", "boolean", "polar", "domain"):
        return True
    if not is_setting_head(key):
        return False
    if value.cls == "quoted":
        return True
    words = value.value.split()
    # A short name: a word or two, not an adjective report ("correct", "updated").
    if len(words) > 2:
        return False
    if words[-1].lower() in ("staging", "string"):
        return True
    return not re.search(r"(?:ed|ing|ful|ous|ive)$", words[-1].lower()) or bool(
        re.search(r"[\d_.:/-]", value.value)
    )


# -- the patterns ----------------------------------------------------------------------------
_SCOPE_TAIL = re.compile(
    r"\s+(?:(?:in|for|across|within|throughout|inside)\s+(?:this|the|our|all|every|each|any)"
    r"\s+[\w.-]+(?:\s+[\w.-]+)?|everywhere|here)$",
    re.I,
)
_SUBJ = (
    r"(?:(?:let's|let us|please|we'll|we will|i'll|i will|we've|i've|we have|i have|we|i|you|"
    r"they)\s+)*(?:(?:now|just|also|already|should|must|need to|will|then|have)\s+)*"
)
_SET = (
    r"(?:set|sets|setting|bump|bumps|bumped|bumping|raise|raises|raised|raising|lower|lowers|"
    r"lowered|lowering|increase|increases|increased|increasing|decrease|decreases|decreased|"
    r"reduce|reduces|reduced|reducing|change|changes|changed|changing|update|updates|"
    r"updated|updating|configure|configures|configured|pin|pins|pinned|adjust|adjusted|"
    r"make|made)"
)
_SWITCH = (
    r"(?:switch|switches|switched|switching|move|moves|moved|moving|migrate|migrates|"
    r"migrated|migrating)"
)
_USE = (
    r"(?:use|uses|used|using|are using|'re using|go with|went with|going with|prefer|"
    r"choose|chose|chosen|pick|picked|settle on|settled on|stick with|stuck with|adopt|adopted)"
)
_ALT = r"(?:,?\s*not|\s+instead of|\s+rather than|\s+over)"
_PREP = (
    r"(?:as|at|by|in|on|to|with|from|via|through|into|onto|under|behind|after|for|against|"
    r"within|inside)"
)
_PARTICIPLE = (
    r"(?:stored|capped|limited|backed|hosted|deployed|kept|served|cached|configured|pinned|"
    r"encoded|saved|persisted|managed|handled|powered|exported|published|bundled|built|"
    r"written|sent|routed|scraped|provided|dispatched|stored|set|fixed|locked|restricted|"
    r"bounded|run|executed|checked|answered|held|placed|located|compiled)"
)
_RELATION = (
    r"(?:use|uses|run|runs|go|goes|live|lives|deploy|deploys|point|points|"
    r"depend|depends|rely|relies|listen|listens|connect|connects|talk|talks|write|writes|"
    r"ship|ships|publish|publishes|target|targets|expire|expires|sit|sits|resolve|resolves|"
    r"route|routes|fall back|falls back|belong|belongs|come from|comes from|end up|ends up|"
    r"sign in|signs in|log in|logs in|pass|passes|execute|executes|send|sends|"
    r"store|stores|hold|holds)"
)
_I = re.I
# What passes or fails when run: "X tests pass on Y" reports a run, it sets nothing.
_RESULT_HEADS = frozenset("test spec check build case suite".split())

_LABELLED = re.compile(
    rf"^(?:please\s+)?(?:(?:let's|we|we'll|i'll)\s+)?(?:{_SET[3:-1]}|{_SWITCH[3:-1]}|use|go with|"
    r"stick with|keep|adopt|prefer)\b",
    re.I,
)

_P_SET = re.compile(
    rf"^{_SUBJ}(?P<verb>{_SET})\s+(?!up\b|it\b|them\b|this\b|that\b)(?P<x>.+?)"
    r"(?:\s+from\s+(?P<w>\S+(?:\s+\S+)?))?\s+(?:to|=|at)\s+(?P<y>.+)$",
    _I,
)
_P_SWITCH = re.compile(
    rf"^{_SUBJ}{_SWITCH}(?:\s+over|\s+back)?(?!\s+on\b)(?:\s+(?P<x>(?!from\b|to\b).+?))?"
    r"(?:\s+(?:over|back|across))?(?:\s+from\s+(?P<w>.+?))?\s+to\s+(?P<y>.+)$",
    _I,
)
_P_CHANGED = re.compile(
    r"^(?P<x>.+?)\s+(?:was|were|has been|have been|got|is now|are now|is being|is|are|"
    r"has now been|have now been)\s+(?:now\s+)?(?P<verb>changed|switched|moved|updated|set|"
    r"migrated|bumped|pinned|raised|lowered|increased|decreased|reduced|configured|adjusted)"
    r"(?:\s+from\s+(?P<w>.+?))?\s+to\s+(?P<y>.+)$",
    _I,
)
_P_DEFAULT = re.compile(r"^(?P<x>.+?)\s+(?:now\s+)?defaults?\s+to\s+(?P<y>.+)$", _I)
_P_USE_FOR = re.compile(
    rf"^{_SUBJ}{_USE}\s+(?P<y>.+?)\s+(?:for|as)\s+(?P<x>.+)$",
    _I,
)
_P_ALT = re.compile(
    rf"^(?:{_SUBJ}(?P<use>{_USE})\s+)?(?P<y>[^,]+?){_ALT}\s+(?P<z>[^,]+?)"
    r"(?:,?\s+(?:for|as)\s+(?P<x>.+))?$",
    _I,
)
_P_IS_ALT = re.compile(
    r"^(?P<x>.+?)\s+(?:is|are|should be|must be)\s+(?:now\s+)?(?P<y>[^,]+?)"
    r"(?:,\s*not|\s+instead of|\s+rather than)\s+(?P<z>.+)$",
    _I,
)
_P_DONT = re.compile(
    rf"^{_SUBJ}(?:don't|do not|never|avoid|stop|no longer|won't|will not|should not|"
    r"shouldn't|must not|mustn't|aren't|are not|dont)\s+(?:use|using|install|installing|"
    r"need|want|go with)\s+(?P<y>.+?)(?:\s+(?:for|as)\s+(?P<x>.+))?$",
    _I,
)
_P_FOR_USE = re.compile(
    rf"^(?:for|as for)\s+(?P<x>[^,]+?),?\s+{_SUBJ}{_USE}\s+(?P<y>\S+(?:\s+\S+)?)$", _I
)
_P_USE = re.compile(rf"^{_SUBJ}{_USE}\s+(?P<y>\S+(?:\s+\S+)?)$", _I)
_P_SHOULD = re.compile(
    r"^(?P<x>.+?)\s+(?:should|must|needs to|has to|shall)\s+(?:always\s+)?(?P<neg>not\s+|never\s+)?"
    r"be\s+(?P<y>.+)$",
    _I,
)
_P_ISNOT = re.compile(
    r"^(?P<x>.+?)\s+(?:is not|isn't|are not|aren't|is no longer|are no longer|was not|"
    r"wasn't|is never)\s+(?P<y>.+)$",
    _I,
)
_P_PASSIVE = re.compile(
    rf"^(?P<x>[^:=]+?)\s+(?:is|are)\s+(?:now\s+|always\s+)?(?P<v>{_PARTICIPLE})\s+{_PREP}"
    r"\s+(?P<y>\S+(?:\s+\S+){0,2})$",
    _I,
)
_P_RELATION = re.compile(
    rf"^(?P<x>[^:=]+?)\s+(?:now\s+|always\s+)?(?P<v>{_RELATION})(?:\s+(?P<prep>{_PREP}))?\s+"
    r"(?:the\s+|a\s+|an\s+)?(?P<y>\S+(?:\s+\S+)?)$",
    _I,
)
_P_IS = re.compile(
    r"^(?P<x>[^:=]+?)\s+(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?(?P<y>.+)$", _I
)
_P_COLON = re.compile(r"^(?P<x>[^:=：]+?)\s*(?:(?<!:):(?=\s)|：)\s*(?P<y>.+)$")
_P_EQ = re.compile(r"^(?P<x>[^:=：\s][^:=：]*?)\s*(?<![=!<>])=(?![=>])\s*(?P<y>[^=]+)$")
_P_PORT = re.compile(r"\b(?:on|at|to|use|using|uses|listens on)\s+port\s+`?(?P<y>\d{2,5})`?\b", _I)

# Chinese.
_Z_DONT = re.compile(
    r"^(?:我们|我|请|咱们)?(?:不用|不要用|不要使用|别用|不使用|不再使用|不采用|禁止使用|避免使用|不再用)"
    r"(?P<y>.+)$"
)
_Z_ISNOT = re.compile(r"^(?P<x>.+?)(?:不是|并不是|不再是)(?P<y>.+)$")
_Z_SET = re.compile(
    r"^(?:我们|我|请)?(?:把|将)(?P<x>.+?)(?:设为|设置为|设成|设置成|改为|改成|调为|调整为|调到|调成|"
    r"更新为|提高到|降低到|增加到|减少到)(?P<y>.+)$"
)
_Z_SET2 = re.compile(
    r"^(?P<x>.+?)(?:已经|已|现在)?(?:设为|设置为|设成|设置成|改为|改成|调整为|调为|调到|更新为|"
    r"提高到|降低到|增加到|减少到)(?P<y>.+)$"
)
_Z_SWITCH = re.compile(
    r"^(?:我们|我|请)?(?:把|将)?(?P<x>.+?)(?:已经|已)?(?:换成|切换到|切换为|迁移到|替换为|换为)(?P<y>.+)$"
)
_Z_USE_FOR = re.compile(
    r"^(?:我们|我|请)?(?:使用|用|采用|改用)(?P<y>.+?)(?:作为|做|当作|来做)(?P<x>.+)$"
)
_Z_POLAR = re.compile(r"^(?P<x>.+?)(?:已经|已|现在|目前)?(?P<y>关闭|禁用|启用|开启|打开)(?:了)?$")
_Z_DEPLOY = re.compile(r"^(?:我们|我)?(?:决定)?(?:部署到|部署在|发布到|上线到)(?P<y>.+)$")
_Z_USE = re.compile(
    r"^(?:我们|我|请|现在|以后)?(?:决定|统一)?(?:改用|使用|采用|换用|用(?!户|来|于))(?P<y>.+?)"
    r"(?:[，,]?(?:而不是|而非|不用|代替|替代|取代)(?P<z>.+))?$"
)
_Z_IS = re.compile(r"^(?P<x>.+?)(?:现在|目前|应该|必须)?(?:是|(?<![因作成认以称])为)(?P<y>.+)$")
_Z_COLON = re.compile(r"^(?P<x>[^：:=]+?)\s*(?:：|:(?=\s)|=)\s*(?P<y>.+)$")


def _g(m: re.Match[str], name: str) -> str | None:
    v = m.groupdict().get(name)
    return v.strip() if isinstance(v, str) and v.strip() else None


def _lemma(verb: str) -> str:
    head, _, rest = verb.lower().partition(" ")
    if head.endswith("ies"):
        head = head[:-3] + "y"
    elif head.endswith(("goes", "shes", "ches", "sses")):
        head = head[:-2]
    elif head.endswith("s") and not head.endswith("ss"):
        head = head[:-1]
    return f"{head} {rest}".strip()


def _choice_kind(role: str, verb: str | None) -> FactKind:
    if role == "user" and verb is not None and verb.lower().startswith("prefer"):
        return "preference"
    return "decision"


def _make(
    kind: FactKind,
    key: KeyPhrase | str,
    value: _Value,
    *,
    negated: bool = False,
    rejected: tuple[_Value, ...] = (),
) -> Setting:
    if isinstance(key, KeyPhrase):
        k, shown = key.key, key.shown
    else:
        k, shown = key, key
    neg = negated != value.negated  # "X is not disabled": enabled
    return Setting(
        kind=kind,
        key=k,
        shown=shown,
        value=value.value,
        unit=value.unit,
        negated=neg,
        rejected=tuple(r.value + (f" {r.unit}" if r.unit else "") for r in rejected),
        polar=value.cls == "polar",
    )


def _alt_key(x: str | None, y: _Value, zs: tuple[_Value, ...]) -> KeyPhrase | str | None:
    if x is not None:
        return key_phrase(x)
    dom = domain_of(y.value, *(z.value for z in zs))
    if dom is not None:
        return dom
    words = [y.value.lower()] + [z.value.lower() for z in zs]
    if all(len(w.split()) == 1 and re.fullmatch(r"[a-z][\w.+-]*", w) for w in words):
        return " or ".join(sorted(set(words)))
    return None


def _en(s: str, role: str) -> list[Setting]:
    """The English table, read top to bottom (the first shape that gives a value wins)."""
    key: KeyPhrase | str | None
    may = _GATE.read(s)  # the tables that may match ``s``
    m = _P_IS_ALT.match(s) if may & _G_IS_ALT else None
    if m:
        key = key_phrase(m["x"])
        y, z = _clean_value(m["y"]), _clean_value(m["z"])
        if key and y and z and _strong(y, key):
            return [_make("setting", key, y, rejected=(z,))]
    m = _P_DONT.match(s) if may & _G_DONT else None
    if m:
        y = _clean_value(m["y"])
        x = _g(m, "x")
        if y is not None and y.cls != "quantity":
            key = key_phrase(x) if x else domain_of(y.value)
            if key:
                return [_make("decision", key, y, negated=True)]
        return []
    m = _P_SWITCH.match(s) if may & _G_SWITCH else None
    if m:
        y = _clean_value(m["y"])
        w = _clean_value(_g(m, "w") or "")
        x = _g(m, "x")
        if y is not None:
            key = key_phrase(x, allow_code=True) if x else domain_of(y.value, w.value if w else "")
            if key is not None:
                return [_make("decision", key, y, rejected=(w,) if w else ())]
        return []
    m = _P_CHANGED.match(s) if may & _G_CHANGED else None
    if m:
        key = key_phrase(m["x"], allow_code=True)
        y = _clean_value(m["y"])
        w = _clean_value(_g(m, "w") or "")
        if key and y:
            kind: FactKind = (
                "decision" if m["verb"].lower() in ("switched", "moved", "migrated") else "setting"
            )
            return [_make(kind, key, y, rejected=(w,) if w else ())]
        return []
    m = _P_SET.match(s) if may & _G_SET else None
    if m:
        key = key_phrase(m["x"], allow_code=True)
        y = _clean_value(m["y"])
        w = _clean_value(_g(m, "w") or "")
        verb = m["verb"].lower()
        if key and y and _set_value_ok(verb, key, y):
            return [_make("setting", key, y, rejected=(w,) if w else ())]
        return []
    m = _P_DEFAULT.match(s) if may & _G_DEFAULT else None
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y:
            if key.key.startswith("default"):
                return [_make("setting", key, y)]
            shown = f"default {key.shown}"
            return [_make("setting", KeyPhrase(f"default {key.key}", shown, key.code), y)]
        return []
    m = _P_ALT.match(s) if may & _G_ALT else None
    if m and " over " in f" {s.lower()} " and not (m["use"] or "").lower().startswith("prefer"):
        m = None  # "over" marks a choice only after "prefer"
    if m:
        y = _clean_value(m["y"])
        z = _clean_value(m["z"])
        x = _g(m, "x")
        if (
            y
            and z
            and y.cls != "quantity"
            and len(m["y"].split()) <= 3
            and len(m["z"].split()) <= 3
        ):
            key = _alt_key(x, y, (z,))
            if key is not None:
                return [_make(_choice_kind(role, m["use"]), key, y, rejected=(z,))]
    m = _P_USE_FOR.match(s) if may & _G_USE_FOR else None
    if m:
        y = _clean_value(m["y"])
        # "use tabs for indentation in this repo": the key is "indentation", the rest its scope
        x = _SCOPE_TAIL.sub("", m["x"])
        key = key_phrase(x) or (domain_of(y.value) if y else None)  # pytest for tests
        if key and y:
            kind = "setting" if y.cls == "quantity" else "decision"
            return [_make(kind, key, y)]
        return []
    m = _P_FOR_USE.match(s) if may & _G_FOR_USE else None
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y:
            return [_make("decision", key, y)]  # "for persistence we settled on X"
        return []
    m = _P_USE.match(s) if may & _G_USE else None
    if m:
        y = _clean_value(m["y"])
        dom = domain_of(y.value) if y else None
        if y and dom:
            return [_make("decision", dom, y)]
        return []
    m = _P_PORT.search(s) if may & _G_PORT else None
    if m:
        return [_make("setting", "port", _Value(m["y"], None, "quantity"))]
    m = _P_SHOULD.match(s) if may & _G_SHOULD else None
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y and _strong(y, key):
            return [_make("setting", key, y, negated=bool(m["neg"]))]
        return []
    m = _P_ISNOT.match(s) if may & _G_ISNOT else None
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y and _strong(y, key):
            return [_make("setting", key, y, negated=True)]
        return []
    m = _P_PASSIVE.match(s) if may & _G_PASSIVE else None
    if m:
        subj = key_phrase(m["x"], loose=True)
        y = _clean_value(m["y"])
        if subj and y and y.cls != "boolean":
            verb = m["v"].lower()
            return [
                _make("setting", KeyPhrase(f"{subj.key} {verb}", f"{subj.shown} {verb}", False), y)
            ]
    m = _P_RELATION.match(s) if may & _G_RELATION else None
    if m:
        subject = m["x"].strip()
        y = _clean_value(m["y"])
        verb = _lemma(m["v"])
        transitive = verb in ("use", "target", "store", "hold", "come from")
        if y is not None and y.cls not in ("boolean", "polar") and (m["prep"] or transitive):
            if subject.lower() in ("we", "i", "you", "they"):
                if verb in ("deploy", "ship", "publish", "target", "route"):
                    return [_make("setting", verb, y)]
                return []
            subj = key_phrase(subject, loose=True)
            if subj is not None and verb == "pass" and subj.head in _RESULT_HEADS:
                return []  # "the payment tests pass with pytest": a run's result, no setting
            if subj is not None and verb == "use":
                return [_make("setting", subj, y)]  # "persistence uses JSONL": persistence
            if subj is not None:
                rel = KeyPhrase(f"{subj.key} {verb}", f"{subj.shown} {verb}", False)
                return [_make("setting", rel, y)]
        return []
    m = _P_IS.match(s) if may & _G_IS else None
    if m:
        key = key_phrase(m["x"], allow_code=True)
        y = _clean_value(m["y"])
        if key and y and (not key.code or _envish(m["x"])) and _strong(y, key):
            return [_make("setting", key, y)]
        return []
    eq = _P_EQ.match(s) if may & _G_EQ else None
    if eq is not None and role != "user" and not _envish(eq["x"]):
        return []  # the assistant's "threshold = 1.0" is arithmetic or code, not a setting
    m = eq or (_P_COLON.match(s) if may & _G_COLON else None)
    if m:
        key = key_phrase(m["x"], allow_code=True)
        y = _clean_value(m["y"], cut=False)
        if key and key.code and not _envish(m["x"]) and role != "user":
            key = None  # the assistant's "extra_threshold = 1.0": a variable in code
        if y and y.value.lower() in ("none", "null"):
            y = None  # "libhdf5: None": a pasted listing
        if key and y and _strong(y, key) and (y.cls != "name" or len(y.value.split()) <= 2):
            return [_make("setting", key, y)]
    return []


# -- shapes without a copula or a setting verb (read when the table above gave nothing) ----
_N = r"(?P<n>[\w.]+)"
_COUNT_ADJ = r"(?:(?:simultaneous|concurrent|parallel|open|active|live|idle|pending)\s+)?"
_COUNT_NOUN = r"(?P<noun>[a-z][a-z-]{2,20}s)\b"
_P_LIMIT = tuple(
    re.compile(p, re.I)
    for p in (
        rf"^(?:at most|no more than|up to|a maximum of|maximum of|max(?:imum)?)\s+{_N}\s+"
        rf"{_COUNT_ADJ}{_COUNT_NOUN}(?=\s*$|,|\s+(?:may|can|are allowed|should|will|at once|"
        r"at a time|in flight|in parallel|per)\b)",
        r"^.{1,40}?\s+(?:never|doesn't|does not|won't|will not|cannot|can't|must not|may not|"
        r"should not)\s+(?:grows?|go|goes|rises?|exceeds?|get|gets|have|has|hold|holds|open|"
        r"opens|allow|allows|keep|keeps)\s+(?:beyond|above|past|over|more than)?\s*"
        rf"{_N}\s+{_COUNT_ADJ}{_COUNT_NOUN}",
        r"^(?:we|i|you|it|they|the [\w-]+(?: [\w-]+)?)\s+(?:allows?|permits?|supports?|"
        r"caps? at|limits? (?:it |us |them )?to)\s+(?:up to\s+|at most\s+)?"
        rf"{_N}\s+{_COUNT_ADJ}{_COUNT_NOUN}",
    )
)
_P_ATTEMPTS = tuple(
    re.compile(p, re.I)
    for p in (
        rf"\b(?:is|are|gets?|will be) (?:attempted|tried|retried)\s+{_N}\s+times\b",
        rf"\b(?:gives? up|stops? trying|stops? retrying|fails?) after\s+{_N}\s+"
        r"(?:(?:failed|unsuccessful)\s+)?(?:attempts|tries|retries|failures)\b",
        rf"^(?!(?:i|we)\b).{{0,40}}\b(?:tries|retries|attempts)\s+(?:up to\s+|at most\s+)?"
        rf"{_N}\s+times\b",
    )
)
_P_STAY = re.compile(
    r"^(?P<x>.{1,40}?)\s+(?:stay|stays|live|lives|remain|remains|persist|persists|last|lasts|"
    r"are kept|is kept|are held|is held|are cached|is cached)\b.{0,30}?\s+for\s+"
    r"(?P<q>[\w.]+\s+[a-z]+)$"
    r"|^(?:we|i|you|they|it)\s+(?:keep|keeps|hold|holds|cache|caches|retain|retains|store|stores)"
    r"\s+(?P<x2>.{1,40}?)\s+(?:around\s+|in [\w ]{1,20}\s+)?for\s+(?P<q2>[\w.]+\s+[a-z]+)"
    r"(?:\s+before\b.*)?$",
    re.I,
)
_P_CLEFT = re.compile(
    r"^(?P<y>[^\s,]+(?:\s[^\s,]+)?)\s+(?:is|are)\s+what\s+(?P<v>[a-z]+?)(?:e?s)?\s+(?P<x>.+)$",
    re.I,
)
_P_WE_SEND = re.compile(
    r"^(?:we|i|you|they)\s+(?P<v>ship|send|publish|push|export|forward|stream|route|write|log"
    r"|report|upload|sync)\s+(?:all\s+)?(?:our|the|their|my|your|every|each|all)?\s*"
    r"(?P<x>[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?:to|into|via|through)\s+"
    r"(?:the\s+)?(?P<y>\S+(?:\s\S+)?)$",
    re.I,
)
_P_PLACE_ALL = re.compile(
    r"^(?:on|in|at|inside|within|under)\s+(?P<x>[a-z][\w-]*(?:\s[a-z][\w-]*)?),?\s+"
    r"(?:everything|all|all data|all of it|each \w+|every \w+)\s+(?:is|are|goes|lives)\s+"
    r"(?:in\s+|as\s+)?(?P<y>\S+)$",
    re.I,
)
_P_SAME = re.compile(
    r"^(?P<x>[`'\"]?[\w.-]+[`'\"]?)\s+(?:is|are|should be|must be)\s+(?:always\s+)?"
    r"(?:the same as|same as|equal to|identical to|an alias (?:of|for))\s+(?:the\s+)?"
    r"(?P<y>[`'\"]?[\w.-]+[`'\"]?)$",
    re.I,
)
# "my eslint config packages/config/eslint/src/index.ts", "our CI workflow is in
# .github/workflows/ci.yml": where a named part of the project lives.
_P_WHERE = re.compile(
    r"\b(?:my|our|the)\s+(?P<x>[\w.-]+(?:\s[\w.-]+)?\s+(?:config|configuration|settings|conventions"
    r"|workflow|manifest|schema|entry ?point|dockerfile|makefile|lockfile|env file|readme))"
    r"\s+(?:(?:is|lives|sits)\s+(?:at|in|under)\s+|(?:at|in)\s+)?[`'\"]?"
    r"(?P<y>(?:[\w.~-]+[/\\])+[\w.-]+\.\w{1,6})[`'\"]?(?=$|[\s,;])",
    re.I,
)
_NOT_A_NAME = frozenset(
    "fine good ok okay great done ready correct wrong broken working clean green red new old "
    "same different better worse there here gone lost up down set empty full fast slow".split()
)


_IRREGULAR = {"send": "sent", "write": "written", "ship": "shipped", "log": "logged"}


def _participle(verb: str) -> str:
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    return v + "d" if v.endswith("e") else v + "ed"


def _number(raw: str) -> _Value | None:
    q = quantity(raw)
    if q is None or q[1] is not None:
        return None
    return _Value(q[0], None, "quantity")


def _en_more(s: str, role: str) -> list[Setting]:
    """Limits, attempts, lifetimes, clefts and routes said without a setting verb."""
    may = _GATE.read(s)  # the tables that may match ``s``
    for p in _P_LIMIT:
        m = p.match(s) if may & _G_BIT[id(p)] else None
        n = _number(m["n"]) if m else None
        if m and n is not None:
            return [_make("setting", f"max {m['noun'].lower()}", n)]
    for p in _P_ATTEMPTS:
        m = p.search(s) if may & _G_BIT[id(p)] else None
        n = _number(m["n"]) if m else None
        if n is not None:
            return [_make("setting", "max attempts", n)]
    m = _P_STAY.match(s) if may & _G_STAY else None
    if m:
        q = quantity(m["q"] or m["q2"] or "")
        x = m["x"] or m["x2"] or ""
        if q is not None and q[1] in ("seconds", "minutes", "hours", "days", "ms", "weeks"):
            val = _Value(q[0], q[1], "quantity")
            if re.search(r"\bcach", s, re.I):
                return [_make("setting", "cache ttl", val)]
            subj = key_phrase(x, loose=True)
            if subj is not None:
                return [_make("setting", f"{subj.key} lifetime", val)]
        return []
    m = _P_SAME.match(s) if may & _G_SAME else None
    if m:
        key = key_phrase(m["x"].strip("`'\""), allow_code=True)
        y = _clean_value(m["y"])
        if key is not None and y is not None and y.cls in ("name", "quoted", "domain"):
            return [_make("setting", key, y)]  # "conversationId is the same as sessionId"
        return []
    m = _P_WHERE.search(s) if may & _G_WHERE else None
    if m:
        key = key_phrase(m["x"])
        if key is not None:
            return [_make("setting", key, _Value(m["y"], None, "name"))]
        return []
    for pattern in (_P_CLEFT, _P_WE_SEND):  # "Y is what backs X", "we ship our X to Y"
        m = pattern.match(s) if may & _G_BIT[id(pattern)] else None
        if m:
            subj = key_phrase(m["x"], loose=True)
            y = _clean_value(m["y"])
            if subj is not None and y is not None and y.cls in ("domain", "name", "quoted"):
                verb = _participle(m["v"])
                key = KeyPhrase(f"{subj.key} {verb}", f"{subj.shown} {verb}", False)
                return [_make("setting", key, y)]
            return []
    m = _P_PLACE_ALL.match(s) if may & _G_PLACE_ALL else None
    if m:
        where = key_phrase(m["x"], loose=True)
        y = _clean_value(m["y"])
        ok = (
            y is not None
            and y.cls in ("domain", "name", "quoted")
            and y.value.lower() not in _NOT_A_NAME
            and not re.search(r"(?:ed|ing|ful|ous|ive|able)$", y.value.lower())
        )
        if where is not None and y is not None and ok:
            return [_make("setting", where, y)]
    return []


def _format(s: str) -> list[Setting]:
    """ "Sessions are stored as JSONL": the format a thing is kept in (``_formats``)."""
    got = format_statement(s)
    if got is None:
        return []
    key, fmt = got
    return [_make("setting", key, _Value(fmt, None, "domain"))]


def _set_value_ok(verb: str, key: KeyPhrase, value: _Value) -> bool:
    """ "set X to Y": Y a value, not an edit ("change hello to goodbye", "update the sync
    to process all files")."""
    if value.cls == "name" and len(value.value.split()) > 2:
        return False
    if verb.startswith(("make", "made")):
        return value.cls == "quantity"
    if verb.startswith(("chang", "updat", "adjust")):
        return _strong(value, key)
    return True


def _envish(phrase: str) -> bool:
    """An environment-variable or constant name (``REQUEST_TIMEOUT``), not a variable."""
    return bool(re.fullmatch(r"`?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+`?", phrase.strip()))


def _zh(s: str, role: str) -> list[Setting]:
    s = s.replace("“", "").replace("”", "").replace("`", "")
    m = _Z_DONT.match(s)
    if m:
        y = _clean_value(m["y"])
        if y:
            dom = domain_of(y.value)
            if dom:
                return [_make("decision", dom, y, negated=True)]
        return []
    m = _Z_SET.match(s) or _Z_SET2.match(s)
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y:
            return [_make("setting", key, y)]
        return []
    m = _Z_SWITCH.match(s)
    if m:
        y = _clean_value(m["y"])
        x = _g(m, "x")
        if y:
            key = key_phrase(x) if x else None
            if key is None:
                dom = domain_of(y.value)
                key = KeyPhrase(dom, dom, False) if dom else None
            if key is not None:
                return [_make("decision", key, y)]
        return []
    m = _Z_USE_FOR.match(s)
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y:
            return [_make("decision", key, y)]
        return []
    m = _Z_USE.match(s)
    if m:
        y = _clean_value(m["y"])
        z = _clean_value(_g(m, "z") or "")
        if y:
            dom = domain_of(y.value, z.value if z else "")
            if dom:
                return [_make("decision", dom, y, rejected=(z,) if z else ())]
        return []
    m = _Z_POLAR.match(s)
    if m:
        key = key_phrase(m["x"])
        v, neg = _POLAR[m["y"]]
        if key is not None and key.key.isascii():  # a known thing: "问题关闭了" is no setting
            return [_make("setting", key, _Value(v, None, "polar", neg))]
        return []
    m = _Z_DEPLOY.match(s)
    if m:
        y = _clean_value(m["y"])
        return [_make("setting", "deploy", y)] if y is not None else []
    m = _Z_ISNOT.match(s)
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y and _strong(y, key):
            return [_make("setting", key, y, negated=True)]
        return []
    m = _Z_IS.match(s)
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"])
        if key and y and _strong(y, key):
            return [_make("setting", key, y)]
        return []
    m = _Z_COLON.match(s)
    if m:
        key = key_phrase(m["x"])
        y = _clean_value(m["y"], cut=False)
        if key and y and _strong(y, key):
            return [_make("setting", key, y)]
    return []


def _clean(sentence: str) -> str | None:
    s = " ".join(sentence.split())
    if s.startswith("#") or s.startswith("|"):
        return None  # a markdown heading or table row is no statement
    s = _LIST_MARK.sub("", s)
    if "*" in s or "__" in s or "~~" in s:  # every match of _EMPH holds one
        s = _EMPH.sub("", s)
    s = _LEAD_LABEL.sub("", s)
    s = _LEAD_FILLER.sub("", s)
    s = _LEAD_COMMA.sub("", s)
    s = _ZH_LEAD.sub("", s)
    s = _TRAIL.sub("", s).strip()
    s = s.replace("\u2019", "'")
    return s or None


def _doubtful(s: str) -> bool:
    if "?" in s or "？" in s:
        return True
    if _QUESTION_START.match(s) or _START_CLAUSE.match(s) or _doubt(s):
        return True
    return bool(_ZH_DOUBT.search(s))


def parse_setting(sentence: str, role: str = "user") -> list[Setting]:
    """The settings one sentence states (see the module docstring); ``[]`` for none.

    A "sentence" that still holds two ("bump the timeout to 60 s. The API is not public.",
    where a splitter took "s." for an abbreviation) is read as its parts. Within
    ``redaction_memo()`` a sentence read before is answered from its first reading (a new
    list)."""
    if not isinstance(sentence, str) or len(sentence) > 400:
        return []
    memo = memo_of("settings:" + role)
    if memo is None:
        return _parse_setting(sentence, role)
    got: tuple[Setting, ...] | None = memo.get(sentence)
    if got is None:
        got = memo[sentence] = tuple(_parse_setting(sentence, role))
    return list(got)


def _parse_setting(sentence: str, role: str) -> list[Setting]:
    parts = _PARTS.split(sentence.strip())
    if len(parts) > 1:
        return [st for part in parts for st in _parse_one(part, role)]
    return _parse_one(sentence, role)


def _parse_one(sentence: str, role: str) -> list[Setting]:
    bare = _LIST_MARK.sub("", sentence.strip())
    said = _REMEMBER.match(bare)
    s = _clean(bare[said.end() :] if said else sentence)
    if s is None or (said is None and _reads_nothing(s)):
        return []
    if _doubtful(s) and not _P_LIMIT[0].match(s):  # "at most 5 … may be open"
        return []
    words = s.split()
    alpha = [w for w in words if w[:1].isalpha()]
    if len(alpha) >= 3 and len(alpha) == len(words) and all(w[:1].isupper() for w in alpha):
        return []  # "Unified Session Store Design": a title, not a statement
    cjk = bool(CJK.search(s))
    if not cjk and len(words) > _MAX_WORDS:
        return []
    if cjk and len(s) > 60:
        return []
    if re.search(r"^\s*(?:\$|>>>|#!|import\s|from\s\S+\simport\s|def\s|class\s|return\s)", s):
        return []
    # a CJK sentence with a Latin verb is read by the English table
    latin_verbs = cjk and re.search(r"\b(?:is|are|use|set|switch|to|not)\b", s, re.I)
    parse: Callable[[str, str], list[Setting]] = _zh if cjk and not latin_verbs else _en
    try:
        # a data format said of a thing is that thing's format, however it is phrased
        out = (_format(s) if parse is _en else []) or parse(s, role)
        if not out and parse is _en:
            out = _en_more(s, role)
        label = _LABEL.match(s)
        if not out and label is not None and _LABELLED.match(s[label.end() :]):
            # "Switch plans: use SQLite", "Step 3: set the timeout to 30": a short label
            # before the statement
            return _parse_one(s[label.end() :], role)
    except (ValueError, IndexError, TypeError):  # pragma: no cover - defensive: never raise
        return []
    if not out and said is not None and role == "user" and parse is _en:
        # "Remember this fact: the project codeword is MARMALADE": the user marks it as a
        # fact to keep, so a name under any noun key is taken.
        m = _P_IS.match(s)
        key = key_phrase(m["x"]) if m else None
        y = _clean_value(m["y"]) if m else None
        if key is not None and y is not None and len(y.value.split()) <= 3:
            out = [_make("setting", key, y)]
    return out


def setting_facts(sentence: str, *, role: str, seq: int, session: str, quote: str) -> list[Fact]:
    """The setting facts of one sentence (key, value, unit, polarity): kind ``setting``, or
    ``decision`` / ``preference`` when the sentence makes a choice ("use pnpm, not npm")."""
    said = parse_setting(sentence, role)
    if not said:
        return []  # most sentences: no source is built
    if role == "assistant":
        said = [st for st in said if not _code_key(st, quote)]
    src = FactSource(session, seq, role, quote[:QUOTE_MAX])
    return [f for st in said for f in facts_of_setting(st, src)]


_TICKED = re.compile(r"`([^`\n]{1,60})`")


def _code_key(st: Setting, quote: str) -> bool:
    """Whether the assistant's key names code it marked as code: "`curl` uses quotes", "the
    `capfd` fixture uses FDCapture", "`encoding` defaults to 'ascii'" describe a program, not
    a setting of the project (a constant's name, ``REQUEST_TIMEOUT``, still is one)."""
    shown = f" {st.shown.lower()} "
    for m in _TICKED.finditer(quote):
        name = m.group(1).strip()
        if name and not _envish(name) and f" {name.lower()} " in shown:
            return True
    return False


def facts_of_setting(st: Setting, src: FactSource) -> list[Fact]:
    """The facts of one reading: each rejected alternative as a negated fact of the same key
    ("use pnpm, not npm": npm is rejected), then its value. The rejected ones come first
    whatever the word order ("use pnpm, not npm", "it's not X, it's Y"), so the value the
    statement asserts is the slot's latest: the denial is what lets another session's "use
    npm" dispute it, never what the statement leaves in force."""
    main = Fact(
        kind=st.kind,
        text=st.text(),
        source=src,
        key=st.key,
        value=st.value,
        unit=st.unit,
        negated=st.negated,
        rejected=st.rejected,
    )
    if st.negated:
        return [main]
    denied = [
        Fact(
            kind=st.kind,
            text=f"{st.shown} is not {alt}",
            source=src,
            key=st.key,
            value=alt,
            negated=True,
        )
        for alt in st.rejected
        if alt.casefold() != st.value.casefold()
    ]
    return [*denied, main]


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_P_COLON = prefiltered(_P_COLON)
_P_ALT = prefiltered(_P_ALT)
_P_EQ = prefiltered(_P_EQ)
_P_PORT = prefiltered(_P_PORT)
_P_DEFAULT = prefiltered(_P_DEFAULT)
_P_IS_ALT = prefiltered(_P_IS_ALT)
_P_RELATION = prefiltered(_P_RELATION)  # its lazy head tries every space: the costliest table
_P_ISNOT = prefiltered(_P_ISNOT)
_P_ATTEMPTS = tuple(prefiltered(p) for p in _P_ATTEMPTS)  # searched: "times", " after"


# Every reading of an English sentence (``_format``, ``_en``, ``_en_more``) starts with a
# match of one of these tables on it; a label's statement ("Step 3: set …") and a sentence
# to remember ("Remember: …") are read again, so they pass. ``_clean`` leaves a sentence's
# whitespace plain spaces, where ``\s+is\s+`` needs " is " (``spaced_branches``): an ASCII
# sentence holding none of the tables' strings has no reading, found in one scan instead
# of the 32 tables tried in turn (most sentences state no setting).
_READINGS: tuple[re.Pattern[str], ...] = (
    _P_IS_ALT,
    _P_DONT,
    _P_SWITCH,
    _P_CHANGED,
    _P_SET,
    _P_DEFAULT,
    _P_ALT,
    _P_USE_FOR,
    _P_FOR_USE,
    _P_USE,
    _P_PORT,
    _P_SHOULD,
    _P_ISNOT,
    _P_PASSIVE,
    _P_RELATION,
    _P_IS,
    _P_EQ,
    _P_COLON,
    *_P_LIMIT,
    *_P_ATTEMPTS,
    _P_STAY,
    _P_SAME,
    _P_WHERE,
    _P_CLEFT,
    _P_WE_SEND,
    _P_PLACE_ALL,
    *_FORMAT_READINGS,
)


def _readings(tables: tuple[re.Pattern[str], ...]) -> Any:
    """One scan (``literal_scan``) for the strings of the most selective set of every
    branch of ``tables`` (``spaced_branches``): a spaced ASCII sentence, lowercased, where
    it finds none is matched by no table. None when a table's strings are unknown (no
    test). A second scan, of each branch's next set, answered under 2% more sentences of
    the bench's 10k chat and the real sessions: not worth its time."""
    first: set[str] = set()
    for table in tables:
        got = spaced_branches(getattr(table, "_pattern", table))  # a Prefiltered's own
        if got is None:
            return None
        first.update(w for sets in got for w in sets[0])
    return literal_scan(first) if first else None


_TEST = _readings(_READINGS)
_OTHER_SPACE = re.compile(r"[^\S ]")  # whitespace other than " "


def _reads_nothing(s: str) -> bool:
    """Whether no table can read ``s`` (a cleaned sentence; see ``_READINGS``)."""
    if _TEST is None or not s.isascii() or _OTHER_SPACE.search(s) is not None:
        return False
    return _TEST(s.lower()) is None and _LABEL.match(s) is None


# A sentence that may state a setting is scanned once for the strings of every set of
# every table (``_prefilter.TableGate``); ``_en`` and ``_en_more`` try a table only when
# the scan leaves it a chance (most of them, on most sentences, it does not).
_GATE = TableGate(_READINGS)
_G_IS_ALT = _GATE.bit(_P_IS_ALT)
_G_DONT = _GATE.bit(_P_DONT)
_G_SWITCH = _GATE.bit(_P_SWITCH)
_G_CHANGED = _GATE.bit(_P_CHANGED)
_G_SET = _GATE.bit(_P_SET)
_G_DEFAULT = _GATE.bit(_P_DEFAULT)
_G_ALT = _GATE.bit(_P_ALT)
_G_USE_FOR = _GATE.bit(_P_USE_FOR)
_G_FOR_USE = _GATE.bit(_P_FOR_USE)
_G_USE = _GATE.bit(_P_USE)
_G_PORT = _GATE.bit(_P_PORT)
_G_SHOULD = _GATE.bit(_P_SHOULD)
_G_ISNOT = _GATE.bit(_P_ISNOT)
_G_PASSIVE = _GATE.bit(_P_PASSIVE)
_G_RELATION = _GATE.bit(_P_RELATION)
_G_IS = _GATE.bit(_P_IS)
_G_EQ = _GATE.bit(_P_EQ)
_G_COLON = _GATE.bit(_P_COLON)
_G_STAY = _GATE.bit(_P_STAY)
_G_SAME = _GATE.bit(_P_SAME)
_G_WHERE = _GATE.bit(_P_WHERE)
_G_PLACE_ALL = _GATE.bit(_P_PLACE_ALL)
_G_BIT = {id(t): _GATE.bit(t) for t in _READINGS}  # a table tried in a loop: its bit
