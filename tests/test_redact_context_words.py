"""The context scans skip a text without their words only when the text is ASCII: a
non-ASCII letter can fold onto an ASCII one ("ſ" matches "s" ignoring case), so such a text
is still scanned, and each scan's words are matched in any case."""

from __future__ import annotations

import pytest

from ctxsdk.session._secret_contexts import find_in_context

CASES = [
    ("the office wifi password is Xq7#kLm9qZ2w", "Xq7#kLm9qZ2w"),
    ("the office wifi paſsword is Xq7#kLm9qZ2w", "Xq7#kLm9qZ2w"),  # ſ folds onto s
    ("THE OFFICE WIFI PASSWORD IS Xq7#kLm9qZ2w", "Xq7#kLm9qZ2w"),
    ("use Zq8!mP3xLwQ as the admin password", "Zq8!mP3xLwQ"),
    ("use Zq8!mP3xLwQ as the admin tokEn", "Zq8!mP3xLwQ"),
    ("uſe Zq8!mP3xLwQ as the admin paſsword", "Zq8!mP3xLwQ"),
    (
        'curl -H "Authorization: TOKEN ghx7f8a9b0c1d2e3f4a5b6c7d8e9f0a"',
        "ghx7f8a9b0c1d2e3f4a5b6c7d8e9f0a",
    ),
    ('<add key="ApiSecret" VALUE="q8Zr!4mXpL2vNw"/>', "q8Zr!4mXpL2vNw"),
    ('<add key="ApiSecret" value="q8Zr!4mXpL2vNw"/> é', "q8Zr!4mXpL2vNw"),
    ("<password>q8Zr!4mXpL2vNw</password>", "q8Zr!4mXpL2vNw"),
]


@pytest.mark.parametrize(("text", "secret"), CASES)
def test_found_in_any_case_and_past_non_ascii_folding(text: str, secret: str) -> None:
    spans = list(find_in_context(text))
    assert {text[s:e] for s, e, _ in spans} == {secret}  # a value two scans find: twice


@pytest.mark.parametrize(
    "text",
    [
        "the build is green and the tests were run twice",
        "use pnpm as the package manager",
        "<b>bold</b> and a value of 3",
        "the pin is 1234",  # a value must read as a credential
    ],
)
def test_nothing_found_without_a_credential(text: str) -> None:
    assert list(find_in_context(text)) == []
