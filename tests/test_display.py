"""Results render themselves: the display protocol, the HTML pieces, the plots, the
context composition."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk._display import Rendered, bar, bar_chart, esc, message_html, stacked_bar, table, wrap
from ctxsdk.errors import InvalidArgument
from ctxsdk.samples import sample
from ctxsdk.session import composition
from ctxsdk.session.kernel import COMPOSITION_PARTS
from ctxsdk.testing import LogBuilder

ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


class _Thing(Rendered):
    def __repr__(self) -> str:
        return "Thing()"

    def _text_(self) -> str:
        return "a thing\n  with two lines"


def test_the_protocol_offers_text_and_html_and_print_shows_the_text() -> None:
    bundle = _Thing()._repr_mimebundle_()
    assert bundle["text/plain"] == "a thing\n  with two lines"
    assert bundle["text/html"].startswith("<div class='cx-html'><style>")
    assert "a thing" in bundle["text/html"]
    assert str(_Thing()) == "a thing\n  with two lines" and repr(_Thing()) == "Thing()"


def test_html_never_carries_markup_from_the_log(tmp_path: Path) -> None:
    b = LogBuilder(version=3)
    b.turn("<script>alert(1)</script> & <b>bold</b>").assistant("<img src=x onerror=y>")
    s = cx.Session.open(b.end_turn().write(tmp_path / "s.jsonl", "none"))
    out = "".join(message_html(m) for m in s.messages())
    assert "<script>" not in out and "<img" not in out and "<b>" not in out
    assert "&lt;script&gt;" in out and "&lt;img src=x" in out
    cells = table(("a",), [("<i>x</i>",)])
    assert "<i>" not in cells and "&lt;i&gt;" in cells


def test_a_tool_call_sits_beside_its_result_and_reasoning_is_folded() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    msgs = s.messages()
    caller = next(m for m in msgs if m.tool_calls)
    results = [m for m in msgs if m.tool_results]
    out = message_html(caller, results=results)
    assert "cx-pair" in out and "call " + caller.tool_calls[0].name in out
    answer = next(
        b for m in results for b in m.tool_results if b.tool_call_id == caller.tool_calls[0].id
    )
    assert answer.text[:30].replace("&", "&amp;").replace("<", "&lt;") in out
    thinking = next((m for m in msgs if any(b.type == "reasoning" for b in m.content)), None)
    if thinking is not None:
        assert "<details><summary><span class='cx-badge cx-k-reasoning'>" in message_html(thinking)


def test_bars_and_plots_are_well_formed_svg_and_clamp() -> None:
    assert "width:100.0%" in bar(50, 10) and "width:0.0%" in bar(-5, 10)
    plot = stacked_bar([("user", 30, "user"), ("free", 70, "free")], 100, marks=[(80, "80")])
    svg = _svg(plot)
    ET.fromstring(svg)  # parses: the plot is valid XML
    assert svg.count("<rect") == 2 + 2  # two parts and two legend swatches
    chart = bar_chart(["1", "2"], {"user": [3, 0], "tool": [1, 5]}, kinds={"tool": "tool"})
    root = ET.fromstring(_svg(chart))
    assert root.tag.endswith("svg") and "var(--cx-tool" in chart


def _svg(html: str) -> str:
    return html[html.index("<svg") : html.index("</svg>") + 6]


def _stand_in(html: str) -> str:
    """A plot's stand-in: what a host that strips the SVG and the stylesheet shows."""
    return html.split("<div class='cx-cold'>", 1)[1]


def test_a_plot_hides_its_svg_from_a_sanitizer_and_stands_in_with_plain_elements() -> None:
    # JupyterLab keeps hidden='hidden' (it drops an empty hidden) and strips <svg>: the SVG's
    # labels would read as one run-on text; the stand-in draws the bars with inline styles
    # of plain colours and says the legend and the marks in words.
    plot = stacked_bar(
        [("user", 30, "user"), ("tool results", 20, "tool"), ("free", 50, "free")],
        100,
        marks=[(80, "compaction at 80")],
    )
    assert plot.startswith("<div class='cx-plotbox' hidden='hidden'><svg")
    cold_ = _stand_in(plot)
    assert "<svg" not in cold_ and "var(" not in cold_
    assert "width:30.00%;background-color:#2f81f7" in cold_
    assert "left:80.00%" in cold_ and "┆ compaction at 80" in cold_
    legend = re.sub(r"<[^>]+>", "", cold_.rsplit("<div style='margin:2px 0'>", 1)[1])
    assert legend == " user 30 ·  tool results 20 ·  free 50"
    chart = bar_chart(["a", "b"], {"warm": [3, 0], "cold": [1, 5]}, kinds={"warm": "system"})
    bars = _stand_in(chart)
    assert "title='a: warm 3, cold 1'" in bars and "title='b: warm 0, cold 5'" in bars
    assert "highest 5" in bars and ">a 4</span>" in bars and ">b 5</span>" in bars
    many = _stand_in(bar_chart([str(i) for i in range(30)], {"n": list(range(30))}))
    assert "0 … 29 (30 bars)" in many


def test_the_layout_is_inline_too_with_a_plain_colour_before_each_theme_variable() -> None:
    # A sanitizer keeps a style attribute's declarations but drops any var(): each var() has
    # a plain value of the same property before it (a trusting host takes the later one).
    html = cx.Session.open(sample("fix-flaky-test"))._repr_mimebundle_()["text/html"]
    body = html.split("</style>", 1)[1]
    styles = re.findall(r"style='([^']*)'", body)
    assert len(styles) > 50
    for style in styles:
        seen: set[str] = set()
        for decl in style.split(";"):
            prop, _, value = decl.partition(":")
            if "var(" in value:
                assert prop.split("-")[0] in seen, style
            else:
                seen.add(prop.split("-")[0])
    assert "class='cx-title' style='font-weight:600" in body
    assert "<dt style='color:#7d8590;color:var(--cx-muted);white-space:nowrap'>id</dt>" in body


def test_cold_inlines_each_class_merges_an_own_style_and_parts_touching_pieces() -> None:
    from ctxsdk._display._cold import STYLES, cold

    out = cold(
        "<span class='cx-badge cx-k-user'>user</span><span class='cx-muted'>seq 3</span>"
        "<span class='cx-row' style='font-weight:600'><b>x</b><code>y</code></span>"
    )
    assert f"style='{STYLES['cx-badge']};{STYLES['cx-k-user']}'>user</span> <span" in out
    assert "<span class='cx-row' style='font-weight:600'><b>x</b> <code>y</code>" in out
    nested = cold(
        "<details open><summary>a</summary><details><summary>b</summary>"
        "<div class='cx-leaf'>c</div></details></details><div class='cx-leaf'>d</div>"
    )
    assert "<details style='margin-left:16px'><summary>b" in nested
    assert "<div class='cx-leaf' style='margin-left:16px'>c</div>" in nested
    assert nested.endswith("<div class='cx-leaf'>d</div>")
    assert cold("<pre class='cx-pre'>a &lt;b&gt;</pre>").endswith(">a &lt;b&gt;</pre>")


def test_a_widget_output_carries_a_static_picture_of_what_it_shows() -> None:
    pytest.importorskip("anywidget")
    from ctxsdk.widgets import ContextTree

    s = cx.Session.open(sample("fix-flaky-test"))
    w = ContextTree(s)
    data, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data and data["text/plain"] == repr(w)
    html = data["text/html"]
    assert html.startswith("<div class='cx-html'><style>")
    assert "ContextTree <span class='cx-muted'" in html and "run the notebook" in html
    assert "CI has been red on" in html and "turn 1" in html  # the assembly's own tree
    assert ADDRESS.search(html) is None and html == w._repr_mimebundle_()[0]["text/html"]


def test_the_theme_follows_the_host_and_the_os() -> None:
    css = wrap("")
    for host in ("--jp-layout-color0", "--vscode-editor-background", "prefers-color-scheme"):
        assert host in css
    assert 'body[data-jp-theme-light="false"]' in css


@pytest.mark.parametrize("name", ["fix-flaky-test", "long-refactor"])
@pytest.mark.parametrize("tokenizer", ["cl100k_base", "estimate"])
def test_composition_counts_every_token_once(name: str, tokenizer: str) -> None:
    s = cx.Session.open(sample(name))
    c = composition(s, tokenizer)
    assert list(c.parts) == [k for k, _ in COMPOSITION_PARTS]
    assert c.used - c.parts["tools"] == s.tokens(tokenizer).total
    assert c.parts["tools"] > 0 and c.parts["user"] > 0 and c.parts["tool_results"] > 0
    replaced = {n.seq for n in s.surface() if n.shadowed}
    markers = sum(r.tokens for r in s.tokens(tokenizer).rows if r.seq in replaced)
    assert c.parts["markers"] == markers


def test_composition_against_the_window_names_the_compaction_point() -> None:
    s = cx.Session.open(sample("long-refactor"))
    c = composition(s, "estimate", window=10_000)
    assert c.threshold == 8_000 and c.free == 10_000 - c.used
    text = c._text_()
    assert "compaction at 8,000" in text and "of 10,000" in text
    assert ADDRESS.search(text) is None
    html = c._repr_mimebundle_()["text/html"]
    assert "compaction at 8,000" in html and "<svg" in html
    over = composition(s, "estimate", window=c.used // 2)
    assert over.free == 0 and "passed by" in over._text_()
    assert composition(s).window == s.context_window


def test_composition_in_a_large_window_also_shows_what_is_used_by_part() -> None:
    s = cx.Session.open(sample("long-refactor"))
    wide = composition(s, "estimate", window=1_000_000)  # the parts: under 1% of the window
    html = wide._repr_mimebundle_()["text/html"]
    assert html.count("<svg") == 2 and "used, by part" in html
    by_part = html.split("used, by part", 1)[1]
    assert all(esc(f"{label} {wide.parts[key]:,}") in by_part for key, label in COMPOSITION_PARTS)
    chat = cx.Session.from_messages([{"role": "user", "content": "hi"}])
    bare = composition(chat, "estimate")  # no window known: one bar of what is used
    assert bare.window is None
    html = bare._repr_mimebundle_()["text/html"]
    assert html.count("<svg") == 1 and "used, by part" not in html


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "9"])
def test_composition_refuses_a_window_that_is_not_a_positive_int(bad: object) -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    with pytest.raises(InvalidArgument, match="window"):
        composition(s, window=bad)  # type: ignore[arg-type]


def test_the_tree_prints_its_rows_and_renders_collapsible_html_with_bars() -> None:
    a = cx.Assembly(cx.Session.open(sample("long-refactor")))
    tree = a.tree()
    text = str(tree)
    assert text == tree.render(max_rows=400) and "turn 5" in text
    assert ADDRESS.search(text) is None
    html = tree._repr_mimebundle_()["text/html"].split("</style>", 1)[1]
    assert html.count("<details") == sum(1 for r in tree.walk() if r.children)
    assert html.count("class='cx-bar'") == len(tree.walk())
    assert "(3)" in html  # a shadowed row under a fold keeps its seq in parentheses
    assert "<details open><summary>" in html  # the root is open, the turns folded


def test_a_big_tree_says_how_many_rows_it_did_not_print(tmp_path: Path) -> None:
    b = LogBuilder(version=3)
    for i in range(150):
        b.turn(f"question {i}").assistant(f"answer {i}").end_turn()
    s = cx.Session.open(b.write(tmp_path / "big.jsonl", "none"))
    tree = cx.Assembly(s).tree()
    rows = len(tree.walk())
    assert rows > 400
    assert str(tree).endswith(f"… {rows - 400:,} more rows (row.render() prints them all)")


def test_preview_prints_its_ops_and_shows_the_model_view() -> None:
    a = cx.Assembly(cx.Session.open(sample("fix-flaky-test")))
    leaf = next(r for r in a.tree().leaves() if r.kind == "tool")
    p = a.set(leaf.seq, "off").preview()
    text = str(p)
    assert text.startswith(f"Preview: {len(p.ops)} op") and f"saves {p.saved:,}" in text
    assert all(f"{op.tokens_before:,} -> {op.tokens_after:,}" in text for op in p.ops)
    html = p._repr_mimebundle_()["text/html"]
    assert html.count("class='cx-msg'") == len(p.messages)
    assert f"before {p.tokens_before:,}" in html


def test_a_chat_result_prints_the_whole_reply_and_folds_its_reasoning() -> None:
    from ctxsdk.llm import ChatResult, ToolCall

    long = "line one\n" + "x" * 500
    r = ChatResult(
        text=long,
        reasoning="think <b>",
        tool_calls=(ToolCall(id="c1", name="bash", arguments='{"command": "ls"}'),),
        model="m",
        provider="p",
        attempts=2,
    )
    text = str(r)
    assert "x" * 500 in text and "from: p/m" in text and "2 attempts" in text
    assert 'call bash({"command": "ls"})' in text and len(repr(r)) < 160
    html = r._repr_mimebundle_()["text/html"]
    assert "<details><summary>reasoning (9 characters)</summary>" in html
    assert "think &lt;b&gt;" in html and "<b>" not in html.split("</style>", 1)[1]


@pytest.mark.parametrize("name", ["fix-flaky-test", "long-refactor"])
def test_tokens_per_turn_add_up_to_what_the_model_receives(name: str) -> None:
    from ctxsdk.session.kernel import turn_tokens

    s = cx.Session.open(sample(name))
    per = turn_tokens(s, "estimate")
    assert sum(per.total(t) for t in per.turns) == s.tokens("estimate").total
    assert set(per.turns) <= {0, *(t.turn for t in s.turns())}
    assert per.to_polars().height == len(per.turns)
    c = composition(s, "estimate")
    assert {k: sum(v) for k, v in per.parts.items()} == {
        k: v for k, v in c.parts.items() if k != "tools"
    }
    html = per._repr_mimebundle_()["text/html"]
    ET.fromstring(html[html.index("<svg") : html.index("</svg>") + 6])
    assert str(per).splitlines()[0] == "Tokens per turn (estimate)"


def test_a_fold_counts_in_the_turn_it_covers() -> None:
    from ctxsdk.session.kernel import turn_tokens

    s = cx.Session.open(sample("long-refactor"))  # its checkpoint replaces turn-1..4 history
    per = turn_tokens(s, "estimate")
    first = per.turns.index(1)
    assert per.parts["markers"][first] > 0


def test_a_lineage_tree_prints_as_a_tree_and_renders_as_nested_lists() -> None:
    from ctxsdk.samples import SAMPLES_HOME

    ws = cx.Workspace(SAMPLES_HOME)
    parent = ws.open("b93e27d4")
    tree = ws.tree(parent.id)
    assert str(tree).splitlines()[1].startswith("└── [subagent] ")
    assert repr(tree) == f"SessionTree(root {parent.id[:8]}, 2 sessions, focus {parent.id[:8]})"
    html = tree._repr_mimebundle_()["text/html"]
    assert html.count("<li>") == len(tree) == 2 and "subagent" in html


def test_a_session_prints_its_facts_and_shows_its_composition_and_turns() -> None:
    s = cx.Session.open(sample("long-refactor"))
    text = str(s)
    lines = text.splitlines()
    assert lines[0] == f"Session {s.id[:8]}: {s.title}"
    assert f"log: {len(s):,} events, {len(s.turns())} turns" in text
    assert "tokens: about" in text and ADDRESS.search(text) is None
    path_line = next(line for line in lines if line.startswith("  path: "))
    assert not path_line.startswith(f"  path: {Path.cwd().parent.parent}")  # relative or ~
    assert len(repr(s).splitlines()) == 1
    html = s._repr_mimebundle_()["text/html"]
    assert "Context composition" in html and html.count("<tr>") >= len(s.turns()) + 1


def test_surface_tokens_and_turns_print_as_tables() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    surface, tokens, turns = s.surface(), s.tokens(), s.turns()
    assert len(str(surface).splitlines()) == 1 + len(surface)
    assert str(tokens).splitlines()[0] == f"Tokens (cl100k_base): {tokens.total:,} in " + (
        f"{len(tokens.rows)} messages"
    )
    assert len(str(tokens).splitlines()) == 2 + len(tokens.rows)
    assert isinstance(turns, list) and str(turns).splitlines()[0] == f"{len(turns)} turns"
    for shown in (surface, tokens, turns):
        html = shown._repr_mimebundle_()["text/html"]
        assert "<table class='cx-table'" in html and ADDRESS.search(str(shown)) is None


def test_a_turn_with_one_step_says_step(tmp_path: Path) -> None:
    b = LogBuilder(version=3)
    b.turn("hi").assistant("hello").end_turn()
    s = cx.Session.open(b.write(tmp_path / "s.jsonl", "none"))
    assert repr(s.turns()[0]).startswith("Turn(1, 1 step, completed")


def test_a_message_prints_whole_and_renders_with_its_role() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    m = max(s.messages(), key=lambda m: len(m.text))
    assert m.text in str(m) and len(repr(m)) < 120
    assert "cx-msg" in m._repr_mimebundle_()["text/html"]


def test_session_and_assembly_open_their_widget() -> None:
    pytest.importorskip("anywidget")
    from ctxsdk.widgets import ContextTree

    s = cx.Session.open(sample("fix-flaky-test"))
    assert isinstance(s.widget(), ContextTree) and isinstance(cx.Assembly(s).widget(), ContextTree)
    assert s.composition("estimate") == composition(s, "estimate")
    assert s.turn_tokens("estimate").turns


def test_a_workspace_prints_and_shows_its_sessions_newest_first() -> None:
    from ctxsdk.samples import SAMPLES_HOME

    ws = cx.Workspace(SAMPLES_HOME)
    lines = str(ws).splitlines()
    n = ws.sessions().height
    assert lines[0].startswith("Workspace ") and lines[0].endswith(f": {n} sessions")
    assert len(lines) == 1 + n and "subagent of b93e27d4" in str(ws)
    html = ws._repr_mimebundle_()["text/html"]
    assert html.count("<tr>") == 1 + n


def test_the_static_html_never_styles_a_widget() -> None:
    # In JupyterLab every output's CSS is global: the static root and the widgets' root must
    # not share a class, or one would restyle the other.
    css = wrap("").split("<style>", 1)[1]
    assert ".cx-root" not in css and ".cx-html" in css
    widget_css = (Path(__file__).parents[1] / "widgets" / "base" / "theme.css").read_text()
    assert ".cx-html" not in widget_css


def test_a_fit_prints_its_verdict_and_ops_and_plots_against_the_budget() -> None:
    a = cx.Assembly(cx.Session.open(sample("fix-flaky-test")))
    r = a.fit(1500, query="xdist worker port collision")
    text = str(r)
    assert text.startswith(f"Fit to 1,500 tokens: {r.tokens_before:,} -> {r.tokens_after:,}")
    assert len(text.splitlines()) == 1 + len(r.ops) + len(r.notes)
    html = r._repr_mimebundle_()["text/html"]
    assert "budget 1,500" in html and "left the context" in html
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    ET.fromstring(svg)


def test_a_memory_graph_and_a_merge_view_draw_their_pictures(tmp_path: Path) -> None:
    # A Memory has no HTML of its own: the graph's picture lists its drawn nodes by type and
    # its edges. BeliefSlots gets the merge's own HTML from the shared base.
    pytest.importorskip("anywidget")
    from ctxsdk.samples import sample_paths

    paths = sample_paths()
    mem = cx.Memory(tmp_path / "m.db")
    mem.ingest(cx.Session.open(paths["fix-flaky-test"]))
    graph = mem.widget()
    html = graph._repr_mimebundle_()[0]["text/html"]
    assert "MemoryGraph <span class='cx-muted'" in html
    types = set(graph._graph["nodes"]["type"])
    assert types and all(f">{t}</td>" in html for t in types)
    assert ">from</th>" in html and graph._graph["edges"]["label"][0] in html
    merged = cx.Merge(
        [cx.Session.open(paths[n]) for n in ("long-refactor", "long-refactor-docs-audit")]
    ).run()
    slots = merged.widget()._repr_mimebundle_()[0]["text/html"]
    body = merged._repr_mimebundle_()["text/html"].split("</style>", 1)[1][: -len("</div>")]
    assert "BeliefSlots <span class='cx-muted'" in slots and body in slots


def test_a_large_tree_pictures_its_turns_not_every_row(tmp_path: Path) -> None:
    # a saved notebook stays small: 10,000 rows are pictured as their turns and a count
    pytest.importorskip("anywidget")
    from ctxsdk.bench._widgets import synthetic_session
    from ctxsdk.widgets import ContextTree

    w = ContextTree(synthetic_session(tmp_path, 10_000))
    html = w._repr_mimebundle_()[0]["text/html"]
    assert len(html) < 300_000 and "<details" not in html
    assert f"{len(w._flat):,} rows: run the notebook to browse them" in html
    assert ">turn 1</td>" in html and ">turn 101</td>" not in html


def test_with_no_css_at_all_the_texts_still_read_apart() -> None:
    # the worst host (GitHub's viewer drops <style>, style attributes and SVG tags; it may
    # drop hidden too): what is left still reads as words, never one run of labels
    html = cx.Session.open(sample("fix-flaky-test"))._repr_mimebundle_()["text/html"]
    bare = re.sub(r"<style>.*?</style>|\sstyle='[^']*'|\shidden='hidden'", "", html, flags=re.S)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", bare))
    assert "the window system prompt: 192 tool schemas: 359" in text
    assert "system prompt 192 · tool schemas 359" in text  # the stand-in's legend
    assert "192tool" not in text and "windowsystem" not in text
