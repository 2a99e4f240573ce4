"""The widgets' Python side: the build-free bundle, the base class (strict keywords, repr,
request dispatch) and every trait and request handler of ContextTree, on the real samples.

The front end is tested in a real browser in ``tests/ui``; here the requests go through
``dispatch``, exactly what a custom message from the front end runs.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.assemble import DraftStore
from ctxsdk.errors import DataMissing, InvalidArgument
from ctxsdk.samples import SAMPLES_HOME, sample
from ctxsdk.session.kernel import COMPOSITION_PARTS
from ctxsdk.testing import LogBuilder
from ctxsdk.widgets import ContextTree
from ctxsdk.widgets._base import BaseWidget, handler
from ctxsdk.widgets._bundle import bundle, bundle_css, static_dir
from ctxsdk.widgets._composition import composition
from ctxsdk.widgets._context_tree import FAILED, FIXED, REGION, SHADOWED, SUBAGENT

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = (
    "id",
    "parent",
    "end",
    "depth",
    "kind",
    "label",
    "gist",
    "seq",
    "tokens",
    "flags",
    "tool",
)


def _copy(tmp_path: Path, name: str) -> cx.Session:
    """A writable copy of a sample (the samples themselves are read-only)."""
    return cx.Session.open(cx.Session.open(sample(name)).save(tmp_path / name))


def _ask(w: BaseWidget, type: str, **args: Any) -> Any:
    reply = w.dispatch({"id": "t1", "type": type, **args})
    assert reply is not None and reply["id"] == "t1"
    assert reply["ok"], reply
    return reply["result"]


def _error(w: BaseWidget, type: str, **args: Any) -> dict[str, str]:
    reply = w.dispatch({"id": "t2", "type": type, **args})
    assert reply is not None and reply["ok"] is False, reply
    assert set(reply) == {"id", "ok", "error"}
    return dict(reply["error"])


@pytest.fixture(scope="module")
def flaky() -> ContextTree:
    return ContextTree(cx.Session.open(sample("fix-flaky-test")))


@pytest.fixture(scope="module")
def long() -> ContextTree:
    return ContextTree(cx.Session.open(sample("long-refactor")))


# --- the bundle ----------------------------------------------------------------------------

WIDGETS = ("context_tree", "memory_graph", "checkpoint_graph", "belief_slots")


def test_the_built_widgets_are_read_from_the_package() -> None:
    assert static_dir() == ROOT / "ctxsdk" / "widgets" / "_static"
    for name in WIDGETS:
        assert (static_dir() / f"{name}.js").is_file() and (static_dir() / f"{name}.css").is_file()
    assert (static_dir() / "harness" / "page.html").is_file()
    assert ContextTree._esm == bundle("context_tree.js")
    assert ContextTree._css == bundle_css("context_tree.css")


def test_a_missing_build_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(DataMissing, match=r"make widgets.*needs node") as err:
        static_dir(tmp_path / "ctxsdk")
    assert str(tmp_path / "ctxsdk" / "widgets" / "_static") in str(err.value)


def test_the_build_is_wired_into_make_and_hatch() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "[tool.hatch.build.hooks.custom]" in pyproject and "_widgets_static" not in pyproject
    assert "ctxsdk/widgets/_static/" in (ROOT / ".gitignore").read_text()
    package = json.loads((ROOT / "package.json").read_text())
    version = package["devDependencies"]["esbuild"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version  # pinned exactly
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/esbuild"]["version"] == version
    makefile = (ROOT / "Makefile").read_text()
    for target in ("test", "demo", "docs"):
        assert re.search(rf"^{target}:.*\bwidgets\b", makefile, re.M), target


@pytest.mark.parametrize("name", WIDGETS)
def test_each_bundle_is_one_module_that_imports_nothing(name: str) -> None:
    esm = bundle(f"{name}.js")
    assert not re.search(r"^\s*import\b", esm, re.M) and "import(" not in esm
    assert re.findall(r"^export\b.*$", esm, re.M) == ["export {"]
    assert re.search(r"^  \w+ as default\n\};\s*$", esm, re.M)
    # nothing from a CDN: the widgets work offline (the SVG namespace is a name, not a fetch)
    assert "https://" not in esm and "http://" not in esm.replace("http://www.w3.org/2000/svg", "")


@pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "node_modules" / "esbuild").is_dir(),
    reason="node or node_modules (npm ci) is missing",
)
def test_the_shipped_build_is_what_the_sources_build_to(tmp_path: Path) -> None:
    subprocess.run(
        ["node", str(ROOT / "scripts" / "build_widgets.mjs"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for name in WIDGETS:
        for ext in ("js", "css"):
            built = (tmp_path / f"{name}.{ext}").read_text()
            assert built == (static_dir() / f"{name}.{ext}").read_text(), (
                f"{name}.{ext}: make widgets"
            )
    for name in ("context_tree", "memory_graph"):
        subprocess.run(["node", "--check", str(tmp_path / f"{name}.js")], check=True)


def test_the_css_is_theme_then_widget() -> None:
    css = ContextTree._css
    assert css.index("--cx-bg:") < css.index(".cx-tree .cx-row")
    # JupyterLab dark, VS Code dark and the OS each switch the palette.
    # (esbuild prints an attribute value without quotes when it is an identifier)
    for selector in (
        r'body\[data-jp-theme-light="?false"?\]',
        r"\.vscode-dark",
        r"prefers-color-scheme: ?dark",
    ):
        assert re.search(selector, css), selector
    # Class names are scoped: every class selector is a cx- class.
    classes = set(re.findall(r"\.([a-zA-Z][\w-]*)", re.sub(r"/\*.*?\*/", "", css, flags=re.S)))
    assert {c for c in classes if not c.startswith("cx-")} <= {
        "vscode-dark",
        "dark",
        "vscode-high-contrast",
        "vscode-high-contrast-light",
        "vscode-light",
    }


# --- the base class ------------------------------------------------------------------------


class _Echo(BaseWidget):
    _esm = "export default { render() {} };\n"

    def __init__(self, *, size: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = size

    @handler("echo")
    def _echo(self, value: Any) -> Any:
        return {"value": value, "size": self.size}

    @handler("boom")
    def _boom(self) -> None:
        raise InvalidArgument("it went boom at seq 4")

    def _repr_fields(self) -> list[str]:
        return [f"size={self.size}"]


def test_unknown_keywords_raise_a_helpful_type_error(flaky: ContextTree) -> None:
    with pytest.raises(
        TypeError, match=r"unexpected keyword argument 'sise'; did you mean 'size'\?"
    ):
        _Echo(sise=2)
    s = flaky.session
    with pytest.raises(TypeError) as err:
        ContextTree(s, tokeniser="estimate")
    assert "did you mean 'tokenizer'?" in str(err.value)
    assert "It accepts: drafts, height, target, tokenizer, window, workspace" in str(err.value)
    with pytest.raises(TypeError, match="did you mean 'height'"):
        ContextTree(s, heigth=300)
    # The widget traits every ipywidget has are still accepted.
    assert ContextTree(s, height=300, tabbable=True).height == 300


def test_the_repr_is_deterministic(flaky: ContextTree) -> None:
    assert repr(_Echo(size=3)) == "_Echo(size=3)"
    again = ContextTree(flaky.session)
    assert repr(flaky) == repr(again) == "ContextTree(5f0c9a7e, 31 nodes, 45 rows, 0 drafted)"
    assert "0x" not in repr(flaky)
    bundle_, _ = flaky._repr_mimebundle_()
    assert bundle_["text/plain"] == repr(flaky)


def test_requests_are_dispatched_to_their_handlers() -> None:
    w = _Echo(size=5)
    assert w.dispatch({"id": "1", "type": "echo", "value": [1, 2]}) == {
        "id": "1",
        "ok": True,
        "result": {"value": [1, 2], "size": 5},
    }
    assert w.dispatch({"id": "2", "type": "ping"}) == {"id": "2", "ok": True, "result": {}}
    assert w.last_request is not None and w.last_request["type"] == "ping"
    # Errors are replies, never a traceback lost in the comm.
    assert w.dispatch({"id": "3", "type": "boom"}) == {
        "id": "3",
        "ok": False,
        "error": {"type": "InvalidArgument", "message": "it went boom at seq 4"},
    }
    unknown = _error(w, "nope")
    assert unknown["type"] == "LookupError" and "known: boom, echo, ping" in unknown["message"]
    bad_args = _error(w, "echo", value=1, extra=2)
    assert bad_args["type"] == "TypeError" and "extra" in bad_args["message"]
    # Something that is no request gets no reply.
    assert w.dispatch({"type": "echo", "value": 1}) is None
    assert w.dispatch(["not", "a", "dict"]) is None


def test_a_custom_message_is_answered_with_send(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _Echo()
    sent: list[Any] = []
    monkeypatch.setattr(w, "send", lambda content, buffers=None: sent.append(content))
    w._handle_custom_msg({"id": "r1", "type": "echo", "value": "x"}, [])
    w._handle_custom_msg({"id": "r2", "type": "boom"}, [])
    assert sent[0] == {"id": "r1", "ok": True, "result": {"value": "x", "size": 1}}
    assert sent[1]["ok"] is False and sent[1]["error"]["type"] == "InvalidArgument"


# --- ContextTree: construction and traits --------------------------------------------------


def test_a_session_becomes_an_assembly(flaky: ContextTree) -> None:
    assert isinstance(flaky.assembly, cx.Assembly)
    assert flaky.stats["tokenizer"] == "estimate"
    a = cx.Assembly(flaky.session, tokenizer="cl100k_base")
    w = ContextTree(a)
    assert w.assembly is a and w.stats["tokenizer"] == "cl100k_base"
    assert w.stats["visible"] == a.tree().tokens == flaky.session.tokens("cl100k_base").total
    with pytest.raises(TypeError, match="takes tokenizer from the assembly"):
        ContextTree(a, tokenizer="estimate")
    with pytest.raises(TypeError, match="shows a Session or an Assembly, not str"):
        ContextTree("session.jsonl")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="window must be a positive"):
        ContextTree(flaky.session, window=0)


def test_the_skeleton_is_the_tree_by_column(long: ContextTree) -> None:
    rows = long._rows
    assert set(rows) == set(COLUMNS)
    n = len(rows["id"])
    assert all(len(rows[c]) == n for c in COLUMNS)
    walk = long.assembly.tree().walk()[1:]  # pre-order, without the root
    assert rows["id"] == [r.id for r in walk]
    assert rows["kind"] == [r.kind for r in walk]
    assert rows["tokens"] == [r.tokens for r in walk]
    for i in range(n):
        assert i < rows["end"][i] <= n
        p = rows["parent"][i]
        if p < 0:
            assert rows["depth"][i] == 0
        else:
            assert p < i < rows["end"][p] and rows["depth"][i] == rows["depth"][p] + 1
            assert rows["end"][i] <= rows["end"][p]
    by_id = {r.id: r for r in walk}
    for i, row_id in enumerate(rows["id"]):
        r, flags = by_id[row_id], rows["flags"][i]
        assert bool(flags & SHADOWED) == (r.state == "shadowed")
        assert bool(flags & REGION) == (r.state == "live" and bool(r.shadowed))
        assert bool(flags & FAILED) == r.failed
        at = r.seq if r.seq is not None else r.event_seq
        assert rows["seq"][i] == (-1 if at is None else at)
    # A replacement of a replacement nests: seq 110 (a prune) covers 17 under the checkpoint.
    i110 = rows["id"].index("e110")
    assert rows["id"][i110 + 1] == "e17" and rows["parent"][i110 + 1] == i110


def test_modes_are_one_character_per_row(long: ContextTree) -> None:
    modes = long._modes
    rows = long._rows
    assert len(modes) == len(rows["id"]) and set(modes) <= set("fkomFKOM")
    i170 = rows["id"].index("s170")  # the compaction checkpoint: a key replacement
    assert modes[i170] == "k"
    assert modes[rows["id"].index("t1.1")] == "m"  # system (full) + checkpoint (key)
    assert modes[rows["id"].index("t6")] == "f"
    assert all(modes[i] == "o" for i in range(len(modes)) if rows["flags"][i] & SHADOWED)


def test_stats_and_title_come_from_the_assembly(long: ContextTree) -> None:
    s = long.session
    st = long.stats
    assert st["visible"] == s.tokens("estimate").total
    assert st["nodes"] == len(s.surface())
    assert st["regions"] == sum(1 for n in s.surface() if n.shadowed) == 1
    assert st["folded"] == next(r.tokens for r in long.assembly.tree().walk() if r.id == "s170")
    assert st["original"] > st["folded"] and st["saved"] == st["original"] - st["folded"]
    assert st["drafted"] == 0 and st["after"] is None
    assert st["events"] == len(s) and st["path"] == str(s.path)
    assert long.title == {"name": s.title, "id": "b93e27d4", "version": 3, "tokenizer": "estimate"}


def test_the_composition_bar(long: ContextTree) -> None:
    c = long.composition
    s = long.session
    parts = {p["key"]: p["value"] for p in c["parts"]}
    keys = [{"markers": "folds"}.get(k, k) for k, _ in COMPOSITION_PARTS]
    assert [p["key"] for p in c["parts"]] == keys
    assert sum(parts.values()) == c["used"]
    assert c["used"] - parts["tools"] == s.tokens("estimate").total
    assert c["window"] == s.context_window == 1_000_000
    assert c["threshold"] == math.floor(1_000_000 * 0.8) and c["free"] == c["window"] - c["used"]
    assert parts["folds"] == long.stats["folded"]  # the checkpoint is a fold marker
    assert parts["tools"] > 0 and parts["reasoning"] > 0 and parts["tool_results"] > 0
    small = composition(s, tokenizer="estimate", window=10_001)
    assert small["window"] == 10_001 and small["threshold"] == 8000
    w = ContextTree(s, window=20_000)
    assert w.composition["window"] == 20_000 and w.composition["threshold"] == 16_000


# --- ContextTree: requests ---------------------------------------------------------------


def test_set_mode_on_a_node_a_container_and_a_shadowed_row() -> None:
    w = ContextTree(cx.Session.open(sample("long-refactor")))
    rev = w.revision
    r = _ask(w, "set_mode", row="s209", mode="off")
    assert r == {"nodes": 1, "draft": 1, "revision": rev + 1}
    assert w.assembly.draft[209].mode == "off"
    assert w._modes[w._rows["id"].index("s209")] == "O"  # drafted: upper case
    assert w._modes[w._rows["id"].index("t6")] == "M"  # its turn is mixed now, with a draft
    t6 = next(x for x in w.assembly.tree().walk() if x.id == "t6")
    r = _ask(w, "set_mode", row="t6", mode="key")
    assert r["nodes"] == len(t6.leaves())
    assert {s for s, t in w.assembly.draft.items() if t.mode == "key"} == {
        x.seq for x in t6.leaves()
    }
    assert w._modes[w._rows["id"].index("t6")] == "K"
    # A shadowed row stands for the replacement over it (the checkpoint at 170).
    _ask(w, "set_mode", row="e3", mode="off")
    assert w.assembly.draft[170].mode == "off"
    # ... which ctxsdk cannot expand: the reason comes back as the error.
    err = _error(w, "set_mode", row="e3", mode="full")
    assert err["type"] == "InvalidArgument" and "did not write and cannot expand" in err["message"]
    assert _error(w, "set_mode", row="s209", mode="half")["type"] == "InvalidArgument"
    assert _error(w, "set_mode", row="s99999", mode="off")["type"] == "NotFound"
    assert _error(w, "set_mode", row=5, mode="off")["type"] == "InvalidArgument"
    # The stats follow the draft: tokens after it are the preview's.
    assert w.stats["drafted"] == len(w.assembly.draft)
    assert w.stats["after"] == w.assembly.preview().tokens_after
    _ask(w, "reset")
    assert w.assembly.draft == {} and w.stats["after"] is None and w._modes.islower()


def test_python_side_edits_show_after_refresh(flaky: ContextTree) -> None:
    w = ContextTree(flaky.session)
    w.assembly.set("t2", "off")
    assert w.stats["drafted"] == 0  # not yet seen
    rev = w.revision
    assert _ask(w, "refresh") == {"revision": rev + 1}
    assert w.stats["drafted"] == len(w.assembly.draft) > 0
    assert w.refresh() is w


def test_drafts_are_saved_to_the_store_and_survive_a_new_kernel(tmp_path: Path) -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    store = DraftStore(tmp_path / "drafts")
    w = ContextTree(s, drafts=store)
    _ask(w, "set_mode", row="t1", mode="off")
    assert w.stats["persisted"] is True and w.stats["drafts_path"] == str(store.path)
    saved = json.loads(store.path.read_text())[s.id]["targets"]
    assert {int(k) for k in saved} == set(w.assembly.draft)
    # What a restarted kernel does: open the session again with the same store.
    again = ContextTree(
        cx.Session.open(sample("fix-flaky-test")), drafts=DraftStore(tmp_path / "drafts")
    )
    assert again.assembly.draft == w.assembly.draft
    assert again._modes == w._modes and again.stats["drafted"] == w.stats["drafted"]
    # Without a store nothing is saved, and the stats say so.
    plain = ContextTree(s)
    _ask(plain, "set_mode", row="t1", mode="off")
    assert plain.stats["persisted"] is False and plain.stats["drafts_path"] is None


def test_body_of_an_assistant_row_pairs_calls_with_results(long: ContextTree) -> None:
    b = _ask(long, "body", row="s209")
    assert b["kind"] == "assistant" and b["role"] == "assistant" and b["seq"] == 209
    call = b["message"]["calls"][0]
    assert call["name"] == "bash" and "mypy" in call["arguments"]
    assert call["result"]["seq"] == 211 and "error" in call["result"]["text"]
    assert call["result"]["shadowed"] is False
    message = long.session.message_at(209)
    assert b["message"]["text"] == message.text
    assert b["message"]["reasoning"] == [
        x.text
        for x in message.content
        if x.type == "reasoning"  # type: ignore[union-attr]
    ]


def test_body_of_a_tool_row_has_its_call(long: ContextTree) -> None:
    b = _ask(long, "body", row="s211")
    result = b["message"]["result"]
    assert b["kind"] == "tool" and result["call"]["name"] == "bash"
    assert result["text"] == long.session.message_at(211).tool_results[0].text
    assert "mypy" in result["call"]["arguments"]


def test_body_of_a_region_a_shadowed_row_and_a_container(long: ContextTree) -> None:
    region = _ask(long, "body", row="s170")
    assert region["covers"] == len(long.session.surface()[1].shadowed)
    assert region["covers_tokens"] == long.stats["original"]
    assert region["source"] == "plugin compact"
    shadowed = _ask(long, "body", row="e3")
    assert shadowed["state"] == "shadowed" and shadowed["seq"] == 3
    assert shadowed["message"]["text"].startswith("ledger/core.py has grown")
    # A result folded away still pairs with its call, and says it is folded.
    folded = _ask(long, "body", row="e8")["message"]["calls"][0]["result"]
    assert folded["shadowed"] is True and folded["seq"] == 10
    turn = _ask(long, "body", row="t6")
    assert turn["summary"].startswith("turn 6: 13 nodes in 5 steps, 1,002 tokens")
    assert [c["label"] for c in turn["children"]] == [f"step {i}" for i in range(1, 6)]
    assert _error(long, "body", row="nope")["type"] == "NotFound"


def test_subagents_nest_under_the_tool_that_spawned_them() -> None:
    ws = cx.Workspace(SAMPLES_HOME, cache=False)
    w = ContextTree(cx.Session.open(sample("long-refactor")), workspace=ws)
    rows = w._rows
    child = cx.Session.open(sample("long-refactor-docs-audit"))
    i = rows["id"].index(child.id)
    assert (
        rows["kind"][i] == "subagent" and rows["flags"][i] & SUBAGENT and rows["flags"][i] & FIXED
    )
    host = rows["parent"][i]
    assert rows["kind"][host] == "tool" and rows["tool"][host] == "subagent"
    b = _ask(w, "body", row=child.id)
    assert b["subagent"]["messages"] == len(child.messages())
    assert b["subagent"]["prompt"] and b["subagent"]["path"] == str(child.path)
    assert _error(w, "set_mode", row=child.id, mode="off")["type"] == "InvalidArgument"


def test_a_header_system_prompt_is_a_fixed_row(tmp_path: Path) -> None:
    b = LogBuilder(version=1, session_id="v1-widget")
    b.turn("Say hi.", system="You are terse.").assistant(text="hi").end_turn()
    w = ContextTree(cx.Session.open(b.write(tmp_path / "v1.jsonl")))
    rows = w._rows
    i = rows["id"].index("system")
    assert rows["flags"][i] & FIXED and rows["seq"][i] == -1
    body = _ask(w, "body", row="system")
    assert body["message"]["text"] == "You are terse." and "request header" in body["summary"]
    err = _error(w, "set_mode", row="system", mode="off")
    assert err["type"] == "InvalidArgument" and "cannot be collapsed" in err["message"]


def test_model_view_is_the_preview_messages_page_by_page() -> None:
    w = ContextTree(cx.Session.open(sample("long-refactor")))
    _ask(w, "set_mode", row="t6", mode="off")
    p = w.assembly.preview()
    first = _ask(w, "model_view", offset=0, limit=10)
    assert first["total"] == len(p.messages) and first["tokens"] == p.tokens_after
    assert first["drafted"] is True
    assert [m["index"] for m in first["messages"]] == list(range(10))
    assert [m["text"] for m in first["messages"]] == [m.text for m in p.messages[:10]]
    rest = _ask(w, "model_view", offset=10, limit=1000)["messages"]
    assert len(first["messages"]) + len(rest) == len(p.messages)
    new = [m for m in rest if m["fold"] == "new replacement"]
    assert len(new) == 1 and new[0]["seq"] is None and new[0]["text"].startswith("[")
    assert first["messages"][1]["fold"] == "replacement"  # the checkpoint, on the surface now
    assert sum(m["tokens"] for m in first["messages"] + rest) == p.tokens_after
    assert _error(w, "model_view", offset=-1)["type"] == "InvalidArgument"


def test_preview_says_a_shipped_sample_cannot_take_an_apply(tmp_path: Path) -> None:
    shipped = ContextTree(cx.Session.open(sample("long-refactor")))
    _ask(shipped, "set_mode", row="t6", mode="key")
    why = _ask(shipped, "preview")["read_only"]
    assert why and "read-only" in why and "s.save(path)" in why
    copy = tmp_path / "copy.v3.jsonl.zstd"
    shutil.copy(sample("long-refactor"), copy)
    mine = ContextTree(cx.Session.open(copy))
    _ask(mine, "set_mode", row="t6", mode="key")
    assert _ask(mine, "preview")["read_only"] is None
    assert cx.Session.from_messages([{"role": "user", "content": "hi"}]).path is None
    memory = ContextTree(cx.Session.from_messages([{"role": "user", "content": "hi"}]))
    assert _ask(memory, "preview")["read_only"] is None  # applies in memory


def test_a_terminal_escape_in_a_message_is_shown_not_a_box(tmp_path: Path) -> None:
    b = LogBuilder(3, session_id="escapes")
    b.turn("run it").assistant(text="\x1b[2mCompacted\x1b[22m (ctrl+o to see)").end_turn()
    w = ContextTree(cx.Session.open(b.write(tmp_path / "e.jsonl.zstd")))
    row = next(r for r in w.assembly.tree().leaves() if r.kind == "assistant")
    text = _ask(w, "body", row=row.id)["message"]["text"]
    assert "\x1b" not in text and "\\x1b[2mCompacted" in text


def test_a_key_node_takes_a_typed_digest() -> None:
    w = ContextTree(cx.Session.open(sample("long-refactor")))
    row = next(r for r in w.assembly.tree().leaves() if r.kind == "assistant" and r.seq)
    _ask(w, "set_mode", row=row.id, mode="key")
    assert _ask(w, "body", row=row.id)["digest"] is None  # automatic
    auto = w.assembly.preview().tokens_after
    _ask(w, "set_mode", row=row.id, mode="key", digest="  Split core.py; tests pass.  ")
    assert _ask(w, "body", row=row.id)["digest"] == "Split core.py; tests pass."
    assert w.assembly.draft[row.seq].digest == "Split core.py; tests pass."
    assert w.assembly.preview().tokens_after < auto  # a short digest is smaller
    assert _error(w, "set_mode", row=row.id, mode="off", digest="x")["type"] == "InvalidArgument"
    _ask(w, "set_mode", row=row.id, mode="key", digest="")
    assert w.assembly.draft[row.seq].digest is None  # empty: back to automatic


def test_preview_is_a_before_after_diff() -> None:
    w = ContextTree(cx.Session.open(sample("long-refactor")))
    empty = _ask(w, "preview")
    assert empty["ops"] == [] and empty["diff"] == [{"op": "=", "count": 65}]
    _ask(w, "set_mode", row="t6", mode="key")
    p = _ask(w, "preview")
    ref = w.assembly.preview()
    assert p["revision"] == w.revision
    assert [(o["kind"], o["start_seq"], o["end_seq"]) for o in p["ops"]] == [
        (op.kind, op.start_seq, op.end_seq) for op in ref.ops
    ]
    assert (p["tokens_before"], p["tokens_after"], p["saved"]) == (
        ref.tokens_before,
        ref.tokens_after,
        ref.saved,
    )
    ops = {d["op"] for d in p["diff"]}
    assert ops == {"=", "-", "+"}
    assert sum(1 for d in p["diff"] if d["op"] == "-") == 13
    assert sum(1 for d in p["diff"] if d["op"] == "+") == 1
    same = sum(d["count"] for d in p["diff"] if d["op"] == "=")
    assert same + 13 == p["messages_before"] and same + 1 == p["messages_after"]
    before, after = p["composition_before"], p["composition_after"]
    assert before == w.composition
    assert before["used"] - after["used"] == ref.tokens_before - ref.tokens_after


def test_apply_writes_the_confirmed_draft_to_the_log(tmp_path: Path) -> None:
    s = _copy(tmp_path, "long-refactor")
    size, events = s.path.stat().st_size, len(s)
    w = ContextTree(s)
    assert (
        _error(w, "apply", revision=w.revision)["message"] == "the draft is empty: nothing to apply"
    )
    _ask(w, "set_mode", row="t6", mode="key")
    stale = _error(w, "apply", revision=w.revision - 1)
    assert stale["type"] == "InvalidArgument" and "preview again" in stale["message"]
    assert s.path.stat().st_size == size  # refused: nothing written
    r = _ask(w, "apply", revision=w.revision)
    assert r["written"] is True and r["events_before"] == events
    assert r["events_after"] == len(cx.Session.open(s.path)) == events + r["appended"] > events
    assert s.path.stat().st_size > size
    t6 = next(x for x in cx.Session.open(s.path).assemble().tree().walk() if x.id == "t6")
    assert t6.mode == "key"
    # The widget shows the new session with an empty draft.
    assert w.session.path == s.path and len(w.session) == r["events_after"]
    assert w.stats["drafted"] == 0 and w.stats["events"] == r["events_after"]


def test_apply_on_a_read_only_sample_is_an_error_reply() -> None:
    w = ContextTree(cx.Session.open(sample("fix-flaky-test")))
    _ask(w, "set_mode", row="t1", mode="off")
    err = _error(w, "apply", revision=w.revision)
    assert err["type"] == "WriteError" and "read-only" in err["message"]
    assert w.assembly.draft  # the draft is kept


def test_apply_in_memory_says_it_did_not_write() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    mem = cx.Session.from_events(
        s.header.model_dump(by_alias=True, exclude_unset=True), s.raw_events
    )
    w = ContextTree(mem)
    _ask(w, "set_mode", row="t1", mode="off")
    r = _ask(w, "apply", revision=w.revision)
    assert r["written"] is False and r["path"] is None and r["appended"] > 0


def test_load_ext_shows_sessions_and_assemblies_as_the_widget_and_unload_undoes_it() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    s = cx.Session.open(sample("fix-flaky-test"))
    fmt = ip.display_formatter
    assert "text/html" in fmt.format(s)[0]
    ip.run_line_magic("load_ext", "ctxsdk")
    try:
        for obj in (s, cx.Assembly(s)):
            bundle = fmt.format(obj)[0]
            assert "application/vnd.jupyter.widget-view+json" in bundle
            assert bundle["text/plain"].startswith("ContextTree(")
    finally:
        ip.run_line_magic("unload_ext", "ctxsdk")
    assert "text/html" in fmt.format(s)[0]
