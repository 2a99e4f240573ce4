"""The fact kernel's cue tables behind a literal test (``_prefilter``) answer as the bare
patterns do: on the kernel's own tables over sentences that hold their words and ones that
do not, and on patterns whose literals are optional, case-folded or not ASCII."""

from __future__ import annotations

import importlib
import pkgutil
import random
import re

import ctxsdk.session._facts as facts_pkg
from ctxsdk.session._facts._prefilter import Prefiltered, factors, prefiltered

SAID = [
    "Don't push to main.",
    "Always run the tests before you commit.",
    "We decided to use SQLite instead of Postgres because it is one file.",
    "I prefer tabs over spaces.",
    "The issue is that several processes can run at once.",
    "There is existing logic for scanning history.",
    "No, that's not what I meant.",
    "The default port is 8080.",
    "use pnpm rather than npm",
    "Tests pass now: 16 passed.",
    "Next steps: add a test.",
    "thanks!",
    "以后都用 pnpm",
    "нет, не так",
    "ſhould we KEEP it?",
    "The \u212aelvin sign and the long \u017f are folded onto ASCII letters.",
]


def _wrapped() -> list[tuple[str, Prefiltered]]:
    out = []
    for info in pkgutil.iter_modules(facts_pkg.__path__):
        mod = importlib.import_module(f"ctxsdk.session._facts.{info.name}")
        for name, value in vars(mod).items():
            if isinstance(value, Prefiltered):
                out.append((f"{info.name}.{name}", value))
    return out


def _sentences(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    words = [w for s in SAID for w in s.split()] + ["must", "never", "because", "instead", "x"]
    out = list(SAID)
    for _ in range(n):
        k = rng.randint(1, 12)
        s = " ".join(rng.choice(words) for _ in range(k))
        out += [s, s.upper(), s.capitalize()]
    return out


def test_the_kernels_tables_answer_as_the_bare_patterns() -> None:
    tables = _wrapped()
    assert len(tables) >= 20  # the cue tables are behind the test
    said = _sentences(3, 400)
    skipped = 0
    for name, table in tables:
        bare = table._pattern
        for s in said:
            for how in ("search", "match", "fullmatch"):
                got, want = getattr(table, how)(s), getattr(bare, how)(s)
                assert (got and got.span()) == (want and want.span()), (name, how, s)
            skipped += table._absent(s)
    assert skipped > 0  # the test answered some sentences without the search


def test_optional_folded_and_non_ascii_literals() -> None:
    cases = {
        r"\b(?:colou?r|hue)s?\b": ["Colors", "the HUE", "col", "colr"],
        r"(?i)k": ["\u212a", "K", "x"],  # the Kelvin sign matches k: never skipped
        r"(?i)s\b": ["\u017f", "is", "x"],
        r"不要|别再": ["不要这样", "dont", "别再"],
        r"(?:ab)*c|d{2,}": ["c", "dd", "d", "abab"],
        r"(?-i:TODO)|(?i:fixme)": ["todo", "TODO", "FixMe", "nothing"],
    }
    for source, texts in cases.items():
        bare = re.compile(source)
        wrapped = prefiltered(bare)
        for t in texts:
            assert (wrapped.search(t) is None) == (bare.search(t) is None), (source, t)
    assert factors(re.compile(r"(?:ab)*c|d{2,}")) == frozenset({"c", "d"})
    assert factors(re.compile(r"不要|别再")) == frozenset()  # no ASCII text matches
    assert factors(re.compile(r"\w+")) is None
