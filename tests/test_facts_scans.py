"""Scans the fact kernel makes cheaper, with the same answers as the patterns they stand for:
``DANGLING`` (a sentence ending on a word that wants more: "the API is", "such as") is
searched only near the end of a text, and the sentence splitter's stops (``_ends``) are
searched from the next character one can start at."""

from __future__ import annotations

import itertools
import random

from ctxsdk.session._facts import _cues as C
from ctxsdk.session._facts import _sentences as S

_WORDS = (
    "to be as is are the a an of with for and or like follows at in into from by that this "
    "these following e.g i.e namely such"
).split()
_OTHER = ["x", "data", "ſuch", "THE", "Following", "e.G", "I.E", "é", "_", ".", "-", "2"]
_SPACES = [" ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\x1c", "\x85", ""]


def _texts() -> list[str]:
    rng = random.Random(7)
    out = [
        "",
        "   ",
        "Please set the timeout to",
        "We moved the config into",
        "Use pnpm for the monorepo.",
        "for the following",
        "the result is as follows:\n",
        "e.g",
        "ok such  \n",
        "abouta",
        "x.the",
    ]
    out += [a + s for a, s in itertools.product(_WORDS + _OTHER, _SPACES)]
    for _ in range(20_000):
        parts = [rng.choice(_WORDS + _OTHER) for _ in range(rng.randint(0, 5))]
        text = "".join(p + rng.choice(_SPACES) for p in parts)
        out.append(text + "".join(rng.choice(_SPACES) for _ in range(rng.randint(0, 3))))
    return out


def test_dangling_answers_as_the_whole_search() -> None:
    whole = C.DANGLING._pattern  # type: ignore[attr-defined]
    found = 0
    for text in _texts():
        a, b = whole.search(text), C.DANGLING.search(text)
        assert (a is None) == (b is None), text
        if a is not None and b is not None:
            assert a.span() == b.span() and a.group() == b.group(), text
            found += 1
    assert found > 1000  # the texts hold many dangling ends, not only clean ones


def test_dangling_with_a_position_is_the_pattern_s_own() -> None:
    text = "set it to the"
    assert C.DANGLING.search(text, 0, 5) is None  # "set i": nothing dangles
    got = C.DANGLING.search(text, 0)
    assert got is not None and got.group() == "the"
    assert C.DANGLING.pattern == C.DANGLING._pattern.pattern  # type: ignore[attr-defined]


_STOPS = [*"ab Z .!?;。！？；…-–—\t\n\u00a0\u2003\"')]*_`”’」』）"]
_STOPS += ["We ", "The ", "Let's ", "0x1.", "e.g. ", " - ", " — ", "... ", "a.We", "run`a.b`"]


def test_sentence_stops_are_finditer_s_own() -> None:
    rng = random.Random(11)
    texts = [
        "I went to the park. It rained!  Then we left - Anna stayed.",
        "bump the timeout to 60 s. The API is not public",
        "with the input 0xffffffff.We will continue; done…好的。然后",
        "  — Leading dash\n\nnext — Para",
    ]
    texts += ["".join(rng.choice(_STOPS) for _ in range(rng.randint(0, 25))) for _ in range(20_000)]
    stops = 0
    for text in texts:
        for start, end in ((0, len(text)), (len(text) // 3, len(text)), (0, len(text) // 2)):
            old = [(m.span(), m.group()) for m in S._END.finditer(text, start, end)]
            assert [(m.span(), m.group()) for m in S._ends(text, start, end)] == old, text
            stops += len(old)
    assert stops > 10_000
