"""Merge's source selection: the persisted runtime layer over a config default, ``#n`` and
prefix references, and the ``merge_sessions`` tool, all on real files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import InvalidArgument, NotFound
from ctxsdk.merge._sources import MergeSources, SourceSelection, resolve_refs
from ctxsdk.testing import LogBuilder
from ctxsdk.tools import ToolContext, default_registry, is_error

SELF = "aaaa-self"
OTHERS = [("bbbb-1111", "Database choice"), ("bbbc-2222", "API design"), ("cccc-3333", "Docs")]


def _session(session_id: str, title: str | None = None, cwd: str | None = None) -> cx.Session:
    b = LogBuilder(session_id=session_id, cwd=cwd)
    b.turn("hello").assistant(text="Noted.").end_turn()
    if title is not None:
        b.title(title)
    return cx.Session.from_events(b.header, b.events)


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


# --- layers ---------------------------------------------------------------------------------


def test_no_layer_then_config_then_runtime(tmp_path: Path) -> None:
    assert MergeSources(tmp_path / "s").get(SELF) == SourceSelection(SELF, (), "none", False)
    ms = MergeSources(tmp_path / "s", default=["cfg-1", SELF, "cfg-2", "cfg-1"])
    got = ms.get(SELF)
    assert (got.layer, got.sources, got.off, got.warning) == (
        "config",
        ("cfg-1", "cfg-2"),  # itself dropped from the default, repeats dropped
        False,
        None,
    )
    assert ms.set(SELF, ["r-2", "r-1"]).sources == ("r-2", "r-1")
    got = ms.get(SELF)
    assert (got.layer, got.sources, got.off) == ("runtime", ("r-2", "r-1"), False)


def test_off_is_not_clear(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s", default=["cfg-1"])
    off = ms.set(SELF, [])
    assert (off.layer, off.sources, off.off) == ("runtime", (), True)
    assert ms.get(SELF) == off
    assert ms.off(SELF).off
    cleared = ms.clear(SELF)
    assert (cleared.layer, cleared.sources, cleared.off) == ("config", ("cfg-1",), False)
    assert ms.get(SELF) == cleared
    assert not ms.path(SELF).exists()
    assert ms.clear(SELF) == cleared  # clearing nothing is fine
    assert MergeSources(tmp_path / "s").clear(SELF).layer == "none"


def test_add_and_remove_build_on_the_effective_layer(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s", default=["cfg-1"])
    assert ms.add(SELF, ["x", "cfg-1", "y"]).sources == ("cfg-1", "x", "y")
    assert ms.remove(SELF, ["x", "not-there"]).sources == ("cfg-1", "y")
    last = ms.remove(SELF, ["cfg-1", "y"])
    assert (last.layer, last.off) == ("runtime", True)  # off, not back to the default
    assert ms.add(SELF, ["z"]).sources == ("z",)  # adding to "off" starts from nothing
    ms.clear(SELF)
    assert ms.remove(SELF, ["cfg-1"]).off


def test_files_are_private_and_json(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "store")
    ms.set(SELF, ["b-1"])
    data = json.loads(ms.path(SELF).read_text())
    assert data["session"] == SELF and data["sources"] == ["b-1"]
    assert [p.name for p in (tmp_path / "store").iterdir()] == [f"{SELF}.json"]  # no temp left
    if os.name == "posix":
        assert stat.S_IMODE(ms.path(SELF).stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "store").stat().st_mode) & 0o077 == 0


# --- bad files and bad ids ------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"sources": "b-1"}', b"[1, 2]", b'{"sources": ["../x"]}', b"\xff\xfe"],
)
def test_corrupt_runtime_file_falls_back_with_a_warning(tmp_path: Path, content: bytes) -> None:
    ms = MergeSources(tmp_path / "s", default=["cfg-1"])
    ms.store.mkdir()
    ms.path(SELF).write_bytes(content)
    got = ms.get(SELF)
    assert (got.layer, got.sources) == ("config", ("cfg-1",))
    assert got.warning and str(ms.path(SELF)) in got.warning and "left in place" in got.warning
    assert ms.path(SELF).read_bytes() == content  # a read never touches it
    new = ms.add(SELF, ["b-1"])
    assert new.sources == ("cfg-1", "b-1")
    aside = ms.path(SELF).with_name(f"{SELF}.json.corrupt")
    assert new.warning and str(aside) in new.warning
    assert aside.read_bytes() == content  # kept, not lost
    assert ms.get(SELF).warning is None


def test_clear_moves_a_corrupt_file_aside(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s")
    ms.store.mkdir()
    ms.path(SELF).write_text("garbage")
    got = ms.clear(SELF)
    assert got.layer == "none" and got.warning and ".corrupt" in got.warning
    assert not ms.path(SELF).exists()
    assert (ms.store / f"{SELF}.json.corrupt").read_text() == "garbage"


def test_a_file_of_another_session_is_not_used(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s")
    ms.set("other", ["b-1"])
    os.replace(ms.path("other"), ms.path(SELF))
    got = ms.get(SELF)
    assert got.layer == "none" and got.warning and "belongs to session 'other'" in got.warning


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX modes, not root")
def test_unreadable_runtime_file(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s", default=["cfg-1"])
    ms.set(SELF, ["b-1"])
    ms.path(SELF).chmod(0)
    try:
        got = ms.get(SELF)
        assert got.layer == "config" and got.warning and "cannot be read" in got.warning
    finally:
        ms.path(SELF).chmod(0o600)


def test_self_is_refused(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s")
    for call in (ms.set, ms.add):
        with pytest.raises(InvalidArgument, match="cannot merge from itself"):
            call(SELF, ["b-1", SELF])
    assert not ms.path(SELF).exists()


@pytest.mark.parametrize("bad", ["", " ", "..", ".", "a/b", "../x", "a\\b", "nul\0", " pad"])
def test_path_like_ids_are_refused(tmp_path: Path, bad: str) -> None:
    ms = MergeSources(tmp_path / "s")
    with pytest.raises(InvalidArgument):
        ms.get(bad)
    with pytest.raises(InvalidArgument):
        ms.set(SELF, [bad])
    with pytest.raises(InvalidArgument):
        MergeSources(tmp_path / "s", default=[bad])
    with pytest.raises(InvalidArgument, match="not the string"):
        ms.set(SELF, "b-1")
    assert not any(tmp_path.rglob("*.json"))


# --- persistence and concurrency ------------------------------------------------------------


def test_persists_across_instances_and_processes(tmp_path: Path) -> None:
    MergeSources(tmp_path / "s", default=["cfg"]).set(SELF, ["b-1", "c-2"])
    assert MergeSources(tmp_path / "s").get(SELF).sources == ("b-1", "c-2")
    out = _run(
        """
        import json, sys
        from ctxsdk.merge._sources import MergeSources
        ms = MergeSources(sys.argv[1], default=["cfg"])
        print(json.dumps(ms.get(sys.argv[2]).to_json()))
        ms.add(sys.argv[2], ["d-3"])
        """,
        str(tmp_path / "s"),
        SELF,
    )
    assert json.loads(out.stdout)["sources"] == ["b-1", "c-2"]
    assert MergeSources(tmp_path / "s").get(SELF).sources == ("b-1", "c-2", "d-3")


def test_concurrent_writers_leave_a_valid_file(tmp_path: Path) -> None:
    code = """
        import sys
        from ctxsdk.merge._sources import MergeSources
        store, who = sys.argv[1], sys.argv[2]
        ms = MergeSources(store)
        for i in range(60):
            ms.set("target", [f"{who}-{i}", f"{who}-x"])
            ms.add("adds", [f"{who}-{i}"])
        """
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(tmp_path), f"w{n}"])
        for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    ms = MergeSources(tmp_path)
    got = ms.get("target")
    assert got.layer == "runtime" and got.warning is None
    who = got.sources[0].split("-")[0]
    assert got.sources == (f"{who}-59", f"{who}-x")  # one writer's last file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adds.json", "target.json"]
    adds = ms.get("adds")
    assert adds.warning is None
    if os.name == "posix":  # the read-modify-write is locked: no add is lost
        assert len(adds.sources) == 4 * 60


# --- references -----------------------------------------------------------------------------


def test_resolve_refs_by_prefix_and_number() -> None:
    cands = [(SELF, "me"), *OTHERS]
    assert resolve_refs(["CCCC"], cands, self_id=SELF) == ("cccc-3333",)
    assert resolve_refs(["bbbb", "#3", "#1"], cands, self_id=SELF) == ("bbbb-1111", "cccc-3333")
    assert resolve_refs(["#1"], cands, self_id=SELF) == ("bbbb-1111",)  # self is not #1
    assert resolve_refs([], cands, self_id=SELF) == ()
    exact = [("ab", ""), ("abc", "")]
    assert resolve_refs(["ab"], exact) == ("ab",)  # an exact id wins over longer ones
    with pytest.raises(InvalidArgument, match="ambiguous.*bbbb-1111, bbbc-2222"):
        resolve_refs(["bbb"], cands, self_id=SELF)
    with pytest.raises(NotFound, match="zzz"):
        resolve_refs(["zzz"], cands, self_id=SELF)
    for bad in ("#0", "#4", "#99"):
        with pytest.raises(InvalidArgument, match=r"not in the list \(the numbers are #1..#3\)"):
            resolve_refs([bad], cands, self_id=SELF)
    with pytest.raises(InvalidArgument, match="list number"):
        resolve_refs(["#x"], cands, self_id=SELF)
    with pytest.raises(InvalidArgument, match="never merges itself"):
        resolve_refs([SELF.upper()], cands, self_id=SELF)
    with pytest.raises(InvalidArgument, match="never merges itself"):
        resolve_refs(["aaaa"], cands, self_id=SELF)
    with pytest.raises(InvalidArgument, match="non-empty"):
        resolve_refs([""], cands, self_id=SELF)
    with pytest.raises(InvalidArgument, match="there are no other sessions"):
        resolve_refs(["#1"], [(SELF, "")], self_id=SELF)


# --- the tool -------------------------------------------------------------------------------


def _call(ctx: ToolContext, action: str, sessions: list[str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"action": action}
    if sessions is not None:
        args["sessions"] = sessions
    return default_registry().dispatch("merge_sessions", json.dumps(args), ctx)


def test_tool_each_action(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s", default=["cccc-3333"])
    ctx = ToolContext(
        session=_session(SELF),
        extras={"merge_sources": ms, "merge_candidates": [(SELF, "me"), *OTHERS]},
    )
    listed = _call(ctx, "list")
    assert listed["layer"] == "config" and listed["session"] == SELF
    assert [(r["n"], r["id"], r["title"], r["selected"]) for r in listed["sessions"]] == [
        ("#1", "bbbb-1111", "Database choice", False),
        ("#2", "bbbc-2222", "API design", False),
        ("#3", "cccc-3333", "Docs", True),
    ]
    status = _call(ctx, "status")
    assert status == {
        "session": SELF,
        "layer": "config",
        "off": False,
        "sources": [{"id": "cccc-3333", "title": "Docs"}],
        "warning": None,
    }
    got = _call(ctx, "set", ["#2", "BBBB"])
    assert got["layer"] == "runtime"
    assert [s["id"] for s in got["sources"]] == ["bbbc-2222", "bbbb-1111"]
    assert [s["id"] for s in _call(ctx, "add", ["ccc"])["sources"]] == [
        "bbbc-2222",
        "bbbb-1111",
        "cccc-3333",
    ]
    assert [s["id"] for s in _call(ctx, "remove", ["#1"])["sources"]] == [  # #1 = bbbb-1111
        "bbbc-2222",
        "cccc-3333",
    ]
    assert ms.get(SELF).sources == ("bbbc-2222", "cccc-3333")  # it was saved
    off = _call(ctx, "off")
    assert (off["layer"], off["off"], off["sources"]) == ("runtime", True, [])
    cleared = _call(ctx, "clear")
    assert (cleared["layer"], cleared["off"]) == ("config", False)
    assert _call(ctx, "set", [])["off"]


def test_tool_bad_refs_are_structured_errors(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s")
    ctx = ToolContext(
        session=_session(SELF), extras={"merge_sources": ms, "merge_candidates": OTHERS}
    )
    for action, refs, text in [
        ("set", ["bbb"], "ambiguous"),
        ("add", ["zzz"], "no other session"),
        ("add", ["#0"], "not in the list"),
        ("remove", ["#99"], "not in the list"),
        ("set", [SELF], "never merges itself"),
        ("add", [], "at least one session"),
    ]:
        out = _call(ctx, action, refs)
        assert is_error(out), out
        assert out["error"]["code"] == "invalid_arguments" and text in out["error"]["message"]
    assert not ms.path(SELF).exists()  # nothing was changed
    assert is_error(_call(ctx, "nonsense"))  # not an action: the registry refuses it


def test_tool_remove_reaches_a_source_no_candidate_names(tmp_path: Path) -> None:
    ms = MergeSources(tmp_path / "s", default=["gone-9999"])
    ctx = ToolContext(
        session=_session(SELF), extras={"merge_sources": ms, "merge_candidates": OTHERS}
    )
    listed = _call(ctx, "list")["sessions"]
    assert listed[-1] == {
        "n": "#4",
        "id": "gone-9999",
        "title": None,
        "selected": True,
        "missing": True,
    }
    assert _call(ctx, "status")["sources"] == [{"id": "gone-9999", "title": None, "missing": True}]
    assert _call(ctx, "remove", ["gone"])["off"]


def test_tool_without_a_store_or_session(tmp_path: Path) -> None:
    out = _call(ToolContext(session=_session(SELF)), "status")
    assert out == {"action": "status", "unavailable": "no merge source store is configured"}
    out = _call(ToolContext(extras={"merge_sources": MergeSources(tmp_path)}), "status")
    assert out["error"]["code"] == "no_session"


def test_tool_candidates_from_the_sessions_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = cx.Workspace(home)
    me = ws.add(_session("me-0001", "This one", cwd="/work/p"))
    ws.add(_session("peer-0002", "A peer", cwd="/work/p"))
    ws.add(_session("other-0003", "Elsewhere", cwd="/work/q"))
    ctx = ToolContext(session=me, extras={"merge_sources": MergeSources(tmp_path / "s")})
    listed = _call(ctx, "list")["sessions"]
    assert sorted((r["id"], r["title"]) for r in listed) == [
        ("other-0003", "Elsewhere"),
        ("peer-0002", "A peer"),
    ]
    assert [s["id"] for s in _call(ctx, "set", ["peer"])["sources"]] == ["peer-0002"]
    # a session read from no home has nothing to choose from
    ctx = ToolContext(session=_session(SELF), extras={"merge_sources": MergeSources(tmp_path)})
    assert _call(ctx, "list")["sessions"] == []


def test_default_registry_has_the_tool() -> None:
    reg = default_registry()
    assert "merge_sessions" in reg
    params = reg.get("merge_sessions").parameters
    assert params["properties"]["action"]["enum"] == [
        "list",
        "status",
        "set",
        "add",
        "remove",
        "off",
        "clear",
    ]
    assert "#2" in reg.get("merge_sessions").description
