"""Redaction's shortcuts give what the whole scans give.

The scans that start at a word are tried only where ``str.find`` sees the word
(``scan_at``), provider keys are looked for only in the runs ``_runs`` finds in bytes, and a
text none of whose finders' words is in it is passed without any scan (``may_*``). Each
shortcut is checked here against the scan it stands for, on the bench's corpus and on
mutations of it (cut, joined, case-flipped, with the letters that fold onto ASCII ones).
"""

from __future__ import annotations

import random
import re
import string

import pytest

from ctxsdk.bench._redact_corpus import corpus
from ctxsdk.session import _secret_contexts as C
from ctxsdk.session import _secret_shapes as S
from ctxsdk.session._secret_contexts import find_in_context, may_place
from ctxsdk.session._secret_labels import find_labelled, may_label
from ctxsdk.session._secret_shapes import (
    find_connection_strings,
    find_pem,
    find_providers,
    folded,
    may_shape,
)

_TOKENS = (
    "-", "--", "a", "abcdefghij", "pass", "PASS", " ", " ", "\t", "\n", "login", "value", '"', "'",
    "=", ":", "key", "Key", "-u", "--user", "mysql", "mysqldump", "mariadb", "-p", "x9Zk2q",
    "Pa55w0rd!", "setx", "requirepass", "masterauth", "PrivateKey", "AWS Secret Access Key [x]",
    "bearer", "Basic", "TOKEN", "token", "use", "as", "the", "password", "passphrase", "is",
    "pin", "identified", "by", "IDENTIFIED", "redis-cli", "-a", "sshpass", "-pass", "-passin",
    "pass:", "@", "/", "docker", "podman", "accountkey", "AccountKey", "pwd", "SharedAccessKey",
    "sharedaccesssignature", ";", "<add ", "machine", "ſ", "ı", "İ", "K", "密码", "(", ",",
    "localhost", "5432", "*", "0", "db", "Cookie:", "set-cookie:", "COOKIE: ", "cOoKie:",
    "sessionid=", "a8Fk29dkQ0zLm3Xp7Rt", "helm", "registry", "crane", "az", "oc", "cf",
)  # fmt: skip
_ODD = ("ſ", "ı", "İ", "K", "é", "密码：", "\ud800", "\U0001f600", "\n", "\t", " ", "=", "(")


def _texts() -> list[str]:
    rng = random.Random(25)
    base = [c.text for c in corpus()]
    base += [
        "docker login -u me -p s3cretPassw0rd registry",
        "mysql -h db -u root -pS3cr3tPw! db",
        "keytool -storepass Sup3rS3cret -keystore k.jks",
        "  requirepass Xk29fj3lQ0\nmasterauth Xk29fj3lQ0",
        '{"name": "DB_PASSWORD", "value": "Zx81kq0Pw9"}',
        "machine h login bob password Pa55word9z",
        "helm  registry\tlogin r.io -u me -p Xk29fj3lQ0a\naz acr login -p Xk29fj3lQ0b",
        "GET /\nCookie: theme=dark; sessionid=a8Fk29dkQ0zLm3Xp7Rt\n",
        "db.example.com:5432:app:admin:Xk29fj3lQ0\n  *:*:*:postgres:Zq81mm2Pw\nh:1:2:3:4:5",
        '<add key="ApiSecret" value="Q1w2e3r4t5y6"/>',
        "the wifi password is Gr33nTr33s!",
        "curl --user bob:Pa55w0rd9 https://x",
        "aaaaaaaaaaaaaaa bbbbbbbbbbbbbbbb ghp_" + "A1b2C3d4" * 5,
        *(f"x -{'a' * n}pass Xy7kq2mZ" for n in range(18, 23)),
    ]
    out = list(base)
    # dense texts of the scans' own words and signs: their edges met often
    for _ in range(4000):
        out.append("".join(rng.choice(_TOKENS) for _ in range(rng.randrange(3, 30))))
    for _ in range(3000):
        t = rng.choice(base)
        k = rng.randrange(5)
        if k == 0:
            i, j = sorted(rng.randrange(len(t) + 1) for _ in range(2))
            t = t[i:j]
        elif k == 1:
            t = t + rng.choice(_ODD) + rng.choice(base)
        elif k == 2:
            t = "".join(c.swapcase() if rng.random() < 0.3 else c for c in t)
        elif k == 3:
            i = rng.randrange(len(t) + 1)
            t = t[:i] + rng.choice(_ODD) + t[i:]
        else:
            t = t.upper()
        out.append(t)
    return out


TEXTS = _texts()


def _spans(matches: object) -> list[tuple[int, int]]:
    return [m.span() for m in matches]  # type: ignore[attr-defined]


def test_folded_keeps_every_letter_a_case_ignoring_pattern_matches() -> None:
    # Where (?i) matches a character to an ASCII letter, the folded text holds that letter
    # (or there is no folded text): a word check on it never misses a match.
    any_letter = re.compile("(?i)[a-z]")
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if any_letter.fullmatch(c) is None:
            continue
        low = folded("a" + c + "b")
        if low is not None:
            letters = [a for a in string.ascii_lowercase if re.fullmatch(f"(?i){a}", c)]
            assert low[1] in letters, (hex(cp), low)


def test_folded_is_the_lower_case_position_for_position() -> None:
    for t in TEXTS:
        low = folded(t)
        if low is not None:
            assert len(low) == len(t) and low == t.lower()


@pytest.mark.parametrize(
    ("name", "rx", "starts"),
    [
        ("kv", S._KV_CREDS, lambda t, low: (i for w in S._KV_WORDS for i in S.at(low, w))),
        ("auth", C._AUTH, lambda t, low: (i for w in C._AUTH_WORDS for i in S.at(low, w))),
        ("xml-add", C._XML_ADD, lambda t, low: S.at(low, "key")),
        ("prose", C._PROSE, lambda t, low: (i for w in ("pass", "pin", "use") for i in S.at(low, w))),
        ("value", C._VALUE_KEY, lambda t, low: C._value_starts(t)),
        ("netrc", C._NETRC, lambda t, low: S.at(t, "login")),
        ("pgpass", C._PGPASS, lambda t, low: C._pgpass_starts(t)),
        ("cookie-line", C._COOKIE_LINE, lambda t, low: C._line_starts(low, "cookie:")),
        ("directives", C._DIRECTIVES, lambda t, low: C._directive_starts(t)),
        *[
            (f"command-{c.words[0]}", c.regex, c.starts)
            for c in C._COMMANDS
        ],
    ],
)  # fmt: skip
def test_a_scan_tried_at_its_words_finds_what_the_whole_scan_finds(
    name: str, rx: re.Pattern[str], starts: object
) -> None:
    for t in TEXTS:
        low = folded(t)
        if low is None:
            continue  # the finders scan such a text whole
        where = starts(t, low)  # type: ignore[operator]
        if where is None:
            continue  # a command scanned whole
        assert _spans(S.scan_at(rx, t, where)) == _spans(rx.finditer(t)), (name, t)


def test_each_word_of_a_command_holds_its_sign() -> None:
    for c in C._COMMANDS:
        assert c.sign is None or all(c.sign in w for w in c.words), c.words


def test_runs_found_in_bytes_are_the_regex_runs() -> None:
    run = re.compile(r"[A-Za-z0-9_.~+/=:@-]{16,}+")
    for t in [*TEXTS, "x" * 15, "x" * 16, "é" + "y" * 16 + "\ud800" + "z" * 40, ""]:
        assert list(S._runs(t)) == _spans(run.finditer(t)), t


def test_a_text_the_checks_pass_holds_nothing_any_finder_finds() -> None:
    passed = 0
    prose = ["We went to the lake on Sunday and it was lovely.", "How have you been?"]
    for t in [*TEXTS, *prose]:
        lower = t.lower()
        low = folded(t, lower)
        if low is None or may_shape(t, low) or may_label(t, lower) or may_place(t, low):
            continue
        passed += 1
        for find in (find_pem, find_providers, find_connection_strings, find_labelled):
            assert list(find(t)) == [], (find.__name__, t)
        assert list(find_in_context(t)) == [], t
    assert passed >= len(prose)  # the shortcut is taken where it should be


def test_commands_give_what_their_gated_whole_scans_give() -> None:
    # a command is scanned (at its starts) only when the text holds one of its words
    for t in TEXTS:
        want = [
            C._unquoted(m, group)
            for words, rx, group, _, _ in C._COMMANDS
            if any(w in t for w in words)
            for m in rx.finditer(t)
            if not C.is_placeholder(v := m.group(group).strip("'\"")) and not v.startswith("-")
        ]
        assert list(C._commands(t, folded(t))) == want, t


def test_cookies_give_what_their_gated_whole_scan_gives() -> None:
    for t in TEXTS:
        low = folded(t)
        want = list(C._cookies(t, None)) if "ookie" in t or "OOKIE" in t else []
        assert list(C._cookies(t, low)) == want, t
