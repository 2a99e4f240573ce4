"""A file slot's line says what the sessions did to the file (``ctxsdk.merge._work``), not
its path as key and value; the block's count stays the count of its text, and the tables
keep the path as the slot's value."""

from __future__ import annotations

from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.merge._beliefs import Slot, Trust, build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._pack import personal
from ctxsdk.merge._render import render_slot
from ctxsdk.merge._work import Work, only_read, work_of
from ctxsdk.session import get_tokenizer
from ctxsdk.testing import LogBuilder

PATH = "src/app/retry_policy.py"


def fact(path: str, text: str, source: str = "sess-a", **kw: Any) -> Claim:
    """A claim as ``claims_of_facts`` makes of a kernel file fact."""
    fields: dict[str, Any] = {
        "key": f"file {path}",
        "value": path.lower(),
        "evidence": 3,
        "text": text,
        "source": source,
        "seq": 4,
        "kind": "fact",
        "origin": "tool",
        "trust": 1,
        "shown": path,
        "project": True,
    }
    fields.update(kw)
    return Claim(**fields)


def one(*claims: Claim) -> Slot:
    (s,) = build_slots(claims)
    return s


@pytest.mark.parametrize(
    ("text", "work"),
    [
        ("edited a.py (3 changes; last: added the retry)", Work("edited", 3, "added the retry")),
        ("created a.py: added `def f(x):`", Work("created", 1, "added `def f(x):`")),
        ("created a.py (2 changes)", Work("created", 2, None)),
        ("edited a.py", Work("edited", 1, None)),
        ("read a.py (5 times)", Work("read", 5, None)),
        # a line the kernel cut at its limit lost its closing parenthesis
        ("edited a.py (4 changes; last: `f(x)` → `g(…", Work("edited", 4, "`f(x)` → `g(…")),
        # a told change that holds parentheses and colons of its own
        ("edited my dir/a.py: `f(x): y` → `g(x)`", Work("edited", 1, "`f(x): y` → `g(x)`")),
    ],
)
def test_the_kernel_line_is_read_as_work(text: str, work: Work) -> None:
    assert work_of(fact("a.py", text)) == work


def test_a_line_that_only_looks_like_work_is_none() -> None:
    assert work_of(fact("a.py", "read -r line")) is None  # a shell call line, no count
    assert work_of(fact("a.py", "edited a.py (2 changes)", origin="assistant")) is None


def test_a_file_line_says_what_was_done_and_the_path_once() -> None:
    s = one(fact(PATH, f"edited {PATH} (3 changes; last: added the retry)"))
    line = render_slot(s, Trust.EXTERNAL)
    assert line == (
        f"- `file {PATH}` — edited (3 changes; last: added the retry) (evidence 3; from sess-a)"
    )
    assert line.count(PATH) == 1 and "**" not in line
    created = render_slot(one(fact(PATH, f"created {PATH}")), Trust.EXTERNAL)
    assert created == f"- `file {PATH}` — created (evidence 3; from sess-a)"
    read = render_slot(one(fact(PATH, f"read {PATH} (5 times)")), Trust.EXTERNAL)
    assert read == f"- `file {PATH}` — read 5 times (evidence 3; from sess-a)"


def test_the_sessions_are_counted_under_what_each_did() -> None:
    s = one(
        fact(PATH, f"edited {PATH} (2 changes; last: added A)", "s1"),
        fact(PATH, f"edited {PATH}: added B", "s2"),
        fact(PATH, f"read {PATH} (4 times)", "s3"),
        fact(PATH, f"{PATH}", "s4", origin="tool", project=False),  # a call naming it
        fact(PATH, f"The hang comes from `{PATH}`: fetch never gives up.", "s5", evidence=2),
    )
    line = render_slot(s, Trust.EXTERNAL)
    assert line == (
        f"- `file {PATH}` — edited in 2 sessions (3 changes; last in each: added A | added B);"
        f' read 4 times; named in 2 more sessions: "The hang comes from `{PATH}`: fetch never'
        ' gives up." (evidence 3; 5 sources)'
    )


def test_a_naming_line_that_holds_only_names_is_not_quoted() -> None:
    s = one(
        fact(PATH, f"/home/user/repo/{PATH}", "s1", project=False),
        fact(PATH, f"**File:** `{PATH}` (NEW)", "s2", origin="assistant", project=False),
    )
    assert render_slot(s, Trust.EXTERNAL) == (
        f"- `file {PATH}` — named in 2 sessions (evidence 3; 2 sources)"
    )


def test_a_slot_keyed_otherwise_keeps_the_key_value_line() -> None:
    s = one(fact(PATH, "The file config is yaml.", key="file config", value="yaml", shown="yaml"))
    assert render_slot(s, Trust.EXTERNAL).startswith("- `file config` = **yaml** — ")


def test_a_file_its_sessions_only_read_is_worth_half() -> None:
    read = one(fact(PATH, f"read {PATH} (5 times)"))
    edited = one(fact(PATH, f"edited {PATH}"))
    assert only_read(read) and not only_read(edited)
    assert personal(read, Trust.EXTERNAL) == pytest.approx(personal(edited, Trust.EXTERNAL) / 2)
    # a session that only named it shares the file: that is no read alone
    shared = one(fact(PATH, f"read {PATH} (5 times)"), fact(PATH, PATH, "s2", project=False))
    assert not only_read(shared)


# -- through Merge, on sessions the kernel reads -------------------------------------------


def _editor(path: str = PATH, named: str = PATH) -> cx.Session:
    b = LogBuilder(session_id="sess-edit", runtime_context=None)
    b.turn("Make the client retry on timeouts.").assistant(
        tool_calls=[("edit", {"file_path": path, "old_string": "a(", "new_string": "b("})]
    )
    b.tool_results(["ok"]).next_step().assistant(
        tool_calls=[
            ("edit", {"file_path": path, "old_string": "get(url)", "new_string": "retry(url)"})
        ]
    )
    b.tool_results(["ok"]).next_step().assistant(text=f"Done: `{named}` now retries.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _reader(path: str = PATH) -> cx.Session:
    b = LogBuilder(session_id="sess-read", runtime_context=None)
    b.turn("Why does the client hang?").assistant(tool_calls=[("read", {"file_path": path})])
    b.tool_results(["def fetch(url): ..."]).next_step().assistant(
        text=f"The hang comes from `{path}`: fetch never gives up on a slow server."
    ).end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_a_shared_file_line_says_one_session_edited_it_and_another_named_it() -> None:
    r = cx.Merge([_editor(), _reader()]).run()
    s = r.slot(f"file {PATH}")
    line = render_slot(s, r.trusts[s.key])
    assert line in r.block.text.splitlines()
    assert line.startswith(
        f"- `file {PATH}` — edited (2 changes; last: `get(url)` → `retry(url)`);"
        ' named in 1 more session: "The hang comes from'
    )
    # the block is charged what it shows
    tok = get_tokenizer("cl100k_base")
    assert r.block.tokens == tok.count(r.block.text) <= r.budget
    # the tables keep the path as the slot's value
    assert s.presented == (PATH,)
    row = r.to_polars().filter(key=s.key).row(0, named=True)
    assert row["value"] == PATH and row["in_block"]


def test_a_session_that_edited_the_shared_file_by_a_shorter_path_says_so() -> None:
    # the editor's kernel keys the file by the path its calls used (``js/app.js``); the
    # shared slot is keyed by the longer path both sessions name
    r = cx.Merge([_editor("js/app.js", "assets/js/app.js"), _reader("assets/js/app.js")]).run()
    shared = r.slot("file assets/js/app.js")
    line = render_slot(shared, r.trusts[shared.key])
    assert line.startswith("- `file assets/js/app.js` — edited (2 changes; last: ")
    assert line in r.block.text.splitlines()
    # the editor's own slot of the file is a repeat of it, left out with its reason
    why = dict(r.block.dropped)
    assert why.get("file js/app.js", "").startswith("repeats `file assets/js/app.js`")
