"""Credentials known by where they sit rather than by a ``key = value`` of their own.

* HTTP: ``Authorization: Bearer …`` / ``Basic …`` / ``token …``, session cookies;
* command lines: ``curl -u user:pass``, ``sshpass -p …``, ``mysql -p…``, ``docker login -p …``,
  ``redis-cli -a …``, ``openssl … pass:…``, ``ConvertTo-SecureString "…" -AsPlainText``;
* files: ``.netrc`` (``login u password p``), ``.pgpass`` (``host:port:db:user:password``),
  XML (``<password>…</password>``, ``<add key="ApiSecret" value="…"/>``);
* code: a credential's name and its value passed together (``os.Setenv("API_TOKEN", "…")``,
  ``props.setProperty("password", "…")``, ``define('DB_PASSWORD', '…')``);
* prose: ``the wifi password for the office is …``, ``use … as the admin password``.

Each value is judged as a labelled one is (``_secret_labels``): placeholders are left, and a
value must read as a credential where its place alone does not say so.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from ._secret_labels import key_strength
from ._secret_shapes import Span, at, folded, looks_random, scan_at
from ._secret_values import WORDY, is_code, is_placeholder, secret_looking

__all__ = ["find_in_context", "may_place"]

_KIND = "labelled"


def find_in_context(text: str, lower: str | None = None) -> Iterator[Span]:
    """Spans of the credentials the module docs list (``lower``: ``text.lower()``, when the
    caller has it)."""
    # the text lowered once for the scans that ignore case: a match of theirs holds one of
    # their words, which the lowered text then holds at the same place (None: a text where
    # case folding maps other letters onto ASCII ones, "ſ" onto "s": always scanned whole)
    low = folded(text, lower)
    yield from _auth_headers(text, low)
    yield from _cookies(text, low)
    yield from _commands(text, low)
    yield from _secure_strings(text)
    yield from _files(text)
    yield from _xml(text, low)
    yield from _call_pairs(text)
    yield from _name_value(text)
    yield from _directives(text)
    yield from _jwk(text)
    yield from _prose(text, low)


# Every scan below is skipped unless the text holds one of these, lowered (the words its
# own check looks for, or a word of theirs: "pass" for "sshpass" and "pass:", "-u" for
# "--user"), or a call's "(" before a quote, or four ":" (.pgpass).
_PLACE_WORDS = (
    "<", "bearer", "basic", "token", "ookie", "-u", "pass", "mysql", "mariadb", "login",
    "redis-cli", "identified", "securestring", "value", "requirepass", "masterauth",
    "presharedkey", "privatekey", "aws secret access key", "setx", '"kty"', "pin", "api",
    "secret",
)  # fmt: skip
_CALL_START = re.compile(r"[(,][ \t]*+[\"']")


def may_place(text: str, low: str) -> bool:
    """False only when ``find_in_context`` finds nothing in ``text`` (``low``: its folded
    lower case, see ``folded``)."""
    for w in _PLACE_WORDS:
        if w in low:
            return True
    if text.count(":") >= 4:
        return True
    return "(" in text and _CALL_START.search(text) is not None


def _holds(low: str | None, words: tuple[str, ...]) -> bool:
    """Whether a scan whose every match holds one of ``words`` (any case) may match the
    text ``low`` is the folded form of (always, for a text that has none)."""
    return low is None or any(w in low for w in words)


def _scan(
    rx: re.Pattern[str], text: str, low: str | None, words: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """``rx.finditer(text)`` for a pattern whose every match starts with one of ``words``
    (any case): tried only where the folded text ``low`` holds one."""
    if low is None:
        return rx.finditer(text)
    return scan_at(rx, text, (i for w in words for i in at(low, w)))


def _span(m: re.Match[str], group: str) -> Span:
    return m.start(group), m.end(group), _KIND


# -- HTTP ----------------------------------------------------------------------------------
_AUTH = re.compile(
    r"(?=[BbTt])(?i:\b(?P<scheme>bearer|basic|token))[ \t]++(?P<value>[A-Za-z0-9._~+/-]{16,}+=*+)"
)


_AUTH_WORDS = ("bearer", "basic", "token")  # every match of _AUTH holds one


def _auth_headers(text: str, low: str | None) -> Iterator[Span]:
    """``Bearer <token>`` / ``Basic <base64>`` / ``token <pat>`` credentials."""
    if not _holds(low, _AUTH_WORDS):
        return  # (a cheap check first: a short text pays no start finder)
    for m in _scan(_AUTH, text, low, _AUTH_WORDS):
        value = m.group("value")
        if is_placeholder(value) or text[m.end() : m.end() + 1] in ("<", "{", "$"):
            continue  # "Bearer eyJ….<payload>.<signature>": a template, not a token
        if (
            m.group("scheme").lower() == "token"
            and "authorization" not in text[max(0, m.start() - 40) : m.start()].lower()
        ):
            continue
        if looks_random(value) or "." in value.strip("."):
            yield _span(m, "value")


_COOKIE_LINE = re.compile(r"(?im)^[ \t]*+(?:set-)?cookie:[^\n]{1,4000}+")
_COOKIE = re.compile(r"(?P<name>[A-Za-z0-9_.-]{1,60}+)=(?P<value>[^;\s,]{16,}+)")
_SESSION_COOKIE = re.compile(r"(?i)sess|sid|token|auth|jwt|remember")


def _line_starts(low: str, word: str) -> Iterator[int]:
    for i in at(low, word):
        yield low.rfind("\n", 0, i) + 1


def _cookies(text: str, low: str | None = None) -> Iterator[Span]:
    """A session cookie's value in a ``Cookie:`` / ``Set-Cookie:`` header."""
    if "ookie" not in text and "OOKIE" not in text:
        return
    lines = (  # tried at the start of a line that holds "cookie:" (any case)
        _COOKIE_LINE.finditer(text)
        if low is None
        else scan_at(_COOKIE_LINE, text, _line_starts(low, "cookie:"))
    )
    for line in lines:
        for m in _COOKIE.finditer(text, line.start(), line.end()):
            value = m.group("value")
            session = _SESSION_COOKIE.search(m.group("name")) is not None
            if (
                session
                and not is_placeholder(value)
                and (looks_random(value) or secret_looking(value))
            ):
                yield _span(m, "value")


# -- command lines -------------------------------------------------------------------------
def _value(name: str) -> str:
    return rf"(?P<{name}>'[^'\n]{{1,200}}+'|\"[^\"\n]{{1,200}}+\"|[^\s'\"]{{1,200}}+)"


_ARGS = r"[^\n|;&]{0,200}?"  # the arguments of the same command, up to a pipe or a ;


# ConvertTo-SecureString's arguments, up to the command's end: the string is the plain text
# when -AsPlainText is among them, before or after it.
_SECURE_STRING = re.compile(
    r"(?=[Cc])(?<![\w-])(?i:ConvertTo-SecureString)"
    r"(?P<args>(?:[ \t]++(?:'[^'\n]{0,200}+'|\"[^\"\n]{0,200}+\"|[^\s'\"|;)]{1,200}+)){1,12}+)"
)
_KEY_PARAMS = ("-key", "-securekey")  # its only parameters with a value but -String
_ARG = re.compile(
    r"'(?P<sq>[^'\n]{0,200}+)'|\"(?P<dq>[^\"\n]{0,200}+)\"|(?P<bare>[^\s'\"|;)]{1,200}+)"
)


def _secure_strings(text: str) -> Iterator[Span]:
    """``ConvertTo-SecureString 'x' -AsPlainText``, ``… -AsPlainText -Force -String 'x'``:
    the plain text given to the cmdlet (a ``$variable`` or ``(…)`` there is code; -AsPlainText
    and -Force are switches, so a literal after them is the string too)."""
    if "SecureString" not in text and "securestring" not in text:
        return
    for m in _SECURE_STRING.finditer(text):
        if "-asplaintext" not in m.group("args").lower():
            continue
        previous = ""
        for a in _ARG.finditer(text, m.start("args"), m.end("args")):
            bare = a.group("bare")
            if bare is not None:
                literal = previous.lower() not in _KEY_PARAMS and bare[:1] not in "-$(@["
                previous = bare
                if literal and not is_placeholder(bare) and secret_looking(bare):
                    yield a.start("bare"), a.end("bare"), _KIND
                continue
            group = "sq" if a.group("sq") is not None else "dq"
            if previous.lower() not in _KEY_PARAMS and not is_placeholder(a.group(group)):
                yield a.start(group), a.end(group), _KIND
            previous = "'…'"


def _unquoted(m: re.Match[str], group: str) -> Span:
    start, end = m.start(group), m.end(group)
    if m.group(group)[:1] in ("'", '"'):
        start, end = start + 1, end - 1
    return start, end, _KIND


def _user_flags(text: str, low: str | None) -> Iterable[int]:
    for i in at(text, "-u"):  # "-u", or "--user" one before
        yield i
        yield i - 1


def _pass_flags(text: str, low: str | None) -> Iterable[int]:
    # "-storepass": the dash before the letters (at most 20) that run up to a "pass"
    for i in at(text, "pass"):
        j = i
        while j > i - 20 and j > 0 and "a" <= text[j - 1] <= "z":
            j -= 1
        if j > 0 and text[j - 1] == "-":
            yield j - 1


_LOGIN_TOOLS = ("docker", "podman", "buildah", "skopeo", "az", "oc", "cf", "crane")


def _logins(text: str, low: str | None) -> Iterable[int]:
    # "docker login", "helm registry login": the tool's name before the spaces before it
    for i in at(text, "login"):
        j = i
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j == i:
            continue
        for name in _LOGIN_TOOLS:
            if text.startswith(name, j - len(name)):
                yield j - len(name)
        if text.startswith("registry", j - 8):
            k = j - 8
            while k > 0 and text[k - 1] in " \t":
                k -= 1
            if k < j - 8 and text.startswith("helm", k - 4):
                yield k - 4


def _identified(text: str, low: str | None) -> Iterable[int] | None:
    return None if low is None else at(low, "identified")


class _Command(NamedTuple):
    """A command that takes a password on its command line."""

    words: tuple[str, ...]  # one of which the text must hold: most texts are never scanned
    regex: re.Pattern[str]
    group: str  # the pattern's group holding the value
    sign: str | None  # a word every one of ``words`` holds, looked for once per text
    # where the pattern can start (None from it: anywhere, scanned whole): the command's name
    # or flag, written as the pattern has it
    starts: Callable[[str, str | None], Iterable[int] | None]


_COMMANDS = (
    _Command(
        ("-u ", "-u\t", "--user"),
        re.compile(
            r"(?=-)(?<![\w-])(?:-u|--user)[ \t=]++[\"']?+[^\s:\"']{1,100}+:(?P<pw>[^\s\"']{1,200}+)"
        ),
        "pw",
        "-u",
        _user_flags,
    ),
    _Command(
        ("sshpass",),
        re.compile(r"(?=s)(?<![\w-])sshpass[ \t]++-p[ \t]*+" + _value("pw")),
        "pw",
        None,
        lambda text, low: at(text, "sshpass"),
    ),
    _Command(
        ("mysql", "mariadb"),
        re.compile(
            r"(?=m)(?<![\w-])(?:mysql|mysqldump|mariadb|mysqladmin)\b" + _ARGS + r"[ \t]-p"
            r"(?P<pw>[^\s'\"-][^\s'\"]{3,200}+|'[^'\n]{1,200}+'|\"[^\"\n]{1,200}+\")"
        ),
        "pw",
        None,
        lambda text, low: itertools.chain(at(text, "mysql"), at(text, "mariadb")),
    ),
    _Command(
        ("login",),
        re.compile(
            r"(?=[dphbsaoc])(?<![\w-])(?:docker|podman|helm[ \t]++registry|buildah|skopeo"
            r"|az|oc|cf|crane)"
            r"[ \t]++login\b"
            + _ARGS + r"[ \t](?:-p|--password)[ \t=]++" + _value("pw")
        ),
        "pw",
        None,
        _logins,
    ),
    _Command(
        ("redis-cli",),
        re.compile(r"(?=r)(?<![\w-])redis-cli\b" + _ARGS + r"[ \t]-a[ \t]++" + _value("pw")),
        "pw",
        None,
        lambda text, low: at(text, "redis-cli"),
    ),
    _Command(  # keytool -storepass, -keypass, -srcstorepass: a flag that ends in "pass"
        ("pass ", "pass\t"),
        re.compile(r"(?=-)(?<![\w-])-[a-z]{0,20}pass[ \t]++" + _value("pw")),
        "pw",
        "pass",
        _pass_flags,
    ),
    _Command(  # SQL: IDENTIFIED BY 'x'
        ("IDENTIFIED", "identified"),
        re.compile(r"(?i:identified[ \t]++by)[ \t]++(?:PASSWORD[ \t]++)?" + _value("pw")),
        "pw",
        None,
        _identified,
    ),
    _Command(
        ("pass:",),
        re.compile(r"(?=-)(?<![\w-])-pass(?:in|out)?[ \t]++pass:(?P<pw>[^\s'\"]{1,200}+)"),
        "pw",
        "pass",
        lambda text, low: at(text, "-pass"),
    ),
)  # fmt: skip


def _commands(text: str, low: str | None = None) -> Iterator[Span]:
    """Passwords given on a command line (see the module docs)."""
    signs: dict[str, bool] = {}
    for words, regex, group, sign, starts in _COMMANDS:
        if sign is not None:
            held = signs.get(sign)
            if held is None:
                held = signs[sign] = sign in text
            if not held:
                continue
        # the words first, by plain checks: most texts hold none, and then no start finder
        # or generator is built (a generator per command costs more than its scan)
        for w in words:
            if w in text:
                break
        else:
            continue
        where = starts(text, low)
        for m in regex.finditer(text) if where is None else scan_at(regex, text, where):
            value = m.group(group).strip("'\"")
            if not is_placeholder(value) and not value.startswith("-"):
                yield _unquoted(m, group)


# -- files ---------------------------------------------------------------------------------
_NETRC = re.compile(r"(?<![\w-])login[ \t]++\S{1,100}+[ \t]++password[ \t]++(?P<value>\S{1,200}+)")
# .pgpass: hostname:port:database:username:password, the port a number or "*".
_PGPASS = re.compile(
    r"(?m)^[ \t]*+[A-Za-z0-9_.*-]{1,253}+:(?:[0-9]{1,5}|\*):[^:\s]{1,100}+:[^:\s]{1,100}+:"
    r"(?P<value>\S{1,200}+)[ \t]*+$"
)


# Config directives and prompts that carry a password after a space.
_DIRECTIVES = re.compile(
    r"(?m)^[ \t]*+(?:requirepass|masterauth|rpcpassword|PresharedKey|PrivateKey)[ \t]*+=?[ \t]*+"
    r"(?P<value>[^\s#]{4,300}+)"
    r"|AWS Secret Access Key \[[^\]\n]{0,40}\]:[ \t]*+(?P<aws>[A-Za-z0-9/+=]{20,}+)"
    r"|(?<![\w-])setx[ \t]++(?P<name>[A-Za-z_][\w]{0,80}+)[ \t]++"
    r"(?P<setx>\"[^\"\n]{4,300}+\"|\S{4,300}+)"
)


# Every branch of ``_DIRECTIVES`` holds one of these, as written (it ignores no case).
_DIRECTIVE_WORDS = (
    "requirepass",
    "masterauth",
    "rpcpassword",
    "PresharedKey",
    "PrivateKey",
    "AWS Secret Access Key",
    "setx",
)


def _directive_starts(text: str) -> Iterator[int]:
    for w in _DIRECTIVE_WORDS:
        for i in at(text, w):
            yield i  # "AWS Secret Access Key", "setx"
            yield text.rfind("\n", 0, i) + 1  # a config line's directive, after its indent


def _directives(text: str) -> Iterator[Span]:
    if not any(w in text for w in _DIRECTIVE_WORDS):
        return  # no branch can match: the scan is skipped
    for m in scan_at(_DIRECTIVES, text, _directive_starts(text)):
        if m.group("setx") is not None:
            if key_strength(m.group("name")) != 2:
                continue
            group = "setx"
        else:
            group = "value" if m.group("value") is not None else "aws"
        value = m.group(group).strip('"')
        if not is_placeholder(value):
            start = m.start(group) + (1 if m.group(group)[:1] == '"' else 0)
            yield start, start + len(value), _KIND


# A JSON Web Key's private members (RSA d, p, q, dp, dq, qi; EC and OKP d; oct k).
_JWK_PRIVATE = re.compile(r'"(?:d|p|q|dp|dq|qi|k)"[ \t]*+:[ \t]*+"(?P<value>[A-Za-z0-9_-]{16,}+)"')


def _jwk(text: str) -> Iterator[Span]:
    if '"kty"' not in text:
        return
    for m in _JWK_PRIVATE.finditer(text):
        yield m.start("value"), m.end("value"), "private-key"


# A .pgpass line's first ":" ends its host (no ":" in it) and starts ":port:", which this
# finds there (no earlier find on the line can have taken that ":").
_PGPASS_PORT = re.compile(r":(?:[0-9]{1,5}|\*):")


def _pgpass_starts(text: str) -> Iterator[int]:
    for m in _PGPASS_PORT.finditer(text):
        yield text.rfind("\n", 0, m.start()) + 1  # the line's start


def _files(text: str) -> Iterator[Span]:
    if "login" in text:
        for m in scan_at(_NETRC, text, at(text, "login")):
            if not is_placeholder(m.group("value")):
                yield _span(m, "value")
    if text.count(":") >= 4:
        for m in scan_at(_PGPASS, text, _pgpass_starts(text)):
            if not is_placeholder(m.group("value")):
                yield _span(m, "value")


_XML_TAG = re.compile(r"<(?P<tag>[A-Za-z_][\w.-]{0,40}+)>(?P<value>[^<\n]{4,200}+)</(?P=tag)>")
_XML_ADD = re.compile(
    r"""(?i)\bkey[ \t]*+=[ \t]*+(?P<q>["'])(?P<name>[^"'\n]{1,80}+)(?P=q)[ \t]++"""
    r"""value[ \t]*+=[ \t]*+(?P<q2>["'])(?P<value>[^"'\n]{1,300}+)(?P=q2)"""
)


def _xml(text: str, low: str | None) -> Iterator[Span]:
    """``<password>…</password>``, and ``<add key="ApiSecret" value="…"/>`` settings."""
    if "<" not in text:
        return
    if "</" in text:  # every match of _XML_TAG holds it
        for m in _XML_TAG.finditer(text):
            if key_strength(m.group("tag")) == 2 and not is_placeholder(m.group("value")):
                yield _span(m, "value")
    if not _holds(low, ("value",)):
        return  # every match of _XML_ADD holds "value" in some case
    for m in _scan(_XML_ADD, text, low, ("key",)):
        if key_strength(m.group("name")) == 2 and not is_placeholder(m.group("value")):
            yield _span(m, "value")


# -- code: a name and its value passed together --------------------------------------------
_CALL_PAIR = re.compile(
    r"""[(,][ \t]*+(?P<q>["'])(?P<name>[A-Za-z_][\w.-]{0,80}+)(?P=q)[ \t]*+,[ \t]*+"""
    r"""(?P<q2>["'])(?P<value>(?:\\.|(?!(?P=q2))[^\\\n]){4,300}+)(?P=q2)"""
)


def _call_pairs(text: str) -> Iterator[Span]:
    """``os.Setenv("API_TOKEN", "…")``, ``setProperty("password", "…")``, ``define(…)``,
    ``buildConfigField("String", "MAPS_SECRET", "\\"…\\"")``."""
    if "(" not in text:
        return
    for m in _CALL_PAIR.finditer(text):
        value = m.group("value").strip('\\"')
        name = m.group("name")
        if key_strength(name) != 2 or is_placeholder(value):
            continue
        if WORDY.fullmatch(value) and not _human(name):
            continue  # setenv("OPENAI_API_KEY", "test-key"): a stand-in
        if " " not in value or secret_looking(value.split()[0]):
            start = m.start("value") + (len(m.group("value")) - len(m.group("value").lstrip('\\"')))
            yield start, start + len(value), _KIND


def _human(name: str) -> bool:
    return any(w in name.lower() for w in ("pass", "pwd", "密码", "口令"))


# -- name and value given apart ------------------------------------------------------------
# {"name": "DB_PASSWORD", "value": "…"} (ECS, k8s env, CloudFormation), "- name: X\n value: …"
# (YAML), "db_password": {"sensitive": true, "value": "…"} (terraform output -json).
_VALUE_KEY = re.compile(
    r"""(?P<q>["']?)value(?P=q)[ \t]*+[:=][ \t]*+(?P<v>"[^"\n]{1,300}+"|'[^'\n]{1,300}+'"""
    r"""|[^\s,}\]"']{1,300}+)"""
)
_NAME_BEFORE = re.compile(
    r"""(?:(?P<q>["']?)(?:name|key|Name|Key|ParameterKey)(?P=q)[ \t]*+[:=][ \t]*+["']?"""
    r"""(?P<n1>[A-Za-z_][\w.-]{0,80}+)|"(?P<n2>[A-Za-z_][\w.-]{0,80}+)"[ \t]*+:[ \t]*+\{)"""
)


def _value_starts(text: str) -> Iterator[int]:
    for i in at(text, "value"):  # the word, or its opening quote just before
        yield i - 1
        yield i


def _name_value(text: str) -> Iterator[Span]:
    if "value" not in text:
        return
    for m in scan_at(_VALUE_KEY, text, _value_starts(text)):
        before = text[max(0, m.start() - 160) : m.start()]
        if "}" in before.rsplit("{", 1)[-1] and "{" in before:
            continue  # the name's object closed before this value
        names = list(_NAME_BEFORE.finditer(before))
        if not names:
            continue
        name = names[-1].group("n1") or names[-1].group("n2") or ""
        raw = m.group("v")
        value = raw.strip("\"'")
        if key_strength(name) == 2 and not is_placeholder(value) and secret_value(value, name):
            start = m.start("v") + (1 if raw[:1] in "\"'" else 0)
            yield start, start + len(value), _KIND


def secret_value(value: str, name: str) -> bool:
    """A value given apart from its name reads as the credential: not words joined up (for a
    machine credential), nor code."""
    if WORDY.fullmatch(value) and not _human(name):
        return False
    return not is_code(value)


# -- prose ---------------------------------------------------------------------------------
_PROSE = re.compile(
    r"(?i)(?=[pPuU])(?:"
    r"\b(?:password|passphrase|passcode|pin)\b[^.\n:=]{0,40}?\b(?:is|was)[ \t]++"
    r"[\"'`“]?(?P<is>[^\s\"'`”]{6,200}+)"
    r"|\buse[ \t]++[\"'`“]?(?P<use>[^\s\"'`”]{6,200}+)[\"'`”]?[ \t]++as[ \t]++"
    r"(?:the[ \t]++|my[ \t]++|our[ \t]++|your[ \t]++)?(?:[\w-]{1,20}[ \t]++)?"
    r"(?:password|passphrase|token|api[ \t]key|secret)\b"
    r")"
)


# every match of _PROSE holds one of these: the first branch's password / passphrase /
# passcode / pin, the second's password / passphrase / token / api key / secret
_PROSE_WORDS = ("pass", "pin", "token", "api", "secret")


def _prose(text: str, low: str | None) -> Iterator[Span]:
    """``the wifi password for the office is …``, ``use … as the admin password``."""
    if not _holds(low, _PROSE_WORDS):
        return
    for m in _scan(_PROSE, text, low, ("pass", "pin", "use")):
        group = "is" if m.group("is") is not None else "use"
        value = m.group(group)
        trimmed = value.rstrip(".,;:!?)")
        if is_placeholder(trimmed) or not (looks_random(trimmed) or secret_looking(trimmed)):
            continue
        yield m.start(group), m.start(group) + len(trimmed), _KIND
