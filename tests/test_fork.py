"""fork_session writes the seeded child log the harness writes (spec §12)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import SessionFormatError, SurfaceError, WriteError
from ctxsdk.samples import SAMPLES_HOME, sample
from ctxsdk.session import fork_log
from ctxsdk.session._codec import read_log
from ctxsdk.session._fork import fork_cut_error, fork_session
from ctxsdk.session._layout import encode_segment, project_key, session_dir
from ctxsdk.session._session import Session
from ctxsdk.session._workspace import Workspace
from ctxsdk.session.kernel import fork_points
from ctxsdk.testing import LogBuilder

from ._logs import FIXTURES

FLAKY = "5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018"
FORK = "2a7d5c90-8e34-4c1b-b6f9-0d3e82a41c75"
REFACTOR = "b93e27d4-6a15-4f0e-8d72-c40a19e5f3b6"
AUDIT = "e41b08f6-97c2-4a5d-83e0-6f1d2b9c7a34"
T = 1_790_500_000_000


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, dest)
    return dest


def _check_child(parent: Session, child_path: Path, cut: int) -> Session:
    """Everything a fork child must satisfy, for a cut after event ``cut``."""
    child = Session.open(child_path)
    n = cut + 1
    assert child.is_fork and child.is_seeded
    assert child.parent_id == parent.id
    assert child.inherited_event_count == n
    assert len(child) == n + 1
    assert list(child.raw_events[:n]) == list(parent.raw_events[:n])  # copied verbatim
    marker = child.raw_events[n]
    assert marker["type"] == "session/end-seed" and marker["seq"] == n
    assert marker["data"] == ({"inherited": True} if parent.version >= 2 else {})
    h = read_log(child_path).header
    assert h.get("cwd") == parent.header.cwd
    assert h["delegationDepth"] == parent.delegation_depth
    assert h["version"] == parent.version
    if parent.version >= 2:
        assert h["isSeeded"] is True and "seedLength" not in h
    else:
        assert h["seedLength"] == n and "isSeeded" not in h
    # The child derives exactly what the parent derived at the cut.
    header = parent.header.model_dump(by_alias=True, exclude_none=True)
    at_cut = Session.from_events(header, parent.raw_events[:n])
    assert child.messages() == at_cut.messages()
    assert not child.is_interrupted
    return child


# --- the cut ---------------------------------------------------------------------------------


def test_fork_points_are_outside_turns(home: Path) -> None:
    s = Workspace(home).open(FLAKY)
    assert [(t.start_seq, t.end_seq) for t in s.turns()] == [(0, 29), (30, 60), (61, 76)]
    assert fork_points(s) == [29, 60, 76]
    refactor = Session.open(sample("long-refactor"))
    points = fork_points(refactor)
    assert {t.end_seq for t in refactor.turns()} <= set(points)
    assert all(fork_cut_error(refactor, p) is None for p in points)


@pytest.mark.parametrize("cut", [29, 60, 76])
def test_fork_sample_at_turn_boundaries(home: Path, cut: int) -> None:
    parent = Workspace(home).open(FLAKY)
    before = parent.path.read_bytes() if parent.path else b""
    out = fork_session(parent, at_seq=cut, child_id=f"child-{cut}", created_at=T)
    assert (
        out
        == home
        / "sessions"
        / "--home-mira-src-invoicer--"
        / f"child-{cut}"
        / "session.v3.jsonl.zstd"
    )
    _check_child(parent, out, cut)
    assert read_log(out).header == {
        "type": "session",
        "version": 3,
        "id": f"child-{cut}",
        "createdAt": T,
        "cwd": "/home/mira/src/invoicer",
        "parentSession": FLAKY,
        "isSeeded": True,
        "delegationDepth": 0,
    }
    assert parent.path is not None and parent.path.read_bytes() == before  # parent untouched


def test_fork_every_turn_end_of_a_long_session(home: Path) -> None:
    parent = Workspace(home).open(REFACTOR)
    for turn in parent.turns():
        assert turn.end_seq is not None
        out = fork_session(parent, at_seq=turn.end_seq, child_id=f"t{turn.turn}", created_at=T)
        _check_child(parent, out, turn.end_seq)


def test_fork_matches_the_builder_sample_fork() -> None:
    """The sample fork was cut by LogBuilder.fork after turn 2: the same cut from the same
    parent gives the same header and the same first events."""
    parent = Session.open(sample("fix-flaky-test"))
    sample_fork = read_log(sample("fix-flaky-test-fork"))
    header, events = fork_log(
        parent, at_seq=60, child_id=FORK, created_at=sample_fork.header["createdAt"]
    )
    assert header == sample_fork.header
    assert list(header) == list(sample_fork.header)  # key order too
    assert events == sample_fork.events[: len(events)]


def test_default_cut_is_the_last_event_and_default_id_is_uuid4(home: Path) -> None:
    parent = Workspace(home).open(FORK)
    out = fork_session(parent)
    child = _check_child(parent, out, len(parent) - 1)
    assert uuid.UUID(child.id).version == 4
    assert out.parent.name == encode_segment(child.id)
    # A fork of a fork inherits the parent's own seed too; the last tagged marker wins.
    assert child.inherited_event_count == len(parent)
    assert Workspace(home).parents(child.id)["id"].to_list() == [FORK, FLAKY]


def test_refuses_a_cut_inside_a_turn(home: Path) -> None:
    parent = Workspace(home).open(FLAKY)
    with pytest.raises(SurfaceError) as exc:
        fork_session(parent, at_seq=41)
    msg = str(exc.value)
    assert "seq 41 is inside turn 2 (open until seq 60)" in msg
    assert "cut at a turn boundary such as 29 or 60" in msg
    with pytest.raises(
        SurfaceError,
        match=r"inside turn 1 \(open until seq 29\); cut at a turn boundary such as 29",
    ):
        fork_session(parent, at_seq=0)
    with pytest.raises(SurfaceError, match=r"inside turn 3"):
        fork_session(parent, at_seq=61)  # the turn/start itself opens the turn
    with pytest.raises(SurfaceError, match="not an event"):
        fork_session(parent, at_seq=77)
    with pytest.raises(SurfaceError, match="not an event"):
        fork_session(parent, at_seq=-1)
    with pytest.raises(SurfaceError, match="an int"):
        fork_session(parent, at_seq=True)
    assert sorted(
        p.name for p in (home / "sessions" / "--home-mira-src-invoicer--").iterdir()
    ) == sorted([FLAKY, FORK])


def test_interrupted_parent(tmp_path: Path) -> None:
    b = LogBuilder(3, session_id="live", cwd="/w")
    b.turn("One").assistant(text="A").end_turn()
    end1 = b.last_seq
    b.turn("Two").assistant(tool_calls=[("bash", {"command": "sleep 100"})])
    path = b.write(b.canonical_path(tmp_path / "sessions"))
    parent = Session.open(path)
    assert parent.is_interrupted
    with pytest.raises(
        SurfaceError,
        match=rf"still open at the end of the log .*cut before it, at seq {end1} or earlier.*repaired\(\)",
    ):
        fork_session(parent)
    out = fork_session(parent, at_seq=end1, child_id="early", created_at=T)
    _check_child(parent, out, end1)
    # The crash-repair view closes the turn; its closers are inherited with the prefix.
    repaired = parent.repaired()
    out = fork_session(repaired, child_id="after-repair", created_at=T)
    child = Session.open(out)
    assert child.inherited_event_count == len(repaired)
    assert child.messages() == repaired.messages()


def test_refuses_a_cut_inside_a_compaction(tmp_path: Path) -> None:
    b = LogBuilder(3, session_id="busy", cwd="/w")
    b.turn("One").assistant(text="A").end_turn()
    parent = Session.from_events(b.header, b.events).append(
        [{"type": "compaction/start", "data": {"compactionId": "c-1", "turn": None}}]
    )
    with pytest.raises(SurfaceError, match=r"inside a compaction \(compaction/start at seq"):
        fork_log(parent)
    done = parent.append(
        [{"type": "compaction/end", "data": {"compactionId": "c-1", "turn": None}}]
    )
    header, events = fork_log(done, child_id="ok", created_at=T)
    assert header["isSeeded"] is True and len(events) == len(done) + 1
    assert fork_points(done)[-1] == len(done) - 1 and len(done) - 2 not in fork_points(done)


# --- versions --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_fork_each_version_and_encoding(tmp_path: Path, version: int, compression: Any) -> None:
    root = tmp_path / "home" / "sessions"
    b = LogBuilder(version, session_id=f"p{version}", cwd="/srv/app", agent_preset="standard")
    b.turn("List files").assistant(tool_calls=[("bash", {"command": "ls"})]).tool_results(["a\nb"])
    b.next_step().assistant(text="Two files.").end_turn()
    cut = b.last_seq
    b.turn("Thanks").assistant(text="You're welcome.").end_turn()
    path = b.write(b.canonical_path(root, compression), compression)
    parent = Session.open(path)
    out = fork_session(parent, at_seq=cut, child_id="kid", created_at=T)
    gen = f".v{version}" if version else ""
    suffix = ".zstd" if compression == "zstd" else ""
    assert out == root / "--srv-app--" / "kid" / f"session{gen}.jsonl{suffix}"
    child = _check_child(parent, out, cut)
    assert child.compression == compression
    assert read_log(out).header["agentPreset"] == "standard"
    assert list(read_log(out).header) == [
        "type",
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "isSeeded" if version >= 2 else "seedLength",
        "delegationDepth",
        "agentPreset",
    ]


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared/data is not present")
def test_v0_fork_from_a_real_fixture(tmp_path: Path) -> None:
    fixture = Session.open(FIXTURES / "v0-tool-call-turn.session.jsonl", normalized=True)
    root = tmp_path / "home" / "sessions"
    saved = fixture.save(session_dir(root, fixture.header.cwd, fixture.id))
    assert saved.name == "session.jsonl"
    parent = Session.open(saved)  # real seqs now, packed rows expanded
    assert parent.version == 0
    assert fork_points(parent) == [0, len(parent) - 1]
    with pytest.raises(SurfaceError, match="inside turn 1"):
        fork_session(parent, at_seq=50)
    out = fork_session(parent, child_id="v0-kid", created_at=T)
    assert out == saved.parent.parent / "v0-kid" / "session.jsonl"
    child = _check_child(parent, out, len(parent) - 1)
    assert read_log(out).header["seedLength"] == len(parent)
    assert child.raw_events[-1]["data"] == {}
    assert len(child.messages()) == len(parent.messages()) > 0
    # Before the first turn: only the log-only prelude is inherited.
    out0 = fork_session(parent, at_seq=0, child_id="v0-kid-0", created_at=T)
    assert Session.open(out0).inherited_event_count == 1
    kids = Workspace(tmp_path / "home").children(parent.id)
    assert sorted(kids["id"].to_list()) == ["v0-kid", "v0-kid-0"]
    assert set(kids["kind"]) == {"fork"}


# --- placement -------------------------------------------------------------------------------


def test_child_appears_in_the_workspace(home: Path) -> None:
    ws = Workspace(home)
    ws.sessions()  # warm the index first: the new child must still show up
    out = fork_session(ws.open(REFACTOR), at_seq=29, child_id="from-turn-1", created_at=T)
    df = ws.sessions()
    row = df.filter(df["id"] == "from-turn-1").to_dicts()[0]
    assert row["path"] == str(out) and row["readable"] and row["seeded"]
    assert row["parent"] == REFACTOR and row["events"] == 31
    assert row["project"] == "--home-mira-src-ledger-service--"
    kids = ws.children(REFACTOR)
    assert dict(zip(kids["id"], kids["kind"], strict=True)) == {
        AUDIT: "subagent",
        "from-turn-1": "fork",
    }
    assert ws.open("from-turn").inherited_event_count == 30
    assert [n.id for n in ws.tree("from-turn-1")] == [REFACTOR, AUDIT, "from-turn-1"]


def test_fork_of_a_subagent_keeps_its_depth_and_origin(home: Path) -> None:
    ws = Workspace(home)
    parent = ws.open(AUDIT)
    out = fork_session(parent, child_id="audit-fork", created_at=T)
    h = read_log(out).header
    assert h["delegationDepth"] == 1 and h["origin"] == "subagent" and h["isSeeded"] is True
    assert ws.children(AUDIT)["kind"].to_list() == ["fork"]  # seeded children are forks


def test_dest_root(tmp_path: Path) -> None:
    parent = Session.open(sample("fix-flaky-test"))
    loose = parent.save(tmp_path / "loose.jsonl.zstd")
    moved = Session.open(loose)
    with pytest.raises(WriteError, match="pass dest_root="):
        fork_session(moved)
    with pytest.raises(WriteError, match="pass dest_root="):
        fork_session(Session.from_events(read_log(loose).header, moved.raw_events))
    dest = tmp_path / "other-home" / "sessions"
    out = fork_session(moved, dest_root=dest, child_id="x/y", created_at=T)
    assert (
        out == dest / project_key("/home/mira/src/invoicer") / "x~002Fy" / "session.v3.jsonl.zstd"
    )
    _check_child(moved, out, len(moved) - 1)
    assert Workspace(tmp_path / "other-home").open("x/y").parent_id == FLAKY


def test_never_overwrites_and_never_forks_onto_itself(home: Path) -> None:
    parent = Workspace(home).open(FLAKY)
    with pytest.raises(WriteError, match="already exists"):
        fork_session(parent, child_id=FORK)
    with pytest.raises(SurfaceError, match="parent's own id"):
        fork_session(parent, child_id=FLAKY)
    with pytest.raises(SessionFormatError, match="non-empty"):
        fork_session(parent, child_id="")
    fork_session(parent, child_id="once", created_at=T)
    with pytest.raises(WriteError, match="already exists"):
        fork_session(parent, child_id="once", created_at=T)


def test_accepts_a_path(home: Path) -> None:
    path = Workspace(home).find(FLAKY)["path"]
    header, events = fork_log(path, at_seq=29, child_id="by-path", created_at=T)
    assert Session.from_events(header, events).inherited_event_count == 30
    assert fork_points(path) == fork_points(Session.open(path))
