"""The public surface: exported names, lazy imports, the error tree."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk._public import FORMER_TOP_LEVEL, KERNELS, NAMESPACES

# The snapshot of what every public namespace exports.
SNAPSHOT = Path(__file__).parent / "snapshots" / "public_api.json"
# ... and of what every kernel (a package's second face, for engines and the layers above).
KERNEL_SNAPSHOT = Path(__file__).parent / "snapshots" / "kernel_api.json"


def _exports(namespaces: tuple[str, ...] = NAMESPACES) -> dict[str, list[str]]:
    out = {}
    for name in namespaces:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        out[name] = sorted(module.__all__)
    return out


def test_exported_names_match_the_snapshot() -> None:
    """A change to any namespace's ``__all__`` is deliberate: regenerate the snapshot with
    ``CTXSDK_UPDATE_SNAPSHOTS=1 pytest tests/test_public_api.py`` and review its diff."""
    exports = _exports()
    if os.environ.get("CTXSDK_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(exports, indent=2) + "\n", encoding="utf-8")
    assert exports == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_kernel_names_match_their_snapshot() -> None:
    exports = _exports(KERNELS)
    if os.environ.get("CTXSDK_UPDATE_SNAPSHOTS"):
        KERNEL_SNAPSHOT.write_text(json.dumps(exports, indent=2) + "\n", encoding="utf-8")
    assert exports == json.loads(KERNEL_SNAPSHOT.read_text(encoding="utf-8"))


def test_the_user_faces_stay_small() -> None:
    # What a user needs: about 40 names for the base, about 15 for each engine, 250 in all.
    exports = _exports()
    assert sum(len(names) for names in exports.values()) <= 250
    assert len(exports["ctxsdk.session"]) <= 50
    for engine in ("ctxsdk.assemble", "ctxsdk.fold", "ctxsdk.merge", "ctxsdk.memory"):
        assert len(exports[engine]) <= 20, engine


def test_no_name_is_in_both_faces() -> None:
    for kernel in KERNELS:
        face = kernel.rsplit(".", 1)[0]
        both = set(importlib.import_module(kernel).__all__) & set(
            importlib.import_module(face).__all__
        )
        assert both == set(), kernel


def test_a_name_cut_from_a_face_still_resolves_with_a_warning() -> None:
    # Users' code that imported a name from its old place keeps working for one release.
    import ctxsdk.merge
    import ctxsdk.merge.kernel
    import ctxsdk.session
    import ctxsdk.session.kernel

    with pytest.warns(DeprecationWarning, match="import it from ctxsdk.session.kernel"):
        gist = ctxsdk.session.gist
    assert gist is ctxsdk.session.kernel.gist
    with pytest.warns(DeprecationWarning, match="internal now"):
        join = ctxsdk.merge.join
    assert callable(join)
    with pytest.warns(DeprecationWarning, match="import it from ctxsdk.session"):
        header = cx.SessionHeader
    assert header is ctxsdk.session.SessionHeader
    with pytest.raises(AttributeError):
        _ = ctxsdk.merge.no_such_name


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_exported_name_resolves(namespace: str) -> None:
    module = importlib.import_module(namespace)
    for name in module.__all__:
        assert getattr(module, name) is not None, (namespace, name)
    assert set(dir(module)) >= set(module.__all__)


def test_the_top_level_keeps_its_first_names() -> None:
    # The names the project exported before the namespaces grew are all still there: in
    # ``__all__``, or cut from it and still reachable (with a warning) until the next release.
    first = {"LLM", "ToolRegistry", "run_agent", "Event", "Message", "Session", "SessionHeader"}
    first |= {"Surface", "SurfaceNode", "TokenUsage", "Turn", "Workspace", "__version__", "errors"}
    assert first <= set(cx.__all__) | set(FORMER_TOP_LEVEL)


def test_top_level_names_are_the_table_in_public() -> None:
    from ctxsdk._public import TOP_LEVEL

    assert set(cx.__all__) == {*TOP_LEVEL, "__version__", "errors"}
    for name, namespace in TOP_LEVEL.items():
        if namespace != "ctxsdk":  # each re-export is the namespace's own object
            assert getattr(cx, name) is getattr(importlib.import_module(namespace), name)


@pytest.mark.parametrize("namespace", [n for n in NAMESPACES if n != "ctxsdk.errors"])
def test_public_names_show_their_public_module(namespace: str) -> None:
    """Reprs, tracebacks and the API docs name ``ctxsdk.Session``, never a private module."""
    module = importlib.import_module(namespace)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            shown = obj.__module__
            if not shown.startswith("ctxsdk"):
                continue  # re-exported from a dependency
            assert "._" not in shown + ".", (namespace, name, shown)
            assert shown in ("ctxsdk", namespace) or namespace == "ctxsdk", (name, shown)


def test_import_is_light() -> None:
    code = (
        "import sys, ctxsdk\n"
        "heavy = {'polars', 'tiktoken', 'tokenizers', 'anywidget', 'networkx', 'httpx', 'pydantic'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_error_tree() -> None:
    assert issubclass(errors.SessionFormatError, errors.CtxError)
    assert issubclass(errors.SessionFormatError, ValueError)
    assert issubclass(errors.UnsupportedVersion, errors.SessionFormatError)
    assert issubclass(errors.CorruptLog, errors.SessionFormatError)
    assert issubclass(errors.NotFound, KeyError)
    assert issubclass(errors.LockHeld, BlockingIOError)
    assert issubclass(errors.WriteError, OSError)
    assert issubclass(errors.SurfaceError, ValueError)
    err = errors.SessionFormatError("bad", path="/x/s.jsonl", line=3, frame=2, seq=1)
    assert str(err) == "/x/s.jsonl, zstd frame 2, line 3, seq 1: bad"
    assert str(errors.NotFound("no such session")) == "no such session"
    for name in errors.__all__:
        assert getattr(errors, name).__module__ == "ctxsdk.errors"


def _made(cls: type[BaseException], message: str) -> BaseException:
    """An instance of an error class with ``message``, through whichever constructor it has."""
    for kwargs in ({}, {"problem": "unreadable"}, {"kind": "provider"}):
        try:
            return cls(message, **kwargs)
        except TypeError:
            continue
    raise AssertionError(f"cannot make {cls.__name__}")


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in errors.__all__
        if isinstance(getattr(errors, n), type) and issubclass(getattr(errors, n), errors.CtxError)
    ],
)
def test_every_error_naming_an_impossible_path_prints(name: str) -> None:
    # A path with a lone surrogate (no file can have it) is named in the message; the message
    # must still encode as UTF-8, so print() to a notebook or a terminal does not fail on it.
    err = _made(getattr(errors, name), "no such file: /tmp/log-\ud800.jsonl")
    text = str(err)
    text.encode("utf-8")  # raises UnicodeEncodeError without the escape
    assert "log-\\ud800.jsonl" in text
    assert str(_made(getattr(errors, name), "plain words")).endswith("plain words")


def test_a_session_at_an_impossible_path_is_not_found_and_printable(tmp_path: Path) -> None:
    with pytest.raises(errors.NotFound) as caught:
        cx.Session.open(tmp_path / "log-\ud800.jsonl")
    out = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.stdin.read())"],
        input=str(caught.value),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    ).stdout
    assert "\\ud800" in out
