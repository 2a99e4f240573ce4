"""Bad input to a public call raises a class of the error tree, which says what and where; never
a bare ValueError, KeyError, TypeError or OSError from deep inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.bench import run_benchmark
from ctxsdk.samples import sample
from ctxsdk.session.kernel import widget
from ctxsdk.testing import LogBuilder


@pytest.fixture(scope="module")
def long() -> cx.Session:
    return cx.Session.open(sample("long-refactor"))


CASES: dict[str, tuple[Callable[[cx.Session], Any], type[errors.CtxError], type[Exception]]] = {
    "a missing file": (
        lambda s: cx.Session.open("/nonexistent/x.jsonl"),
        errors.NotFound,
        KeyError,
    ),
    "a seq that is not an int": (lambda s: s.event("x"), errors.InvalidArgument, ValueError),
    "a seq past the end": (lambda s: s.event(10**9), errors.NotFound, KeyError),
    "a message seq past the end": (lambda s: s.message_at(10**9), errors.NotFound, KeyError),
    "an unknown tokenizer": (lambda s: s.tokens("gpt2"), errors.UnknownName, KeyError),
    "an unknown wire format": (lambda s: s.wire("claude"), errors.UnknownName, ValueError),  # type: ignore[arg-type]
    "a replace outside the surface": (
        lambda s: s.replace(10**9, 10**9 + 1, "x"),
        errors.SurfaceError,
        ValueError,
    ),
    "an event without a type": (lambda s: s.append([{}]), errors.SurfaceError, ValueError),
    "an unknown row": (lambda s: cx.Assembly(s).set("zzz", "key"), errors.NotFound, KeyError),
    "an unknown mode": (
        lambda s: cx.Assembly(s).set("t1", "half"),  # type: ignore[arg-type]
        errors.InvalidArgument,
        ValueError,
    ),
    "a negative budget": (lambda s: cx.Assembly(s).fit(-5), errors.InvalidArgument, ValueError),
    "a budget that is not a number": (
        lambda s: cx.Assembly(s).fit("x"),  # type: ignore[arg-type]
        errors.InvalidArgument,
        ValueError,
    ),
    "an unknown sample": (lambda s: sample("nope"), errors.UnknownName, KeyError),
    "an unknown benchmark": (lambda s: run_benchmark("nope"), errors.UnknownName, KeyError),
    "an unknown widget": (lambda s: widget("nope", s), errors.UnknownName, KeyError),
    "a builder version": (lambda s: LogBuilder(version=7), errors.InvalidArgument, ValueError),
    "a turn_of that is not an int": (
        lambda s: s.index.turn_of("x"),  # type: ignore[arg-type]
        errors.InvalidArgument,
        ValueError,
    ),
    "appending to a session with no file": (
        lambda s: (
            cx.Session.from_events(s.header.to_json_dict(), s.raw_events)
            .replace(s.surface()[1].seq, s.surface()[1].seq, "x")
            .append_to_log()
        ),
        errors.NotReadFromFile,
        ValueError,
    ),
    "a save to an unknown version": (
        lambda s: s.save(Path("/tmp/never-written"), version=9),
        errors.UnsupportedVersion,
        ValueError,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_raises_the_error_tree(long: cx.Session, case: str) -> None:
    call, kind, builtin = CASES[case]
    with pytest.raises(kind) as info:
        call(long)
    assert isinstance(info.value, errors.CtxError) and isinstance(info.value, builtin)
    assert str(info.value)  # a message that says what was wrong


def test_a_log_below_v3_is_refused_by_name(tmp_path: Path) -> None:
    b = LogBuilder(version=2, cwd="/home/dev/app")
    b.turn("hi").assistant(text="hello").end_turn()
    old = cx.Session.open(b.write(b.canonical_path(tmp_path)))
    node = old.surface()[0].seq
    with pytest.raises(errors.LogTooOld, match="v2"):
        old.replace(node, node, {"role": "system", "content": []})
