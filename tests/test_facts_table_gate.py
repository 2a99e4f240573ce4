"""The settings tables' shared scan (``_prefilter.TableGate``): one scan of a spaced ASCII
sentence tells which tables may match it (each of a branch's sets has a string in it);
``_en`` and ``_en_more`` try only those, with the answers of trying every table."""

from __future__ import annotations

import re

from ctxsdk.session._facts import _settings as S
from ctxsdk.session._facts._prefilter import TableGate, spaced_branches

from ._sentences import jumbled

SAID = [
    "The request timeout is now 60 seconds.",
    "Set the request timeout to 60 seconds.",
    "Use pnpm, not npm.",
    "We switched from MySQL to Postgres.",
    "The API is not public.",
    "At most 5 connections may be open.",
    "It retries 3 times before giving up.",
    "For persistence we settled on SQLite.",
    "The server listens on port 8080.",
    "Tokens stay valid for 15 minutes.",
    "conversationId is the same as sessionId",
    "our CI workflow is in .github/workflows/ci.yml",
    "REQUEST_TIMEOUT = 30",
    "the default region: us-east-1",
    "Deploys go to staging first.",
    "The cache holds entries for 5 minutes",
    "Postgres is what backs the queue",
    "we ship our logs to Datadog",
    "the worker gives up after 4 failed attempts",
    "don't use yarn for this repo",
    "The timeout was changed from 30 to 60 seconds",
    "retries default to 3",
    "use tabs for indentation",
    "Logs are stored in S3",
    "the build uses Bazel",
    "the port should be 8080",
    "the app isn't public",
    "prefer pytest over unittest",
]


# The jumbles: SAID's words and a few more, each tried as written, lower, upper and capitalized.
_EXTRA = ("is", "are", "to", "not", ":", "=", "for")
_FORMS = (str, str.lower, str.upper, str.capitalize)


def _sentences(seed: int, n: int) -> list[str]:
    return jumbled(SAID, seed, n, extra=_EXTRA, forms=_FORMS)


def test_a_table_that_matches_is_never_ruled_out() -> None:
    gate = S._GATE
    for s in _sentences(3, 400):
        may = gate.read(s)
        for table in gate.tables:
            if table.search(s) is not None:
                assert may & gate.bit(table), (getattr(table, "pattern", table), s)


def test_the_mask_is_each_branch_sets_test() -> None:
    tables = (
        re.compile(r"^(?P<x>.+?)\s+(?:is|are)\s+(?P<y>.+)$", re.I),
        re.compile(r"^for\s+\w+|\bport\s*\d+"),
        re.compile(r"不要\s+x|don't\s+xy"),
        re.compile(r"\d+"),  # its strings unknown: it may match anything
        re.compile(r"不要"),  # no ASCII text matches it
    )
    gate = TableGate(tables)
    for s in ["it is here", "this is", "for now", "port 80", "don't xy", "don't x", ""]:
        low = s.lower()
        may = gate.read(s)
        for table in tables:
            branches = spaced_branches(table)
            want = branches is None or any(
                all(any(w in low for w in n) for n in sets) for sets in branches
            )
            assert bool(may & gate.bit(table)) is want, (table.pattern, s)


def test_a_text_not_spaced_or_ascii_rules_out_nothing() -> None:
    gate = S._GATE
    for s in ["nothing\there", "nothing\nhere", "naïve thing", "ſome thing", "x\u00a0y"]:
        assert gate.read(s) == gate.all, s
    assert gate.read("nothing here at all") != gate.all


def test_the_last_text_is_answered_again() -> None:
    gate = S._GATE
    s = "the timeout is 5 seconds"
    first = gate.read(s)
    assert gate.read(s) == first
    assert gate.read("".join(["the timeout ", "is 5 seconds"])) == first  # an equal text


def test_gated_tables_read_as_every_table_tried() -> None:
    class _Open(TableGate):
        def read(self, text: str) -> int:
            return self.all  # every table tried

    said = _sentences(11, 500)
    gated = {s: (S._en(s, "user"), S._en_more(s, "user"), S._en(s, "assistant")) for s in said}
    kept = S._GATE
    S._GATE = _Open(S._READINGS)
    try:
        for s in said:
            assert (S._en(s, "user"), S._en_more(s, "user"), S._en(s, "assistant")) == gated[s], s
    finally:
        S._GATE = kept
    assert sum(1 for got in gated.values() if got[0] or got[1]) > 20  # readings checked
