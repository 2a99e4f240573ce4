"""The settings table's one scan (``_settings._reads_nothing``): a cleaned sentence that is
ASCII, spaced with single " " characters, and holds none of the strings its tables need
(``spaced_branches``: ``\\s+is\\s+`` needs " is ") is read by no table, so it is answered
at once; every other sentence is read as before, with the same answer."""

from __future__ import annotations

import inspect
import json
import re
import warnings
from pathlib import Path

import pytest

from ctxsdk.session._facts import _formats as F
from ctxsdk.session._facts import _settings as S
from ctxsdk.session._facts._prefilter import literal_scan, spaced_branches

from ._sentences import jumbled

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "agent-sessions"

SAID = [
    "The request timeout is now 60 seconds.",
    "Set the request timeout to 60 seconds.",
    "Use pnpm, not npm.",
    "We switched from MySQL to Postgres.",
    "Sessions are stored as JSONL files.",
    "The API is not public.",
    "At most 5 connections may be open.",
    "It retries 3 times before giving up.",
    "For persistence we settled on SQLite.",
    "The server listens on port 8080.",
    "Tokens stay valid for 15 minutes.",
    "Step 3: set the timeout to 30",
    "Remember this fact: the project codeword is MARMALADE",
    "conversationId is the same as sessionId",
    "our CI workflow is in .github/workflows/ci.yml",
    "REQUEST_TIMEOUT = 30",
    "I love hiking with my dog on weekends.",
    "That sounds like a great plan!",
    "Thanks, see you soon.",
    "We could go there.",
    "this thing",
    "Deploys go to staging first.",
    "The cache holds entries for 5 minutes",
]


# The jumbles: SAID's words and a few more, each tried as written, lower, capitalized and with
# its spaces doubled.
_EXTRA = ("is", "are", "to", "not", ":", "=")
_FORMS = (str, str.lower, str.capitalize, lambda s: s.replace(" ", "  "))


def _sentences(seed: int, n: int) -> list[str]:
    return jumbled(SAID, seed, n, extra=_EXTRA, forms=_FORMS)


def _readers(fn: object) -> set[str]:
    """The tables a function of the module tries on a sentence, by name."""
    src = inspect.getsource(fn)  # type: ignore[arg-type]
    found = set(re.findall(r"\b(_[A-Z][A-Z_0-9]+)\.(?:match|search)\(", src))
    found |= set(re.findall(r"for \w+ in \(?([^:)]+)\)?:", src))
    return {n.strip() for part in found for n in part.split(",") if n.strip().startswith("_")}


def test_every_table_a_reading_starts_with_is_scanned_for() -> None:
    # a table added to the English readings without its strings would drop its sentences
    held = {id(getattr(t, "_pattern", t)) for t in S._READINGS}
    names = _readers(S._en) | _readers(S._en_more)
    assert {"_P_IS", "_P_LIMIT", "_P_ATTEMPTS", "_P_CLEFT", "_P_WE_SEND"} <= names
    for name in names:
        value = getattr(S, name)
        for table in value if isinstance(value, tuple) else (value,):
            assert id(getattr(table, "_pattern", table)) in held, name
    for name in _readers(F.format_statement):
        assert id(getattr(F, name)) in held, name
    assert S._TEST is not None  # every table's strings are known


def test_spaced_strings_join_spaces_and_literal_groups() -> None:
    got = spaced_branches(re.compile(r"^(?P<x>.+?)\s+(?:is|are)\s+(?P<y>.+)$", re.I))
    assert got == ((frozenset([" is ", " are "]),),)
    got = spaced_branches(re.compile(r"^for\s+\w+|\bport\s*\d+"))
    assert got == ((frozenset(["for "]),), (frozenset(["port"]),))
    assert spaced_branches(re.compile(r"\d+|abc")) is None  # a branch needing nothing
    # a branch only non-ASCII text matches is left out; every set of a branch is kept
    got = spaced_branches(re.compile(r"不要\s+x|don't\s+xy"))
    assert got == ((frozenset(["don't "]), frozenset([" xy"])),)


def test_a_match_holds_a_string_of_each_set_of_some_branch() -> None:
    said = _sentences(5, 300)
    tables = [getattr(t, "_pattern", t) for t in S._READINGS]
    for table in tables:
        branches = spaced_branches(table)
        assert branches is not None
        for s in said:
            s = " ".join(s.split())  # spaced: the only whitespace is " "
            if table.search(s) is None:
                continue
            low = s.lower()
            assert any(all(any(w in low for w in n) for n in sets) for sets in branches), (
                table.pattern,
                s,
            )


def test_literal_scan_finds_any_of_its_strings() -> None:
    scan = literal_scan({"go", "good", " is ", "to ", "tomato"})
    for text, found in [
        ("a good day", True),
        ("it is here", True),
        ("this", False),
        ("go", True),
        ("tomat", False),
        ("to be", True),
        ("", False),
    ]:
        assert (scan(text) is not None) is found, text


def _same(said: list[tuple[str, str]]) -> int:
    skipped = 0
    for sentence, role in said:
        cleaned = S._clean(S._LIST_MARK.sub("", sentence.strip()))
        if cleaned is not None and S._reads_nothing(cleaned):
            skipped += 1
            S._TEST, kept = None, S._TEST  # the full table, untested
            try:
                assert S._parse_one(sentence, role) == [], sentence
            finally:
                S._TEST = kept
    return skipped


def test_a_skipped_sentence_has_no_setting() -> None:
    said = [(s, role) for s in _sentences(7, 400) for role in ("user", "assistant")]
    assert _same(said) > 100  # the scan answers many of them


def test_kept_sentences_are_read() -> None:
    for s in SAID[:16]:
        cleaned = S._clean(S._LIST_MARK.sub("", s.strip()))
        assert cleaned is not None and not S._reads_nothing(cleaned), s
    assert S.parse_setting("Step 3: set the timeout to 30")  # a label's statement
    assert S.parse_setting("Remember this fact: the project codeword is MARMALADE")
    assert S._reads_nothing("That sounds like a great plan")
    assert not S._reads_nothing("That sounds\tlike a great plan")  # a tab: no test


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared/data/agent-sessions is absent")
def test_real_sessions_sentences_skipped_have_no_setting() -> None:
    from ctxsdk import Session
    from ctxsdk.errors import CtxError
    from ctxsdk.session import read_facts

    said: list[tuple[str, str]] = []
    real = S._parse_one

    def spy(sentence: str, role: str) -> list[S.Setting]:
        said.append((sentence, role))
        return real(sentence, role)

    S._parse_one = spy  # type: ignore[assignment]
    try:
        for entry in json.loads((CORPUS / "manifest.json").read_text())[:60]:
            path = CORPUS / entry["folder"] / entry["name"]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a fixture's stripped seqs, a torn line
                    session = Session.open_any(path)
            except CtxError:
                continue  # a README or a scripted prompt: no session
            read_facts(session.raw_events, session=session.id, harness=True)
    finally:
        S._parse_one = real  # type: ignore[assignment]
    assert _same(said) > 100
