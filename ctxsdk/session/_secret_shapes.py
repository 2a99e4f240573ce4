"""Secret shapes that need no label: provider keys, private keys, JWTs, connection strings.

Each finder returns spans ``(start, end, kind)`` over the text it is given; ``_redact`` merges
the spans of every finder and replaces them. The provider shapes are the ones the public
secret scanners document (gitleaks' rules, detect-secrets' plugins, the vendors' own
formats). Where a prefix is short enough to begin a code identifier (``hf_``, ``sk-``) the
body must also *look random* (see :func:`looks_random`), so ``hf_loadPretrainedTokenizer``
or ``sk-learn-compatible`` are left alone.

Every pattern is linear: quantifiers are possessive and bounded, each match starts where the
character before cannot continue it, and the PEM scan stops at the first ``BEGIN`` whose
block never ends.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "PROVIDER_KINDS",
    "Span",
    "at",
    "find_connection_strings",
    "find_pem",
    "find_providers",
    "folded",
    "looks_random",
    "may_shape",
    "scan_at",
]

Span = tuple[int, int, str]


def folded(text: str, lower: str | None = None) -> str | None:
    """``text`` lowered, position for position, such that wherever a case-ignoring pattern
    matches an ASCII letter, the lowered text holds that letter in lower case; None when no
    such form exists (``lower``: ``text.lower()``, when the caller has it). Only four other
    characters match an ASCII letter ignoring case: "İ" (its lower case is two characters
    long, so the length differs), "K" (lowered to "k"), and "ı" and "ſ", which stay as they
    are when lowered (then None)."""
    if lower is None:
        lower = text.lower()
    if len(lower) != len(text):
        return None
    if not text.isascii() and ("ı" in text or "ſ" in text):
        return None
    return lower


def at(hay: str, word: str, back: int = 0) -> Iterator[int]:
    """Where ``word`` occurs in ``hay`` (every occurrence, overlapping ones too), less
    ``back``."""
    i = hay.find(word)
    while i >= 0:
        yield i - back
        i = hay.find(word, i + 1)


def scan_at(rx: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """``rx.finditer(text)`` when every match of ``rx`` starts at one of ``starts`` (found
    by ``str.find``, many times faster than the regex's own scan): the leftmost match at or
    after the last one's end, tried only where one can start. ``rx`` matches no empty string;
    a lookbehind still sees the text before a start."""
    end = 0
    for i in sorted(set(starts)):
        if i < end:
            continue
        m = rx.match(text, i)
        if m is not None:
            yield m
            end = m.end()


# No letter, digit, "_" or "-" just before a token, so a token never starts inside a run.
_START = r"(?<![A-Za-z0-9_-])"
# After a letters-and-digits body: no letter or digit follows (the body took them all).
_END = r"(?![A-Za-z0-9])"
_B64URL = "A-Za-z0-9_-"

_CHUNK = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def looks_random(body: str) -> bool:
    """Whether ``body`` reads as machine-made rather than as words joined up.

    Random keys switch between upper case, lower case and digits every character or two;
    identifiers are words of four or more letters (``loadPretrainedTokenizer``,
    ``learn-compatible``). The body is cut into chunks (an optional capital then lower
    case, a run of capitals, a run of digits) and must average at most 3.5 characters a
    chunk, with at least two of the three character classes present. A long body of letters
    alone (``hf_`` tokens) can have longer chunks by chance; it still reads as random when
    capitals often follow capitals (camelCase almost never has two in a row) and lower case
    does not dominate.
    """
    chunks = _CHUNK.findall(body)
    if len(chunks) < 3:
        return False
    core = sum(len(c) for c in chunks)
    classes = (
        any(c.isdigit() for c in chunks)
        + any(ch.isupper() for c in chunks for ch in c)
        + any(ch.islower() for c in chunks for ch in c)
    )
    if classes < 2:
        return False
    if core / len(chunks) <= 3.5:
        return True
    letters = [ch for ch in body if ch.isalpha()]
    if len(letters) < 20:
        return False
    pairs = list(itertools.pairwise(letters))
    upper_pairs = sum(a.isupper() and b.isupper() for a, b in pairs) / len(pairs)
    lower_pairs = sum(a.islower() and b.islower() for a, b in pairs) / len(pairs)
    upper = sum(ch.isupper() for ch in letters) / len(letters)  # CONSTANT_NAMES are not random
    return upper_pairs >= 0.1 and lower_pairs <= 0.5 and 0.25 <= upper <= 0.75


@dataclass(frozen=True)
class _Shape:
    kind: str
    pattern: str
    check: Callable[[str], bool] | None = None  # applied to the whole match


def _random_after(prefix_len: int) -> Callable[[str], bool]:
    return lambda token: looks_random(token[prefix_len:])


def _random_body(token: str) -> bool:
    # the body after the last of the prefix's separators ("sk-proj-", "hf_")
    return looks_random(re.sub(r"^[a-z0-9]+[-_](?:[a-z]+[-_])?", "", token, count=1))


# Order matters where two shapes start at one place: the longer, more specific prefix first.
_SHAPES: tuple[_Shape, ...] = (
    _Shape("anthropic", r"sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_-]{20,}+"),
    _Shape("openrouter", r"sk-or-v1-[0-9a-f]{32,}+" + _END),
    _Shape("openai", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}+", _random_body),
    _Shape("openai", r"sk-[A-Za-z0-9]{20,}+T3BlbkFJ[A-Za-z0-9]{20,}+" + _END),
    _Shape("openai", r"sk-[A-Za-z0-9_-]{20,}+", _random_body),
    _Shape("google", r"AIza[0-9A-Za-z_-]{35}" + _END),
    _Shape("google-oauth", r"GOCSPX-[A-Za-z0-9_-]{28}" + _END),
    _Shape("google-oauth", r"ya29\.[0-9A-Za-z_-]{30,}+", _random_after(5)),
    _Shape("github-pat", r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _END),
    _Shape("github", r"gh[pousr]_[A-Za-z0-9]{36,}+" + _END),
    _Shape("gitlab", r"gl(?:pat|ptt|dt|rt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}+"),
    _Shape("huggingface", r"hf_[A-Za-z0-9]{30,}+" + _END, _random_after(3)),
    _Shape("huggingface", r"api_org_[A-Za-z0-9]{30,}+" + _END, _random_after(8)),
    _Shape("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _END),
    _Shape("slack", r"xox[baprse]-[A-Za-z0-9-]{10,}+"),
    _Shape("slack", r"xapp-[0-9]-[A-Z0-9]{6,}+-[0-9]{6,}+-[A-Za-z0-9]{20,}+"),
    _Shape(
        "slack",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9]{8,}+/[A-Za-z0-9]{8,}+"
        r"/[A-Za-z0-9]{16,}+",
    ),
    # pk_ keys are publishable (Stripe says they may be exposed): only secret and restricted
    _Shape("stripe", r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}+" + _END),
    _Shape("stripe", r"whsec_[A-Za-z0-9]{24,}+" + _END, _random_after(6)),
    _Shape("npm", r"npm_[A-Za-z0-9]{36}" + _END),
    _Shape("pypi", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}+"),
    _Shape("sendgrid", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END),
    _Shape("twilio", r"SK[0-9a-fA-F]{32}" + _END),
    _Shape("mailgun", r"key-[0-9a-f]{32}" + _END),
    _Shape("mailchimp", r"[0-9a-f]{32}-us[0-9]{1,2}" + _END),
    _Shape("shopify", r"shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}" + _END),
    _Shape("digitalocean", r"do[opr]_v1_[0-9a-f]{64}" + _END),
    _Shape("square", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}+"),
    _Shape("square", r"EAAA[A-Za-z0-9_-]{60}" + _END),
    _Shape("databricks", r"dapi[0-9a-f]{32}(?:-[0-9])?" + _END),
    _Shape("linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _END),
    _Shape("postman", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}" + _END),
    _Shape("vault", r"hv[sb]\.[A-Za-z0-9_-]{24,}+", _random_after(4)),
    _Shape("pulumi", r"pul-[0-9a-f]{40}" + _END),
    _Shape("grafana", r"glsa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8}" + _END),
    _Shape("grafana", r"glc_[A-Za-z0-9+/]{32,}+={0,2}", _random_after(4)),
    _Shape("newrelic", r"NR(?:AK|II|JS)-[A-Za-z0-9]{27}" + _END),
    _Shape("age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _END),
    _Shape("groq", r"gsk_[A-Za-z0-9]{48,}+" + _END),
    _Shape("xai", r"xai-[A-Za-z0-9]{60,}+" + _END),
    _Shape("replicate", r"r8_[A-Za-z0-9]{37}" + _END),
    _Shape("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}+" + _END),
    _Shape("atlassian", r"ATATT3[A-Za-z0-9_=-]{100,}+"),
    _Shape("alibaba", r"LTAI[A-Za-z0-9]{12,20}" + _END, _random_after(4)),
    _Shape("tencent", r"AKID[A-Za-z0-9]{32}" + _END),
    _Shape("telegram", r"(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _END),
    _Shape(
        "discord",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/"
        r"[A-Za-z0-9_-]{60,}+",
    ),
    _Shape("dockerhub", r"dckr_pat_[A-Za-z0-9_-]{27,}+" + _END),
    _Shape("artifactory", r"AKCp[A-Za-z0-9]{69,}+" + _END),
    _Shape(
        "tailscale", r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}+-[A-Za-z0-9]{20,}+"
    ),
    _Shape("discord", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _END),
    _Shape("azure-ad", r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}" + _END),
    _Shape("supabase", r"sbp_[0-9a-f]{40}" + _END),
    _Shape("notion", r"(?:secret|ntn)_[A-Za-z0-9]{40,50}" + _END, _random_after(4)),
    _Shape("figma", r"figd_[A-Za-z0-9_-]{40}" + _END),
    _Shape("facebook", r"EAA[A-Za-z0-9]{90,}+" + _END, _random_after(3)),
    _Shape("fireworks", r"fw_[A-Za-z0-9]{24,}+" + _END, _random_after(3)),
    _Shape("perplexity", r"pplx-[A-Za-z0-9]{40,}+" + _END, _random_after(5)),
    _Shape("voyage", r"pa-[A-Za-z0-9_-]{40,}+" + _END, _random_after(3)),
    _Shape("langsmith", r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}" + _END),
    _Shape("pinecone", r"pcsk_[A-Za-z0-9]{5,}+_[A-Za-z0-9]{40,}+" + _END),
    _Shape("tavily", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{28,}+" + _END, _random_after(5)),
    _Shape("firecrawl", r"fc-[0-9a-f]{32}" + _END),
    _Shape("elevenlabs", r"sk_[0-9a-f]{48}" + _END),
    _Shape("e2b", r"e2b_[0-9a-f]{40}" + _END),
    _Shape("resend", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}" + _END),
    _Shape("posthog", r"phx_[A-Za-z0-9]{40,}+" + _END, _random_after(4)),
    _Shape("neon", r"napi_[a-z0-9]{60,}+" + _END, _random_after(5)),
    _Shape("onepassword", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}+"),
    _Shape("mapbox", r"[sr]k\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{20,}+" + _END),
    _Shape("dynatrace", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + _END),
    _Shape("planetscale", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}" + _END),
    _Shape("sentry", r"sntr[ys]s?_eyJ[A-Za-z0-9+/=_-]{40,}+"),
    _Shape("sentry", r"sntryu_[0-9a-f]{64}" + _END),
    _Shape("rubygems", r"rubygems_[0-9a-f]{48}" + _END),
    _Shape("clojars", r"CLOJARS_[A-Za-z0-9]{60}" + _END),
    _Shape("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}" + _END),
    _Shape("easypost", r"EZ[AT]K[A-Za-z0-9]{54}" + _END),
    _Shape("flutterwave", r"FLW(?:SECK|PUBK)_TEST-[0-9a-f]{32}-X" + _END),
    _Shape("frameio", r"fio-u-[A-Za-z0-9_=-]{64}" + _END),
    _Shape("infracost", r"ico-[A-Za-z0-9]{32}" + _END, _random_after(4)),
    _Shape("prefect", r"pnu_[A-Za-z0-9]{36}" + _END),
    _Shape("readme", r"rdme_[a-z0-9]{70}" + _END),
    _Shape("sendinblue", r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}" + _END),
    _Shape("shippo", r"shippo_(?:live|test)_[0-9a-f]{40}" + _END),
    _Shape("typeform", r"tfp_[A-Za-z0-9_.=-]{59}" + _END),
    _Shape(
        "teams-webhook",
        r"https://[A-Za-z0-9-]{1,60}+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}+"
        r"/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9-]{36}",
    ),
    _Shape("terraform", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _END),
    _Shape("openshift", r"sha256~[A-Za-z0-9_-]{43}" + _END),
    _Shape("gitlab", r"GR1348941[A-Za-z0-9_-]{20}" + _END),
    _Shape("sonarqube", r"sq[pua]_[0-9a-f]{40}" + _END),
    _Shape("harness", r"pat\.[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}" + _END),
    _Shape("dropbox", r"sl\.[A-Za-z0-9_-]{130,}+"),
    _Shape("adobe", r"p8e-[A-Za-z0-9]{32}" + _END, _random_after(4)),
    _Shape("airtable", r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}" + _END),
    _Shape(
        "hubspot",
        r"pat-(?:na|eu)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    _Shape("heroku", r"HRKU-(?:AA)?[A-Za-z0-9_-]{58,}+"),
    _Shape("netlify", r"nfp_[A-Za-z0-9]{36,}+" + _END, _random_after(4)),
    _Shape("render", r"rnd_[A-Za-z0-9]{28,}+" + _END, _random_after(4)),
    _Shape("browserbase", r"bb_(?:live|test)_[A-Za-z0-9_-]{20,}+" + _END),
    _Shape("fly", r"fm[12]_[A-Za-z0-9+/=_-]{100,}+", _random_after(4)),
    _Shape("modal", r"a[ks]-[A-Za-z0-9]{22}" + _END, _random_after(3)),
    _Shape("jwt", r"eyJ[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,}+" + _END),
    _Shape("dotted-key", r"[0-9a-f]{32}\.[A-Za-z0-9]{16}" + _END),
)

PROVIDER_KINDS: tuple[str, ...] = tuple(dict.fromkeys(s.kind for s in _SHAPES))

# One alternation finds a token; each shape's own regex then says which it was (named groups
# in the alternation cost four times the scan). Scans run only inside runs of the characters
# every shape is made of, at least 16 long: most of a text is skipped in one C loop.
_ANY_SHAPE = re.compile(_START + "(?:" + "|".join(f"(?:{s.pattern})" for s in _SHAPES) + ")")
_EACH_SHAPE = tuple((re.compile(_START + f"(?:{s.pattern})"), s) for s in _SHAPES)
_RUN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~+/=:@-"
# The runs are found in bytes (every ASCII character one byte, any other one "?", which is
# no run's: the positions stay the text's), each run character made "a" and every other
# one " ": then a run is sixteen "a"s that ``bytes.find`` sees, many times faster than a
# regex's scan of every position.
_RUN_TABLE = bytes(0x61 if chr(b) in _RUN_CHARS else 0x20 for b in range(256))
_SIXTEEN = b"a" * 16


def _runs(text: str) -> Iterator[tuple[int, int]]:
    """Each longest run of ``_RUN_CHARS`` 16 characters long or more, in order."""
    marks = text.encode("ascii", "replace").translate(_RUN_TABLE)
    i = marks.find(_SIXTEEN)
    while i >= 0:
        end = marks.find(b" ", i + 16)
        if end < 0:
            end = len(marks)
        yield marks.rfind(b" ", 0, i) + 1, end
        i = marks.find(_SIXTEEN, end)


def _which(text: str, start: int, end: int) -> _Shape | None:
    for regex, shape in _EACH_SHAPE:
        m = regex.match(text, start)
        if m is not None and m.end() == end:
            return shape
    return None


# "your" only as a word of its own (after the prefix or a separator): a real random key
# holds "yOuR" inside it about once in 30,000 keys, and that key must still be withheld.
_EXAMPLE = re.compile(r"(?i)example|(?:^|[-_./])your|(.)\1{5}")


def _example(token: str) -> bool:
    """Documentation stand-ins: ``AKIA…EXAMPLE``, ``xoxb-your-token``, ``ghp_yourtoken…``,
    ``ghp_xxxxxx…``."""
    return _EXAMPLE.search(token) is not None


def may_shape(text: str, low: str) -> bool:
    """False only when ``find_pem``, ``find_providers`` and ``find_connection_strings`` find
    nothing in ``text`` (``low``: its lower case): no key block's words, no connection
    string's "@" or "=", no run a provider's key could be in."""
    if "=" in text or "@" in text or "private key" in low or "putty-user-key-file" in low:
        return True
    return next(_runs(text), None) is not None


def find_providers(text: str) -> Iterator[Span]:
    """Spans of every provider-shaped key, JWT and dotted key in ``text``."""
    for pos, end in _runs(text):
        while pos < end:
            m = _ANY_SHAPE.search(text, pos, end)
            if m is None:
                break
            shape = _which(text, m.start(), m.end())
            token = m.group(0)
            checked = shape is not None and (shape.check is None or shape.check(token))
            if checked and shape is not None and not _example(token):
                yield m.start(), m.end(), shape.kind
                pos = m.end()
                continue
            # a false start: skip its first character only, a later token may begin inside
            pos = m.start() + 1


_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
# What a key's body is made of, in a file or escaped inside a JSON string ("\n").
# Header lines ("Proc-Type: 4,ENCRYPTED") hold single dashes; five start the next marker.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=:, \t\r\n\"']|-(?!----)|\\[nrt])*+")


# A PuTTY key file: its private lines are the secret (the public lines are not).
_PUTTY = re.compile(
    r"Private-Lines:[ \t]*+[0-9]{1,3}+\r?\n(?P<body>(?:[A-Za-z0-9+/=]{1,200}+\r?\n?){1,100}+)"
)


def _find_putty(text: str) -> Iterator[Span]:
    if "PuTTY-User-Key-File" not in text:
        return
    for m in _PUTTY.finditer(text):
        yield m.start("body"), m.end("body"), "private-key"


def find_pem(text: str) -> Iterator[Span]:
    """Spans of PEM / OpenSSH / PGP private key blocks (and a PuTTY key's private lines). A
    block whose END is missing (a key cut off by a clipped tool output) ends where its base64
    body ends."""
    yield from _find_putty(text)
    if "PRIVATE KEY" not in text:
        return
    pos = 0
    end: re.Match[str] | None = None
    no_end_after = len(text) + 1  # once a search finds no END, none after it can either
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return
        if begin.end() >= no_end_after:
            end = None
        elif end is None or end.start() < begin.end():  # the next END, found once per END
            end = _PEM_END.search(text, begin.end())
            if end is None:
                no_end_after = begin.end()
        body = _PEM_BODY.match(text, begin.end())
        body_end = body.end() if body else begin.end()
        if end is not None and end.start() <= body_end:
            yield begin.start(), end.end(), "private-key"
            pos = end.end()
            continue
        if end is None and body_end == begin.end():
            pos = begin.end()
            continue
        # No END right after the body: a cut key. Its body must hold real key material.
        material = re.sub(r"\\[nrt]|[\s:,\"'-]", "", text[begin.end() : body_end])
        if len(material) >= 40:
            cut = body_end
            while cut > begin.end() and text[cut - 1] in " \t\r\n\"'":
                cut -= 1  # the line break after a cut key is the text's, not the key's
            yield begin.start(), cut, "private-key"
        pos = max(body_end, begin.end())


# scheme://user:password@host, for the schemes that carry credentials. The password is the
# secret; the user and host stay.
_URL_CREDS = re.compile(
    # the scan starts at the literal "://" (fast); a scheme's letter must come right before
    r"://(?<=[A-Za-z0-9+.-]://)"
    # the user may hold an @ (smtp://postmaster@mg.example:pw@host)
    r"(?P<user>[^\s:/?#'\"<>]{0,100}+):(?P<pw>[^\s/@'\"<>]{1,200}+)@"
    r"(?=[A-Za-z0-9\[])"
)
# Key=value;… connection strings (ADO.NET, JDBC properties, Azure storage).
_KV_CREDS = re.compile(
    r"(?i)(?=[PpAaSs])(?<![A-Za-z0-9])(?P<key>password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)"
    r"[ \t]*+=[ \t]*+(?P<value>\"[^\"\n]{1,200}+\"|'[^'\n]{1,200}+'|\{[^}\n]{1,200}+\}"
    r"|[^;&\s\"'<>]{1,300}+)"
)
# Oracle's user/password@host (JDBC thin, SQL*Plus): no scheme before the user.
_ORACLE_CREDS = re.compile(
    r"(?:jdbc:oracle:[a-z]{1,10}+:|(?<![\w-])sqlplus[ \t]++(?:-[A-Za-z][ \t]++)*+)"
    r"[A-Za-z0-9_$#]{1,60}+/(?P<pw>[^\s@/'\"<>]{1,200}+)@"
)
# Go's MySQL driver: user:password@tcp(host:port)/db, no scheme.
_GO_DSN = re.compile(r"(?<![\w.-])[\w.-]{1,60}+:(?P<pw>[^\s@/:'\"<>]{1,200}+)@(?:tcp|unix|udp)\(")
# An Azure (or S3-style) pre-signed URL's signature.
_URL_SIG = re.compile(r"[?&](?:sig|X-Amz-Signature|Signature)=(?P<pw>[A-Za-z0-9%+/=._-]{20,}+)")
_URL_PLACEHOLDERS = frozenset(
    {"password", "pass", "passwd", "pwd", "secret", "pw", "***", "****", "...", "xxx", "x"}
)


def _placeholder_password(value: str) -> bool:
    v = value.strip("\"'").lower()
    return (
        v in _URL_PLACEHOLDERS
        or v.startswith(("<", "$", "{", "%", "[", "("))
        or "your" in v
        or set(v) <= {"*", "x", "."}
    )


_KV_BEFORE = re.compile(r"[A-Za-z][A-Za-z ]{0,30}=[^;\s]{0,200};[ \t]*+$")
_KV_AFTER = re.compile(r"[ \t]*+;[ \t]*+[A-Za-z][A-Za-z ]{0,30}=")


def _in_kv_list(text: str, m: re.Match[str]) -> bool:
    """Whether a ``Password=`` sits in a ``k=v;k=v`` list: another pair just before or
    after it."""
    before = text[max(0, m.start() - 240) : m.start()]
    return _KV_BEFORE.search(before) is not None or _KV_AFTER.match(text, m.end()) is not None


# Every match of _KV_CREDS starts at one of these (any case).
_KV_WORDS = ("password", "pwd", "accountkey", "sharedaccess")


def find_connection_strings(text: str, low: str | None = None) -> Iterator[Span]:
    """Spans of the password inside ``scheme://user:password@host`` URLs and inside
    ``Password=…;`` / ``AccountKey=…`` connection strings; placeholders are left. ``low``:
    ``folded(text)``, when the caller has it."""
    at_sign, equals = "@" in text, "=" in text
    if at_sign:
        for m in _URL_CREDS.finditer(text):
            if not _placeholder_password(m.group("pw")):
                yield m.start("pw"), m.end("pw"), "connection-string"
    finders = (  # each with the sign every match of it holds: its words are looked for after
        (_ORACLE_CREDS, ("oracle", "sqlplus"), at_sign),
        (_URL_SIG, ("ig=", "ature="), equals),
        (_GO_DSN, ("@tcp(", "@unix(", "@udp("), at_sign),
    )
    for rx, words, sign in finders:
        if sign and any(w in text for w in words):
            for m in rx.finditer(text):
                if not _placeholder_password(m.group("pw")):
                    yield m.start("pw"), m.end("pw"), "connection-string"
    if equals:
        if low is None:
            low = folded(text)
        kv = (
            _KV_CREDS.finditer(text)
            if low is None
            else scan_at(_KV_CREDS, text, (i for w in _KV_WORDS for i in at(low, w)))
        )
        for m in kv:
            value = m.group("value")
            if _placeholder_password(value.strip("{}")):  # ADO.NET quotes with {…}
                continue
            if m.group("key").lower() in ("password", "pwd") and not _in_kv_list(text, m):
                continue  # a lone password=… is the labelled rules' to judge
            quoted = value[:1] in "\"'{"
            start, end = m.start("value") + quoted, m.end("value") - quoted
            yield start, end, "connection-string"
