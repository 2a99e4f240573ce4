"""The literal test by branch (``prefiltered(..., by_branch=True)``): a text that holds one
of an alternation's words is searched only when, for some branch, it holds one string of
each set that branch needs. It answers as the bare pattern does, and skips sentences the
plain test passes ("no" inside "know")."""

from __future__ import annotations

import random
import re

from ctxsdk.session._facts import _cues as C
from ctxsdk.session._facts._prefilter import Prefiltered, branch_factors, prefiltered


def _same(table: re.Pattern[str], bare: re.Pattern[str], texts: list[str]) -> None:
    for s in texts:
        for how in ("search", "match", "fullmatch"):
            got, want = getattr(table, how)(s), getattr(bare, how)(s)
            assert (got and got.span()) == (want and want.span()), (bare.pattern, how, s)


def test_each_branch_needs_every_set_it_holds() -> None:
    got = branch_factors(re.compile(r"(?i)\bnot what i (?:asked|meant)\b|^(?:no|nope)\b\s*,"))
    assert got is not None
    assert [sorted(map(sorted, sets)) for sets in got] == [
        [["asked", "meant"], ["not what i "]],
        [[","], ["no"]],  # "nope" holds "no"
    ]
    assert branch_factors(re.compile(r"abc|\d+")) is None  # a branch needing nothing
    assert branch_factors(re.compile(r"abc")) is None  # no alternation
    # a branch only a non-ASCII letter can match is left out for ASCII text
    assert branch_factors(re.compile(r"不要|don't")) == ((frozenset(["don't"]),),)


def test_skips_what_the_plain_test_passes_with_the_same_answers() -> None:
    table = C.CORRECTION
    assert isinstance(table, Prefiltered) and table._branches is not None
    bare = table._pattern
    plain = prefiltered(bare)
    assert isinstance(plain, Prefiltered)
    said = "the build is green and it is fast"  # "is", but no branch of its own whole
    assert not plain._absent(said)
    assert table._absent(said)
    assert not table._absent("No, that's not what I meant.")
    _same(table, bare, [said, "No, that's not what I meant.", "that is not acceptable"])


def test_by_branch_answers_as_the_bare_pattern() -> None:
    sources = [
        r"(?i)^(?:no|nope|wrong)\b\s*[,.!]|\bthat'?s (?:not right|wrong)\b|\bi mean\b",
        r"(?i)\b(?:is|are)\s*(?:not|n'?t) (?:ok|valid)\b|\bbad idea\b",
        r"(?i)k(?:ey)?s? (?:here|there)|\bs(?:ecret)?\b value",  # the Kelvin sign, long s
        r"(?-i:TODO) later|(?i:fix ?me) now|不要再",
        r"(?:ab)*c d|d{2,} e|x?y z",
    ]
    words = ["no", "No,", "nope.", "wrong!", "that's", "not", "right", "i", "mean", "is",
             "are", "isn't", "ok", "valid", "bad", "idea", "key", "\u212aey", "here", "s",
             "\u017fecret", "value", "TODO", "todo", "later", "fixme", "FIX", "me", "now",
             "不要再", "ab", "c", "d", "dd", "e", "y", "z", "know"]  # fmt: skip
    rng = random.Random(7)
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for _ in range(1500)]
    texts += [t.upper() for t in texts[:300]] + [t.capitalize() for t in texts[300:600]]
    for source in sources:
        bare = re.compile(source)
        table = prefiltered(bare, by_branch=True)
        assert isinstance(table, Prefiltered)
        _same(table, bare, texts)
