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

import re
from collections.abc import Iterator

from ._secret_labels import key_strength
from ._secret_shapes import Span, looks_random
from ._secret_values import is_placeholder, secret_looking

__all__ = ["find_in_context"]

_KIND = "labelled"


def find_in_context(text: str) -> Iterator[Span]:
    """Spans of the credentials the module docs list."""
    yield from _auth_headers(text)
    yield from _cookies(text)
    yield from _commands(text)
    yield from _files(text)
    yield from _xml(text)
    yield from _call_pairs(text)
    yield from _prose(text)


def _span(m: re.Match[str], group: str) -> Span:
    return m.start(group), m.end(group), _KIND


# -- HTTP ----------------------------------------------------------------------------------
_AUTH = re.compile(
    r"(?=[BbTt])(?i:\b(?P<scheme>bearer|basic|token))[ \t]++(?P<value>[A-Za-z0-9._~+/-]{16,}+=*+)"
)


def _auth_headers(text: str) -> Iterator[Span]:
    """``Bearer <token>`` / ``Basic <base64>`` / ``token <pat>`` credentials."""
    for m in _AUTH.finditer(text):
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


def _cookies(text: str) -> Iterator[Span]:
    """A session cookie's value in a ``Cookie:`` / ``Set-Cookie:`` header."""
    if "ookie" not in text and "OOKIE" not in text:
        return
    for line in _COOKIE_LINE.finditer(text):
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
# (words one of which the text must hold, the command's pattern, its value group): the words
# keep each pattern from scanning texts that cannot hold it.
_COMMANDS = (
    (
        ("-u ", "-u\t", "--user"),
        re.compile(
            r"(?=-)(?<![\w-])(?:-u|--user)[ \t=]++[\"']?+[^\s:\"']{1,100}+:(?P<pw>[^\s\"']{1,200}+)"
        ),
        "pw",
    ),
    (("sshpass",), re.compile(r"(?=s)(?<![\w-])sshpass[ \t]++-p[ \t]*+" + _value("pw")), "pw"),
    (
        ("mysql", "mariadb"),
        re.compile(
            r"(?=m)(?<![\w-])(?:mysql|mysqldump|mariadb|mysqladmin)\b" + _ARGS + r"[ \t]-p"
            r"(?P<pw>[^\s'\"-][^\s'\"]{3,200}+|'[^'\n]{1,200}+'|\"[^\"\n]{1,200}+\")"
        ),
        "pw",
    ),
    (
        ("login",),
        re.compile(
            r"(?=[dphbs])(?<![\w-])(?:docker|podman|helm[ \t]++registry|buildah|skopeo)"
            r"[ \t]++login\b"
            + _ARGS + r"[ \t](?:-p|--password)[ \t=]++" + _value("pw")
        ),
        "pw",
    ),
    (
        ("redis-cli",),
        re.compile(r"(?=r)(?<![\w-])redis-cli\b" + _ARGS + r"[ \t]-a[ \t]++" + _value("pw")),
        "pw",
    ),
    (
        ("pass:",),
        re.compile(r"(?=-)(?<![\w-])-pass(?:in|out)?[ \t]++pass:(?P<pw>[^\s'\"]{1,200}+)"),
        "pw",
    ),
    (
        ("SecureString",),
        re.compile(
            r"(?=C)(?<![\w-])ConvertTo-SecureString[ \t]++(?:-String[ \t]++)?"
            + _value("pw") + r"(?=[^\n]{0,80}?-AsPlainText)"
        ),
        "pw",
    ),
)  # fmt: skip


def _unquoted(m: re.Match[str], group: str) -> Span:
    start, end = m.start(group), m.end(group)
    if m.group(group)[:1] in ("'", '"'):
        start, end = start + 1, end - 1
    return start, end, _KIND


def _commands(text: str) -> Iterator[Span]:
    """Passwords given on a command line (see the module docs)."""
    for words, regex, group in _COMMANDS:
        if not any(w in text for w in words):
            continue
        for m in regex.finditer(text):
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


def _files(text: str) -> Iterator[Span]:
    if "login" in text:
        for m in _NETRC.finditer(text):
            if not is_placeholder(m.group("value")):
                yield _span(m, "value")
    if text.count(":") >= 4:
        for m in _PGPASS.finditer(text):
            if not is_placeholder(m.group("value")):
                yield _span(m, "value")


_XML_TAG = re.compile(r"<(?P<tag>[A-Za-z_][\w.-]{0,40}+)>(?P<value>[^<\n]{4,200}+)</(?P=tag)>")
_XML_ADD = re.compile(
    r"""(?i)\bkey[ \t]*+=[ \t]*+(?P<q>["'])(?P<name>[^"'\n]{1,80}+)(?P=q)[ \t]++"""
    r"""value[ \t]*+=[ \t]*+(?P<q2>["'])(?P<value>[^"'\n]{1,300}+)(?P=q2)"""
)


def _xml(text: str) -> Iterator[Span]:
    """``<password>…</password>``, and ``<add key="ApiSecret" value="…"/>`` settings."""
    if "<" not in text:
        return
    for m in _XML_TAG.finditer(text):
        if key_strength(m.group("tag")) == 2 and not is_placeholder(m.group("value")):
            yield _span(m, "value")
    for m in _XML_ADD.finditer(text):
        if key_strength(m.group("name")) == 2 and not is_placeholder(m.group("value")):
            yield _span(m, "value")


# -- code: a name and its value passed together --------------------------------------------
_CALL_PAIR = re.compile(
    r"""\([ \t]*+(?P<q>["'])(?P<name>[A-Za-z_][\w.-]{0,80}+)(?P=q)[ \t]*+,[ \t]*+"""
    r"""(?P<q2>["'])(?P<value>[^"'\n]{4,300}+)(?P=q2)"""
)


def _call_pairs(text: str) -> Iterator[Span]:
    """``os.Setenv("API_TOKEN", "…")``, ``setProperty("password", "…")``, ``define(…)``."""
    if "(" not in text:
        return
    for m in _CALL_PAIR.finditer(text):
        value = m.group("value")
        named = key_strength(m.group("name")) == 2 and not is_placeholder(value)
        if named and (" " not in value or secret_looking(value.split()[0])):
            yield _span(m, "value")


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


def _prose(text: str) -> Iterator[Span]:
    """``the wifi password for the office is …``, ``use … as the admin password``."""
    for m in _PROSE.finditer(text):
        group = "is" if m.group("is") is not None else "use"
        value = m.group(group)
        trimmed = value.rstrip(".,;:!?)")
        if is_placeholder(trimmed) or not (looks_random(trimmed) or secret_looking(trimmed)):
            continue
        yield m.start(group), m.start(group) + len(trimmed), _KIND
